// Traces and tracers. A tracer is an Array whose value is abstract: it belongs to one trace,
// and operations on it are handed to that trace instead of running eagerly.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "core/primitive.hpp"

namespace jx::trace {

class Trace {
 public:
  Trace(int level, std::string name) : level_(level), name_(std::move(name)) {}
  virtual ~Trace() = default;

  int level() const { return level_; }
  const std::string& name() const { return name_; }  // the transformation, for messages
  bool alive() const { return alive_; }
  void end() { alive_ = false; }

  // Applies a primitive to inputs of which at least one is a tracer of this trace.
  virtual std::vector<Array> process(const Primitive& prim, std::span<const Array> inputs,
                                     const Params& params) = 0;

 private:
  int level_;
  std::string name_;
  bool alive_ = true;
};

class Tracer {
 public:
  explicit Tracer(std::shared_ptr<Trace> trace) : trace_(std::move(trace)) {}
  virtual ~Tracer() = default;
  const std::shared_ptr<Trace>& trace() const { return trace_; }

  // Reading a tracer's value: ConcretizationError while its trace runs, TracerLeakError after.
  [[noreturn]] void throw_concretization_error(const char* what) const;
  [[noreturn]] void throw_leak_error(const ShapedArray& aval) const;

 private:
  std::shared_ptr<Trace> trace_;
};

// A new tracer array of `trace` with the given aval.
Array make_tracer(std::shared_ptr<Tracer> tracer, ShapedArray aval);

// The thread's trace stack: a trace is current from push to pop.
class TraceScope {
 public:
  explicit TraceScope(std::shared_ptr<Trace> trace);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;
};
int next_trace_level();  // the level a trace pushed now would get
bool tracing();          // whether a trace is current (and no EvalContext hides it)

// Inside an EvalContext, binds whose inputs are all concrete run eagerly again although a trace
// is current (JAX's eval_context): for work done at trace time on purpose, such as compiling.
class EvalContext {
 public:
  EvalContext();
  ~EvalContext();
  EvalContext(const EvalContext&) = delete;
  EvalContext& operator=(const EvalContext&) = delete;
};

// How an eager primitive runs whose committed inputs live on an accelerator: a one-primitive
// program compiled for that device (api/eager_device.cpp installs it; trace/ cannot compile).
using DeviceEagerRun = std::vector<Array> (*)(const Primitive& prim,
                                              const std::vector<Array>& inputs,
                                              const Params& params, const Device& device);
void set_device_eager_run(DeviceEagerRun run);

// Applies a primitive (JAX's omnistaging): staged into the current trace, or into a higher-level
// trace among the inputs' traces; with no trace current, run eagerly: abstract_eval, then impl on
// the host, or the device's one-primitive program when the inputs are committed to an
// accelerator. So under jit even a bind of concrete inputs (zeros, iota) is an equation.
std::vector<Array> bind(const Primitive& prim, std::vector<Array> inputs,
                        const Params& params = {});
Array bind1(const Primitive& prim, std::vector<Array> inputs, const Params& params = {});

// Under --debug_nans (--debug_infs): throws FloatingPointError "invalid value (nan) encountered
// in <where>" for the first floating output with a NaN (an infinity), naming the call a jx
// function noted (detail/call_site.hpp). Reads values back from a device.
void check_invalid_values(const std::vector<Array>& outs, const std::string& where);

}  // namespace jx::trace
