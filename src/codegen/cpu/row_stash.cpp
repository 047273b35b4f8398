#include "codegen/cpu/row_stash.hpp"

#include <algorithm>
#include <functional>
#include <unordered_set>

namespace jx::codegen::cpu {
namespace {

using hlo::Instruction;
using hlo::Opcode;

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

}  // namespace

ElementalEmitter::GivenGenerators stash_row_values(ElementalEmitter& em,
                                                   const hlo::Instruction& fusion,
                                                   const std::vector<ElementGenerator>& params,
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
    break;
  }
  return given;
}

}  // namespace jx::codegen::cpu
