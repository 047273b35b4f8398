// Dead code elimination over instructions, then over computations.
#include "passes/dce.hpp"

#include <functional>
#include <unordered_set>

namespace jx::passes {

bool Dce::run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* c : module.computations()) changed |= c->remove_unreachable() > 0;
  // Computations are live when the entry calls them through live instructions.
  std::unordered_set<const hlo::Computation*> live;
  std::function<void(const hlo::Computation*)> mark = [&](const hlo::Computation* c) {
    if (!live.insert(c).second) return;
    for (const hlo::Instruction* i : c->owned())
      for (const hlo::Computation* callee : i->called) mark(callee);
  };
  mark(module.entry());
  for (hlo::Computation* c : module.computations())
    if (!live.count(c)) {
      module.remove_computation(c);
      changed = true;
    }
  return changed;
}

}  // namespace jx::passes
