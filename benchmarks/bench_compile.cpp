// bench_compile: what jx::jit costs to trace, lower, optimize, codegen, retrace and hit its cache.
// Usage: bench_compile [repetitions scale, default 1]. Prints one report; asserts nothing.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <jx/jx.hpp>

namespace lax = jx::lax;
namespace np = jx::np;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double minimum(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
}

// Written after each timed call so the result is observably used.
volatile std::int64_t g_sink = 0;

// An elementwise chain of n lax equations on x (sin, mul, add, repeated): exactly n eqns,
// since lax ops take equal shapes and insert no broadcasts or converts.
jx::Array chain(const jx::Array& x, int n) {
  jx::Array y = x;
  for (int i = 0; i < n; ++i) {
    switch (i % 3) {
      case 0: y = lax::sin(y); break;
      case 1: y = lax::mul(y, x); break;
      default: y = lax::add(y, x); break;
    }
  }
  return y;
}

// Equations in a jaxpr's text: each binds its outputs with " = " (params print as k=v).
int count_eqns(const std::string& jaxpr) {
  int n = 0;
  for (std::size_t p = jaxpr.find(" = "); p != std::string::npos; p = jaxpr.find(" = ", p + 3))
    ++n;
  return n;
}

jx::Array iota_f32(std::int64_t n) {
  return lax::iota(jx::float32, {n}) * (1.0f / static_cast<float>(n));
}

struct Stages {
  double trace = 0, lower = 0, optimize = 0, codegen = 0, e2e = 0;
};

// Deltas of one call's statistics, with its wall time.
Stages delta(const jx::CacheInfo& a, const jx::CacheInfo& b, double e2e) {
  return {b.trace_ms - a.trace_ms, b.lower_ms - a.lower_ms, b.optimize_ms - a.optimize_ms,
          b.codegen_ms - a.codegen_ms, e2e};
}

// One cold compile + run of an n-equation chain with a fresh jitted function (an empty cache).
Stages cold_compile(const jx::Array& x, int n) {
  auto f = jx::jit([n](const jx::Array& a) { return chain(a, n); });
  jx::CacheInfo before = f.cache_info();
  auto t0 = Clock::now();
  jx::Array y = f(x);
  double e2e = ms_since(t0);
  g_sink = y.size();
  return delta(before, f.cache_info(), e2e);
}

struct ColdRow {
  int eqns = 0, traced_eqns = 0, reps = 0;
  Stages med, best;
};

ColdRow cold_row(const jx::Array& x, int n, int reps) {
  std::vector<double> tr, lo, op, cg, e2e;
  for (int r = 0; r < reps; ++r) {
    Stages s = cold_compile(x, n);
    tr.push_back(s.trace), lo.push_back(s.lower), op.push_back(s.optimize);
    cg.push_back(s.codegen), e2e.push_back(s.e2e);
  }
  ColdRow row;
  row.eqns = n;
  row.reps = reps;
  auto f = jx::jit([n](const jx::Array& a) { return chain(a, n); });
  row.traced_eqns = count_eqns(f.lower(x).jaxpr_text());
  row.med = {median(tr), median(lo), median(op), median(cg), median(e2e)};
  row.best = {minimum(tr), minimum(lo), minimum(op), minimum(cg), minimum(e2e)};
  return row;
}

// Median ns per call of `call`, over `batches` batches of `per_batch` calls (batching keeps the
// clock's own ~20 ns out of each call).
template <class F>
double ns_per_call(F&& call, int batches, int per_batch) {
  for (int i = 0; i < per_batch; ++i) call();  // warm caches, pools and the branch predictor
  std::vector<double> v;
  for (int b = 0; b < batches; ++b) {
    auto t0 = Clock::now();
    for (int i = 0; i < per_batch; ++i) call();
    v.push_back(ms_since(t0) * 1e6 / per_batch);
  }
  return median(v);
}

struct Retrace {
  Stages med;       // the second shape's miss
  double hit_ns = 0;  // calls alternating between the two cached shapes afterwards
  std::int64_t hits = 0, misses = 0, entries = 0;  // of the last repetition's function
};

// A fresh function per repetition, called at two shapes it has not seen: the first call
// compiles, the second is the retrace on a shape change; then both shapes hit.
Retrace retrace(int reps, int hit_calls) {
  std::vector<double> tr, lo, op, cg, e2e, hit;
  Retrace out;
  for (int r = 0; r < reps; ++r) {
    auto f = jx::jit([](const jx::Array& a, const jx::Array& b) { return a + b; });
    jx::Array a1 = iota_f32(64 + 2 * r), a2 = iota_f32(65 + 2 * r);
    g_sink = f(a1, a1).size();
    jx::CacheInfo before = f.cache_info();
    auto t0 = Clock::now();
    jx::Array y = f(a2, a2);
    double ms = ms_since(t0);
    g_sink = y.size();
    Stages s = delta(before, f.cache_info(), ms);
    tr.push_back(s.trace), lo.push_back(s.lower), op.push_back(s.optimize);
    cg.push_back(s.codegen), e2e.push_back(s.e2e);
    t0 = Clock::now();
    for (int i = 0; i < hit_calls; ++i) g_sink = f(i % 2 ? a2 : a1, i % 2 ? a2 : a1).size();
    hit.push_back(ms_since(t0) * 1e6 / hit_calls);
    jx::CacheInfo info = f.cache_info();
    out.hits = info.hits, out.misses = info.misses, out.entries = info.entries;
  }
  out.med = {median(tr), median(lo), median(op), median(cg), median(e2e)};
  out.hit_ns = median(hit);
  return out;
}

void target_row(const char* what, double measured, double target, const char* unit) {
  std::printf("  %-40s %10.3f %-3s %8.3f %-3s %7.2fx  %s\n", what, measured, unit, target, unit,
              measured / target, measured <= target ? "PASS" : "MISS");
}

}  // namespace

int main(int argc, char** argv) {
  const int scale = argc > 1 ? std::max(1, std::atoi(argv[1])) : 1;
  jx::Array x = iota_f32(16);

  // The process's first compile also creates the ORC JIT and initializes the native target:
  // a one-time cost, shown apart and kept out of the medians.
  Stages first = cold_compile(x, 10);

  std::vector<ColdRow> rows;
  rows.push_back(cold_row(x, 10, 15 * scale));
  rows.push_back(cold_row(x, 100, 9 * scale));
  rows.push_back(cold_row(x, 1000, 5 * scale));

  // Dispatch: the same two f32[3] arguments through the jit cache and through AOT's compiled.
  jx::Array a = np::array({1.f, 2.f, 3.f}), b = np::array({4.f, 5.f, 6.f});
  auto add = jx::jit([](const jx::Array& p, const jx::Array& q) { return p + q; });
  auto compiled = add.lower(a, b).compile();
  const int batches = 31 * scale, per_batch = 2000;
  double direct_ns = ns_per_call([&] { g_sink = compiled(a, b).size(); }, batches, per_batch);
  double hit_ns = ns_per_call([&] { g_sink = add(a, b).size(); }, batches, per_batch);
  double direct2_ns = ns_per_call([&] { g_sink = compiled(a, b).size(); }, batches, per_batch);
  direct_ns = std::min(direct_ns, direct2_ns);  // measured on both sides of the hit loop
  jx::CacheInfo add_info = add.cache_info();

  Retrace re = retrace(9 * scale, 2000);

  std::printf("jx bench_compile: elementwise chains of sin/mul/add on f32[16]; CPU, LLVM O2\n\n");
  std::printf("Cold compile (fresh jit per repetition; ms, median of reps; min in brackets)\n");
  std::printf("  %5s %5s %7s %7s %8s %8s %9s %9s %9s %9s\n", "eqns", "reps", "trace", "lower",
              "optimize", "codegen", "other", "e2e", "[e2e min]", "trace/eqn");
  auto print_cold = [](const char* label, int eqns, int reps, const Stages& s, double e2e_min) {
    double other = s.e2e - s.trace - s.lower - s.optimize - s.codegen;
    std::printf("  %5s %5d %7.3f %7.3f %8.3f %8.3f %9.3f %9.3f %9.3f %6.2f us\n", label, reps,
                s.trace, s.lower, s.optimize, s.codegen, other, s.e2e, e2e_min,
                s.trace * 1e3 / eqns);
  };
  for (const ColdRow& r : rows) {
    std::string label = std::to_string(r.eqns);
    print_cold(label.c_str(), r.eqns, r.reps, r.med, r.best.e2e);
  }
  print_cold("10*", 10, 1, first, first.e2e);
  std::printf("  (* the process's first compile: one-time ORC JIT and target setup)\n");
  std::printf("  eqns counted in the traced jaxprs:");
  for (const ColdRow& r : rows) std::printf(" %d", r.traced_eqns);
  std::printf("; other = end to end - stages (signature, run, output)\n\n");

  std::printf("Dispatch, f32[3] + f32[3] (ns per call, median of %d batches of %d calls)\n",
              batches, per_batch);
  std::printf("  %-40s %10.1f ns\n", "jit cache hit: add(a, b)", hit_ns);
  std::printf("  %-40s %10.1f ns\n", "AOT direct: compiled(a, b)", direct_ns);
  std::printf("  %-40s %10.1f ns\n", "jit overhead = hit - direct", hit_ns - direct_ns);
  std::printf("  (cache_info: %lld hits, %lld misses, %lld entries)\n\n",
              static_cast<long long>(add_info.hits), static_cast<long long>(add_info.misses),
              static_cast<long long>(add_info.entries));

  std::printf("Retrace on a shape change (a + b; fresh jit and two new shapes per repetition)\n");
  std::printf("  %-40s %10.3f ms  [trace %.3f, lower %.3f, optimize %.3f, codegen %.3f]\n",
              "miss at the second shape, end to end", re.med.e2e, re.med.trace, re.med.lower,
              re.med.optimize, re.med.codegen);
  std::printf("  %-40s %10.1f ns  (last function: %lld hits, %lld misses, %lld entries)\n\n",
              "hit after it, alternating the two shapes", re.hit_ns,
              static_cast<long long>(re.hits), static_cast<long long>(re.misses),
              static_cast<long long>(re.entries));

  std::printf("Targets (ratio = measured / target; <= 1 meets it)\n");
  std::printf("  %-40s %14s %12s %8s  %s\n", "", "measured", "target", "ratio", "");
  target_row("cache hit overhead (hit - direct)", (hit_ns - direct_ns) / 1e3, 1.0, "us");
  target_row("  aim", (hit_ns - direct_ns) / 1e3, 0.2, "us");
  for (const ColdRow& r : rows) {
    std::string what = "tracing per eqn, " + std::to_string(r.eqns) + " eqns";
    target_row(what.c_str(), r.med.trace * 1e3 / r.eqns, 2.0, "us");
  }
  target_row("10-eqn compile at O2, end to end", rows[0].med.e2e, 15.0, "ms");
  return 0;
}
