// What bench_conv and bench_transformer share: jx against libtorch eager in one run, each case
// checked to compute the same values, timed in turns (the frameworks alternating), and reported
// as wall ms, GFLOP/s and a share of the machine's GEMM rate (OpenBLAS's sgemm).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <cblas.h>

#include <jx/jx.hpp>

#include "bench_machine.hpp"
#include "bench_stats.hpp"

#if JX_HAVE_TORCH
#include <torch/torch.h>
#endif

namespace bench {

inline volatile double g_sink = 0;  // written after timed calls so that their results are used

inline std::vector<float> uniform(std::mt19937& gen, std::size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& e : v) e = d(gen);
  return v;
}

// The largest difference between a and b relative to b's largest magnitude.
inline double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double scale = 0, worst = 0;
  for (float v : b) scale = std::max(scale, double(std::abs(v)));
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::abs(double(a[i]) - double(b[i])) / scale);
  return worst;
}

// Prints the comparison; exits with an error (the benchmark's only one) when it fails.
inline void check_agreement(const char* program, const char* what, double rel, double tolerance) {
  bool ok = rel <= tolerance;
  std::printf("  %-56s max rel diff %.2g  %s\n", what, rel, ok ? "OK" : "WRONG");
  if (ok) return;
  std::fprintf(stderr, "%s: %s: jx and libtorch differ (WRONG)\n", program, what);
  std::exit(EXIT_FAILURE);
}

// Gives OpenBLAS and libtorch the threads jx has (the CPUs this process may run on) and prints
// the machine and the libraries; returns the threads.
inline int share_threads() {
  const int threads = std::max(1, affinity_cpus());
  openblas_set_num_threads(threads);
  std::printf("machine: nproc %d, hardware threads %d, %s; load average %s\n", threads,
              hardware_threads(), cpu_model().c_str(), load_average().c_str());
  std::printf("OpenBLAS %s (kernels: %s), %d threads", openblas_get_config(),
              openblas_get_corename(), threads);
#if JX_HAVE_TORCH
  torch::set_num_threads(threads);
  std::printf("; libtorch %s, %d threads, oneDNN (mkldnn) %s\n", TORCH_VERSION,
              at::get_num_threads(), at::hasMKLDNN() ? "available" : "not built in");
#else
  std::printf("; libtorch not installed (its comparison is left out)\n");
#endif
  return threads;
}

// The largest difference between the losses of `steps` steps of each train step (a `step()`
// returning the loss), from the same start, relative to b's.
template <class A, class B>
double loss_agreement(A& a, B& b, int steps) {
  double worst = 0;
  for (int s = 0; s < steps; ++s) {
    double x = a.step(), y = b.step();
    worst = std::max(worst, std::abs(x - y) / std::abs(y));
  }
  return worst;
}

// GFLOP/s of OpenBLAS's sgemm on n x n matrices: the median of `reps` calls after a warm-up,
// printed as the GEMM reference.
inline double gemm_gflops(int n, int reps) {
  std::mt19937 gen(3);
  std::vector<float> a = uniform(gen, std::size_t(n) * n, -1, 1), b = a, c(a.size());
  auto call = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n);
  };
  call();
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    call();
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  g_sink = c[0];
  double gflops = 2.0 * n * n * n / (median(ms) * 1e6);
  std::printf("GEMM reference: OpenBLAS cblas_sgemm %dx%dx%d: %.1f GFLOP/s (median of %d)\n\n", n,
              n, n, gflops, reps);
  return gflops;
}

struct Case {
  std::string name;
  double flops;
  std::function<void()> call;
};

// Times each group (a framework's cases) in `rounds` turns, the frameworks alternating
// (sample_rotating); returns each case's timing, per group.
inline std::vector<std::vector<Timing>> time_rotation(const std::vector<std::vector<Case>>& groups,
                                                      int scale, int rounds) {
  std::vector<std::vector<std::function<void()>>> calls;
  for (const auto& g : groups) {
    calls.emplace_back();
    for (const Case& c : g) calls.back().push_back(c.call);
  }
  auto samples = sample_rotating(calls, scale, rounds);
  std::vector<std::vector<Timing>> out(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (std::size_t c = 0; c < groups[g].size(); ++c) out[g].push_back(summarize(samples[g][c]));
  return out;
}

inline void print_row(const Case& c, const Timing& t, double gemm) {
  double gflops = c.flops / (t.median_ms * 1e6);
  std::printf("  %-50s %9.2f ms (best %.2f, %3d calls) %7.1f GFLOP/s %5.0f%% of GEMM\n",
              c.name.c_str(), t.median_ms, t.min_ms, t.reps, gflops, 100 * gflops / gemm);
}

inline void print_ratio(const char* what, const Timing& other, const Timing& jx) {
  std::printf("  %-50s %6.2fx  (best %.2fx)\n", what, other.median_ms / jx.median_ms,
              other.min_ms / jx.min_ms);
}

// jx's side of a train step: one jit of value_and_grad(Loss) and Adam's update, parameters and
// optimizer state donated, on fixed data.
template <class Model, jx::Array (*Loss)(const Model&, const jx::Array&, const jx::Array&)>
class JxAdamStep {
  using Opt = decltype(jx::optim::adam(1e-3));
  using State = decltype(std::declval<const Opt&>().init(std::declval<const Model&>()));
  struct Step {
    Opt opt;
    std::tuple<Model, State, jx::Array> operator()(const Model& p, const State& s,
                                                   const jx::Array& x, const jx::Array& y) const {
      auto [l, g] = jx::value_and_grad(Loss)(p, x, y);
      auto [u, s2] = opt.update(g, s, p);
      return {jx::optim::apply_updates(p, u), std::move(s2), l};
    }
  };

 public:
  JxAdamStep(Model params, jx::Array x, jx::Array y, double lr)
      : opt_(jx::optim::adam(lr)),
        params_(std::move(params)),
        state_(opt_.init(params_)),
        x_(std::move(x)),
        y_(std::move(y)),
        step_(Step{opt_}, {.donate_argnums = {0, 1}, .name = "train_step"}) {}

  double step() {  // the loss before the update
    auto [p, s, l] = step_(params_, state_, x_, y_);
    params_ = std::move(p), state_ = std::move(s);
    const jx::Array& loss = l;
    return loss.item<double>();
  }

 private:
  Opt opt_;
  Model params_;
  State state_;
  jx::Array x_, y_;
  jx::Jitted<Step> step_;
};

}  // namespace bench
