#include "runtime/parallel.hpp"

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/ThreadPool>

#include <algorithm>
#include <thread>

#include "jx/config.hpp"

namespace jx::runtime {
namespace {

// Never destroyed: kernels may still run from static destructors of user code.
Eigen::ThreadPool* pool() {
  static Eigen::ThreadPool* instance =
      parallelism() > 1 ? new Eigen::ThreadPool(parallelism() - 1) : nullptr;
  return instance;
}

}  // namespace

int parallelism() {
  static const int n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return n;
}

// The threshold, Config::cpu_parallel_min_bytes, is where splitting starts to pay: bench_fusion
// times an elementwise kernel both ways across sizes (docs/performance.md).
bool split_pays(std::int64_t rows, std::int64_t bytes) {
  return rows > 1 && bytes >= config().cpu_parallel_min_bytes && parallelism() > 1;
}

void parallel_for(std::int64_t rows, const std::function<void(std::int64_t, std::int64_t)>& fn) {
  std::int64_t chunks = std::min<std::int64_t>(rows, parallelism());
  if (chunks <= 1 || !pool()) return fn(0, rows);
  Eigen::Barrier done(static_cast<unsigned>(chunks - 1));
  auto begin = [&](std::int64_t c) { return rows * c / chunks; };
  for (std::int64_t c = 1; c < chunks; ++c)
    pool()->Schedule([&, c] {
      fn(begin(c), begin(c + 1));
      done.Notify();
    });
  fn(0, begin(1));
  done.Wait();
}

}  // namespace jx::runtime
