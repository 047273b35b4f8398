// Milliseconds since a point on the steady clock: the stage times that compile logs, cache
// statistics and cache-miss records report.
#pragma once

#include <chrono>

namespace jx::support {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace jx::support
