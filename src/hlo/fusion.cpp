#include "hlo/fusion.hpp"

#include <functional>

namespace jx::hlo {

std::vector<const HloShape*> output_shapes(const Instruction& inst) {
  std::vector<const HloShape*> out;
  if (inst.shape.is_tuple)
    for (const HloShape& s : inst.shape.tuple_shapes) out.push_back(&s);
  else
    out.push_back(&inst.shape);
  return out;
}

const Instruction* fused_output(const Instruction& fusion, int output) {
  const Instruction* root = fusion.called.at(0)->root();
  return root->opcode == Opcode::kTuple ? root->operands.at(static_cast<std::size_t>(output))
                                        : root;
}

bool reads_only_at_output_index(const Instruction& inst, int operand, int output) {
  if (inst.opcode != Opcode::kFusion)
    return has_trait(inst.opcode, kElementwise) &&
           inst.operands[static_cast<std::size_t>(operand)]->shape.dims == inst.shape.dims;
  const Computation& c = *inst.called[0];
  const Instruction* out = fused_output(inst, output);
  // Every path from the parameter reaches `out` through same-shape elementwise ops, and
  // reaches nothing else; no other output reads `out` (it would see the overwritten operand).
  std::function<bool(const Instruction*)> ok = [&](const Instruction* i) {
    if (i == out) {
      std::vector<Instruction*> users = c.users(out);
      return users.empty() || (users.size() == 1 && users[0] == c.root());
    }
    std::vector<Instruction*> users = c.users(i);
    if (users.empty()) return false;
    for (const Instruction* u : users)
      if (!has_trait(u->opcode, kElementwise) || u->shape.dims != out->shape.dims || !ok(u))
        return false;
    return true;
  };
  return ok(c.parameters().at(static_cast<std::size_t>(operand)));
}

}  // namespace jx::hlo
