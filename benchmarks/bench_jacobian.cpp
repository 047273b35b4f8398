// bench_jacobian: a 100x100 Jacobian of f(x) = tanh(W x + b) by jx::jacfwd and jx::jacrev (one
// vmap over the standard basis: a single batched program) against the reference measured in the
// same run: the per-basis-vector loop, 100 jx::jvp calls (a column each) or one jx::vjp and 100
// calls of its pullback (a row each), stacked. Both eagerly and under jit; under jit the loop is
// traced into one program of 100 jvps (or pullbacks), and the first call's trace and compile
// time is shown beside the steady-state time. W and b are arguments, so that under jit nothing is
// folded at trace time. The cases of a group run interleaved.
// Usage: bench_jacobian [repetition scale, default 1]. Prints one report; asserts nothing.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <jx/jx.hpp>

#include "bench_machine.hpp"
#include "bench_random.hpp"
#include "bench_stats.hpp"

namespace np = jx::np;
using jx::Array;

namespace {

constexpr int kN = 100;
volatile double g_sink = 0;

double ms_of(const std::function<void()>& call) {
  auto t0 = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// `reps` turns of every case, interleaved call by call, after one untimed call of each.
std::vector<std::vector<double>> sample(const std::vector<std::function<void()>>& calls, int reps) {
  for (const auto& call : calls) call();
  std::vector<std::vector<double>> samples(calls.size());
  for (int r = 0; r < reps; ++r)
    for (std::size_t c = 0; c < calls.size(); ++c) samples[c].push_back(ms_of(calls[c]));
  return samples;
}

double max_abs_diff(const Array& a, const Array& b) {
  std::vector<float> x = a.to_vector<float>(), y = b.to_vector<float>();
  double worst = x.size() == y.size() ? 0 : INFINITY;
  for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i)
    worst = std::max(worst, double(std::fabs(x[i] - y[i])));
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  int scale = argc > 1 ? std::max(1, std::atoi(argv[1])) : 1;
  std::printf(
      "jx bench_jacobian: the %dx%d Jacobian of tanh(W x + b), f32: one vmap over the standard "
      "basis (jx::jacfwd, jx::jacrev) vs the per-basis-vector loop (%d jx::jvp, or %d pullback "
      "calls of one jx::vjp)\n",
      kN, kN, kN, kN);
  std::printf("machine: nproc %d, %s; load average %s\n", bench::affinity_cpus(),
              bench::cpu_model().c_str(), bench::load_average().c_str());
  std::printf("wall ms per Jacobian: median of the interleaved samples\n\n");

  Array W = bench::normal_array({kN, kN}, 1, 0.1f), b = bench::normal_array({kN}, 2, 0.1f);
  Array x = bench::normal_array({kN}, 3, 1.0f);
  auto f = [](const Array& v, const Array& w, const Array& c) {
    return np::tanh(np::matmul(w, v) + c);
  };
  std::vector<Array> basis;
  for (int i = 0; i < kN; ++i) basis.push_back(np::eye(kN)[i]);

  // The references: a column per jvp, a row per pullback call.
  auto loop_fwd = [&](const Array& v, const Array& w, const Array& c) {
    auto of_v = [&](const Array& u) { return f(u, w, c); };
    std::vector<Array> columns;
    for (const Array& e : basis)
      columns.push_back(jx::jvp(of_v, std::tuple{v}, std::tuple{e}).second);
    return np::stack(columns, 1);
  };
  auto loop_rev = [&](const Array& v, const Array& w, const Array& c) {
    auto of_v = [&](const Array& u) { return f(u, w, c); };
    auto [y, pullback] = jx::vjp(of_v, v);
    std::vector<Array> rows;
    for (const Array& e : basis) rows.push_back(std::get<0>(pullback(e)));
    return np::stack(rows, 0);
  };
  auto vmap_fwd = jx::jacfwd(f);
  auto vmap_rev = jx::jacrev(f);
  auto jit_vmap_fwd = jx::jit(vmap_fwd, {.name = "jacfwd"});
  auto jit_vmap_rev = jx::jit(vmap_rev, {.name = "jacrev"});
  auto jit_loop_fwd = jx::jit(loop_fwd, {.name = "loop_jvp"});
  auto jit_loop_rev = jx::jit(loop_rev, {.name = "loop_vjp"});

  // First calls (trace, and under jit compile), untimed by the samples below; then correctness.
  double first[4] = {ms_of([&] { g_sink = double(jit_vmap_fwd(x, W, b).size()); }),
                     ms_of([&] { g_sink = double(jit_loop_fwd(x, W, b).size()); }),
                     ms_of([&] { g_sink = double(jit_vmap_rev(x, W, b).size()); }),
                     ms_of([&] { g_sink = double(jit_loop_rev(x, W, b).size()); })};
  Array want = loop_fwd(x, W, b);
  double worst = 0;
  for (const Array& got :
       {vmap_fwd(x, W, b), vmap_rev(x, W, b), loop_rev(x, W, b), jit_vmap_fwd(x, W, b),
        jit_vmap_rev(x, W, b), jit_loop_fwd(x, W, b), jit_loop_rev(x, W, b)})
    worst = std::max(worst, max_abs_diff(got, want));
  std::printf("correctness: max |J - J(loop of jvp)| over the 7 other ways = %.3g %s\n\n", worst,
              worst < 1e-5 ? "(OK)" : "(WRONG)");
  if (worst >= 1e-5) return EXIT_FAILURE;

  auto call = [&](auto& fn, const Array& v) {
    return [&fn, &v, &W, &b] { g_sink = static_cast<double>(fn(v, W, b).size()); };
  };
  std::vector<std::vector<double>> eager = sample(
      {call(vmap_fwd, x), call(loop_fwd, x), call(vmap_rev, x), call(loop_rev, x)}, 10 * scale);
  std::vector<std::vector<double>> jitted = bench::sample_interleaved(
      {call(jit_vmap_fwd, x), call(jit_loop_fwd, x), call(jit_vmap_rev, x), call(jit_loop_rev, x)},
      scale);
  bench::Timing e[4], j[4];
  for (int c = 0; c < 4; ++c) {
    e[c] = bench::summarize(eager[static_cast<std::size_t>(c)]);
    j[c] = bench::summarize(jitted[static_cast<std::size_t>(c)]);
  }
  std::printf("eager (each call traces and runs op by op):\n");
  bench::print_timing("jacfwd(f)(x, W, b): vmap of the jvp over the basis", e[0]);
  bench::print_timing("reference: 100 x jvp(f, {x}, {e_i}), stacked", e[1]);
  bench::print_timing("jacrev(f)(x, W, b): vmap of the pullback", e[2]);
  bench::print_timing("reference: vjp(f, x), 100 x pullback(e_i), stacked", e[3]);
  std::printf("jit (steady state; first call = trace + compile, below):\n");
  bench::print_timing("jit(jacfwd(f))(x, W, b)", j[0]);
  bench::print_timing("reference: jit of the 100-jvp loop", j[1]);
  bench::print_timing("jit(jacrev(f))(x, W, b)", j[2]);
  bench::print_timing("reference: jit of the 100-pullback loop", j[3]);
  std::printf(
      "\nfirst call (trace + compile) ms: jit(jacfwd) %.1f, jvp loop %.1f; jit(jacrev) %.1f, "
      "pullback loop %.1f\n",
      first[0], first[1], first[2], first[3]);
  std::printf("\nspeedup of the vmap path over the loop (loop / vmap, medians):\n");
  std::printf("  eager jacfwd  %7.1fx\n", e[1].median_ms / e[0].median_ms);
  std::printf("  eager jacrev  %7.1fx\n", e[3].median_ms / e[2].median_ms);
  std::printf("  jit   jacfwd  %7.1fx\n", j[1].median_ms / j[0].median_ms);
  std::printf("  jit   jacrev  %7.1fx\n", j[3].median_ms / j[2].median_ms);
  std::printf("  first call (trace + compile): jacfwd %.1fx, jacrev %.1fx\n", first[1] / first[0],
              first[3] / first[2]);
  std::printf("  load average %s\n", bench::load_average().c_str());
  return 0;
}
