// The compilation pipeline. Until the HLO backend lands, programs run through eval_jaxpr.
#include "api/compile.hpp"

#include <atomic>

#include "jaxpr/jaxpr.hpp"

namespace jx::api {

std::vector<Array> CompiledProgram::operator()(const std::vector<Array>& args) const {
  return eval_jaxpr(jaxpr->jaxpr, jaxpr->consts, args);
}

LoweredProgram lower_program(std::shared_ptr<const ClosedJaxprData> jaxpr, const std::string& name) {
  static std::atomic<int> next_id{1};
  LoweredProgram out;
  out.name = name;
  out.module_id = next_id++;
  out.jaxpr_text = to_string(jaxpr->jaxpr);
  out.jaxpr = std::move(jaxpr);
  return out;
}

CompiledProgram compile_program(const LoweredProgram& lowered) {
  CompiledProgram out;
  out.jaxpr = lowered.jaxpr;
  return out;
}

}  // namespace jx::api
