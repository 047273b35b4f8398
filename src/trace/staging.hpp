// The staging trace: records every primitive applied to its tracers as a jaxpr equation.
#pragma once

#include <functional>
#include <unordered_map>

#include "jaxpr/jaxpr.hpp"
#include "trace/tracer.hpp"

namespace jx::trace {

class StagingTrace : public Trace, public std::enable_shared_from_this<StagingTrace> {
 public:
  StagingTrace(int level, std::string name) : Trace(level, std::move(name)) {}

  Array new_arg(const ShapedArray& aval);  // a fresh invar, as a tracer
  std::vector<Array> process(const Primitive& prim, std::span<const Array> inputs,
                             const Params& params) override;
  // Closes the jaxpr over `outs`; captured arrays become constvars with their values as consts.
  ClosedJaxprData finish(std::span<const Array> outs);

 private:
  Atom to_atom(const Array& x);

  Jaxpr jaxpr_;
  std::vector<Array> consts_;
  std::unordered_map<const void*, Var> const_vars_;  // captured array impl → its constvar
};

using FlatFn = std::function<std::vector<Array>(const std::vector<Array>&)>;

// Traces `fn` on fresh tracers with the given avals into a closed jaxpr.
ClosedJaxprData trace_to_jaxpr(const FlatFn& fn, const std::vector<ShapedArray>& in_avals,
                               const std::string& name);

}  // namespace jx::trace
