// bench_recompile: what a jitted function costs the first time it runs, from nothing and from the
// persistent compilation cache, against a cache hit and a retrace, for programs of 10, 100 and
// 1000 equations. Each first call runs in a new process (this binary again, --child=MODE), after
// a warm-up compile of another function, so every mode pays for the same process start:
//   cold  no compilation cache: trace, lower, optimize, codegen;
//   disk  the cache holds the program (keyed by its optimized HLO): trace, lower, optimize, load;
//   warm  the cache holds a warm entry (JitOptions::persistent_key): load only.
// Usage: bench_recompile [runs per mode, default 3]. Prints one table; asserts nothing.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <jx/jx.hpp>

#include "bench_programs.hpp"
#include "bench_stats.hpp"

namespace np = jx::np;

namespace {

constexpr std::int64_t kLength = 256;  // elements of the chain's argument

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

volatile float g_sink = 0;

// The child: one first call of an n-equation chain in `mode`, printed as "<ms> <disk_hits>
// <traces>".
int run_child(const std::string& mode, int n, const std::string& dir) {
  jx::Array x = np::linspace(0, 1, kLength);
  g_sink = jx::jit([](const jx::Array& a) { return a * 2.0f; })(x).to_vector<float>()[0];
  if (mode != "cold") jx::config().compilation_cache_dir = dir;
  auto f = jx::jit(
      [n](const jx::Array& a) { return bench::chain(a, n); },
      {.name = "chain" + std::to_string(n), .persistent_key = mode == "warm" ? "chain-v1" : ""});
  auto t0 = std::chrono::steady_clock::now();
  jx::Array y = f(x);
  g_sink = y.to_vector<float>()[0];
  double ms = ms_since(t0);
  jx::CacheInfo info = f.cache_info();
  std::printf("%.4f %lld %lld\n", ms, static_cast<long long>(info.disk_hits),
              static_cast<long long>(info.traces));
  return 0;
}

struct ChildRun {
  double ms = 0;
  long long disk_hits = 0, traces = 0;
};

ChildRun spawn_child(const std::string& self, const std::string& mode, int n,
                     const std::string& dir) {
  std::string cmd =
      "'" + self + "' --child=" + mode + " --eqns=" + std::to_string(n) + " '" + dir + "'";
  ChildRun r;
  FILE* out = popen(cmd.c_str(), "r");
  if (!out || std::fscanf(out, "%lf %lld %lld", &r.ms, &r.disk_hits, &r.traces) != 3) {
    std::fprintf(stderr, "bench_recompile: the child '%s' failed\n", cmd.c_str());
    std::exit(1);
  }
  pclose(out);
  return r;
}

// The median first call of `runs` children in `mode`; disk and warm first fill their cache
// with one run, which checks that the timed runs were served as the mode says.
double first_call_ms(const std::string& self, const std::string& mode, int n,
                     const std::string& dir, int runs) {
  if (mode != "cold") spawn_child(self, mode, n, dir);
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    ChildRun c = spawn_child(self, mode, n, dir);
    bool as_expected = mode == "cold"   ? c.disk_hits == 0 && c.traces == 1
                       : mode == "disk" ? c.disk_hits == 1 && c.traces == 1
                                        : c.disk_hits == 1 && c.traces == 0;
    if (!as_expected) {
      std::fprintf(stderr, "bench_recompile: a %s run had %lld disk hits and %lld traces\n",
                   mode.c_str(), c.disk_hits, c.traces);
      std::exit(1);
    }
    ms.push_back(c.ms);
  }
  return bench::median(ms);
}

// In this process: the median time of a cache hit (µs) and of the miss a new shape causes (ms).
struct InProcess {
  double hit_us = 0, retrace_ms = 0;
};
InProcess in_process(int n) {
  auto f = jx::jit([n](const jx::Array& a) { return bench::chain(a, n); });
  jx::Array x = np::linspace(0, 1, kLength);
  g_sink = f(x).to_vector<float>()[0];
  std::vector<double> hits;
  for (int batch = 0; batch < 21; ++batch) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 200; ++i) g_sink = static_cast<float>(f(x).size());
    hits.push_back(ms_since(t0) * 1e3 / 200);
  }
  std::vector<double> retraces;
  for (int k = 1; k <= 3; ++k) {
    jx::Array other = np::linspace(0, 1, kLength + k);
    auto t0 = std::chrono::steady_clock::now();
    g_sink = f(other).to_vector<float>()[0];
    retraces.push_back(ms_since(t0));
  }
  return {bench::median(hits), bench::median(retraces)};
}

// A hit with two small arguments: the dispatch alone, the goal of which is 0.2 µs (with no
// profiler trace recording, which costs a hit one relaxed load per thunk).
double small_hit_us() {
  auto add = jx::jit([](const jx::Array& p, const jx::Array& q) { return p + q; });
  jx::Array a = np::array({1.f, 2.f, 3.f}), b = np::array({4.f, 5.f, 6.f});
  g_sink = static_cast<float>(add(a, b).size());
  std::vector<double> batches;
  for (int batch = 0; batch < 21; ++batch) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 2000; ++i) g_sink = static_cast<float>(add(a, b).size());
    batches.push_back(ms_since(t0) * 1e3 / 2000);
  }
  return bench::median(batches);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]).rfind("--child=", 0) == 0)
    return run_child(std::string(argv[1]).substr(8), std::atoi(argv[2] + 7), argv[3]);
  int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("jx_bench_recompile_" + std::to_string(::getpid()));

  std::printf(
      "jx bench_recompile: chains of sin/mul/add on f32[%lld], CPU; first calls in new "
      "processes (median of %d), in-process times the median of 21 batches\n\n",
      static_cast<long long>(kLength), runs);
  std::printf("%6s %11s %11s %11s %9s %12s %10s %10s\n", "eqns", "cold ms", "disk ms", "warm ms",
              "hit us", "retrace ms", "cold/disk", "cold/warm");
  for (int n : {10, 100, 1000}) {
    std::string dir = (root / std::to_string(n)).string();
    double cold = first_call_ms(self, "cold", n, dir, runs);
    double disk = first_call_ms(self, "disk", n, dir + "/disk", runs);
    double warm = first_call_ms(self, "warm", n, dir + "/warm", runs);
    InProcess here = in_process(n);
    std::printf("%6d %11.2f %11.2f %11.2f %9.2f %12.2f %9.1fx %9.1fx\n", n, cold, disk, warm,
                here.hit_us, here.retrace_ms, cold / disk, cold / warm);
  }
  std::filesystem::remove_all(root);
  std::printf("\nhit with two f32[3] arguments: %.3f us (goal: at most 0.2)\n", small_hit_us());
  std::string trace = (std::filesystem::temp_directory_path() /
                       ("jx_bench_recompile_" + std::to_string(::getpid()) + ".json"))
                          .string();
  jx::profiler::start_trace(trace);
  double traced = small_hit_us();
  jx::profiler::stop_trace();
  std::filesystem::remove(trace);
  std::printf("the same while a profiler trace records: %.3f us\n", traced);
  return 0;
}
