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

// The least sampling: this many turns of every case, and this long in all (times the scale, which
// may be a fraction).
inline constexpr int kMinReps = 100;
inline constexpr double kMinMeasureMs = 3000;

// Times the cases interleaved, one call of each in turn, so that a neighbour's load on a shared
// machine (it comes and goes within seconds) hits every case alike: at least kMinReps turns and
// kMinMeasureMs in all, times `scale`, after one untimed warm-up call of each. Returns each
// case's samples (ms).
inline std::vector<std::vector<double>> sample_interleaved(
    const std::vector<std::function<void()>>& calls, double scale) {
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  for (const auto& call : calls) call();
  std::vector<std::vector<double>> samples(calls.size());
  const double budget_ms = kMinMeasureMs * scale;
  const auto min_reps = static_cast<std::size_t>(std::max(1.0, kMinReps * scale));
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

// Times groups of cases, a group per framework: each of `rounds` rounds gives every group in
// turn its share of the time, in which the group's cases are interleaved call by call after an
// untimed call of each. A framework's idle threads can spin for milliseconds after its work
// (libgomp's do), and on a machine with few cores they take a core from whatever runs next: the
// untimed calls absorb that at each turn, so a group's timings are its own, while a neighbour's
// load, which comes and goes within seconds, still hits every group alike. Returns, per group,
// each case's samples (ms).
inline std::vector<std::vector<std::vector<double>>> sample_rotating(
    const std::vector<std::vector<std::function<void()>>>& groups, int scale, int rounds = 6) {
  std::vector<std::vector<std::vector<double>>> samples;
  for (const auto& g : groups) samples.emplace_back(g.size());
  using Clock = std::chrono::steady_clock;
  const double turn_ms = kMinMeasureMs * scale / rounds;
  const std::size_t turn_reps =
      (static_cast<std::size_t>(kMinReps) * static_cast<std::size_t>(scale) + rounds - 1) / rounds;
  for (int r = 0; r < rounds; ++r)
    for (std::size_t g = 0; g < groups.size(); ++g) {
      for (const auto& call : groups[g]) call();
      Clock::time_point start = Clock::now();
      for (std::size_t reps = 0;
           reps < turn_reps ||
           std::chrono::duration<double, std::milli>(Clock::now() - start).count() < turn_ms;
           ++reps)
        for (std::size_t c = 0; c < groups[g].size(); ++c) {
          Clock::time_point t = Clock::now();
          groups[g][c]();
          samples[g][c].push_back(
              std::chrono::duration<double, std::milli>(Clock::now() - t).count());
        }
    }
  return samples;
}

}  // namespace bench
