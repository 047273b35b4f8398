// Order statistics of timing samples, and interleaved sampling, shared by the benchmarks.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <vector>

namespace bench {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

inline double minimum(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
}

struct Timing {
  double median_ms = 0, min_ms = 0;
  int reps = 0;
};

inline Timing summarize(const std::vector<double>& s) {
  return {median(s), minimum(s), static_cast<int>(s.size())};
}

inline void print_timing(const char* what, const Timing& t) {
  std::printf("  %-52s %9.3f ms  (best %.3f, %d calls)\n", what, t.median_ms, t.min_ms, t.reps);
}

// The least sampling: this many turns of every case, and this long in all (times the scale).
inline constexpr int kMinReps = 100;
inline constexpr double kMinMeasureMs = 3000;

// Times the cases interleaved, one call of each in turn, so that a neighbour's load on a shared
// machine (it comes and goes within seconds) hits every case alike: at least kMinReps turns and
// kMinMeasureMs in all, times `scale`, after one untimed warm-up call of each. Returns each
// case's samples (ms).
inline std::vector<std::vector<double>> sample_interleaved(
    const std::vector<std::function<void()>>& calls, int scale) {
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  for (const auto& call : calls) call();
  std::vector<std::vector<double>> samples(calls.size());
  const double budget_ms = kMinMeasureMs * scale;
  const std::size_t min_reps = static_cast<std::size_t>(kMinReps) * static_cast<std::size_t>(scale);
  Clock::time_point start = Clock::now();
  while (samples[0].size() < min_reps || ms_since(start) < budget_ms) {
    for (std::size_t c = 0; c < calls.size(); ++c) {
      Clock::time_point t = Clock::now();
      calls[c]();
      samples[c].push_back(ms_since(t));
    }
  }
  return samples;
}

}  // namespace bench
