// jit's AOT objects: jit_lower traces and lowers a call into a LoweredCall, whose compile()
// makes a CompiledCall that runs only on arguments of the lowered signature.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/compile.hpp"
#include "api/jit_cache.hpp"
#include "api/jit_state.hpp"
#include "jx/jit.hpp"
#include "support/format.hpp"
#include "trace/tracer.hpp"

namespace jx::detail {

struct LoweredCall::Impl {
  std::shared_ptr<JitState> state;
  api::LoweredProgram lowered;
  api::Signature sig;  // the non-static arguments only: what a compiled call must match
  std::shared_ptr<const void> out_proto;
};

struct CompiledCall::Impl {
  std::shared_ptr<const LoweredCall::Impl> lowered;
  std::shared_ptr<const api::CompiledProgram> program;
};

LoweredCall jit_lower(JitState& st, CallArgs& ca, const MissHandler& miss) {
  if (ca.error != ArgError::none) throw_arg_error(st, ca);
  auto impl = std::make_shared<LoweredCall::Impl>();
  impl->state = st.shared_from_this();
  double trace_ms = 0;
  auto jaxpr = trace_call(st, ca, miss, impl->out_proto, trace_ms);
  if (closes_over_tracer(*jaxpr))
    throw Error(st.trace_name +
                ".lower: the function closes over a traced value of an enclosing "
                "transformation; lower it outside that transformation");
  impl->lowered = api::lower_program(jaxpr, st.program_name);
  impl->lowered.donated = donated_leaves(st, ca);
  {
    std::lock_guard lock(st.mu);
    st.stats.lower_ms += impl->lowered.lower_ms;
  }
  impl->sig.avals = avals_of(ca.leaves);
  for (auto& t : miss.structures())
    if (t.kind != tree::TreeDef::Kind::static_value) impl->sig.structures.push_back(std::move(t));
  impl->sig.num_args = static_cast<int>(impl->sig.structures.size());
  return LoweredCall(std::move(impl));
}

const std::string& LoweredCall::jaxpr_text() const { return impl_->lowered.jaxpr_text->get(); }
const std::string& LoweredCall::hlo_text() const { return impl_->lowered.hlo_text->get(); }
const std::shared_ptr<const void>& LoweredCall::out_proto() const { return impl_->out_proto; }

CompiledCall LoweredCall::compile() const {
  auto impl = std::make_shared<CompiledCall::Impl>();
  impl->lowered = impl_;
  JitState& st = *impl_->state;
  impl->program = std::make_shared<const api::CompiledProgram>(
      api::compile_program(impl_->lowered, st.device.value_or(Device{})));
  std::lock_guard lock(st.mu);
  ++st.stats.compiles;
  st.stats.optimize_ms += impl->program->optimize_ms;
  st.stats.codegen_ms += impl->program->codegen_ms;
  return CompiledCall(std::move(impl));
}

const std::string& CompiledCall::hlo_text() const { return impl_->program->hlo_text->get(); }
const std::string& CompiledCall::thunk_sequence() const {
  return impl_->program->thunk_sequence->get();
}
const std::shared_ptr<const void>& CompiledCall::out_proto() const {
  return impl_->lowered->out_proto;
}

CostAnalysis CompiledCall::cost_analysis() const {
  const auto& c = impl_->program->cost;
  return CostAnalysis{c.flops, c.transcendentals, c.bytes_accessed};
}

MemoryAnalysis CompiledCall::memory_analysis() const {
  const auto& m = impl_->program->memory;
  return MemoryAnalysis{m.argument_bytes, m.output_bytes, m.temp_bytes};
}

std::vector<Array> CompiledCall::run(const std::vector<Array>& leaves,
                                     const std::vector<tree::TreeDef>& structures) const {
  const api::Signature& want = impl_->lowered->sig;
  auto same_avals = [&] {  // compared in place: a call allocates no aval list
    if (leaves.size() != want.avals.size()) return false;
    for (std::size_t k = 0; k < leaves.size(); ++k)
      if (leaves[k].aval() != want.avals[k]) return false;
    return true;
  };
  if (structures != want.structures || !same_avals()) {
    api::Signature got;
    got.structures = structures;
    got.avals = avals_of(leaves);
    got.num_args = static_cast<int>(structures.size());
    std::vector<std::string> diffs;
    for (const api::SignatureDiff& d : api::signature_diffs(want, got)) diffs.push_back(d.text);
    throw TypeError("Computation " + impl_->lowered->lowered.name +
                    " was compiled for other argument types than it was called with: " +
                    detail::join(diffs, "; "));
  }
  // Under a trace the program is staged into it, equation by equation.
  if (trace::tracing()) {
    const auto& j = *impl_->lowered->lowered.jaxpr;
    return eval_jaxpr(j.jaxpr, j.consts, leaves);
  }
  return (*impl_->program)(leaves);
}

}  // namespace jx::detail
