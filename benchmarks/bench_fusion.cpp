// bench_fusion: how close jx's compiled kernels come to the machine and to other libraries.
// Memory-bound functions (gelu, row softmax, cumsum) are held against the STREAM triad bandwidth
// (timed in turn with them, so that a neighbour on a shared machine slows both alike),
// Eigen and libtorch's eager ops; a dense layer against OpenBLAS's sgemm; and the kernels each
// function compiles to are counted. Every reference is measured in the same run.
// Usage: bench_fusion [repetition scale, default 1] [--jax_ms=... --torch_ms=...: the peers' times
// from benchmarks/peers.py --cpu]. Prints one report; exits with an error only when a result is
// wrong.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <cblas.h>
#if defined(__SSE__)
#include <immintrin.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <Eigen/Core>
#include <jx/jx.hpp>

#include "bench_machine.hpp"
#include "bench_peers.hpp"
#include "bench_random.hpp"
#include "bench_stats.hpp"
#include "bench_thunks.hpp"

#if JX_HAVE_TORCH
#include <torch/torch.h>
#endif

namespace np = jx::np;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

using bench::median;
using bench::minimum;

// Written after timed calls so that their results are observably used.
volatile double g_sink = 0;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "bench_fusion: %s\n", what.c_str());
  std::exit(EXIT_FAILURE);
}

// ---- the machine -----------------------------------------------------------------------------

using bench::affinity_cpus;
using bench::cpu_model;
using bench::hardware_threads;
using bench::load_average;

// ---- data ------------------------------------------------------------------------------------

// Runs f(begin, end) over [0, n) split into one contiguous chunk per thread. Chunks are
// multiples of 16 elements: whole cache lines of floats. Every chunk gets a new thread bound to a
// core of its own (bench::bind_to_cpu), the caller only waiting: Linux often starts a new thread
// on its parent's core and leaves it there for milliseconds.
template <class F>
void parallel_for(std::size_t n, int threads, const F& f) {
  std::size_t chunk = (n + threads - 1) / threads;
  chunk = (chunk + 15) / 16 * 16;
  std::vector<std::thread> team;
  for (int t = 0; t < threads; ++t) {
    std::size_t begin = std::min(n, t * chunk), end = std::min(n, begin + chunk);
    if (begin < end)
      team.emplace_back([&f, t, begin, end] {
        bench::bind_to_cpu(t);
        f(begin, end);
      });
  }
  for (std::thread& t : team) t.join();
}

void fill_random(float* p, std::size_t n, std::uint64_t seed, float lo, float hi, int threads) {
  parallel_for(n, threads, [=](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) p[i] = bench::random_float(seed, i, lo, hi);
  });
}

std::vector<float> random_vector(std::size_t n, std::uint64_t seed, float lo, float hi,
                                 int threads) {
  std::vector<float> v(n);
  fill_random(v.data(), n, seed, lo, hi, threads);
  return v;
}

double checksum(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += x;
  return s;
}

// ---- timing ----------------------------------------------------------------------------------

// Each measurement runs at least this long, and at least this many calls (before the scale).
constexpr double kMinMeasureMs = 500;
constexpr int kMinReps = 5;

struct Timing {
  double median_ms = 0, min_ms = 0;
  int reps = 0;
};

// Times whole calls, one of each in turn: one warm-up of each (it compiles, faults pages in,
// fills allocator caches), then turns until both minimums, times the scale, are met.
std::vector<Timing> time_in_turn(const std::vector<std::function<void()>>& calls, int scale) {
  for (const auto& call : calls) call();
  const double budget_ms = kMinMeasureMs * scale;
  const std::size_t min_reps = static_cast<std::size_t>(kMinReps) * scale;
  std::vector<std::vector<double>> samples(calls.size());
  Clock::time_point start = Clock::now();
  while (samples[0].size() < min_reps || ms_since(start) < budget_ms)
    for (std::size_t c = 0; c < calls.size(); ++c) {
      Clock::time_point t = Clock::now();
      calls[c]();
      samples[c].push_back(ms_since(t));
    }
  std::vector<Timing> timings;
  for (const std::vector<double>& s : samples)
    timings.push_back({median(s), minimum(s), static_cast<int>(s.size())});
  return timings;
}

Timing time_calls(const std::function<void()>& call, int scale) {
  return time_in_turn({call}, scale)[0];
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

void print_timing(const char* what, const Timing& t) {
  std::printf("  %-44s %10.3f ms  (best %.3f, %d calls)\n", what, t.median_ms, t.min_ms, t.reps);
}

// ---- the targets table -----------------------------------------------------------------------

// How a row's measured value must compare with its target; kNone: an informational row.
enum class Cmp { kNone, kAtLeast, kAbove, kAtMost };

struct TargetRow {
  std::string what, jx, reference, ratio;
  double measured = 0;  // what the target judges: a ratio or a count
  Cmp cmp = Cmp::kNone;
  double target = 0;

  bool met() const {
    return cmp == Cmp::kAtLeast ? measured >= target
           : cmp == Cmp::kAbove ? measured > target
                                : measured <= target;
  }
  std::string target_text() const {
    if (cmp == Cmp::kNone) return "-";
    return (cmp == Cmp::kAtLeast ? ">= " : cmp == Cmp::kAbove ? "> " : "<= ") + fmt("%g", target);
  }
  const char* verdict() const { return cmp == Cmp::kNone ? "" : met() ? "PASS" : "MISS"; }
};

TargetRow ratio_row(std::string what, std::string jx, std::string reference, double ratio, Cmp cmp,
                    double target) {
  return {std::move(what), std::move(jx), std::move(reference), fmt("%.2fx", ratio), ratio, cmp,
          target};
}

TargetRow count_row(std::string what, int count, double at_most) {
  TargetRow r{std::move(what), std::to_string(count), "-", "-"};
  r.measured = count, r.cmp = Cmp::kAtMost, r.target = at_most;
  return r;
}

using Peers = std::vector<bench::PeerTimes>;

// Prints each peer's time for `case_name` (benchmarks/peers.py --cpu) and adds its ratio to the
// targets, with no goal: a peer's time comes from another process.
void peer_rows(const Peers& peers, const std::string& case_name, const std::string& what,
               double jx_ms, std::vector<TargetRow>& rows) {
  bench::print_peers(peers, case_name, jx_ms);
  for (const bench::PeerTimes& p : peers)
    if (double ms = p.of(case_name); ms > 0)
      rows.push_back(ratio_row(what + ": " + p.name + " / jx", fmt("%.3f ms", jx_ms),
                               fmt("%.3f ms ", ms) + p.name, ms / jx_ms, Cmp::kNone, 0));
}

void print_targets(const std::vector<TargetRow>& rows) {
  std::printf("Targets (ratio as named in each case; time ratios use medians)\n");
  std::printf("  %-30s %14s %26s %8s %9s\n", "case", "jx", "reference", "ratio", "target");
  for (const TargetRow& r : rows)
    std::printf("  %-30s %14s %26s %8s %9s  %s\n", r.what.c_str(), r.jx.c_str(),
                r.reference.c_str(), r.ratio.c_str(), r.target_text().c_str(), r.verdict());
}

// ---- jx's compiled programs ------------------------------------------------------------------

using bench::count_thunks;
using bench::ThunkCounts;

template <class F, class... Args>
ThunkCounts compiled_thunks(const F& f, const Args&... args) {
  auto compiled = jx::jit(f).lower(args...).compile();
  return count_thunks(compiled.thunk_sequence());
}

// ---- 1. triad: the machine's bandwidth -------------------------------------------------------

constexpr std::size_t kTriadN = std::size_t{32} << 20;  // 128 MiB per array

struct FreeFloats {
  void operator()(float* p) const { std::free(p); }
};
using HugePageFloats = std::unique_ptr<float[], FreeFloats>;

// On huge pages as jx's own large buffers are (--cpu_huge_pages), so that the floor is the
// machine's bandwidth on the same kind of memory.
HugePageFloats huge_page_floats(std::size_t n) {
  constexpr std::size_t kHugePage = 2 << 20;
  std::size_t bytes = (n * sizeof(float) + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, bytes);
#if defined(__linux__)
  if (p && jx::config().cpu_huge_pages) madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return HugePageFloats(static_cast<float*>(p));
}

// a = b + s·c, stored past the caches as jx stores an output larger than the last-level cache: a
// plain store first reads the line it writes, moving 4 bytes for the 3 the triad counts, and a
// floor taken from it would be 3/4 of the machine's. `a` is 64-byte aligned.
void streamed_triad(float* a, const float* b, const float* c, float s, std::size_t n) {
  std::size_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm512_stream_ps(a + i,
                     _mm512_add_ps(_mm512_loadu_ps(b + i),
                                   _mm512_mul_ps(_mm512_set1_ps(s), _mm512_loadu_ps(c + i))));
#elif defined(__AVX__)
  for (; i + 8 <= n; i += 8)
    _mm256_stream_ps(a + i,
                     _mm256_add_ps(_mm256_loadu_ps(b + i),
                                   _mm256_mul_ps(_mm256_set1_ps(s), _mm256_loadu_ps(c + i))));
#elif defined(__SSE__)
  for (; i + 4 <= n; i += 4)
    _mm_stream_ps(a + i,
                  _mm_add_ps(_mm_loadu_ps(b + i), _mm_mul_ps(_mm_set1_ps(s), _mm_loadu_ps(c + i))));
#endif
  for (; i < n; ++i) a[i] = b[i] + s * c[i];
#if defined(__SSE__)
  _mm_sfence();
#endif
}

// STREAM's triad a = b + s*c on all threads, over arrays it keeps; bytes counted as STREAM
// does: 3 arrays x 4 bytes.
class Triad {
 public:
  explicit Triad(int threads)
      : threads_(threads),
        a_(huge_page_floats(kTriadN)),
        b_(huge_page_floats(kTriadN)),
        c_(huge_page_floats(kTriadN)) {
    fill_random(a_.get(), kTriadN, 1, -1, 1, threads);
    fill_random(b_.get(), kTriadN, 2, -1, 1, threads);
    fill_random(c_.get(), kTriadN, 3, -1, 1, threads);
    (*this)();
    // Within rounding: the compiler may contract the tail's b + s*c into an FMA, or not.
    for (std::size_t i = 0; i < kTriadN; ++i)
      if (std::abs(a_[i] - (b_[i] + kScale * c_[i])) > 1e-5f) fail("triad wrote a wrong value");
  }

  void operator()() const {
    float* pa = a_.get();
    const float* pb = b_.get();
    const float* pc = c_.get();
    // parallel_for's chunks start at a line.
    parallel_for(kTriadN, threads_, [=](std::size_t lo, std::size_t hi) {
      streamed_triad(pa + lo, pb + lo, pc + lo, kScale, hi - lo);
    });
    g_sink = pa[kTriadN / 2];
  }

  // GB/s at a call's time.
  static double gbs(double ms) { return 3.0 * sizeof(float) * kTriadN / ms / 1e6; }

  // `call` and the triad, interleaved call by call, so that a neighbour's traffic on a shared
  // machine slows both alike: their timings.
  std::pair<Timing, Timing> time_with(const std::function<void()>& call, int scale) const {
    std::vector<Timing> t = time_in_turn({call, [this] { (*this)(); }}, scale);
    return {t[0], t[1]};
  }

 private:
  static constexpr float kScale = 3.0f;
  int threads_;
  HugePageFloats a_, b_, c_;
};

// The time moving `bytes` takes at a triad's bandwidth: no memory-bound kernel beats it.
double floor_ms(double bytes, double gbs) { return bytes / gbs / 1e6; }

// floor / jx for a kernel moving `bytes`, against the triad's median `triad` (timed as `how`).
// Prints the floor.
TargetRow floor_row(std::string what, double bytes, const Timing& jx, const Timing& triad,
                    const char* how, Cmp cmp, double target) {
  double gbs = Triad::gbs(triad.median_ms), floor = floor_ms(bytes, gbs);
  std::printf("  bandwidth floor: %.1f MB at %.2f GB/s (the triad's median, %s) = %.3f ms\n",
              bytes / 1e6, gbs, how, floor);
  return ratio_row(std::move(what), fmt("%.3f ms", jx.median_ms), fmt("%.3f ms floor", floor),
                   floor / jx.median_ms, cmp, target);
}

// A kernel whose data outgrow the caches is timed in turn with the triad, so that a neighbour's
// traffic on a shared machine slows both alike.
constexpr const char* kInTurn = "timed in turn with jx's calls";

// ---- 2. gelu ---------------------------------------------------------------------------------

constexpr std::int64_t kGeluN = std::int64_t{16} << 20;
constexpr float kSqrt2OverPi = 0.7978845608028654f;

// gelu, tanh form, written as a JAX user would (x**3 is integer_pow).
jx::Array gelu(const jx::Array& x) {
  return 0.5f * x * (1.0f + np::tanh(kSqrt2OverPi * (x + 0.044715f * np::power(x, 3))));
}

// The same formula as one Eigen expression per thread's chunk: Eigen does not thread array
// expressions itself, and the reference gets the threads jx may use.
void gelu_eigen(const Eigen::ArrayXf& x, Eigen::ArrayXf& y, int threads) {
  parallel_for(x.size(), threads, [&](std::size_t b, std::size_t e) {
    auto xs = x.segment(b, e - b);
    y.segment(b, e - b) = 0.5f * xs * (1.0f + (kSqrt2OverPi * (xs + 0.044715f * xs.cube())).tanh());
  });
}

#if JX_HAVE_TORCH
// Eager libtorch, one op (and one fresh tensor) at a time.
torch::Tensor gelu_torch(const torch::Tensor& x) {
  return 0.5 * x * (1.0 + torch::tanh(kSqrt2OverPi * (x + 0.044715 * torch::pow(x, 3))));
}
#endif

double max_abs_diff(const float* a, const float* b, std::size_t n) {
  double d = 0;
  for (std::size_t i = 0; i < n; ++i) d = std::max(d, std::abs(static_cast<double>(a[i]) - b[i]));
  return d;
}

// Returns the compiled program's thunks.
ThunkCounts gelu_case(const Triad& triad, int threads, int scale, const Peers& peers,
                      std::vector<TargetRow>& rows) {
  std::printf("gelu, tanh form, on f32[%lld] in [-4, 4)\n", static_cast<long long>(kGeluN));
  std::vector<float> host = random_vector(kGeluN, 10, -4, 4, threads);

  auto f = jx::jit(gelu, {.name = "gelu"});
  jx::Array x = np::array(host, jx::Shape{kGeluN});
  auto [tj, triad_t] = triad.time_with([&] { g_sink = static_cast<double>(f(x).size()); }, scale);
  std::vector<float> yj = f(x).to_vector<float>();
  print_timing("jx: jit(gelu)(x)", tj);

  Eigen::ArrayXf xe = Eigen::Map<const Eigen::ArrayXf>(host.data(), kGeluN);
  Eigen::ArrayXf ye(kGeluN);
  Timing te = time_calls([&] { gelu_eigen(xe, ye, threads); }, scale);
  std::string eigen_what = "Eigen ArrayXf expression, " + std::to_string(threads) + " threads";
  print_timing(eigen_what.c_str(), te);
  Timing te1 = time_calls([&] { gelu_eigen(xe, ye, 1); }, scale);
  print_timing("Eigen ArrayXf expression, 1 thread", te1);

  double diff = max_abs_diff(yj.data(), ye.data(), yj.size());
  std::printf("  jx vs Eigen: max |difference| %.3g; checksums %.6e (jx), %.6e (Eigen)\n", diff,
              checksum(yj), static_cast<double>(ye.cast<double>().sum()));
  if (!(diff <= 1e-5)) fail("gelu: jx differs from Eigen by " + fmt("%.3g", diff) + " > 1e-5");

  double bytes = 2.0 * sizeof(float) * kGeluN;  // read x, write y
  std::string jx_ms = fmt("%.3f ms", tj.median_ms);
  rows.push_back(floor_row("gelu: floor / jx", bytes, tj, triad_t, kInTurn, Cmp::kAtLeast, 0.85));
  peer_rows(peers, "gelu", "gelu", tj.median_ms, rows);
  rows.push_back(ratio_row("gelu: eigen / jx", jx_ms,
                           fmt("%.3f ms Eigen ", te.median_ms) + std::to_string(threads) + " thr",
                           te.median_ms / tj.median_ms, Cmp::kAbove, 1));

#if JX_HAVE_TORCH
  torch::Tensor xt = torch::from_blob(host.data(), {kGeluN}, torch::kFloat32);
  // Like jx's, each call's output is dropped before the next call.
  Timing tt = time_calls([&] { g_sink = static_cast<double>(gelu_torch(xt).numel()); }, scale);
  torch::Tensor yt = gelu_torch(xt);
  std::string torch_what = "libtorch eager, " + std::to_string(at::get_num_threads()) + " threads";
  print_timing(torch_what.c_str(), tt);
  double tdiff = max_abs_diff(yt.data_ptr<float>(), ye.data(), ye.size());
  std::printf("  libtorch vs Eigen: max |difference| %.3g\n", tdiff);
  if (!(tdiff <= 1e-5)) fail("gelu: libtorch differs from Eigen by " + fmt("%.3g", tdiff));
  rows.push_back(ratio_row("gelu: torch / jx", jx_ms, fmt("%.3f ms libtorch", tt.median_ms),
                           tt.median_ms / tj.median_ms, Cmp::kAtLeast, 10));
#else
  std::printf("  libtorch: not installed\n");
#endif
  ThunkCounts k = compiled_thunks(gelu, x);
  rows.push_back(count_row("gelu: kernels", k.kernels, 1));
  std::printf("\n");
  return k;
}

// ---- 3. row softmax --------------------------------------------------------------------------

constexpr std::int64_t kSoftmaxRows = 4096, kSoftmaxCols = 4096;

// Softmax over the last axis, as a JAX user writes it.
jx::Array softmax(const jx::Array& x) {
  jx::Array z = x - np::max(x, -1, /*keepdims=*/true);
  jx::Array e = np::exp(z);
  return e / np::sum(e, -1, /*keepdims=*/true);
}

// The oracle: row by row, sums in double.
std::vector<float> softmax_oracle(const std::vector<float>& x, std::int64_t rows,
                                  std::int64_t cols) {
  std::vector<float> y(x.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* in = x.data() + r * cols;
    float* out = y.data() + r * cols;
    float m = *std::max_element(in, in + cols);
    double s = 0;
    for (std::int64_t j = 0; j < cols; ++j) s += out[j] = std::exp(in[j] - m);
    for (std::int64_t j = 0; j < cols; ++j) out[j] = static_cast<float>(out[j] / s);
  }
  return y;
}

// Returns the compiled program's thunks.
ThunkCounts softmax_case(const Triad& triad, int threads, int scale, const Peers& peers,
                         std::vector<TargetRow>& rows) {
  std::printf("Row softmax on f32[%lld,%lld] in [-4, 4)\n", static_cast<long long>(kSoftmaxRows),
              static_cast<long long>(kSoftmaxCols));
  std::vector<float> host = random_vector(kSoftmaxRows * kSoftmaxCols, 20, -4, 4, threads);
  jx::Array x = np::array(host, jx::Shape{kSoftmaxRows, kSoftmaxCols});

  auto f = jx::jit(softmax, {.name = "softmax"});
  auto [tj, triad_t] = triad.time_with([&] { g_sink = static_cast<double>(f(x).size()); }, scale);
  std::vector<float> yj = f(x).to_vector<float>();
  print_timing("jx: jit(softmax)(x)", tj);

  std::vector<float> want = softmax_oracle(host, kSoftmaxRows, kSoftmaxCols);
  double abs_diff = 0, rel_diff = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    double d = std::abs(static_cast<double>(yj[i]) - want[i]);
    abs_diff = std::max(abs_diff, d);
    rel_diff = std::max(rel_diff, d / want[i]);
  }
  std::printf("  jx vs loop oracle: max |difference| %.3g, max relative %.3g; checksum %.6e\n",
              abs_diff, rel_diff, checksum(yj));
  if (!(rel_diff <= 1e-4)) fail("softmax: jx differs from the oracle by " + fmt("%.3g", rel_diff));

  double bytes = 2.0 * sizeof(float) * kSoftmaxRows * kSoftmaxCols;  // read x once, write y once
  rows.push_back(floor_row("softmax: floor / jx", bytes, tj, triad_t, kInTurn, Cmp::kAtLeast, 0.7));
  peer_rows(peers, "softmax", "softmax", tj.median_ms, rows);
  std::printf("\n");
  ThunkCounts k = compiled_thunks(softmax, x);
  rows.push_back(count_row("softmax: kernels", k.kernels, 2));
  return k;
}

// log-softmax and a layer norm over the same rows: row kernels with nothing to stash, whose
// output is written a row behind. Reported against the floor; the oracle sums in double.
void row_norms_case(const Triad& triad, int threads, int scale, std::vector<TargetRow>& rows) {
  std::printf("log_softmax and layer_norm on f32[%lld,%lld] in [-4, 4)\n",
              static_cast<long long>(kSoftmaxRows), static_cast<long long>(kSoftmaxCols));
  std::vector<float> host = random_vector(kSoftmaxRows * kSoftmaxCols, 21, -4, 4, threads);
  jx::Array x = np::array(host, jx::Shape{kSoftmaxRows, kSoftmaxCols});
  const int features = static_cast<int>(kSoftmaxCols);
  // Each oracle gives a row's outputs, from the row's statistics computed once.
  using Oracle = std::function<std::vector<double>(const float* row)>;
  auto log_softmax_of = [](const float* row) {
    double m = *std::max_element(row, row + kSoftmaxCols), s = 0;
    for (std::int64_t j = 0; j < kSoftmaxCols; ++j) s += std::exp(row[j] - m);
    std::vector<double> out(row, row + kSoftmaxCols);
    for (double& v : out) v = v - m - std::log(s);
    return out;
  };
  auto layer_norm_of = [](const float* row) {
    double mean = 0, square = 0;
    for (std::int64_t j = 0; j < kSoftmaxCols; ++j) {
      mean += row[j];
      square += double(row[j]) * row[j];
    }
    mean /= kSoftmaxCols;
    double scale = 1 / std::sqrt(square / kSoftmaxCols - mean * mean + 1e-6);
    std::vector<double> out(row, row + kSoftmaxCols);
    for (double& v : out) v = (v - mean) * scale;
    return out;
  };
  auto one = [&](const char* name, const std::function<jx::Array(const jx::Array&)>& fn,
                 const Oracle& oracle) {
    auto f = jx::jit(fn, {.name = name});
    auto [tj, triad_t] = triad.time_with([&] { g_sink = static_cast<double>(f(x).size()); }, scale);
    print_timing(("jx: jit(" + std::string(name) + ")(x)").c_str(), tj);
    // Every 64th row against the oracle, to within float32 rounding of values up to ~10.
    std::vector<float> y = f(x).to_vector<float>();
    double worst = 0;
    for (std::int64_t r = 0; r < kSoftmaxRows; r += 64) {
      std::vector<double> want = oracle(host.data() + r * kSoftmaxCols);
      for (std::int64_t j = 0; j < kSoftmaxCols; ++j)
        worst = std::max(worst, std::abs(y[static_cast<std::size_t>(r * kSoftmaxCols + j)] -
                                         want[static_cast<std::size_t>(j)]));
    }
    std::printf("  jx vs loop oracle (every 64th row): max |difference| %.3g\n", worst);
    if (!(worst <= 1e-4))
      fail(std::string(name) + ": jx differs from the oracle by " + fmt("%.3g", worst));
    double bytes = 2.0 * sizeof(float) * kSoftmaxRows * kSoftmaxCols;  // read x, write y
    rows.push_back(
        floor_row(std::string(name) + ": floor / jx", bytes, tj, triad_t, kInTurn, Cmp::kNone, 0));
  };
  one(
      "log_softmax", [](const jx::Array& a) { return jx::nn::log_softmax(a); }, log_softmax_of);
  one(
      "layer_norm",
      [features](const jx::Array& a) {
        return jx::nn::layer_norm(jx::nn::layer_norm_init(features), a);
      },
      layer_norm_of);
  std::printf("\n");
}

// ---- 4. dense layer --------------------------------------------------------------------------

jx::Array relu(const jx::Array& x) { return np::maximum(x, 0.0f); }

jx::Array dense_relu(const jx::Array& x, const jx::Array& w, const jx::Array& b) {
  return relu(np::matmul(x, w) + b);
}

double gflops(std::int64_t n, double ms) { return 2.0 * n * n * n / ms / 1e6; }

void dense_case(std::int64_t n, int threads, int scale, const Peers& peers,
                std::vector<TargetRow>& rows) {
  std::printf("Dense layer relu(x @ W + b), n = %lld (x, W: f32[n,n]; b: f32[n])\n",
              static_cast<long long>(n));
  std::size_t nn = static_cast<std::size_t>(n * n);
  std::vector<float> xh = random_vector(nn, 30 + n, -1, 1, threads);
  std::vector<float> wh = random_vector(nn, 40 + n, -1, 1, threads);
  std::vector<float> bh = random_vector(n, 50 + n, -1, 1, threads);
  jx::Array x = np::array(xh, jx::Shape{n, n}), w = np::array(wh, jx::Shape{n, n});
  jx::Array b = np::array(bh, jx::Shape{n});

  auto f = jx::jit(dense_relu, {.name = "dense_relu"});
  Timing tj = time_calls([&] { g_sink = static_cast<double>(f(x, w, b).size()); }, scale);
  std::vector<float> yj = f(x, w, b).to_vector<float>();

  std::vector<float> c(nn);
  auto sgemm = [&] {
    const int m = static_cast<int>(n);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0f, xh.data(), m, wh.data(),
                m, 0.0f, c.data(), m);
  };
  Timing ts = time_calls(sgemm, scale);

  // The expected layer: sgemm's product, then bias and relu.
  double diff = 0, largest = 0;
  for (std::size_t i = 0; i < nn; ++i) {
    float want = std::max(c[i] + bh[i % n], 0.0f);
    diff = std::max(diff, std::abs(static_cast<double>(yj[i]) - want));
    largest = std::max(largest, static_cast<double>(want));
  }
  std::printf("  %-44s %10.3f ms  %8.1f GFLOP/s  (%d calls)\n", "jx: jit(dense_relu)(x, W, b)",
              tj.median_ms, gflops(n, tj.median_ms), tj.reps);
  std::printf("  %-44s %10.3f ms  %8.1f GFLOP/s  (%d calls)\n", "OpenBLAS cblas_sgemm alone",
              ts.median_ms, gflops(n, ts.median_ms), ts.reps);
  std::printf(
      "  jx vs sgemm + bias + relu: max |difference| %.3g (largest value %.3g); "
      "checksum %.6e\n\n",
      diff, largest, checksum(yj));
  if (!(diff <= 1e-4 * std::max(1.0, largest)))  // far above float rounding, far below a bug
    fail("dense: jx differs from sgemm + bias + relu by " + fmt("%.3g", diff));

  double gj = gflops(n, tj.median_ms), gs = gflops(n, ts.median_ms);
  rows.push_back(ratio_row("dense n=" + std::to_string(n) + ": jx / sgemm", fmt("%.1f GFLOP/s", gj),
                           fmt("%.1f GFLOP/s sgemm", gs), gj / gs, Cmp::kAtLeast, 0.9));
  peer_rows(peers, "dense" + std::to_string(n), "dense n=" + std::to_string(n), tj.median_ms, rows);
}

// ---- 5. bfloat16 ----------------------------------------------------------------------------

// bf16's bits of f, rounded to nearest even (f finite): the oracle's own rounding.
std::uint16_t bf16_bits(float f) {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  return static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
float bf16_value(std::uint16_t bits) {
  std::uint32_t u = std::uint32_t{bits} << 16;
  float f = 0;
  std::memcpy(&f, &u, 4);
  return f;
}

// An elementwise chain as a bf16 model writes it: fused, computed in f32 and rounded on store.
jx::Array bf16_chain(const jx::Array& x) { return np::maximum(x * 1.5f + 0.25f, 0.0f) * x - x; }

void bf16_chain_case(const Triad& triad, int threads, int scale, const Peers& peers,
                     std::vector<TargetRow>& rows) {
  std::printf("bfloat16 chain max(1.5x + 0.25, 0) * x - x on bf16[%lld] in [-4, 4)\n",
              static_cast<long long>(kGeluN));
  std::vector<float> host = random_vector(kGeluN, 60, -4, 4, threads);
  std::vector<std::uint16_t> bits(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) bits[i] = bf16_bits(host[i]);
  std::vector<jx::BFloat16> values(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) values[i] = jx::BFloat16::from_bits(bits[i]);
  jx::Array x = np::array(values, jx::Shape{kGeluN});

  auto f = jx::jit(bf16_chain, {.name = "bf16_chain"});
  auto [tj, triad_t] = triad.time_with([&] { g_sink = static_cast<double>(f(x).size()); }, scale);
  print_timing("jx: jit(bf16_chain)(x)", tj);
  // jx computes the fused chain in f32 and rounds once, on store; the oracle computes it in
  // double, so a result within one bf16 ulp of it is right (the f32 steps can tip a tie).
  std::vector<jx::BFloat16> got = f(x).to_vector<jx::BFloat16>();
  std::size_t exact = 0, wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    double v = bf16_value(bits[i]);
    auto want = bf16_bits(static_cast<float>(std::max(v * 1.5 + 0.25, 0.0) * v - v));
    int ulps = std::abs(static_cast<int>(static_cast<std::int16_t>(got[i].bits)) -
                        static_cast<int>(static_cast<std::int16_t>(want)));
    exact += ulps == 0;
    wrong += ulps > 1;
  }
  std::printf("  jx vs the oracle rounded once: %zu of %zu equal, %zu more than 1 ulp apart\n",
              exact, got.size(), wrong);
  if (wrong != 0) fail("bf16_chain: jx differs from the oracle");

  double bytes = 2.0 * 2 * static_cast<double>(kGeluN);  // read x, write y: 2 bytes each
  rows.push_back(
      floor_row("bf16 chain: floor / jx", bytes, tj, triad_t, kInTurn, Cmp::kAtLeast, 0.8));
  peer_rows(peers, "bf16_chain", "bf16 chain", tj.median_ms, rows);
  std::printf("\n");
}

// ---- cumulative sums -------------------------------------------------------------------------

// cumsum of f32[16M] (one row: the CPU's vector scan on one thread) held against the bandwidth
// floor of reading x and writing y once; f32[4096, 4096] along each axis for comparison (rows
// split over the threads along axis 1; one thread's vectorized runs of accumulators along 0).
void cumsum_case(const Triad& triad, int threads, int scale, const Peers& peers,
                 std::vector<TargetRow>& rows) {
  std::printf(
      "cumsum (lax.cumsum, one reduce-window scanned in one pass) on f32[%lld] in [-1, 1)\n",
      static_cast<long long>(kGeluN));
  std::vector<float> host = random_vector(kGeluN, 80, -1, 1, threads);
  jx::Array x = np::array(host, jx::Shape{kGeluN});
  auto f = jx::jit([](const jx::Array& a) { return jx::lax::cumsum(a); }, {.name = "cumsum"});
  auto [tj, triad_t] = triad.time_with([&] { g_sink = static_cast<double>(f(x).size()); }, scale);
  print_timing("jx: jit(cumsum)(x)", tj);
  // The vector scan reassociates within blocks: each output is within float32's rounding of
  // the running sum, bounded by the sum of |x| so far.
  std::vector<float> got = f(x).to_vector<float>();
  double sum = 0, magnitude = 0, worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    sum += host[i];
    magnitude += std::abs(host[i]);
    worst = std::max(worst, std::abs(got[i] - sum) / magnitude);
  }
  std::printf("  jx vs a float64 running sum: max |difference| / sum |x| so far %.3g\n", worst);
  if (!(worst <= 1e-5)) fail("cumsum: jx differs from the running sum by " + fmt("%.3g", worst));
  double bytes = 2.0 * sizeof(float) * kGeluN;  // read x, write y
  rows.push_back(floor_row("cumsum: floor / jx", bytes, tj, triad_t, kInTurn, Cmp::kAtLeast, 0.7));
  peer_rows(peers, "cumsum", "cumsum", tj.median_ms, rows);

  jx::Array m = np::array(host, jx::Shape{4096, 4096});
  for (int axis : {1, 0}) {
    auto g = jx::jit([axis](const jx::Array& a) { return jx::lax::cumsum(a, axis); });
    auto [tg, triad_g] = triad.time_with([&] { g_sink = static_cast<double>(g(m).size()); }, scale);
    std::string what = "jx: jit(cumsum)(x[4096, 4096], axis=" + std::to_string(axis) + ")";
    print_timing(what.c_str(), tg);
    rows.push_back(floor_row("cumsum 4096^2 axis " + std::to_string(axis) + ": floor / jx", bytes,
                             tg, triad_g, kInTurn, Cmp::kNone, 0));
  }
  std::printf("\n");
}

// The dense layer with bf16 inputs against the same layer in f32 and, where libtorch is
// installed, against libtorch's bf16 layer (oneDNN's kernels on a CPU with AVX-512).
void dense_bf16_case(std::int64_t n, int threads, int scale, std::vector<TargetRow>& rows) {
  std::printf("Dense layer relu(x @ W + b) in bfloat16 vs float32, n = %lld\n",
              static_cast<long long>(n));
  std::size_t nn = static_cast<std::size_t>(n * n);
  std::vector<float> xv = random_vector(nn, 70, -1, 1, threads),
                     wv = random_vector(nn, 71, -1, 1, threads),
                     bv = random_vector(n, 72, -1, 1, threads);
  jx::Array x = np::array(xv, jx::Shape{n, n}), w = np::array(wv, jx::Shape{n, n});
  jx::Array b = np::array(bv, jx::Shape{n});
  jx::Array xb = x.astype(jx::bfloat16), wb = w.astype(jx::bfloat16), bb = b.astype(jx::bfloat16);
  auto f = jx::jit(dense_relu, {.name = "dense_relu"});
  // The two layers interleaved call by call, so that drift in the machine's load hits both
  // alike; libtorch's after, alone: its pool's threads spin on the cores after each call.
  auto samples =
      bench::sample_interleaved({[&] { g_sink = static_cast<double>(f(x, w, b).size()); },
                                 [&] { g_sink = static_cast<double>(f(xb, wb, bb).size()); }},
                                scale);
  Timing t32{median(samples[0]), minimum(samples[0]), static_cast<int>(samples[0].size())};
  Timing t16{median(samples[1]), minimum(samples[1]), static_cast<int>(samples[1].size())};
  print_timing("jx: jit(dense_relu) in float32", t32);
  print_timing("jx: jit(dense_relu) in bfloat16", t16);

  // Against the f32 layer of the same (bf16) inputs: the product accumulates in f32 and rounds
  // once, the bias add rounds again, each within half a bf16 ulp of the products' magnitude.
  std::vector<float> want =
      f(xb.astype(jx::float32), wb.astype(jx::float32), bb.astype(jx::float32)).to_vector<float>();
  auto check = [&](const char* who, const std::vector<float>& got) {
    double worst = 0, largest = 0;
    for (std::size_t i = 0; i < nn; ++i) {
      worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]));
      largest = std::max(largest, static_cast<double>(want[i]));
    }
    std::printf("  %s bf16 vs f32 of the same inputs: max |difference| %.3g (largest value %.3g)\n",
                who, worst, largest);
    if (!(worst <= 0x1p-7 * largest))
      fail(std::string("dense bf16: ") + who + " differs from the f32 layer by " +
           fmt("%.3g", worst));
  };
  check("jx", f(xb, wb, bb).to_vector<float>());
  rows.push_back(ratio_row("dense bf16 n=" + std::to_string(n) + ": f32 / bf16",
                           fmt("%.3f ms", t16.median_ms), fmt("%.3f ms f32", t32.median_ms),
                           t32.median_ms / t16.median_ms, Cmp::kAtLeast, 1.0));
#if JX_HAVE_TORCH
  auto to_torch = [](std::vector<float>& v, std::vector<std::int64_t> dims) {
    return torch::from_blob(v.data(), dims, torch::kFloat32).to(torch::kBFloat16);
  };
  torch::Tensor xt = to_torch(xv, {n, n}), wt = to_torch(wv, {n, n}), bt = to_torch(bv, {n});
  auto torch_layer = [&] { return torch::relu(torch::addmm(bt, xt, wt)); };
  Timing tt = time_calls([&] { g_sink = static_cast<double>(torch_layer().numel()); }, scale);
  print_timing("libtorch eager relu(addmm) in bfloat16", tt);
  torch::Tensor yt = torch_layer().to(torch::kFloat32).contiguous();
  check("libtorch", std::vector<float>(yt.data_ptr<float>(), yt.data_ptr<float>() + nn));
  rows.push_back(ratio_row("dense bf16 n=" + std::to_string(n) + ": torch / jx",
                           fmt("%.3f ms", t16.median_ms), fmt("%.3f ms libtorch", tt.median_ms),
                           tt.median_ms / t16.median_ms, Cmp::kNone, 0));
#endif
  std::printf("\n");
}

// Matrix products up to and past the size where jx stops emitting its own kernel and calls BLAS
// (2^28 multiply-adds, unless 512-bit vectors run at full rate: codegen/cpu/gemm_plan.cpp):
// jit(matmul) against cblas_sgemm alone; "(BLAS)" marks the products jx hands to BLAS.
void products_case(int threads, int scale) {
  std::printf(
      "Matrix products jit(matmul)(a, b) vs cblas_sgemm alone (a: f32[m,k], b: f32[k,n])\n");
  std::printf("  %18s %10s %12s %12s %8s\n", "m x n x k", "M macs", "jx us", "sgemm us",
              "jx/sgemm");
  const std::int64_t sizes[][3] = {{64, 64, 64},    {256, 64, 32},    {256, 64, 64},
                                   {128, 128, 128}, {256, 128, 128},  {256, 256, 128},
                                   {256, 256, 256}, {128, 512, 512},  {128, 512, 784},
                                   {512, 512, 512}, {256, 4096, 256}, {1024, 1024, 1024}};
  auto f = jx::jit([](const jx::Array& a, const jx::Array& b) { return np::matmul(a, b); });
  for (const auto& [m, n, k] : sizes) {
    std::vector<float> ah = random_vector(static_cast<std::size_t>(m * k), 60, -1, 1, threads);
    std::vector<float> bh = random_vector(static_cast<std::size_t>(k * n), 61, -1, 1, threads);
    std::vector<float> c(static_cast<std::size_t>(m * n));
    jx::Array a = np::array(ah, jx::Shape{m, k}), b = np::array(bh, jx::Shape{k, n});
    bool blas = f.lower(a, b).compile().thunk_sequence().rfind("gemm ", 0) == 0;
    Timing tj = time_calls([&] { g_sink = static_cast<double>(f(a, b).size()); }, scale);
    Timing ts = time_calls(
        [&] {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m),
                      static_cast<int>(n), static_cast<int>(k), 1.0f, ah.data(),
                      static_cast<int>(k), bh.data(), static_cast<int>(n), 0.0f, c.data(),
                      static_cast<int>(n));
        },
        scale);
    std::printf("  %6lld x%4lld x%4lld %10.2f %12.1f %12.1f %7.2fx%s\n", static_cast<long long>(m),
                static_cast<long long>(n), static_cast<long long>(k), m * n * k / 1e6,
                tj.median_ms * 1e3, ts.median_ms * 1e3, tj.median_ms / ts.median_ms,
                blas ? "  (BLAS)" : "");
  }
  std::printf("\n");
}

// ---- 5. kernel counts ------------------------------------------------------------------------

jx::Array layer_norm(const jx::Array& x, const jx::Array& g, const jx::Array& b) {
  jx::Array mean = np::mean(x, -1, /*keepdims=*/true);
  jx::Array var = np::var(x, -1, /*keepdims=*/true);
  return (x - mean) / np::sqrt(var + 1e-5f) * g + b;
}

jx::Array mlp(const jx::Array& x, const jx::Array& w1, const jx::Array& b1, const jx::Array& w2,
              const jx::Array& b2, const jx::Array& w3, const jx::Array& b3) {
  jx::Array h = relu(np::matmul(x, w1) + b1);
  h = relu(np::matmul(h, w2) + b2);
  return np::matmul(h, w3) + b3;
}

jx::Array random_array(const jx::Shape& shape, std::uint64_t seed, int threads) {
  return np::array(random_vector(jx::shape_size(shape), seed, -1, 1, threads), shape);
}

// gelu's and softmax's counts come from their cases, compiled for the same inputs.
void kernel_counts(int threads, const ThunkCounts& gelu_k, const ThunkCounts& softmax_k) {
  std::printf("Thunks after fusion (kernels, gemms, others), compiled ahead of time\n");
  auto print = [](const char* what, const ThunkCounts& k) {
    std::printf("  %-56s %3d %3d %3d\n", what, k.kernels, k.gemms, k.others);
  };
  print("gelu, f32[16M]", gelu_k);
  print("row softmax, f32[4096,4096]", softmax_k);
  ThunkCounts ln =
      compiled_thunks(layer_norm, random_array({4096, 1024}, 62, threads),
                      random_array({1024}, 63, threads), random_array({1024}, 64, threads));
  print("layer norm over rows, f32[4096,1024]", ln);
  ThunkCounts m =
      compiled_thunks(mlp, random_array({256, 784}, 65, threads),
                      random_array({784, 512}, 66, threads), random_array({512}, 67, threads),
                      random_array({512, 512}, 68, threads), random_array({512}, 69, threads),
                      random_array({512, 10}, 70, threads), random_array({10}, 71, threads));
  print("MLP 784-512-512-10 (relu), batch 256", m);
  std::printf("\n");
}

// ---- the report ------------------------------------------------------------------------------

void print_header(int threads, int scale) {
  std::printf("jx bench_fusion: compiled functions against bandwidth, Eigen, libtorch, OpenBLAS\n");
  std::printf("machine: nproc %d, hardware threads %d, %s; load average %s\n", affinity_cpus(),
              threads, cpu_model().c_str(), load_average().c_str());
  std::printf("Eigen %d.%d.%d; %s (kernels: %s)", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
              EIGEN_MINOR_VERSION, openblas_get_config(), openblas_get_corename());
#if JX_HAVE_TORCH
  std::printf("; libtorch %s", TORCH_VERSION);
#endif
  std::printf("\n");
  // OpenBLAS picks its kernels when it loads; on a CPU it does not know it falls back to
  // generic SSE3 ones. jx calls the same OpenBLAS, so the dense ratio stays fair either way.
  if (std::string(openblas_get_corename()) == "Prescott" && __builtin_cpu_supports("avx512f"))
    std::printf(
        "  (OpenBLAS did not recognize this AVX-512 CPU: OPENBLAS_CORETYPE=SkylakeX selects its "
        "AVX-512 kernels, for jx and sgemm alike)\n");
  std::printf(
      "references run on %d threads (triad, Eigen: one chunk per thread; libtorch, OpenBLAS: "
      "their own pools)\n",
      threads);
  std::printf(
      "wall ms per whole call: median over >= %d calls and >= %.1f s (x%d), after a warm-up call; "
      "jx outputs are fresh arrays\n\n",
      kMinReps, kMinMeasureMs / 1e3, scale);
}

// The triad alone: the machine's bandwidth now.
void print_triad(const char* when, const Triad& triad, int scale) {
  Timing t = time_calls([&] { triad(); }, scale);
  std::printf("  %-44s %10.2f GB/s best, %.2f median (%.3f ms best, %d calls)\n", when,
              Triad::gbs(t.min_ms), Triad::gbs(t.median_ms), t.min_ms, t.reps);
}

}  // namespace

// ---- indexing: an embedding lookup, its gradient, and cross-entropy on integer labels ----------

constexpr std::int64_t kTableRows = 50000, kEmbedDim = 512, kLookups = 4096;

// take(table, ids, 0) and the gradient of a sum of it (a scatter-add into a zero table), against
// the bytes each must move: the looked-up rows read and written; the table written, plus the
// updates read and their rows read and written.
void embedding_case(const Triad& triad, int threads, int scale, std::vector<TargetRow>& rows) {
  std::printf("embedding: %lld rows of f32[%lld, %lld] by int32 ids, and its gradient\n",
              static_cast<long long>(kLookups), static_cast<long long>(kTableRows),
              static_cast<long long>(kEmbedDim));
  jx::Array table = random_array({kTableRows, kEmbedDim}, 70, threads);
  std::vector<std::int32_t> host_ids(kLookups);
  for (std::int64_t k = 0; k < kLookups; ++k)
    host_ids[static_cast<std::size_t>(k)] = static_cast<std::int32_t>((k * 7919) % kTableRows);
  jx::Array ids = np::array(host_ids);
  auto lookup = jx::jit([](const jx::Array& t, const jx::Array& i) { return np::take(t, i, 0); });
  // Timed alone: the rows looked up (8 MiB) stay in the caches from call to call, which the
  // triad in between would flush; the floor takes the triad timed just before.
  Timing triad_t = time_calls([&] { triad(); }, scale);
  Timing tl = time_calls([&] { g_sink = static_cast<double>(lookup(table, ids).size()); }, scale);
  print_timing("jx: jit(take(table, ids, 0))", tl);
  std::vector<float> got = lookup(table, ids).to_vector<float>();
  std::vector<float> all = table.to_vector<float>();
  for (std::int64_t k = 0; k < kLookups; k += 97)
    for (std::int64_t j = 0; j < kEmbedDim; j += 31)
      if (got[static_cast<std::size_t>(k * kEmbedDim + j)] !=
          all[static_cast<std::size_t>(host_ids[static_cast<std::size_t>(k)] * kEmbedDim + j)])
        fail("embedding lookup read a wrong element");
  double row_bytes = 4.0 * kLookups * kEmbedDim;
  rows.push_back(floor_row("embedding lookup: floor / jx", 2 * row_bytes, tl, triad_t,
                           "timed just before", Cmp::kAtLeast, 0.8));

  jx::Array dy = random_array({kLookups, kEmbedDim}, 71, threads);
  auto grad = jx::jit([&](const jx::Array& t, const jx::Array& i, const jx::Array& d) {
    return jx::grad([&](const jx::Array& u) { return np::sum(np::take(u, i, 0) * d); })(t);
  });
  Timing tg = time_calls([&] { g_sink = static_cast<double>(grad(table, ids, dy).size()); }, scale);
  print_timing("jx: jit(grad of sum(take(table, ids) * dy))", tg);
  double table_bytes = 4.0 * kTableRows * kEmbedDim;
  rows.push_back(floor_row("embedding gradient: floor / jx", table_bytes + 3 * row_bytes, tg,
                           triad_t, "timed before the lookup", Cmp::kAtLeast, 0.5));
  std::printf("\n");
}

// The loss and its gradient on 128 x 10 logits: the label's logit read by take_along_axis
// (nn::softmax_cross_entropy) against the one-hot select it replaced, timed interleaved.
void cross_entropy_case(int scale, std::vector<TargetRow>& rows) {
  std::printf("softmax cross-entropy, f32[128, 10] logits, int32 labels: loss and gradient\n");
  jx::Array logits = random_array({128, 10}, 72, 1);
  std::vector<std::int32_t> host_labels(128);
  for (std::size_t k = 0; k < host_labels.size(); ++k) host_labels[k] = static_cast<int>(k % 10);
  jx::Array labels = np::array(host_labels);
  auto taken = [](const jx::Array& z, const jx::Array& y) {
    return np::mean(jx::nn::softmax_cross_entropy(z, y));
  };
  auto one_hot = [](const jx::Array& z, const jx::Array& y) {
    jx::Array hit = np::expand_dims(y, -1) == np::arange(10, jx::int32);
    return np::mean(jx::nn::logsumexp(z, -1) - np::sum(np::where(hit, z, 0.0f), -1));
  };
  auto f_taken = jx::jit(jx::value_and_grad(taken));
  auto f_one_hot = jx::jit(jx::value_and_grad(one_hot));
  auto [l1, g1] = f_taken(logits, labels);
  auto [l2, g2] = f_one_hot(logits, labels);
  if (std::abs(l1.item<float>() - l2.item<float>()) > 1e-5f) fail("cross-entropy losses differ");
  std::vector<std::vector<double>> s = bench::sample_interleaved(
      {[&] { g_sink = static_cast<double>(f_taken(logits, labels).first.size()); },
       [&] { g_sink = static_cast<double>(f_one_hot(logits, labels).first.size()); }},
      scale);
  Timing tt{median(s[0]), minimum(s[0]), static_cast<int>(s[0].size())};
  Timing to{median(s[1]), minimum(s[1]), static_cast<int>(s[1].size())};
  print_timing("jx: take_along_axis form", tt);
  print_timing("jx: one-hot select form", to);
  std::printf("\n");
  rows.push_back(ratio_row("cross-entropy: one-hot / take_along_axis", fmt("%.4f ms", tt.median_ms),
                           fmt("%.4f ms one-hot", to.median_ms), to.median_ms / tt.median_ms,
                           Cmp::kAtLeast, 1.0));
}

// Where splitting a kernel over the cores starts to pay, for a memory-bound kernel (x * 2 + 1)
// and a compute-bound one (gelu) on f32[64, n/64]: each compiled once to run on the calling
// thread and once split over the pool (Config::cpu_parallel_min_bytes is read at compile time).
void parallel_threshold_case(int scale) {
  std::printf("Splitting a kernel over the cores, on f32[64, n/64] (bytes = read + written)\n");
  std::printf("  %10s %14s %14s %8s %14s %14s %8s\n", "bytes", "x*2+1 1 thr us", "split us",
              "ratio", "gelu 1 thr us", "split us", "ratio");
  const long long saved = jx::config().cpu_parallel_min_bytes;
  auto affine = [](const jx::Array& a) { return a * 2.0f + 1.0f; };
  for (std::int64_t n = 1 << 10; n <= (1 << 20); n *= 2) {
    jx::Array x = random_array({64, n / 64}, 7, 1);
    auto time_with = [&](auto fn, long long min_bytes) {
      jx::config().cpu_parallel_min_bytes = min_bytes;
      auto f = jx::jit(fn);
      f(x);  // compiles under this setting
      return time_calls([&] { f(x); }, scale).median_ms * 1e3;
    };
    constexpr long long kNever = std::numeric_limits<long long>::max();
    double a1 = time_with(affine, kNever), a2 = time_with(affine, 0);
    double g1 = time_with(gelu, kNever), g2 = time_with(gelu, 0);
    std::printf("  %10lld %14.2f %14.2f %7.2fx %14.2f %14.2f %7.2fx\n",
                static_cast<long long>(n * 8), a1, a2, a1 / a2, g1, g2, g1 / g2);
  }
  jx::config().cpu_parallel_min_bytes = saved;
  std::printf("  (the default threshold is %lld bytes)\n\n", saved);
}

int main(int argc, char** argv) {
  const int scale = bench::repetition_scale(argc, argv);
  const Peers peers = bench::parse_peers(argc, argv);
  const int threads = hardware_threads();
  openblas_set_num_threads(threads);
#if JX_HAVE_TORCH
  at::set_num_threads(threads);
#endif
  print_header(threads, scale);

  std::printf("STREAM triad a = b + s*c, f32[%zu] each (3 x 4 bytes per element)\n", kTriadN);
  const Triad triad(threads);
  print_triad("alone, at the start", triad, scale);
  std::printf("  (each memory-bound case times it again, in turn with jx's calls: its floor)\n\n");

  // Before any BLAS call: OpenBLAS's threads spin for a while after one, taking the cores.
  parallel_threshold_case(scale);

  std::vector<TargetRow> rows;
  ThunkCounts gelu_k = gelu_case(triad, threads, scale, peers, rows);
  ThunkCounts softmax_k = softmax_case(triad, threads, scale, peers, rows);
  row_norms_case(triad, threads, scale, rows);
  for (std::int64_t n : {512, 1024, 2048}) dense_case(n, threads, scale, peers, rows);
  bf16_chain_case(triad, threads, scale, peers, rows);
  cumsum_case(triad, threads, scale, peers, rows);
  dense_bf16_case(1024, threads, scale, rows);
  embedding_case(triad, threads, scale, rows);
  cross_entropy_case(scale, rows);
  products_case(threads, scale);
  kernel_counts(threads, gelu_k, softmax_k);

  // The same triad again: how far the machine drifted while the cases ran.
  std::printf("STREAM triad again\n");
  print_triad("alone, at the end", triad, scale);
  std::printf("  load average %s\n\n", load_average().c_str());
  print_targets(rows);
  return 0;
}
