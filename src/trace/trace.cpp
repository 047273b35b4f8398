// The trace stack and bind: where every primitive application is routed.
#include <atomic>
#include <cmath>
#include <sstream>

#include "core/array_impl.hpp"
#include "jx/config.hpp"
#include "jx/detail/call_site.hpp"
#include "jx/device.hpp"
#include "jx/errors.hpp"
#include "support/check.hpp"
#include "support/float_environment.hpp"
#include "support/hot_thread_local.hpp"
#include "trace/tracer.hpp"

namespace jx::trace {
namespace {

// Traces from outermost to innermost; a null entry is an EvalContext, hiding those below it from
// binds of concrete inputs.
JX_HOT_THREAD_LOCAL std::vector<std::shared_ptr<Trace>> trace_stack;
std::atomic<DeviceEagerRun> device_eager_run{nullptr};

std::vector<ShapedArray> avals_of(std::span<const Array> xs) {
  std::vector<ShapedArray> out;
  out.reserve(xs.size());
  for (const auto& x : xs) out.push_back(x.aval());
  return out;
}

}  // namespace

void Tracer::throw_concretization_error(const char* what) const {
  if (!trace_->alive()) throw_leak_error(ShapedArray{});
  std::ostringstream os;
  os << "Abstract tracer value encountered where concrete value is expected: `" << what
     << "` was called on a traced array inside " << trace_->name()
     << ". The value of a traced array is not known until the function runs. For control flow "
        "on traced values use jx::lax::cond, jx::lax::while_loop or jx::lax::fori_loop; for a "
        "value that should be fixed at trace time, pass it as jx::Static (or list it in "
        "JitOptions::static_argnums).";
  throw ConcretizationError(os.str());
}

void Tracer::throw_leak_error(const ShapedArray& aval) const {
  std::ostringstream os;
  os << "Encountered an unexpected tracer. A function transformed by " << trace_->name()
     << " had a side effect, allowing for a reference to an intermediate value";
  if (!aval.shape.empty() || aval.dtype != float32) os << " with type " << aval.str();
  os << " to escape the scope of the transformation, and it was used after the transformation "
        "ended. Return the value from the transformed function instead of storing it.";
  throw TracerLeakError(os.str());
}

Array make_tracer(std::shared_ptr<Tracer> tracer, ShapedArray aval) {
  auto impl = std::make_shared<detail::ArrayImpl>();
  impl->aval = std::move(aval);
  impl->tracer = std::move(tracer);
  return Array(std::move(impl));
}

TraceScope::TraceScope(std::shared_ptr<Trace> trace) {
  JX_CHECK(trace->level() == next_trace_level());
  trace_stack.push_back(std::move(trace));
}

TraceScope::~TraceScope() {
  trace_stack.back()->end();
  trace_stack.pop_back();
}

int next_trace_level() { return static_cast<int>(trace_stack.size()); }

bool tracing() { return !trace_stack.empty() && trace_stack.back(); }

EvalContext::EvalContext() { trace_stack.push_back(nullptr); }
EvalContext::~EvalContext() { trace_stack.pop_back(); }

void set_device_eager_run(DeviceEagerRun run) { device_eager_run = run; }

std::vector<Array> bind(const Primitive& prim, std::vector<Array> inputs, const Params& params) {
  Trace* top = nullptr;
  for (const auto& x : inputs) {
    Tracer* t = tracer_of(x);
    if (!t) continue;
    if (!t->trace()->alive()) t->throw_leak_error(x.aval());
    if (!top || t->trace()->level() > top->level()) top = t->trace().get();
  }
  Trace* current = trace_stack.empty() ? nullptr : trace_stack.back().get();
  if (current && (!top || current->level() > top->level())) top = current;
  if (top) return top->process(prim, inputs, params);
  // abstract_eval type-checks before any buffer is touched, and fixes the outputs' avals.
  std::vector<ShapedArray> out_avals = prim.output_avals(avals_of(inputs), params);
  std::optional<Device> device = committed_device(inputs, prim.name);
  // On an accelerator, as JAX does: a cached one-primitive program on the inputs' device.
  if (device && device->platform() != Platform::cpu && prim.lower)
    if (DeviceEagerRun run = device_eager_run.load()) {
      std::vector<Array> outs = run(prim, inputs, params, *device);
      check_invalid_values(outs, prim.name);
      return outs;
    }
  std::vector<Array> outs;
  {
    detail::ScopedFlushDenormals flush;  // as compiled programs compute
    outs = prim.impl(inputs, params, out_avals);
  }
  JX_CHECK(outs.size() == out_avals.size(), prim.name);
  for (std::size_t i = 0; i < outs.size(); ++i)
    JX_CHECK(outs[i].aval() == out_avals[i], prim.name << " impl gave " << outs[i].aval().str()
                                                       << ", abstract_eval " << out_avals[i].str());
  check_invalid_values(outs, prim.name);
  // Without a device program, results go back where their committed inputs live.
  if (device)
    for (Array& y : outs) y = device_put(y, *device);
  return outs;
}

void check_invalid_values(const std::vector<Array>& outs, const std::string& where) {
  const Config& cfg = config();
  if (!cfg.debug_nans && !cfg.debug_infs) return;
  for (const Array& y : outs) {
    if (!is_floating(y.dtype()) || y.is_tracer()) continue;
    for (double v : y.to_vector<double>()) {
      const char* kind = cfg.debug_nans && std::isnan(v)   ? "nan"
                         : cfg.debug_infs && std::isinf(v) ? "inf"
                                                           : nullptr;
      if (!kind) continue;
      std::string message = std::string("invalid value (") + kind + ") encountered in " + where;
      if (const std::source_location* at = detail::current_call_site())
        message += "\n\ncalled at " + detail::source_str(*at);
      throw FloatingPointError(message);
    }
  }
}

Array bind1(const Primitive& prim, std::vector<Array> inputs, const Params& params) {
  auto outs = bind(prim, std::move(inputs), params);
  JX_CHECK(outs.size() == 1, prim.name << " has " << outs.size() << " results");
  return outs[0];
}

}  // namespace jx::trace
