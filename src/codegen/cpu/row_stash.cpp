#include "codegen/cpu/row_stash.hpp"

#include <algorithm>
#include <functional>
#include <unordered_set>

namespace jx::codegen::cpu {
namespace {

using hlo::Instruction;
using hlo::Opcode;

constexpr std::int64_t kCacheLine = 64;

// Whether computing `i` evaluates a math function (exp, log, tanh...) inside the fusion.
bool holds_math(const Instruction* i, std::unordered_set<const Instruction*>& seen) {
  if (!seen.insert(i).second) return false;
  if (hlo::has_trait(i->opcode, hlo::kTranscendental)) return true;
  for (const Instruction* o : i->operands)
    if (holds_math(o, seen)) return true;
  return false;
}

// Whether `r` reduces trailing dims of its operand, dim 0 kept.
bool reduces_trailing_rows(const Instruction& r) {
  if (r.opcode != Opcode::kReduce || r.operands.size() != 2) return false;
  ReduceSplit s = split_reduce_dims(r);
  std::int64_t rank = r.operands[0]->shape.rank();
  if (s.kept.empty() || s.kept.front() != 0) return false;
  for (std::size_t k = 0; k < s.kept.size(); ++k)
    if (s.kept[k] != static_cast<std::int64_t>(k)) return false;
  return static_cast<std::int64_t>(s.kept.size()) < rank;
}

// Whether every read of `v` is a row reduction's, or an elementwise op's of the output's shape
// whose own reads are the same. Each user is followed once (`seen`): paths through a shared
// value would otherwise multiply with every level.
bool read_in_place(const hlo::Computation& c, const Instruction* v, const Shape& dims,
                   bool& reduced, std::unordered_set<const Instruction*>& seen) {
  for (const Instruction* u : c.users(v)) {
    if (reduces_trailing_rows(*u) && u->operands[0] == v) {
      reduced = true;
      continue;
    }
    if (!hlo::has_trait(u->opcode, hlo::kElementwise) || u->shape.dims != dims) return false;
    if (u != c.root() && seen.insert(u).second && !read_in_place(c, u, dims, reduced, seen))
      return false;
  }
  return true;
}

// Prefetches of a chunk of the next row, one a cache line, in the kernel's operands that have
// the fusion's shape (what the stashed value is computed from, row by row).
ElementalEmitter::RowPrefetch next_row_prefetch(ElementalEmitter& em,
                                                const hlo::Instruction& fusion,
                                                const std::vector<llvm::Value*>& buffers,
                                                const Instruction& reduce) {
  std::int64_t row = 1;
  for (std::int64_t d : split_reduce_dims(reduce).reduced)
    row *= reduce.operands[0]->shape.dims[static_cast<std::size_t>(d)];
  std::vector<std::pair<llvm::Value*, DType>> streams;
  for (std::size_t k = 0; k < buffers.size(); ++k)
    if (fusion.operands[k]->shape.dims == fusion.shape.dims)
      streams.emplace_back(buffers[k], fusion.operands[k]->shape.dtype);
  return [&em, streams, row](llvm::Value* first, std::int64_t count) {
    llvm::IRBuilder<>& b = em.b();
    llvm::Value* next = b.CreateAdd(first, em.i64(row));
    for (auto [base, dtype] : streams) {
      std::int64_t per_line = kCacheLine / itemsize(dtype);
      for (std::int64_t e = 0; e < count; e += per_line) {
        // Past the last row this addresses no element: a prefetch of it is a no-op.
        llvm::Value* at =
            b.CreateGEP(storage_type(em.ctx(), dtype), base, b.CreateAdd(next, em.i64(e)));
        b.CreateIntrinsic(llvm::Intrinsic::prefetch, {at->getType()},
                          {at, b.getInt32(0), b.getInt32(3), b.getInt32(1)});
      }
    }
  };
}

}  // namespace

ElementalEmitter::GivenGenerators stash_row_values(ElementalEmitter& em,
                                                   const hlo::Instruction& fusion,
                                                   const std::vector<ElementGenerator>& params,
                                                   const std::vector<llvm::Value*>& buffers,
                                                   llvm::Value* out) {
  ElementalEmitter::GivenGenerators given;
  if (fusion.opcode != Opcode::kFusion || fusion.shape.is_tuple || fusion.shape.rank() < 2)
    return given;
  const hlo::Computation& c = *fusion.called[0];
  const hlo::HloShape& shape = fusion.shape;
  // The output's row holds one value per element, so one value is stashed: the last that
  // qualifies, which the output reads other than through the sum (a value only the sum reads
  // is computed once anyway). Values before it are computed in the sum's loop as it is.
  std::vector<Instruction*> order = c.instructions();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Instruction* v = *it;
    bool reduced = false;
    std::unordered_set<const Instruction*> operands_seen, users_seen;
    std::vector<Instruction*> users = c.users(v);
    if (v == c.root() || !hlo::has_trait(v->opcode, hlo::kElementwise) ||
        v->shape.dims != shape.dims || v->shape.dtype != shape.dtype ||
        std::all_of(users.begin(), users.end(),
                    [](const Instruction* u) { return reduces_trailing_rows(*u); }) ||
        !holds_math(v, operands_seen) || !read_in_place(c, v, shape.dims, reduced, users_seen) ||
        !reduced)
      continue;
    ElementGenerator compute = em.generators_of(c, params, {v}).front();
    given[v] = [&em, compute, out, shape](const IrIndex& index) {
      llvm::Value* at = em.linear_index(index, shape.dims);
      if (!em.reducing()) return em.load(shape.dtype, out, at, "stashed");
      llvm::Value* value = compute(index);
      em.store(shape.dtype, value, out, at);
      return value;
    };
    for (const Instruction* u : users)
      if (reduces_trailing_rows(*u) && u->operands[0] == v)
        em.prefetch_rows_in(*u, next_row_prefetch(em, fusion, buffers, *u));
    break;
  }
  return given;
}

}  // namespace jx::codegen::cpu
