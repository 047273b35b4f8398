// The CPU against its own limits: the FMA peak of one core, measured here with a loop of
// independent multiply-adds, and what jx's matrix kernel reaches of it at 1, 2, 4, 8 and 16
// threads (where the machine has them: --cpu_threads) against OpenBLAS and, where oneDNN is
// installed, its sgemm on as many threads; bf16 products (AMX's tile unit where the CPU has
// one) against the vector kernel; products of few rows, memory-bound on their rhs; and how
// elementwise and row-softmax kernels scale with threads. Efficiency is against the one-thread
// time. The ISA jx compiles for is printed (JX_FLAGS=--cpu_isa=avx2 on an AVX-512 machine measures
// the other kind).
//
//   bench_roofline [S]   S: S times the sampling (0.25: a quarter, for a machine lent briefly)
#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <jx/jx.hpp>

#include "bench_machine.hpp"
#include "bench_stats.hpp"
#include "codegen/cpu/cpu_isa.hpp"

namespace {

namespace np = jx::np;
using Clock = std::chrono::steady_clock;

// ---- the FMA peak ------------------------------------------------------------------------------

// The widest vector the benchmark is compiled for (-march=native), as the JIT's.
#if defined(__AVX512F__)
constexpr int kLanes = 16;
#elif defined(__AVX__)
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;
#endif
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));

// Multiply-adds per second on one thread: 12 independent chains (more than the FMA latency
// times the ports), each in a register of its own, so the loop runs at the units' throughput.
double fma_rate(long iterations) {
  Vec scale, shift, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11;
  for (int i = 0; i < kLanes; ++i) scale[i] = 0.9999999f, shift[i] = 1e-7f;
  a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = a8 = a9 = a10 = a11 = shift * 3 + 1;
  Clock::time_point t0 = Clock::now();
  for (long it = 0; it < iterations; ++it) {
    a0 = a0 * scale + shift, a1 = a1 * scale + shift, a2 = a2 * scale + shift;
    a3 = a3 * scale + shift, a4 = a4 * scale + shift, a5 = a5 * scale + shift;
    a6 = a6 * scale + shift, a7 = a7 * scale + shift, a8 = a8 * scale + shift;
    a9 = a9 * scale + shift, a10 = a10 * scale + shift, a11 = a11 * scale + shift;
    // Computed each time, not folded across iterations by the compiler.
    __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    __asm__ volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  Vec sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
  if (sum[0] == 12345.0f) std::printf(" ");
  return static_cast<double>(iterations) * 12 * kLanes / seconds;
}

// The best of several runs on one thread, and on `threads` at once (per thread). Each runs on a
// new thread bound to a core of its own while the caller waits (bench::bind_to_cpu): unbound,
// two could share a core, which would lower the peak the ratios are held to.
double fma_peak(int threads, double scale) {
  const auto iterations = static_cast<long>(50'000'000 * std::max(scale, 0.2));
  double best = 0;
  for (int run = 0; run < 3; ++run) {
    std::vector<double> rates(static_cast<std::size_t>(threads));
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        bench::bind_to_cpu(t);
        rates[static_cast<std::size_t>(t)] = fma_rate(iterations);
      });
    for (std::thread& t : pool) t.join();
    double slowest = *std::min_element(rates.begin(), rates.end());
    best = std::max(best, slowest);
  }
  return best;
}

// ---- oneDNN ------------------------------------------------------------------------------------

// oneDNN's sgemm (its own JIT kernels for the CPU it runs on), a second reference beside
// OpenBLAS: whether a fraction of the FMA peak is the kernel's or the machine's. An optional
// library (Debian's libdnnl2, which libtorch depends on), loaded at run time; Debian's build
// runs on OpenMP, whose omp_set_num_threads (libgomp's, which the library loads) sets its
// threads. `absent` says why it is left out, if it is.
struct OneDnn {
  using Sgemm = int (*)(char, char, std::int64_t, std::int64_t, std::int64_t, float, const float*,
                        std::int64_t, const float*, std::int64_t, float, float*, std::int64_t);
  Sgemm sgemm = nullptr;
  void (*set_threads)(int) = nullptr;
  std::string absent;

  OneDnn() {
    void* lib = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      absent = "not installed (libdnnl2)";
      return;
    }
    set_threads = reinterpret_cast<void (*)(int)>(dlsym(lib, "omp_set_num_threads"));
    if (!set_threads) absent = "libdnnl.so.2 is not an OpenMP build: left out";
    if (set_threads) sgemm = reinterpret_cast<Sgemm>(dlsym(lib, "dnnl_sgemm"));
  }
  // Row-major c[n, n] = a @ b; exits where oneDNN reports an error.
  void multiply(int n, const float* a, const float* b, float* c) const {
    if (int status = sgemm('N', 'N', n, n, n, 1.0f, a, n, b, n, 0.0f, c, n); status != 0) {
      std::fprintf(stderr, "dnnl_sgemm failed: status %d\n", status);
      std::exit(1);
    }
  }
};

const OneDnn& onednn() {
  static const OneDnn lib;
  return lib;
}

// ---- timing --------------------------------------------------------------------------------

double median_ms(const std::function<void()>& call, double scale) {
  return bench::summarize(bench::sample_interleaved({call}, scale)[0]).median_ms;
}

void set_threads(int threads) {
  jx::config().cpu_threads = threads;
  openblas_set_num_threads(threads);
  if (onednn().set_threads) onednn().set_threads(threads);
}

std::vector<float> ramp(std::size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = lo + (hi - lo) * static_cast<float>((i * 7919) % 1000) / 1000.0f;
  return v;
}

// ---- dense layers ------------------------------------------------------------------------------

constexpr int kFewRowsDepth = 4096;

jx::Array dense_relu(const jx::Array& x, const jx::Array& w, const jx::Array& b) {
  return np::maximum(np::matmul(x, w) + b, 0.0f);
}

// peak_one: one core's FMA rate alone; peak_busy: per core with all of them busy.
void dense_table(const std::vector<int>& thread_counts, double peak_one, double peak_busy,
                 double scale) {
  std::printf(
      "Dense layer relu(x @ W + b), x, W: f32[n, n]; GMAC/s, fraction of the FMA peak of\n"
      "the threads used, efficiency against 1 thread, and OpenBLAS sgemm (and oneDNN's) alone\n");
  std::printf("  %5s %7s %10s %9s %7s %7s %12s %9s", "n", "threads", "jx GMAC/s", "of peak",
              "effic.", "", "sgemm GMAC/s", "jx/sgemm");
  if (onednn().sgemm) std::printf(" %13s %10s", "oneDNN GMAC/s", "jx/oneDNN");
  std::printf("\n");
  for (int n : {256, 512, 1024, 2048}) {
    auto nn = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
    std::vector<float> xh = ramp(nn, -1, 1), wh = ramp(nn, -0.05f, 0.05f), c(nn);
    jx::Array x = np::array(xh, jx::Shape{n, n}), w = np::array(wh, jx::Shape{n, n});
    jx::Array b = np::array(ramp(static_cast<std::size_t>(n), -0.1f, 0.1f), jx::Shape{n});
    double macs = static_cast<double>(n) * n * n, one_thread = 0;
    for (int threads : thread_counts) {
      set_threads(threads);
      // Compiled anew at each thread count: the split into rows is decided when compiling.
      auto fresh = jx::jit(dense_relu, {.name = "dense_relu"});
      double tj = median_ms([&] { fresh(x, w, b).block_until_ready(); }, scale);
      double ts = median_ms(
          [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, xh.data(), n,
                        wh.data(), n, 0.0f, c.data(), n);
          },
          scale);
      if (threads == 1) one_thread = tj;
      double rate = macs / tj / 1e6, blas = macs / ts / 1e6;
      std::printf("  %5d %7d %10.1f %8.2fx %6.2fx %7s %12.1f %8.2fx", n, threads, rate,
                  rate * 1e9 / ((threads == 1 ? peak_one : peak_busy) * threads),
                  one_thread / tj / threads, "", blas, ts / tj);
      if (onednn().sgemm) {
        std::vector<float> d(nn);
        double td = median_ms([&] { onednn().multiply(n, xh.data(), wh.data(), d.data()); }, scale);
        double worst = 0;  // against OpenBLAS's product, whose sums run in another order
        for (std::size_t i = 0; i < nn; ++i) worst = std::max<double>(worst, std::abs(d[i] - c[i]));
        if (!(worst <= 1e-4 * n)) {
          std::fprintf(stderr, "dnnl_sgemm differs from cblas_sgemm by %g\n", worst);
          std::exit(1);
        }
        std::printf(" %13.1f %9.2fx", macs / td / 1e6, td / tj);
      }
      std::printf("\n");
    }
  }
  std::printf("\n");
}

// f32 products of bf16 matrices (lax.dot_general with preferred_element_type=float32): jx as
// configured (on AMX's tile unit where the CPU has one) against the same product under
// --cpu_isa=avx512, AVX-512's vector kernel after converting both operands (AVX2's where the CPU
// has no AVX-512), compiled and timed in the same run; and the first against the f32 FMA peak.
void bf16_table(const std::vector<int>& thread_counts, double peak_one, double peak_busy,
                double scale) {
  const std::string configured = jx::config().cpu_isa;
  bool tiles = jx::codegen::cpu::configured_cpu_isa().amx_bf16;
  std::printf(
      "bf16 products into f32, x, W: bf16[n, n]; GMAC/s as configured (%s), against the f32\n"
      "FMA peak of the threads used, and against --cpu_isa=avx512 (the vector kernel)\n",
      tiles ? "AMX's tile unit" : "the vector kernel");
  std::printf("  %5s %7s %10s %9s %14s %9s\n", "n", "threads", "jx GMAC/s", "of peak",
              "avx512 GMAC/s", "ratio");
  auto product = [](const jx::Array& a, const jx::Array& b) {
    return jx::lax::dot_general(a, b, {{1}, {0}, {}, {}}, jx::float32);
  };
  for (int n : {512, 1024, 2048}) {
    auto nn = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
    jx::Array x = np::array(ramp(nn, -1, 1), jx::Shape{n, n}).astype(jx::bfloat16);
    jx::Array w = np::array(ramp(nn, -0.05f, 0.05f), jx::Shape{n, n}).astype(jx::bfloat16);
    double macs = static_cast<double>(n) * n * n;
    for (int threads : thread_counts) {
      set_threads(threads);
      std::vector<double> ms;
      for (const std::string& isa : {configured, std::string("avx512")}) {
        jx::config().cpu_isa = isa;
        auto fresh = jx::jit(product, {.name = "bf16_product"});
        ms.push_back(median_ms([&] { fresh(x, w).block_until_ready(); }, scale));
      }
      jx::config().cpu_isa = configured;
      double rate = macs / ms[0] / 1e6, vector = macs / ms[1] / 1e6;
      std::printf("  %5d %7d %10.1f %8.2fx %14.1f %8.2fx\n", n, threads, rate,
                  rate * 1e9 / ((threads == 1 ? peak_one : peak_busy) * threads), vector,
                  ms[1] / ms[0]);
    }
  }
  std::printf("\n");
}

// OpenBLAS's idle threads spin (sched_yield) for about 0.1 s after a threaded call, and on a
// machine with few cores take one from whatever runs next: waited out before jx's next timing.
void settle_blas() { std::this_thread::sleep_for(std::chrono::milliseconds(200)); }

// Products of few rows, [m, 4096] x [4096, 4096]: memory-bound on rhs (64 MiB) for few rows, so
// GB/s of rhs read; split over the threads by columns. And the same product of bf16 matrices
// into f32 (rhs 32 MiB), against the f32 product's time.
void few_rows_table(const std::vector<int>& thread_counts, double scale) {
  std::printf(
      "Products of few rows, x: f32[m, %d] @ W: f32[%d, %d]; ms, GB/s of W, and OpenBLAS\n"
      "sgemm on as many threads; then x and W in bf16 (the product in f32): ms, GB/s of W, and\n"
      "the f32 product's time over it\n",
      kFewRowsDepth, kFewRowsDepth, kFewRowsDepth);
  std::printf("  %5s %7s %10s %9s %12s %9s %10s %9s %9s\n", "m", "threads", "jx ms", "W GB/s",
              "sgemm ms", "jx/sgemm", "bf16 ms", "W GB/s", "f32/bf16");
  const int k = kFewRowsDepth, n = kFewRowsDepth;
  std::vector<float> wh = ramp(static_cast<std::size_t>(k) * n, -0.05f, 0.05f);
  jx::Array w = np::array(wh, jx::Shape{k, n});
  jx::Array w16 = w.astype(jx::bfloat16);
  auto bf16_product = [](const jx::Array& a, const jx::Array& b) {
    return jx::lax::dot_general(a, b, {{1}, {0}, {}, {}}, jx::float32);
  };
  for (int m : {1, 4, 16, 64, 256}) {
    std::vector<float> xh = ramp(static_cast<std::size_t>(m) * k, -1, 1);
    std::vector<float> c(static_cast<std::size_t>(m) * n);
    jx::Array x = np::array(xh, jx::Shape{m, k});
    jx::Array x16 = x.astype(jx::bfloat16);
    for (int threads : thread_counts) {
      set_threads(threads);
      auto fresh = jx::jit([](const jx::Array& a, const jx::Array& b) { return np::matmul(a, b); });
      double tj = median_ms([&] { fresh(x, w).block_until_ready(); }, scale);
      double ts = median_ms(
          [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, xh.data(), k,
                        wh.data(), n, 0.0f, c.data(), n);
          },
          scale);
      if (threads > 1) settle_blas();
      auto fresh16 = jx::jit(bf16_product);
      double th = median_ms([&] { fresh16(x16, w16).block_until_ready(); }, scale);
      std::printf("  %5d %7d %10.3f %9.1f %12.3f %8.2fx %10.3f %9.1f %8.2fx\n", m, threads, tj,
                  4.0 * k * n / tj / 1e6, ts, ts / tj, th, 2.0 * k * n / th / 1e6, tj / th);
    }
  }
  std::printf("\n");
}

// ---- elementwise and row softmax --------------------------------------------------------------

jx::Array gelu(const jx::Array& x) {
  const float c = 0.7978845608f;  // sqrt(2 / pi)
  return 0.5f * x * (1.0f + np::tanh(c * (x + 0.044715f * x * x * x)));
}

jx::Array softmax(const jx::Array& x) {
  jx::Array e = np::exp(x - np::max(x, -1, /*keepdims=*/true));
  return e / np::sum(e, -1, /*keepdims=*/true);
}

void scaling_table(const std::vector<int>& thread_counts, double scale) {
  std::printf(
      "Thread scaling of memory-bound kernels (ms, medians; efficiency against 1 thread)\n");
  std::printf("  %-34s", "case");
  for (int t : thread_counts) std::printf(" %8d thr %6s", t, "effic.");
  std::printf("\n");
  jx::Array x = np::array(ramp(std::size_t{1} << 24, -4, 4), jx::Shape{1 << 24});
  jx::Array rows = np::reshape(x, {4096, 4096});
  struct Case {
    const char* what;
    jx::Array (*fn)(const jx::Array&);
    const jx::Array* input;
  };
  for (const Case& c : {Case{"gelu (tanh form), f32[16M]", gelu, &x},
                        Case{"row softmax, f32[4096, 4096]", softmax, &rows}}) {
    std::printf("  %-34s", c.what);
    double one = 0;
    for (int threads : thread_counts) {
      set_threads(threads);
      auto f = jx::jit(c.fn);
      double t = median_ms([&] { f(*c.input).block_until_ready(); }, scale);
      if (threads == 1) one = t;
      std::printf(" %12.3f %6.2fx", t, one / t / threads);
    }
    std::printf("\n");
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const double scale = argc > 1 ? std::max(0.05, std::atof(argv[1])) : 1;
  int cores = jx::codegen::cpu::host_cores();  // those the process may run on
  std::vector<int> thread_counts;
  for (int t = 1; t <= std::min(cores, 16); t *= 2) thread_counts.push_back(t);
  if (thread_counts.back() != std::min(cores, 16)) thread_counts.push_back(std::min(cores, 16));
  const auto& isa = jx::codegen::cpu::configured_cpu_isa();
  std::printf("%s, %d cores (nproc %d); jx compiles for %s (%s, %u-bit vectors); load %s\n",
              bench::cpu_model().c_str(), cores, bench::affinity_cpus(), isa.cpu.c_str(),
              isa.name.c_str(), 8 * isa.vector_bytes, bench::load_average().c_str());
  std::printf("OpenBLAS %s (kernels: %s); oneDNN: %s\n\n", openblas_get_config(),
              openblas_get_corename(),
              onednn().sgemm ? "libdnnl.so.2's dnnl_sgemm" : onednn().absent.c_str());

  double peak = fma_peak(1, scale);
  double peak_all = fma_peak(cores, scale);
  std::printf(
      "FMA peak (%d-lane multiply-adds): %.1f GMAC/s on one core, %.1f per core with all "
      "%d busy\n\n",
      kLanes, peak / 1e9, peak_all / 1e9, cores);
  dense_table(thread_counts, peak, peak_all, scale);
  bf16_table(thread_counts, peak, peak_all, scale);
  few_rows_table(thread_counts, scale);
  scaling_table(thread_counts, scale);
  std::printf("load %s\n", bench::load_average().c_str());
}
