#include "passes/splat_constants.hpp"

#include "core/array_impl.hpp"
#include "hlo/builder.hpp"

namespace jx::passes {

using hlo::Instruction;
using hlo::Opcode;

bool SplatConstants::run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* c : module.computations()) {
    hlo::Builder b(c);
    for (Instruction* i : c->instructions()) {
      if (i->opcode != Opcode::kConstant || i->shape.rank() == 0 || i->shape.size() < 2) continue;
      std::optional<Array> value = splat_value(*i->literal);
      if (!value) continue;
      c->replace_all_uses(i, b.broadcast(b.constant(*value), i->shape.dims, {}));
      changed = true;
    }
    if (changed) c->remove_unreachable();
  }
  return changed;
}

}  // namespace jx::passes
