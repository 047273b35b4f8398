// bench_searchsorted: np::searchsorted's two methods against each other, jitted and eager, over
// sizes on both sides of the switch between them (2^24 comparisons): counting comparisons (one
// fused reduction over len(a) x len(v)) and ranks from four sorts of len(a) + len(v) elements.
// Both are written here with jx::lax as src/library/numpy_searching.cpp writes them.
// Usage: bench_searchsorted [repetition scale, default 1]. Prints a table; asserts nothing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

#include <jx/jx.hpp>

#include "bench_machine.hpp"
#include "bench_stats.hpp"

namespace np = jx::np;
namespace lax = jx::lax;
using jx::Array;

namespace {

volatile int g_sink = 0;

// side="left" for float queries without NaN handling's extra terms (the same cost order).
Array compare_all(const Array& a, const Array& v) {
  jx::Shape wide{a.size(), v.size()};
  Array lt = lax::lt(lax::broadcast_in_dim(a, wide, {0}), lax::broadcast_in_dim(v, wide, {1}));
  Array counts = lax::reduce_sum(lax::convert_element_type(lt, jx::int32), {0});
  Array nan_place = lax::reduce_sum(lax::convert_element_type(lax::eq(a, a), jx::int32), {0});
  return lax::select_n(lax::ne(v, v), {counts, lax::broadcast_in_dim(nan_place, v.shape(), {})});
}

Array ranks(const Array& y) {
  Array iota = lax::iota(jx::int32, y.shape());
  return lax::sort_key_val(lax::sort_key_val(y, iota).second, iota).second;
}

Array by_sorting(const Array& a, const Array& v) {
  Array placed = lax::slice(ranks(lax::concatenate({v, a}, 0)), {0}, {v.size()});
  return lax::sub(placed, ranks(v));
}

// Median ms of calls over at least 0.3 s (times the scale) and 3 calls, after one warm-up call.
double time_ms(const std::function<Array()>& call, int scale) {
  using Clock = std::chrono::steady_clock;
  g_sink = g_sink + call().to_vector<int>()[0];
  std::vector<double> samples;
  Clock::time_point start = Clock::now();
  while (samples.size() < 3 ||
         std::chrono::duration<double>(Clock::now() - start).count() < 0.3 * scale) {
    Clock::time_point t = Clock::now();
    g_sink = g_sink + call().to_vector<int>()[0];
    samples.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
  }
  return bench::median(samples);
}

}  // namespace

int main(int argc, char** argv) {
  int scale = argc > 1 ? std::max(1, std::atoi(argv[1])) : 1;
  std::printf("jx bench_searchsorted: counting comparisons vs ranks from sorts, f32, side=left\n");
  std::printf("machine: nproc %d, %s; load average %s\n", bench::affinity_cpus(),
              bench::cpu_model().c_str(), bench::load_average().c_str());
  std::printf("median ms per call; a sorted, v uniform in [0, 1)\n\n");
  std::printf("%8s %8s %12s | %12s %12s %7s | %12s %12s %7s\n", "len(a)", "len(v)", "len(a)len(v)",
              "count jit", "sorts jit", "ratio", "count eager", "sorts eager", "ratio");
  auto jit_count = jx::jit(compare_all), jit_sorts = jx::jit(by_sorting);
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> u(0, 1);
  const std::vector<std::pair<int, int>> sizes = {{64, 64},     {512, 512},   {2048, 2048},
                                                  {4096, 4096}, {16, 65536},  {65536, 16},
                                                  {256, 16384}, {16, 1 << 20}};
  for (auto [n, m] : sizes) {
    std::vector<float> av(static_cast<std::size_t>(n)), vv(static_cast<std::size_t>(m));
    for (float& x : av) x = u(rng);
    for (float& x : vv) x = u(rng);
    std::sort(av.begin(), av.end());
    Array a = np::array(av), v = np::array(vv);
    double cj = time_ms([&] { return jit_count(a, v); }, scale);
    double sj = time_ms([&] { return jit_sorts(a, v); }, scale);
    double ce = time_ms([&] { return compare_all(a, v); }, scale);
    double se = time_ms([&] { return by_sorting(a, v); }, scale);
    std::printf("%8d %8d %12lld | %12.3f %12.3f %7.2f | %12.3f %12.3f %7.2f\n", n, m,
                static_cast<long long>(n) * m, cj, sj, sj / cj, ce, se, se / ce);
  }
  std::printf("\nratio: sorts / count (above 1: counting is faster)\n");
  return 0;
}
