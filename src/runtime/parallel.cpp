#include "runtime/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "codegen/cpu/cpu_isa.hpp"
#include "jx/config.hpp"
#include "support/float_environment.hpp"
#include "support/profiler.hpp"

#if defined(__linux__)
#include <sched.h>
#endif

namespace jx::runtime {
namespace {

using RowFn = std::function<void(std::int64_t, std::int64_t)>;

// After a job a worker polls before it sleeps. The kernels of one execution follow each other
// within microseconds, and waking a sleeping thread costs about 10 µs, more than a mid-sized
// kernel's half; polling makes the hand-off cost well under one. It spins for kSpin, then
// polls with sched_yield (so other runnable threads, BLAS's or the user's, get the core) until
// kPoll, then sleeps.
constexpr auto kSpin = std::chrono::microseconds(50);
constexpr auto kPoll = std::chrono::microseconds(500);

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Waits until `value` differs from `old`; returns the new value.
std::uint64_t await_change(const std::atomic<std::uint64_t>& value, std::uint64_t old) {
  auto start = std::chrono::steady_clock::now();
  auto waited = std::chrono::steady_clock::duration{};
  for (unsigned i = 1;; ++i) {
    std::uint64_t now = value.load(std::memory_order_acquire);
    if (now != old) return now;
    if (i % 16 == 0) {
      waited = std::chrono::steady_clock::now() - start;
      if (waited > kPoll) break;
    }
    if (waited < kSpin)
      cpu_relax();
    else
      std::this_thread::yield();
  }
  value.wait(old, std::memory_order_acquire);
  return value.load(std::memory_order_acquire);
}

// One worker per core beside the caller's. A job is cut into one chunk per thread, which the
// caller and the workers claim one at a time, so a worker that wakes late (a sleeping thread
// takes 10 µs and more to wake) finds the chunks taken rather than holding the caller up.
// (Finer chunks balanced no better and cost a third more on bench_vmap's kernels.) Claims go
// through one word holding the job's number, its chunk count and the next chunk: a worker that
// comes back to an old job can claim nothing of it, and so never reads the job's fields while
// the caller rewrites them for the next.
class Pool {
 public:
  explicit Pool(int workers) {
    threads_ = std::min(workers + 1, 0xffff);
    for (int w = 1; w < threads_; ++w)
      std::thread([this, w] {
        profiler::detail::name_this_thread("cpu worker " + std::to_string(w));
        work();
      }).detach();
  }

  // False, having run nothing, while another thread's job holds the pool.
  bool run(std::int64_t rows, int threads, const RowFn& fn) {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock) return false;
    fn_ = &fn;
    rows_ = rows;
    float_control_ = detail::float_control();
    caller_cpu_.store(current_cpu(), std::memory_order_relaxed);
    auto chunks = static_cast<std::uint64_t>(std::min<std::int64_t>({rows, threads, threads_}));
    done_.store(0, std::memory_order_relaxed);
    std::uint64_t job = (claims_.load(std::memory_order_relaxed) >> 32) + 1;
    claims_.store(job << 32 | chunks << 16, std::memory_order_release);
    posted_.store(job, std::memory_order_release);
    posted_.notify_all();
    run_chunks(job);
    for (std::uint64_t done = done_.load(std::memory_order_acquire); done != chunks;)
      done = await_change(done_, done);
    return true;
  }

 private:
  // Claims and runs chunks of job `job` until none is left.
  void run_chunks(std::uint64_t job) {
    for (std::uint64_t claim = claims_.load(std::memory_order_acquire);;) {
      std::uint64_t chunks = claim >> 16 & 0xffff, next = claim & 0xffff;
      if (claim >> 32 != job || next >= chunks) return;
      if (!claims_.compare_exchange_weak(claim, claim + 1, std::memory_order_acq_rel)) continue;
      if (detail::float_control() != float_control_) detail::set_float_control(float_control_);
      auto c = static_cast<std::int64_t>(next), n = static_cast<std::int64_t>(chunks);
      (*fn_)(rows_ * c / n, rows_ * (c + 1) / n);
      done_.fetch_add(1, std::memory_order_release);
      done_.notify_one();
      claim = claims_.load(std::memory_order_acquire);
    }
  }

  void work() {
    for (std::uint64_t seen = 0;;) {
      seen = await_change(posted_, seen);
      // Woken where the caller runs, a worker would wait for the caller to yield it the core
      // (and the caller would run the worker's chunk too) until the scheduler's load tracking
      // spread them, tens of milliseconds into a process: it moves (the pool has a thread per
      // CPU the process may run on, host_cores).
      move_off_cpu(caller_cpu_.load(std::memory_order_relaxed));
      run_chunks(seen);
    }
  }

  std::mutex mutex_;          // one job at a time
  std::int64_t threads_ = 1;  // at most 2^16 - 1 chunks fit a claim
  // The job: written by the caller before it publishes the job's number, read after a claim.
  const RowFn* fn_ = nullptr;
  std::int64_t rows_ = 0;
  unsigned long float_control_ = 0;  // the caller's: its chunks run in the same float mode
  std::atomic<int> caller_cpu_{-1};  // where the caller posted the latest job
  // job number << 32 | chunks << 16 | next chunk
  alignas(64) std::atomic<std::uint64_t> claims_{0};
  alignas(64) std::atomic<std::uint64_t> posted_{0};  // the latest job number, to wait on
  alignas(64) std::atomic<std::uint64_t> done_{0};    // chunks of the current job finished
};

int cores() { return codegen::cpu::host_cores(); }

// Never destroyed: kernels may still run from static destructors of user code.
Pool* pool() {
  static Pool* instance = cores() > 1 ? new Pool(cores() - 1) : nullptr;
  return instance;
}

}  // namespace

#if defined(__linux__)
int current_cpu() { return sched_getcpu(); }

void move_off_cpu(int cpu) {
  if (cpu < 0 || sched_getcpu() != cpu) return;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || !CPU_ISSET(cpu, &allowed) ||
      CPU_COUNT(&allowed) < 2)
    return;
  // Barred from `cpu` for a moment, the thread is migrated at once. Best effort: where the mask
  // cannot be restored (the process's CPUs changed meanwhile), the thread keeps the narrower one.
  cpu_set_t elsewhere = allowed;
  CPU_CLR(cpu, &elsewhere);
  if (sched_setaffinity(0, sizeof elsewhere, &elsewhere) == 0)
    sched_setaffinity(0, sizeof allowed, &allowed);
}
#else
int current_cpu() { return -1; }
void move_off_cpu(int) {}
#endif

int parallelism() {
  int threads = config().cpu_threads;
  return threads > 0 ? std::min(threads, cores()) : cores();
}

// The threshold, Config::cpu_parallel_min_bytes, is where splitting starts to pay: bench_fusion
// times an elementwise kernel both ways across sizes (docs/performance.md). The cores, not
// parallelism(): --cpu_threads is read as each kernel runs, so a kernel compiled under one
// thread still splits when the threads are raised.
bool split_pays(std::int64_t rows, std::int64_t bytes) {
  return rows > 1 && bytes >= config().cpu_parallel_min_bytes && cores() > 1;
}

void parallel_for(std::int64_t rows, const RowFn& fn) { parallel_for(rows, parallelism(), fn); }

void parallel_for(std::int64_t rows, int threads, const RowFn& fn) {
  if (rows <= 1 || threads == 1 || !pool() || !pool()->run(rows, threads, fn)) fn(0, rows);
}

}  // namespace jx::runtime
