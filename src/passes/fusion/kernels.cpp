#include "passes/fusion/kernels.hpp"

#include <algorithm>
#include <functional>

#include "hlo/window.hpp"

namespace jx::passes::fusion {

using hlo::Instruction;
using hlo::Opcode;

bool is_kernel(const Instruction& i) {
  return hlo::runs_as(i.opcode) == hlo::RunsAs::kKernel &&
         !hlo::has_trait(i.opcode, hlo::kOwnKernel);
}

bool reads_once(const Instruction& fusion, std::size_t k) {
  if (fusion.opcode != Opcode::kFusion) return false;
  const hlo::Computation& c = *fusion.called[0];
  std::function<bool(const Instruction*)> ok = [&](const Instruction* i) {
    for (const Instruction* u : c.users(i)) {
      if (u->opcode == Opcode::kDot) return false;
      if (u->opcode == Opcode::kReduceWindow && !hlo::as_prefix_scan(*u)) return false;
      if (u->opcode == Opcode::kBroadcast && u->shape.size() != i->shape.size()) return false;
      if (u->opcode == Opcode::kTuple) continue;
      if (!ok(u)) return false;
    }
    return true;
  };
  return ok(c.parameters().at(k));
}

bool computes_prefix_scan(const Instruction& kernel) {
  if (kernel.opcode != Opcode::kFusion) return hlo::as_prefix_scan(kernel).has_value();
  const auto& body = kernel.called[0]->owned();
  return std::any_of(body.begin(), body.end(),
                     [](const Instruction* i) { return hlo::as_prefix_scan(*i).has_value(); });
}

}  // namespace jx::passes::fusion
