// A profiler for running programs, as jax.profiler: a trace of every thunk that runs (kernels,
// library GEMMs, copies, sorts, loops and branches) with its start and duration per thread, CPU
// worker threads included, every compile with its stages, and the user's own spans, written as
// Chrome trace JSON that Perfetto and chrome://tracing open.
#pragma once

#include <string>

namespace jx::profiler {

// Starts recording. Throws jx::Error while another trace is recording.
void start_trace(const std::string& path);
// Stops recording and writes the trace to start_trace's path: {"traceEvents": [...]}, one
// complete event ("ph": "X", "ts" and "dur" in µs) per span, with its "pid", "tid", "cat" and
// "args", and the threads' names as metadata events. Throws jx::Error when no trace is recording
// or the file cannot be written.
void stop_trace();

// Records from construction to destruction (a scope), as jax.profiler.trace.
class Trace {
 public:
  explicit Trace(const std::string& path) { start_trace(path); }
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;
};

// A span of the user's own in the trace, from construction to destruction, on this thread
// (jax.profiler.TraceAnnotation). Costs nothing while no trace records.
class TraceAnnotation {
 public:
  explicit TraceAnnotation(std::string name);
  ~TraceAnnotation();
  TraceAnnotation(const TraceAnnotation&) = delete;
  TraceAnnotation& operator=(const TraceAnnotation&) = delete;

 private:
  std::string name_;
  long long start_ns_ = -1;  // -1: no trace was recording
};

// The thunks of the last trace (recording or stopped) by total time, the `rows` longest: name,
// kind, calls, total and mean time, and share of all thunk time, as a text table.
std::string summary(int rows = 20);

}  // namespace jx::profiler
