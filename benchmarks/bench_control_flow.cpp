// bench_control_flow: a fori_loop of 10,000 steps of a small update under one jit, against
// 10,000 separate calls of the jitted step; the reference is the same update as a plain C++
// loop. A second row runs the loop with traced bounds (a while loop instead of a scan).
// Usage: bench_control_flow [repetition scale, default 1]. Prints one report; asserts nothing.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <jx/jx.hpp>

#include "bench_machine.hpp"
#include "bench_stats.hpp"

namespace np = jx::np;
namespace lax = jx::lax;
using jx::Array;

namespace {

constexpr int kSteps = 10000;
volatile double g_sink = 0;

// One step on x f32[4]: a contraction with a nonlinearity, so every step depends on the last.
Array step(const Array& x) { return x * 0.999f + np::sin(x) * 0.001f; }

}  // namespace

int main(int argc, char** argv) {
  int scale = argc > 1 ? std::max(1, std::atoi(argv[1])) : 1;
  std::printf("jx bench_control_flow: %d steps of x = 0.999 x + 0.001 sin(x), x f32[4]\n",
              kSteps);
  std::printf("machine: nproc %d, %s; load average %s\n", bench::affinity_cpus(),
              bench::cpu_model().c_str(), bench::load_average().c_str());
  std::printf("wall ms per %d steps: median, the cases interleaved\n\n", kSteps);

  Array x0 = np::array(std::vector<float>{0.5f, -1.0f, 2.0f, 3.0f});
  auto one_step = jx::jit(step, {.name = "step"});
  auto static_loop = jx::jit(
      [](const Array& x) {
        return lax::fori_loop(0, kSteps, [](const Array&, const Array& v) { return step(v); }, x);
      },
      {.name = "fori_loop_static"});
  auto traced_loop = jx::jit(
      [](const Array& x, const Array& n) {
        return lax::fori_loop(Array(0), n, [](const Array&, const Array& v) { return step(v); },
                              x);
      },
      {.name = "fori_loop_traced"});
  Array n = Array(static_cast<std::int32_t>(kSteps));

  // Correctness first (untimed): the three agree with a C++ loop in float.
  std::vector<float> want = x0.to_vector<float>();
  for (int s = 0; s < kSteps; ++s)
    for (float& v : want) v = v * 0.999f + std::sin(v) * 0.001f;
  Array calls = x0;
  for (int s = 0; s < kSteps; ++s) calls = one_step(calls);
  double worst = 0;
  for (const Array& got : {calls, static_loop(x0), traced_loop(x0, n)}) {
    std::vector<float> g = got.to_vector<float>();
    for (std::size_t i = 0; i < g.size(); ++i)
      worst = std::max(worst, double(std::fabs(g[i] - want[i])));
  }
  std::printf("correctness: max |jx - C++ loop| = %.3g %s\n\n", worst,
              worst < 1e-4 ? "(OK)" : "(WRONG)");
  if (worst >= 1e-4) return EXIT_FAILURE;

  std::vector<std::vector<double>> samples = bench::sample_interleaved(
      {[&] {
         Array x = x0;
         for (int s = 0; s < kSteps; ++s) x = one_step(x);
         g_sink = static_cast<double>(x.size());
       },
       [&] { g_sink = static_cast<double>(static_loop(x0).size()); },
       [&] { g_sink = static_cast<double>(traced_loop(x0, n).size()); },
       [&] {
         std::vector<float> v = x0.to_vector<float>();
         for (int s = 0; s < kSteps; ++s)
           for (float& e : v) e = e * 0.999f + std::sin(e) * 0.001f;
         g_sink = v[0];
       }},
      scale);
  bench::Timing calls_t = bench::summarize(samples[0]), fori = bench::summarize(samples[1]),
                traced = bench::summarize(samples[2]), plain = bench::summarize(samples[3]);
  bench::print_timing("10,000 calls of jit(step)", calls_t);
  bench::print_timing("jit(fori_loop(0, 10000, step)): scan", fori);
  bench::print_timing("jit(fori_loop(0, n, step)): while", traced);
  bench::print_timing("reference: the C++ loop", plain);
  std::printf("\n  calls / fori_loop (static)   %7.1fx\n", calls_t.median_ms / fori.median_ms);
  std::printf("  calls / fori_loop (traced)   %7.1fx\n", calls_t.median_ms / traced.median_ms);
  std::printf("  per step: calls %.2f us, fori_loop %.3f us, C++ %.3f us\n",
              1e3 * calls_t.median_ms / kSteps, 1e3 * fori.median_ms / kSteps,
              1e3 * plain.median_ms / kSteps);
  std::printf("  load average %s\n", bench::load_average().c_str());
  return 0;
}
