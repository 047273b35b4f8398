// Constant folding through the HLO evaluator, one walk per computation (operands first, so a
// chain of constant ops folds in one run).
#include "passes/constant_folding.hpp"

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "hlo/builder.hpp"
#include "hlo/evaluator.hpp"

namespace jx::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Elementwise opcodes (convert included) and these layout ones.
bool foldable_opcode(Opcode op) {
  static const std::unordered_set<Opcode> kLayout{
      Opcode::kBroadcast, Opcode::kReshape,     Opcode::kTranspose, Opcode::kSlice,
      Opcode::kIota,      Opcode::kConcatenate, Opcode::kReverse};
  return hlo::has_trait(op, hlo::kElementwise) || kLayout.count(op) > 0;
}

bool foldable(const Instruction& i) {
  return foldable_opcode(i.opcode) && !hlo::has_trait(i.opcode, hlo::kSideEffects) &&
         !i.shape.is_tuple && i.shape.size() <= kMaxFoldedElements && hlo::can_evaluate(i) &&
         std::all_of(i.operands.begin(), i.operands.end(),
                     [](const Instruction* op) { return op->opcode == Opcode::kConstant; });
}

}  // namespace

bool ConstantFolding::run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* c : module.computations()) {
    bool folded = false;
    hlo::Builder b(c);
    for (Instruction* inst : c->instructions()) {
      if (!foldable(*inst)) continue;
      std::vector<Array> values;
      for (const Instruction* op : inst->operands) values.push_back(*op->literal);
      c->replace_all_uses(inst, b.constant(hlo::evaluate(*inst, values)));
      folded = true;
    }
    if (folded) c->remove_unreachable();
    changed |= folded;
  }
  return changed;
}

}  // namespace jx::passes
