#include "passes/pass.hpp"

namespace jx::passes {

bool replace_each(
    hlo::Module& module, hlo::Opcode opcode,
    const std::function<hlo::Instruction*(hlo::Builder&, hlo::Instruction&)>& rewrite) {
  bool changed = false;
  for (hlo::Computation* c : module.computations()) {
    hlo::Builder b(c);
    bool here = false;
    for (hlo::Instruction* i : c->instructions()) {
      if (i->opcode != opcode) continue;
      hlo::Instruction* replacement = rewrite(b, *i);
      if (!replacement || replacement == i) continue;
      c->replace_all_uses(i, replacement);
      here = true;
    }
    if (here) c->remove_unreachable();
    changed = changed || here;
  }
  return changed;
}

}  // namespace jx::passes
