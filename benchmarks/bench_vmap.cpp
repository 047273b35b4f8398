// bench_vmap: jit(vmap(f)) over 256 examples against a loop of 256 jit(f) calls, f a small MLP
// forward pass on one example; the reference is the same network written batched by hand.
// Each case is timed in steady state, as a training or serving loop calls it: the loop's 256
// calls run back to back, and so do kBackToBack calls of each batched program (timed per
// call). The cases interleave, so the first batched call after the loop also finds the thread
// pool asleep; that cost is printed on its own.
// Usage: bench_vmap [repetition scale, default 1]. Prints one report; asserts nothing.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <jx/jx.hpp>

#include "bench_machine.hpp"
#include "bench_random.hpp"
#include "bench_stats.hpp"

namespace np = jx::np;
using jx::Array;

struct Mlp {
  Array w1, b1, w2, b2, w3, b3;
};
JX_PYTREE(Mlp, w1, b1, w2, b2, w3, b3)

namespace {

constexpr int kIn = 32, kHidden = 64, kOut = 10, kExamples = 256;
constexpr int kBackToBack = 8;
constexpr double kTarget = 20;
volatile double g_sink = 0;

// One example: x is f32[kIn]; the same code serves a batch, x f32[n, kIn], as the reference.
Array forward(const Mlp& p, const Array& x) {
  Array h = np::tanh(np::matmul(x, p.w1) + p.b1);
  h = np::tanh(np::matmul(h, p.w2) + p.b2);
  return np::matmul(h, p.w3) + p.b3;
}

}  // namespace

int main(int argc, char** argv) {
  int scale = argc > 1 ? std::max(1, std::atoi(argv[1])) : 1;
  std::printf(
      "jx bench_vmap: jit(vmap(f)) over %d examples vs %d calls of jit(f); f = MLP %d-%d-%d-%d "
      "forward (tanh), f32\n",
      kExamples, kExamples, kIn, kHidden, kHidden, kOut);
  std::printf("machine: nproc %d, %s; load average %s\n", bench::affinity_cpus(),
              bench::cpu_model().c_str(), bench::load_average().c_str());
  std::printf("wall ms per whole case: median, the cases interleaved call by call\n\n");

  Mlp p{bench::normal_array({kIn, kHidden}, 1, 0.2f),     bench::normal_array({kHidden}, 2, 0.1f),
        bench::normal_array({kHidden, kHidden}, 3, 0.1f), bench::normal_array({kHidden}, 4, 0.1f),
        bench::normal_array({kHidden, kOut}, 5, 0.1f),    bench::normal_array({kOut}, 6, 0.1f)};
  Array xs = bench::normal_array({kExamples, kIn}, 7, 1.0f);
  std::vector<Array> examples;
  for (int i = 0; i < kExamples; ++i)
    examples.push_back(np::reshape(jx::lax::slice(xs, {i, 0}, {i + 1, kIn}), {kIn}));

  auto one = jx::jit(forward, {.name = "forward"});
  auto batched = jx::jit(jx::vmap(forward, {jx::none, 0}), {.name = "vmap_forward"});
  auto by_hand = jx::jit(forward, {.name = "batched_by_hand"});  // matmul takes [n, kIn] as is

  // Correctness first (untimed): the vmapped outputs are the loop's, stacked.
  Array got = batched(p, xs);
  double worst = 0;
  for (int i = 0; i < kExamples; ++i) {
    std::vector<float> want = one(p, examples[static_cast<std::size_t>(i)]).to_vector<float>();
    std::vector<float> row =
        np::reshape(jx::lax::slice(got, {i, 0}, {i + 1, kOut}), {kOut}).to_vector<float>();
    for (int j = 0; j < kOut; ++j) worst = std::max(worst, double(std::fabs(row[j] - want[j])));
  }
  std::printf("correctness: max |vmap - loop| = %.3g %s\n\n", worst,
              worst < 1e-5 ? "(OK)" : "(WRONG)");
  if (worst >= 1e-5) return EXIT_FAILURE;

  // Per batched case: the first call's time, then the mean of the next kBackToBack.
  std::vector<double> first_vm, first_hand;
  auto back_to_back = [&](auto& fn, std::vector<double>& first) {
    using Clock = std::chrono::steady_clock;
    auto t0 = Clock::now();
    g_sink = static_cast<double>(fn(p, xs).size());
    first.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    for (int i = 0; i < kBackToBack; ++i) g_sink = static_cast<double>(fn(p, xs).size());
  };
  std::vector<std::vector<double>> samples = bench::sample_interleaved(
      {[&] {
         for (const Array& x : examples) g_sink = static_cast<double>(one(p, x).size());
       },
       [&] { back_to_back(batched, first_vm); }, [&] { back_to_back(by_hand, first_hand); }},
      scale);
  for (std::size_t c : {1, 2}) {  // minus each sample's first call, per call
    const std::vector<double>& first = c == 1 ? first_vm : first_hand;
    std::size_t skip = first.size() - samples[c].size();  // the untimed warm-up call
    for (std::size_t i = 0; i < samples[c].size(); ++i)
      samples[c][i] = (samples[c][i] - first[i + skip]) / kBackToBack;
  }
  bench::Timing loop = bench::summarize(samples[0]), vm = bench::summarize(samples[1]),
                hand = bench::summarize(samples[2]);
  bench::print_timing("loop: 256 calls of jit(f)(params, x_i)", loop);
  bench::print_timing("jit(vmap(f, {none, 0}))(params, xs)", vm);
  bench::print_timing("reference: jit(f) written batched, on xs", hand);
  bench::print_timing("vmap's first call after the loop (pool asleep)", bench::summarize(first_vm));
  double ratio = loop.median_ms / vm.median_ms;
  std::printf("\n  loop / vmap                 %7.1fx\n", ratio);
  std::printf("  vmap / batched by hand      %7.2fx\n", vm.median_ms / hand.median_ms);
  std::printf("  load average %s\n\n", bench::load_average().c_str());
  std::printf("Target: loop / vmap >= %.0fx: %.1fx %s\n", kTarget, ratio,
              ratio >= kTarget ? "PASS" : "MISS");
  return 0;
}
