#include "codegen/cpu/row_stash.hpp"

#include <algorithm>
#include <functional>
#include <unordered_set>

namespace jx::codegen::cpu {
namespace {

using hlo::Instruction;
using hlo::Opcode;

constexpr std::int64_t kCacheLine = 64;
// The longest row stashed on the stack: with the row it is computed from, a third of a 48 KiB
// first-level cache each.
constexpr std::int64_t kMaxStackRowBytes = 16 << 10;

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
// whose own reads are the same. `kept` becomes the fewest leading dims a reduction reached keeps
// (it stays at the rank when none is). Each user is followed once (`seen`): paths through a
// shared value would otherwise multiply with every level.
bool read_in_place(const hlo::Computation& c, const Instruction* v, const Shape& dims,
                   std::size_t& kept, std::unordered_set<const Instruction*>& seen) {
  for (const Instruction* u : c.users(v)) {
    if (reduces_trailing_rows(*u) && u->operands[0] == v) {
      kept = std::min(kept, static_cast<std::size_t>(u->shape.rank()));
      continue;
    }
    if (!hlo::has_trait(u->opcode, hlo::kElementwise) || u->shape.dims != dims) return false;
    if (u != c.root() && seen.insert(u).second && !read_in_place(c, u, dims, kept, seen))
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

RowStash stash_row_values(ElementalEmitter& em, const hlo::Instruction& fusion,
                          const std::vector<ElementGenerator>& params,
                          const std::vector<llvm::Value*>& buffers, llvm::Value* out,
                          bool out_streams) {
  RowStash stash;
  if (fusion.opcode != Opcode::kFusion || fusion.shape.is_tuple || fusion.shape.rank() < 2)
    return stash;
  const hlo::Computation& c = *fusion.called[0];
  const hlo::HloShape& shape = fusion.shape;
  // The output's row holds one value per element, so one value is stashed: the last that
  // qualifies, which the output reads other than through the sum (a value only the sum reads
  // is computed once anyway). Values before it are computed in the sum's loop as it is.
  std::vector<Instruction*> order = c.instructions();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Instruction* v = *it;
    std::size_t kept = shape.dims.size();
    std::unordered_set<const Instruction*> operands_seen, users_seen;
    std::vector<Instruction*> users = c.users(v);
    if (v == c.root() || !hlo::has_trait(v->opcode, hlo::kElementwise) ||
        v->shape.dims != shape.dims || v->shape.dtype != shape.dtype ||
        std::all_of(users.begin(), users.end(),
                    [](const Instruction* u) { return reduces_trailing_rows(*u); }) ||
        !holds_math(v, operands_seen) || !read_in_place(c, v, shape.dims, kept, users_seen) ||
        kept == shape.dims.size())
      continue;
    // Where the value lies: the output's element, or its place on the stack in the row of the
    // dims the reductions reduce.
    Shape row(shape.dims.begin() + static_cast<std::ptrdiff_t>(kept), shape.dims.end());
    llvm::Value* stack = nullptr;
    if (out_streams && shape_size(row) * itemsize(shape.dtype) <= kMaxStackRowBytes) {
      llvm::AllocaInst* slot =
          em.entry_alloca(llvm::ArrayType::get(storage_type(em.ctx(), shape.dtype),
                                               static_cast<std::uint64_t>(shape_size(row))),
                          "stash");
      slot->setAlignment(llvm::Align(kCacheLine));
      stack = slot;
    }
    auto place = [&em, stack, out, shape, row, kept](const IrIndex& index) {
      if (!stack) return std::pair{out, em.linear_index(index, shape.dims)};
      IrIndex in_row{{index.dims.begin() + static_cast<std::ptrdiff_t>(kept), index.dims.end()}};
      return std::pair{stack, em.linear_index(in_row, row)};
    };
    ElementGenerator compute = em.generators_of(c, params, {v}).front();
    stash.values[v] = [&em, compute, place, dtype = shape.dtype](const IrIndex& index) {
      auto [base, at] = place(index);
      if (!em.reducing()) return em.load(dtype, base, at, "stashed");
      llvm::Value* value = compute(index);
      em.store(dtype, value, base, at);
      return value;
    };
    stash.in_output = !stack;
    for (const Instruction* u : users)
      if (reduces_trailing_rows(*u) && u->operands[0] == v)
        em.prefetch_rows_in(*u, next_row_prefetch(em, fusion, buffers, *u));
    break;
  }
  return stash;
}

}  // namespace jx::codegen::cpu
