#include "passes/fusion/kernels.hpp"

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "hlo/gemm.hpp"
#include "hlo/window.hpp"

namespace jx::passes::fusion {

using hlo::Instruction;
using hlo::Opcode;

bool is_kernel(const Instruction& i) {
  if (i.opcode == Opcode::kFusion && hlo::as_gemm_epilogue(i)) return false;
  return hlo::runs_as(i.opcode) == hlo::RunsAs::kKernel &&
         !hlo::has_trait(i.opcode, hlo::kOwnKernel);
}

bool reads_once(const Instruction& fusion, std::size_t k) {
  if (fusion.opcode != Opcode::kFusion) return false;
  const hlo::Computation& c = *fusion.called[0];
  hlo::UserIndex users(c);
  // Each value is judged once: the paths to it through a body that reuses values are many.
  std::unordered_map<const Instruction*, bool> judged;
  std::function<bool(const Instruction*)> ok = [&](const Instruction* i) {
    if (auto it = judged.find(i); it != judged.end()) return it->second;
    const std::vector<Instruction*>& readers = users(i);
    bool once = std::all_of(readers.begin(), readers.end(), [&](const Instruction* u) {
      if (u->opcode == Opcode::kDot) return false;
      if (u->opcode == Opcode::kReduceWindow && !hlo::as_prefix_scan(*u)) return false;
      if (u->opcode == Opcode::kBroadcast && u->shape.size() != i->shape.size()) return false;
      return u->opcode == Opcode::kTuple || ok(u);
    });
    return judged[i] = once;
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
