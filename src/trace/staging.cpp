#include "trace/staging.hpp"

#include <algorithm>

#include "core/array_impl.hpp"
#include "jx/detail/call_site.hpp"

namespace jx::trace {
namespace {

class StagingTracer : public Tracer {
 public:
  StagingTracer(std::shared_ptr<Trace> trace, Var var)
      : Tracer(std::move(trace)), var(std::move(var)) {}
  Var var;
};

}  // namespace

Array StagingTrace::new_arg(const ShapedArray& aval) {
  Var v = new_var(aval);
  jaxpr_.invars.push_back(v);
  return make_tracer(std::make_shared<StagingTracer>(shared_from_this(), v), aval);
}

Atom StagingTrace::to_atom(const Array& x) {
  Tracer* t = tracer_of(x);
  if (t && t->trace().get() == this) return static_cast<StagingTracer*>(t)->var;
  // Concrete scalars are inlined as literals (JAX prints them as `2.0:f32[]`).
  if (!t && x.ndim() == 0) return x;
  // Anything else from outside — a concrete array or an outer trace's tracer — is captured.
  auto [it, inserted] = const_vars_.try_emplace(x.impl().get());
  if (inserted) {
    it->second = new_var(x.aval());
    jaxpr_.constvars.push_back(it->second);
    consts_.push_back(x);
  }
  return it->second;
}

std::vector<Array> StagingTrace::process(const Primitive& prim, std::span<const Array> inputs,
                                         const Params& params) {
  if (prim.folds_scalar_constants && std::all_of(inputs.begin(), inputs.end(), [](const Array& x) {
        return !x.is_tracer() && x.ndim() == 0;
      })) {
    EvalContext eager;
    return bind(prim, {inputs.begin(), inputs.end()}, params);
  }
  std::vector<ShapedArray> in_avals;
  Eqn eqn{&prim, {}, params, {}};
  if (const std::source_location* at = detail::current_call_site()) eqn.source = *at;
  in_avals.reserve(inputs.size());
  eqn.inputs.reserve(inputs.size());
  for (const auto& x : inputs) {
    in_avals.push_back(x.aval());
    eqn.inputs.push_back(to_atom(x));
  }
  std::vector<ShapedArray> out_avals = prim.output_avals(in_avals, params);
  std::vector<Array> outs;
  outs.reserve(out_avals.size());
  eqn.outvars.reserve(out_avals.size());
  auto self = shared_from_this();
  for (auto& aval : out_avals) {
    Var v = new_var(aval);
    eqn.outvars.push_back(v);
    outs.push_back(make_tracer(std::make_shared<StagingTracer>(self, v), aval));
  }
  jaxpr_.eqns.push_back(std::move(eqn));
  return outs;
}

ClosedJaxprData StagingTrace::finish(std::span<const Array> outs) {
  for (const auto& x : outs) jaxpr_.outvars.push_back(to_atom(x));
  return ClosedJaxprData{std::move(jaxpr_), std::move(consts_)};
}

ClosedJaxprData trace_to_jaxpr(const FlatFn& fn, const std::vector<ShapedArray>& in_avals,
                               const std::string& name) {
  auto trace = std::make_shared<StagingTrace>(next_trace_level(), name);
  TraceScope scope(trace);
  std::vector<Array> args;
  for (const auto& aval : in_avals) args.push_back(trace->new_arg(aval));
  std::vector<Array> outs = fn(args);
  return trace->finish(outs);
}

}  // namespace jx::trace
