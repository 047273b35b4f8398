// bench_autodiff: what a jitted gradient costs against the jitted forward pass. An MLP
// 784-512-512-10 (tanh hidden layers, then relu ones) with a softmax cross-entropy loss averaged
// over a batch of 128, float32: jit(loss) against jit(value_and_grad(loss)), as whole calls, with
// the FLOP counts of both compiled programs and, as the reference measured in the same run,
// OpenBLAS's cblas_sgemm on the same GEMMs (3 for the forward pass, 8 for forward and backward).
// Usage: bench_autodiff [repetition scale, default 1] [--hlo: print the gradient's optimized HLO].
// Prints one report; exits with an error only when a result is wrong.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <cblas.h>

#include <jx/jx.hpp>

#include "bench_machine.hpp"
#include "bench_random.hpp"
#include "bench_stats.hpp"
#include "bench_thunks.hpp"

namespace np = jx::np;
using jx::Array;

// The MLP's parameters: a pytree, so value_and_grad returns its gradient in the same struct.
struct Mlp {
  Array w1, b1, w2, b2, w3, b3;
};
JX_PYTREE(Mlp, w1, b1, w2, b2, w3, b3)

namespace {

// Written after timed calls so that their results are observably used.
volatile double g_sink = 0;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "bench_autodiff: %s\n", what.c_str());
  std::exit(EXIT_FAILURE);
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// ---- the machine -----------------------------------------------------------------------------

using bench::affinity_cpus;
using bench::cpu_model;
using bench::hardware_threads;
using bench::load_average;

// ---- the model -------------------------------------------------------------------------------

constexpr std::int64_t kBatch = 128, kIn = 784, kHidden = 512, kClasses = 10;

std::vector<float> random_vector(std::size_t n, std::uint64_t seed, float lo, float hi) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = bench::random_float(seed, i, lo, hi);
  return v;
}

// Glorot-uniform weights, small biases.
Array random_weight(std::int64_t fan_in, std::int64_t fan_out, std::uint64_t seed) {
  float limit = std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
  return np::array(random_vector(fan_in * fan_out, seed, -limit, limit), {fan_in, fan_out});
}

Array random_bias(std::int64_t n, std::uint64_t seed) {
  return np::array(random_vector(n, seed, -0.1f, 0.1f), {n});
}

Array act_relu(const Array& x) { return np::maximum(x, 0.0f); }
Array act_tanh(const Array& x) { return np::tanh(x); }

// Mean softmax cross-entropy of the MLP's logits against one-hot labels y; Act: the hidden
// layers' activation.
template <Array (*Act)(const Array&)>
Array loss(const Mlp& p, const Array& x, const Array& y) {
  Array h = Act(np::matmul(x, p.w1) + p.b1);
  h = Act(np::matmul(h, p.w2) + p.b2);
  Array logits = np::matmul(h, p.w3) + p.b3;
  Array z = logits - np::stop_gradient(np::max(logits, -1, /*keepdims=*/true));
  Array log_p = z - np::log(np::sum(np::exp(z), -1, /*keepdims=*/true));
  return -np::mean(np::sum(y * log_p, -1));
}

// The dots' multiply-adds x 2: forward x@W1, h1@W2, h2@W3; the gradient adds dW1, dW2, dW3 (as
// many as the forward) and the two activation gradients dh2 = g3 W3^T, dh1 = g2 W2^T (x needs
// none).
constexpr double kForwardDotFlops =
    2.0 * kBatch * (kIn * kHidden + kHidden * kHidden + kHidden * kClasses);
constexpr double kGradientDotFlops =
    2 * kForwardDotFlops + 2.0 * kBatch * (kHidden * kHidden + kHidden * kClasses);

// ---- timing ----------------------------------------------------------------------------------

using bench::kMinMeasureMs;
using bench::kMinReps;
using bench::print_timing;
using bench::sample_interleaved;
using bench::summarize;
using bench::Timing;

// ---- the reference: the same GEMMs through OpenBLAS --------------------------------------------

// Row-major C[m,n] = op(A) op(B), op a transpose where asked, as jx's GEMM thunk calls it.
struct Gemm {
  bool ta, tb;
  int m, n, k;
  const float* a;
  const float* b;
  float* c;
  void operator()() const {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
                k, 1.0f, a, ta ? m : k, b, tb ? k : n, 0.0f, c, n);
  }
};

struct SgemmReference {
  // Operands and results of the eight GEMMs (values do not matter to the time).
  std::vector<float> x, w1, w2, w3, h1, h2, logits, g3, g2, g1, dh2, dh1, dw1, dw2, dw3;
  std::vector<Gemm> forward, backward;

  SgemmReference() {
    const int B = kBatch, I = kIn, H = kHidden, C = kClasses;
    x = random_vector(B * I, 101, -1, 1);
    w1 = random_vector(I * H, 102, -1, 1);
    w2 = random_vector(H * H, 103, -1, 1);
    w3 = random_vector(H * C, 104, -1, 1);
    g3 = random_vector(B * C, 105, -1, 1);
    g2 = random_vector(B * H, 106, -1, 1);
    g1 = random_vector(B * H, 107, -1, 1);
    h1.resize(B * H), h2.resize(B * H), logits.resize(B * C);
    dh2.resize(B * H), dh1.resize(B * H), dw1.resize(I * H), dw2.resize(H * H), dw3.resize(H * C);
    forward = {{false, false, B, H, I, x.data(), w1.data(), h1.data()},
               {false, false, B, H, H, h1.data(), w2.data(), h2.data()},
               {false, false, B, C, H, h2.data(), w3.data(), logits.data()}};
    backward = forward;
    backward.push_back({true, false, H, C, B, h2.data(), g3.data(), dw3.data()});  // h2^T g3
    backward.push_back({false, true, B, H, C, g3.data(), w3.data(), dh2.data()});  // g3 W3^T
    backward.push_back({true, false, H, H, B, h1.data(), g2.data(), dw2.data()});  // h1^T g2
    backward.push_back({false, true, B, H, H, g2.data(), w2.data(), dh1.data()});  // g2 W2^T
    backward.push_back({true, false, I, H, B, x.data(), g1.data(), dw1.data()});   // x^T g1
  }
  static void run(const std::vector<Gemm>& gs) {
    for (const Gemm& g : gs) g();
  }
};

// ---- jx's compiled programs ------------------------------------------------------------------

using bench::count_thunks;
using bench::ThunkCounts;

double scalar(const Array& a) { return a.item<double>(); }

void print_indented(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) std::printf("    %s\n", line.c_str());
}

// max |a - b| / max |b| over one leaf: relative to the leaf's scale, so that entries that are
// nearly zero (a relu's dead units) do not dominate.
double relative_error(const Array& got, const Array& want) {
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  if (g.size() != w.size()) fail("a gradient leaf has the wrong size");
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    diff = std::max(diff, std::abs(g[i] - w[i]));
    scale = std::max(scale, std::abs(w[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

void print_header(int threads, int scale) {
  std::printf(
      "jx bench_autodiff: jit(value_and_grad(loss)) against jit(loss), MLP %lld-%lld-%lld-"
      "%lld, softmax cross-entropy, batch %lld, f32\n",
      static_cast<long long>(kIn), static_cast<long long>(kHidden), static_cast<long long>(kHidden),
      static_cast<long long>(kClasses), static_cast<long long>(kBatch));
  std::printf("machine: nproc %d, hardware threads %d, %s; load average %s\n", affinity_cpus(),
              threads, cpu_model().c_str(), load_average().c_str());
  std::printf("%s (kernels: %s), %d threads\n", openblas_get_config(), openblas_get_corename(),
              threads);
  if (std::string(openblas_get_corename()) == "Prescott" && __builtin_cpu_supports("avx512f"))
    std::printf(
        "  (OpenBLAS did not recognize this AVX-512 CPU: OPENBLAS_CORETYPE=SkylakeX selects its "
        "AVX-512 kernels, for jx and sgemm alike)\n");
  std::printf(
      "wall ms per whole call: median over >= %d calls of each case, interleaved call by call, "
      ">= %.1f s in all (x%d), after a warm-up call of each; jx outputs are fresh arrays\n\n",
      kMinReps, kMinMeasureMs / 1e3, scale);
}

// The data every case reads, from fixed seeds.
struct Inputs {
  Mlp params;
  Array x, y;  // f32[batch, 784] in [0, 1); one-hot labels f32[batch, 10]
};

Inputs make_inputs() {
  Mlp params{random_weight(kIn, kHidden, 1),      random_bias(kHidden, 2),
             random_weight(kHidden, kHidden, 3),  random_bias(kHidden, 4),
             random_weight(kHidden, kClasses, 5), random_bias(kClasses, 6)};
  Array x = np::array(random_vector(kBatch * kIn, 7, 0, 1), {kBatch, kIn});
  std::vector<float> onehot(kBatch * kClasses, 0.0f);
  for (std::int64_t r = 0; r < kBatch; ++r)
    onehot[r * kClasses + static_cast<std::int64_t>(bench::random_float(8, r, 0, 1) * kClasses)] =
        1.0f;
  return {std::move(params), std::move(x), np::array(onehot, {kBatch, kClasses})};
}

constexpr double kBound = 3.5;

// One activation's case: correctness, the compiled programs, the timings, the ratios. Returns
// the time ratio, or a negative number when jx could not compile the gradient.
template <Array (*Act)(const Array&)>
double mlp_case(const char* act, const Inputs& in, const SgemmReference& ref, int scale,
                bool show_hlo) {
  const Mlp& params = in.params;
  const Array &x = in.x, &y = in.y;
  std::printf("==== hidden activation: %s ====\n", act);
  auto fwd = jx::jit(loss<Act>, {.name = "mlp_loss"});
  auto vg = jx::jit(jx::value_and_grad(loss<Act>), {.name = "mlp_value_and_grad"});

  // ---- the compiled programs (a compile error is reported, not fatal) ----
  auto fwd_c = fwd.lower(params, x, y).compile();
  std::optional<decltype(vg.lower(params, x, y).compile())> vg_c;
  try {
    vg_c.emplace(vg.lower(params, x, y).compile());
  } catch (const jx::Error& e) {
    std::printf("  jit(value_and_grad(loss)) does not compile: %s\n", e.what());
    std::printf("  thunks of jit(loss):\n");
    print_indented(fwd_c.thunk_sequence());
    std::printf("  (not measured)\n\n");
    return -1;
  }

  // ---- correctness, once, untimed: the jitted programs against the eager gradient ----
  auto [v_eager, g_eager] = jx::value_and_grad(loss<Act>)(params, x, y);
  auto [v_jit, g_jit] = vg(params, x, y);
  Array l_jit = fwd(params, x, y);
  double v_ref = scalar(v_eager);
  double v_err = std::abs(scalar(v_jit) - v_ref) / std::abs(v_ref);
  double l_err = std::abs(scalar(l_jit) - v_ref) / std::abs(v_ref);
  std::vector<Array> gj = jx::tree::leaves(g_jit), ge = jx::tree::leaves(g_eager);
  const char* names[] = {"w1", "b1", "w2", "b2", "w3", "b3"};
  double g_err = 0;
  std::string per_leaf;
  for (std::size_t i = 0; i < ge.size(); ++i) {
    double e = relative_error(gj[i], ge[i]);
    g_err = std::max(g_err, e);
    per_leaf += std::string(i ? ", " : "") + names[i] + " " + fmt("%.2g", e);
  }
  std::printf("Correctness (untimed): loss %.6f (eager value_and_grad)\n", v_ref);
  std::printf("  jit(loss) vs eager: relative %.2g; jit(value_and_grad) value: relative %.2g\n",
              l_err, v_err);
  std::printf("  jit(value_and_grad) gradient vs eager, max|diff|/max|eager| per leaf: %s\n",
              per_leaf.c_str());
  constexpr double kTolerance = 1e-5;
  if (!(v_err <= kTolerance && l_err <= kTolerance && g_err <= kTolerance))
    fail(std::string(act) +
         ": the jitted loss or gradient differs from the eager one by more than " +
         fmt("%g", kTolerance));
  std::printf("  within %g: OK\n\n", kTolerance);

  jx::CostAnalysis fwd_cost = fwd_c.cost_analysis(), vg_cost = vg_c->cost_analysis();
  ThunkCounts fwd_k = count_thunks(fwd_c.thunk_sequence());
  ThunkCounts vg_k = count_thunks(vg_c->thunk_sequence());

  // ---- timing: the four cases interleaved, call by call ----
  std::vector<std::vector<double>> samples = sample_interleaved(
      {[&] { g_sink = scalar(fwd(params, x, y)); },
       [&] { g_sink = scalar(vg(params, x, y).first); }, [&] { SgemmReference::run(ref.forward); },
       [&] { SgemmReference::run(ref.backward); }},
      scale);
  const std::vector<double>&s_fwd = samples[0], &s_vg = samples[1], &s_gemm_fwd = samples[2],
        &s_gemm_all = samples[3];
  g_sink = ref.dw1[0];
  Timing t_fwd = summarize(s_fwd), t_vg = summarize(s_vg);
  Timing t_gf = summarize(s_gemm_fwd), t_ga = summarize(s_gemm_all);

  std::printf("Whole calls\n");
  print_timing("jx: jit(loss)(params, x, y)", t_fwd);
  print_timing("jx: jit(value_and_grad(loss))(params, x, y)", t_vg);
  print_timing("OpenBLAS: the forward's 3 sgemms", t_gf);
  print_timing("OpenBLAS: forward + backward, 8 sgemms", t_ga);
  std::printf("  OpenBLAS rate: forward %.1f GFLOP/s, forward + backward %.1f GFLOP/s\n\n",
              kForwardDotFlops / t_gf.median_ms / 1e6, kGradientDotFlops / t_ga.median_ms / 1e6);

  std::printf("Compiled programs (cost_analysis; thunks: kernels, gemms, others)\n");
  std::printf("  %-22s %14s %14s %16s %8s %6s %7s\n", "program", "flops", "dot flops",
              "transcendentals", "kernels", "gemms", "others");
  std::printf("  %-22s %14.0f %14.0f %16.0f %8d %6d %7d\n", "jit(loss)", fwd_cost.flops,
              kForwardDotFlops, fwd_cost.transcendentals, fwd_k.kernels, fwd_k.gemms, fwd_k.others);
  std::printf("  %-22s %14.0f %14.0f %16.0f %8d %6d %7d\n", "jit(value_and_grad)", vg_cost.flops,
              kGradientDotFlops, vg_cost.transcendentals, vg_k.kernels, vg_k.gemms, vg_k.others);
  std::printf("  (dot flops: 2 x the GEMMs' multiply-adds, counted by hand)\n");
  std::printf("  thunks of jit(loss):\n");
  print_indented(fwd_c.thunk_sequence());
  std::printf("  thunks of jit(value_and_grad(loss)):\n");
  print_indented(vg_c->thunk_sequence());
  if (show_hlo) {
    std::printf("  optimized HLO of jit(value_and_grad(loss)):\n");
    print_indented(vg_c->hlo_text());
  }
  std::printf("\n");

  const double time_ratio = t_vg.median_ms / t_fwd.median_ms;
  const double flop_ratio = vg_cost.flops / fwd_cost.flops;
  const double gemm_ratio = t_ga.median_ms / t_gf.median_ms;
  std::printf("Ratios (time ratios use medians)\n");
  std::printf("  %-52s %7.2fx\n", "time: value_and_grad / forward (jx)", time_ratio);
  std::printf("  %-52s %7.2fx\n", "time, best calls: value_and_grad / forward (jx)",
              t_vg.min_ms / t_fwd.min_ms);
  std::printf("  %-52s %7.2fx\n", "time: 8 sgemms / 3 sgemms (OpenBLAS reference)", gemm_ratio);
  std::printf("  %-52s %7.2fx\n", "time, best calls: 8 sgemms / 3 sgemms",
              t_ga.min_ms / t_gf.min_ms);
  std::printf("  %-52s %7.2fx\n", "flops: value_and_grad / forward (cost_analysis)", flop_ratio);
  std::printf("  %-52s %7.2fx\n", "dot flops: value_and_grad / forward (by hand)",
              kGradientDotFlops / kForwardDotFlops);
  std::printf("  %-52s %7.2fx\n", "jx forward / its 3 sgemms", t_fwd.median_ms / t_gf.median_ms);
  std::printf("  %-52s %7.2fx\n", "jx value_and_grad / its 8 sgemms",
              t_vg.median_ms / t_ga.median_ms);
  std::printf("  load average %s\n\n", load_average().c_str());
  return time_ratio;
}

// The gradient's largest non-GEMM work, as standalone jitted calls on its shapes: the bias
// gradients are sums over the batch axis, timed against the same reads summed along rows.
void pieces_case(int scale) {
  std::printf("Pieces of the gradient's extra work, standalone jitted calls (ms, interleaved)\n");
  auto col_sum = jx::jit([](const Array& a, const Array& b) { return np::sum(a * b, 0); },
                         {.name = "col_sum"});
  auto row_sum = jx::jit([](const Array& a, const Array& b) { return np::sum(a * b, 1); },
                         {.name = "row_sum"});
  Array a = np::array(random_vector(kBatch * kHidden, 13, -1, 1), {kBatch, kHidden});
  Array b = np::array(random_vector(kBatch * kHidden, 14, -1, 1), {kBatch, kHidden});
  std::vector<const char*> names = {"sum(a * b, 0) on f32[128,512] (db)",
                                    "sum(a * b, 1) on f32[128,512] (same reads, rows)"};
  std::vector<std::vector<double>> samples =
      sample_interleaved({[&] { g_sink = static_cast<double>(col_sum(a, b).size()); },
                          [&] { g_sink = static_cast<double>(row_sum(a, b).size()); }},
                         std::max(1, scale / 2));
  for (std::size_t i = 0; i < names.size(); ++i) print_timing(names[i], summarize(samples[i]));
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  int scale = 1;
  bool show_hlo = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--hlo") == 0)
      show_hlo = true;
    else
      scale = std::max(1, std::atoi(argv[i]));
  }
  const int threads = hardware_threads();
  openblas_set_num_threads(threads);
  print_header(threads, scale);

  Inputs in = make_inputs();
  SgemmReference ref;
  double r_tanh = mlp_case<act_tanh>("tanh", in, ref, scale, show_hlo);
  double r_relu = mlp_case<act_relu>("relu", in, ref, scale, show_hlo);
  pieces_case(scale);

  std::printf("Target: jit(value_and_grad(loss)) / jit(loss) <= %.1fx (medians)\n", kBound);
  for (auto [act, r] : {std::pair{"tanh", r_tanh}, std::pair{"relu", r_relu}}) {
    if (r < 0)
      std::printf("  %-5s not measured: the gradient does not compile  MISS\n", act);
    else
      std::printf("  %-5s %.2fx  %s\n", act, r, r <= kBound ? "PASS" : "MISS");
  }
  return 0;
}
