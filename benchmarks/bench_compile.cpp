// bench_compile: what jx::jit costs to trace, lower, optimize, codegen, retrace and hit its cache.
// Usage: bench_compile [repetition scale, default 1]. Prints one report; asserts nothing.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include <jx/jx.hpp>

#include "bench_programs.hpp"
#include "bench_stats.hpp"

namespace lax = jx::lax;
namespace np = jx::np;

namespace {

using bench::chain;
using bench::count_eqns;

// Wall time, and the process's CPU time: on a loaded machine wall time also counts the waits
// for a core, CPU time does not, so both are shown.
struct Stopwatch {
  std::chrono::steady_clock::time_point wall0 = std::chrono::steady_clock::now();
  std::clock_t cpu0 = std::clock();
  double wall_ms() const {
    auto d = std::chrono::steady_clock::now() - wall0;
    return std::chrono::duration<double, std::milli>(d).count();
  }
  double cpu_ms() const { return 1e3 * static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC; }
};

using bench::median;
using bench::minimum;

// Written after each timed call so that its result is observably used.
volatile std::int64_t g_sink = 0;

jx::Array ramp(std::int64_t n) {
  return lax::iota(jx::float32, {n}) * (1.0f / static_cast<float>(n));
}

// One compile's stage times (cache_info deltas, wall ms) and its call's end-to-end times.
struct Stages {
  double trace = 0, lower = 0, optimize = 0, codegen = 0, e2e = 0, e2e_cpu = 0;
  double other() const { return e2e - trace - lower - optimize - codegen; }
};

Stages delta(const jx::CacheInfo& a, const jx::CacheInfo& b, const Stopwatch& sw) {
  Stages s;
  s.trace = b.trace_ms - a.trace_ms, s.lower = b.lower_ms - a.lower_ms;
  s.optimize = b.optimize_ms - a.optimize_ms, s.codegen = b.codegen_ms - a.codegen_ms;
  s.e2e = sw.wall_ms(), s.e2e_cpu = sw.cpu_ms();
  return s;
}

// Per-field medians of several compiles.
struct StageSamples {
  std::vector<double> trace, lower, optimize, codegen, e2e, e2e_cpu;
  void add(const Stages& s) {
    trace.push_back(s.trace), lower.push_back(s.lower), optimize.push_back(s.optimize);
    codegen.push_back(s.codegen), e2e.push_back(s.e2e), e2e_cpu.push_back(s.e2e_cpu);
  }
  Stages med() const {
    return {median(trace),   median(lower), median(optimize),
            median(codegen), median(e2e),   median(e2e_cpu)};
  }
};

// The first call of the jitted `fn` on x, timed: a fresh jitted function has an empty cache.
template <class Fn>
Stages first_call(Fn fn, const jx::Array& x) {
  auto f = jx::jit(std::move(fn));
  jx::CacheInfo before = f.cache_info();
  Stopwatch sw;
  jx::Array y = f(x);
  Stages s = delta(before, f.cache_info(), sw);
  g_sink = y.size();
  return s;
}

// One cold compile and run of an n-equation chain.
Stages cold_compile(const jx::Array& x, int n) {
  return first_call([n](const jx::Array& a) { return chain(a, n); }, x);
}

// The gradient of an n-equation chain's sum: its backward pass reads each step's value again
// (the sine's derivative), so the fused bodies reuse values, as gradients do.
auto grad_of_chain(int n) {
  return jx::grad([n](const jx::Array& a) { return np::sum(chain(a, n)); });
}

// One cold compile and run of grad_of_chain(n).
Stages cold_grad_compile(const jx::Array& x, int n) { return first_call(grad_of_chain(n), x); }

struct ColdRow {
  int eqns = 0, traced_eqns = 0, reps = 0;
  Stages med;
  double e2e_min = 0;
};

ColdRow cold_row(const jx::Array& x, int n, int reps) {
  StageSamples samples;
  for (int r = 0; r < reps; ++r) samples.add(cold_compile(x, n));
  auto f = jx::jit([n](const jx::Array& a) { return chain(a, n); });
  return {n, count_eqns(f.lower(x).jaxpr_text()), reps, samples.med(), minimum(samples.e2e)};
}

// Tracing with warm caches: fresh functions of n equations traced (and lowered, which
// cache_info times apart) back to back, with no compile in between to evict jx from the
// caches. Microseconds per trace, the mean over `reps`.
double warm_trace_us(const jx::Array& x, int n, int reps) {
  double total_ms = 0;
  for (int r = 0; r < reps; ++r) {
    auto f = jx::jit([n](const jx::Array& a) { return chain(a, n); });
    auto lowered = f.lower(x);
    total_ms += f.cache_info().trace_ms;
  }
  return total_ms * 1e3 / reps;
}

// Tracing a function that makes arrays from no traced value: a sum of n zeros of `shape` and
// the iota of each. Under a trace they are equations (broadcast_in_dim, iota), not arrays
// computed on the host and captured as consts. Microseconds per trace (mean over `reps`) and
// the constants the jaxpr captures.
struct CreationTrace {
  double us = 0;
  std::size_t consts = 0;
};
CreationTrace creation_trace(const jx::Shape& shape, int n, int reps) {
  auto f = [&](const jx::Array& x) {
    jx::Array acc = x;
    for (int k = 0; k < n; ++k) {
      acc = acc + jx::np::zeros(shape);
      acc = acc +
            jx::np::reshape(jx::np::arange(static_cast<double>(acc.size()), jx::float32), shape);
    }
    return acc;
  };
  jx::Array x = jx::np::ones(shape);
  CreationTrace out;
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) out.consts = jx::make_jaxpr(f)(x).consts().size();
  out.us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
      reps;
  return out;
}

// Calls per batch of the dispatch loops: long enough that the clocks' own cost and
// resolution (1 us for CPU time) vanish, short enough for many batches.
constexpr int kPerBatch = 2000;

// One batch of calls: ns per call, wall and CPU.
template <class F>
std::pair<double, double> batch_ns(F& call) {
  Stopwatch sw;
  for (int i = 0; i < kPerBatch; ++i) call(i);
  return {sw.wall_ms() * 1e6 / kPerBatch, sw.cpu_ms() * 1e6 / kPerBatch};
}

struct Dispatch {
  double hit = 0, direct = 0, hit_cpu = 0, direct_cpu = 0;
  jx::CacheInfo info;
};

// The jit cache hit and AOT's compiled call on the same f32[3] + f32[3], in interleaved
// batches so that changes in the machine's load fall on both alike.
Dispatch dispatch(int batches) {
  jx::Array a = np::array({1.f, 2.f, 3.f}), b = np::array({4.f, 5.f, 6.f});
  auto add = jx::jit([](const jx::Array& p, const jx::Array& q) { return p + q; });
  auto compiled = add.lower(a, b).compile();
  auto hit = [&](int) { g_sink = add(a, b).size(); };
  auto direct = [&](int) { g_sink = compiled(a, b).size(); };
  batch_ns(hit);  // warm: the first call compiles; pools and allocator caches fill
  batch_ns(direct);
  std::vector<double> h, d, hc, dc;
  for (int i = 0; i < batches; ++i) {
    auto [dw, dcpu] = batch_ns(direct);
    auto [hw, hcpu] = batch_ns(hit);
    h.push_back(hw), d.push_back(dw), hc.push_back(hcpu), dc.push_back(dcpu);
  }
  return {median(h), median(d), median(hc), median(dc), add.cache_info()};
}

struct Retrace {
  Stages med;                   // the miss at the second shape
  double hit = 0, hit_cpu = 0;  // ns per call alternating between the two cached shapes
  double same = 0;              // ns per call at the second shape alone: the baseline
  jx::CacheInfo info;           // of the last repetition's function
};

// A fresh function per repetition, called at two shapes no function has seen: the first
// call compiles, the second is the retrace on a shape change; then both shapes hit.
Retrace retrace(int reps) {
  StageSamples samples;
  std::vector<double> hit, hit_cpu, same;
  Retrace out;
  for (int r = 0; r < reps; ++r) {
    auto f = jx::jit([](const jx::Array& a, const jx::Array& b) { return a + b; });
    jx::Array x1 = ramp(64 + 2 * r), x2 = ramp(65 + 2 * r);
    g_sink = f(x1, x1).size();
    jx::CacheInfo before = f.cache_info();
    Stopwatch sw;
    jx::Array y = f(x2, x2);
    samples.add(delta(before, f.cache_info(), sw));
    g_sink = y.size();
    auto alternate = [&](int i) {
      const jx::Array& x = i % 2 ? x2 : x1;
      g_sink = f(x, x).size();
    };
    auto [w, c] = batch_ns(alternate);
    hit.push_back(w), hit_cpu.push_back(c);
    out.info = f.cache_info();
    auto one_shape = [&](int) { g_sink = f(x2, x2).size(); };
    same.push_back(batch_ns(one_shape).first);
  }
  out.med = samples.med();
  out.hit = median(hit), out.hit_cpu = median(hit_cpu), out.same = median(same);
  return out;
}

const char* verdict(double measured, double target) { return measured <= target ? "PASS" : "MISS"; }

// cpu NaN: not measured on its own clock.
void target_row(const char* what, double wall, double cpu, double target, const char* unit) {
  char c[32] = "-";
  if (!std::isnan(cpu)) std::snprintf(c, sizeof c, "%.3f", cpu);
  std::string cv = std::isnan(cpu) ? "" : std::string("  (cpu ") + verdict(cpu, target) + ")";
  std::printf("  %-34s %9.3f %9s %7.3f %-2s %7.2fx  %s%s\n", what, wall, c, target, unit,
              wall / target, verdict(wall, target), cv.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const int scale = argc > 1 ? std::max(1, std::atoi(argv[1])) : 1;
  jx::Array x = ramp(16);

  // The process's first compile also creates the ORC JIT and initializes the native target:
  // a one-time cost, shown apart and kept out of the medians.
  Stages first = cold_compile(x, 10);
  std::vector<ColdRow> rows{cold_row(x, 10, 15 * scale), cold_row(x, 100, 9 * scale),
                            cold_row(x, 1000, 5 * scale)};
  std::vector<ColdRow> grads;
  for (auto [n, reps] : {std::pair{100, 5 * scale}, std::pair{300, 3 * scale}}) {
    StageSamples samples;
    for (int r = 0; r < reps; ++r) samples.add(cold_grad_compile(x, n));
    grads.push_back({n, count_eqns(jx::jit(grad_of_chain(n)).lower(x).jaxpr_text()), reps,
                     samples.med(), minimum(samples.e2e)});
  }
  Dispatch dp = dispatch(41 * scale);
  Retrace re = retrace(9 * scale);

  std::printf("jx bench_compile: elementwise chains of sin/mul/add on f32[16]; CPU, LLVM O2\n");
  std::printf("wall ms unless marked; cpu = the process's CPU time; medians over reps\n\n");
  std::printf("Cold compile (a fresh jit per repetition)\n");
  std::printf("  %5s %4s %7s %7s %8s %9s %7s %9s %9s %9s %9s\n", "eqns", "reps", "trace", "lower",
              "optimize", "codegen", "other", "e2e", "e2e min", "e2e cpu", "trace/eqn");
  auto print_cold = [](const std::string& label, int eqns, int reps, const Stages& s,
                       double e2e_min) {
    std::printf("  %5s %4d %7.3f %7.3f %8.3f %9.3f %7.3f %9.3f %9.3f %9.3f %6.2f us\n",
                label.c_str(), reps, s.trace, s.lower, s.optimize, s.codegen, s.other(), s.e2e,
                e2e_min, s.e2e_cpu, s.trace * 1e3 / eqns);
  };
  for (const ColdRow& r : rows)
    print_cold(std::to_string(r.eqns), r.eqns, r.reps, r.med, r.e2e_min);
  print_cold("10 *", 10, 1, first, first.e2e);
  std::printf("  * the process's first compile, with the one-time ORC JIT and target setup\n");
  for (const ColdRow& g : grads)
    print_cold("g" + std::to_string(g.eqns), g.traced_eqns, g.reps, g.med, g.e2e_min);
  std::printf(
      "  g: jit(grad(sum of the chain)), whose backward pass reuses the chain's values (%d and %d "
      "eqns)\n",
      grads[0].traced_eqns, grads[1].traced_eqns);
  std::printf("  eqns in the traced jaxprs: %d, %d, %d; other = e2e - stages (key, run, result)\n",
              rows[0].traced_eqns, rows[1].traced_eqns, rows[2].traced_eqns);
  // The fixed and per-equation parts of tracing, from the smallest and largest chains.
  const ColdRow &lo = rows.front(), &hi = rows.back();
  double per_eqn_us = (hi.med.trace - lo.med.trace) * 1e3 / (hi.eqns - lo.eqns);
  double per_kernel_ms = (rows[1].med.codegen - lo.med.codegen) / (rows[1].eqns - lo.eqns);
  std::printf("  tracing: %.2f us per eqn + %.1f us per trace; codegen: %.2f ms per eqn (%d-%d)\n",
              per_eqn_us, lo.med.trace * 1e3 - per_eqn_us * lo.eqns, per_kernel_ms, lo.eqns,
              rows[1].eqns);
  const double warm_us = warm_trace_us(x, lo.eqns, 2000 * scale);
  std::printf(
      "  tracing %d eqns with warm caches (fresh functions traced back to back): %.2f us, "
      "%.2f us per eqn\n",
      lo.eqns, warm_us, warm_us / lo.eqns);
  for (const jx::Shape& shape : {jx::Shape{16}, jx::Shape{256, 256}}) {
    CreationTrace c = creation_trace(shape, 10, 200 * scale);
    std::printf(
        "  tracing x + 10 x (zeros + arange) of %s: %.1f us per trace, %zu consts captured\n",
        jx::ShapedArray{shape, jx::float32, false}.str().c_str(), c.us, c.consts);
  }
  std::printf("\n");

  std::printf(
      "Dispatch of f32[3] + f32[3] (ns per call; median of %lld interleaved batches of "
      "%d calls)\n",
      static_cast<long long>(41 * scale), kPerBatch);
  std::printf("  %-44s %9s %9s\n", "", "wall", "cpu");
  std::printf("  %-44s %9.1f %9.1f\n", "jit cache hit: add(a, b)", dp.hit, dp.hit_cpu);
  std::printf("  %-44s %9.1f %9.1f\n", "AOT direct: compiled(a, b)", dp.direct, dp.direct_cpu);
  std::printf("  %-44s %9.1f %9.1f\n", "jit overhead = hit - direct", dp.hit - dp.direct,
              dp.hit_cpu - dp.direct_cpu);
  std::printf("  cache_info: %lld hits, %lld misses, %lld entries\n\n",
              static_cast<long long>(dp.info.hits), static_cast<long long>(dp.info.misses),
              static_cast<long long>(dp.info.entries));

  std::printf(
      "Retrace on a shape change (a + b at f32[64+2r] then f32[65+2r]; a fresh jit per "
      "rep)\n");
  std::printf(
      "  %-44s %9.3f ms (cpu %.3f) [trace %.3f, lower %.3f, optimize %.3f, "
      "codegen %.3f]\n",
      "miss at the second shape, end to end", re.med.e2e, re.med.e2e_cpu, re.med.trace,
      re.med.lower, re.med.optimize, re.med.codegen);
  std::printf("  %-44s %9.1f ns (cpu %.1f); cache_info: %lld hits, %lld misses, %lld entries\n",
              "hit after it, alternating the two shapes", re.hit, re.hit_cpu,
              static_cast<long long>(re.info.hits), static_cast<long long>(re.info.misses),
              static_cast<long long>(re.info.entries));
  std::printf("  %-44s %9.1f ns\n\n", "then the second shape alone (same function)", re.same);

  std::printf("Targets (ratio = wall / target; PASS when <= 1)\n");
  std::printf("  %-34s %9s %9s %10s %8s\n", "", "wall", "cpu", "target", "ratio");
  // hit - direct is no bound when AOT's call costs more than a hit, so the target is also
  // checked against the whole hit call, an upper bound on the jit overhead.
  target_row("cache hit: hit - direct", (dp.hit - dp.direct) / 1e3,
             (dp.hit_cpu - dp.direct_cpu) / 1e3, 1.0, "us");
  target_row("cache hit: whole call", dp.hit / 1e3, dp.hit_cpu / 1e3, 1.0, "us");
  target_row("cache hit aim: whole call", dp.hit / 1e3, dp.hit_cpu / 1e3, 0.2, "us");
  for (const ColdRow& r : rows) {
    std::string what = "tracing per eqn, " + std::to_string(r.eqns) + " eqns";
    target_row(what.c_str(), r.med.trace * 1e3 / r.eqns, std::nan(""), 2.0, "us");
  }
  target_row("tracing per eqn, the slope", per_eqn_us, std::nan(""), 2.0, "us");
  target_row("tracing per eqn, 10 eqns, warm", warm_us / lo.eqns, std::nan(""), 2.0, "us");
  target_row("10-eqn compile at O2, end to end", lo.med.e2e, lo.med.e2e_cpu, 15.0, "ms");
  std::printf("  (tracing is timed by cache_info, on the wall clock only)\n");
  return 0;
}
