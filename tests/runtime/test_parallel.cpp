// The thread pool: every row of every job runs exactly once, across back-to-back jobs of
// different sizes and with several threads submitting at once (one holds the pool, the others
// run their rows themselves); a worker woken on its caller's CPU moves off it.
#include <sched.h>
#include <catch2/catch.hpp>

#include <atomic>
#include <iostream>
#include <thread>
#include <vector>

#include "jx/config.hpp"
#include "runtime/parallel.hpp"
#include "support/config_guard.hpp"

namespace jx::runtime {
namespace {

// Runs parallel_for over `rows` and returns how often each row ran.
std::vector<int> visits(std::int64_t rows) {
  std::vector<std::atomic<int>> count(static_cast<std::size_t>(rows));
  parallel_for(rows, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
      count[static_cast<std::size_t>(r)].fetch_add(1, std::memory_order_relaxed);
  });
  std::vector<int> out;
  for (const auto& c : count) out.push_back(c.load());
  return out;
}

TEST_CASE("parallel_for: every row runs exactly once", "[runtime]") {
  for (std::int64_t rows : {1, 2, 3, 7, 1000})
    CHECK(visits(rows) == std::vector<int>(static_cast<std::size_t>(rows), 1));
}

TEST_CASE("parallel_for: thousands of back-to-back jobs of changing sizes", "[runtime]") {
  int wrong = 0;
  for (int job = 0; job < 5000; ++job) {
    std::int64_t rows = 1 + job % 9;
    if (visits(rows) != std::vector<int>(static_cast<std::size_t>(rows), 1)) ++wrong;
  }
  CHECK(wrong == 0);
}

TEST_CASE("parallel_for: threads submitting at once", "[runtime]") {
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int job = 0; job < 500; ++job) {
        std::int64_t rows = 2 + (job + t) % 5;
        if (visits(rows) != std::vector<int>(static_cast<std::size_t>(rows), 1)) ++wrong;
      }
    });
  for (std::thread& t : threads) t.join();
  CHECK(wrong.load() == 0);
}

TEST_CASE("parallel_for: --cpu_threads caps the threads, at one per core", "[runtime]") {
  testing::ConfigGuard guard;
  int cores = parallelism();  // the default: one per core
  cpu_set_t allowed;  // what `nproc` counts: under `taskset -c 0` (CTest runs that too), one
  REQUIRE(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  REQUIRE(cores == CPU_COUNT(&allowed));
  config().cpu_threads = 1;
  CHECK(parallelism() == 1);
  // One thread: a single call over all rows, on the calling thread.
  std::vector<std::pair<std::int64_t, std::int64_t>> calls;
  std::thread::id caller = std::this_thread::get_id(), ran;
  parallel_for(1000, [&](std::int64_t begin, std::int64_t end) {
    calls.emplace_back(begin, end);
    ran = std::this_thread::get_id();
  });
  CHECK(calls == std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 1000}});
  CHECK(ran == caller);
  // Splitting is decided by the cores, not the flag, which each run reads.
  CHECK(split_pays(1000, std::int64_t{1} << 30) == (cores > 1));
  config().cpu_threads = 1000;
  CHECK(parallelism() == cores);
  CHECK(visits(1000) == std::vector<int>(1000, 1));
}

// A worker woken on its caller's CPU moves off it (move_off_cpu), keeping its affinity. Run on
// a thread of its own, which it pins: on the CPU named, allowed another, it moves; allowed that
// CPU alone, it stays. (That the pool's workers call it is not checked: where they run is the
// scheduler's.) A thread the scheduler moves between the calls (a busy host) tries again.
TEST_CASE("parallel_for: a thread moves off a CPU it may leave, its affinity kept", "[runtime]") {
  cpu_set_t process;
  if (sched_getaffinity(0, sizeof process, &process) != 0) {
    std::cout << "JX_SKIPPED: the CPUs allowed do not fit a cpu_set_t" << std::endl;
    return;
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &process)) cpus.push_back(c);
  if (cpus.size() < 2) {
    std::cout << "JX_SKIPPED: one CPU allowed, nowhere to move" << std::endl;
    return;
  }
  const int here = cpus[0], there = cpus[1];
  auto only = [](std::initializer_list<int> on) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : on) CPU_SET(c, &set);
    return set;
  };
  struct Seen {
    int before = -1, after = -1;
    bool kept = false;
  };
  // Pinned to `here` (which migrates it there), then allowed `mask`; move_off_cpu(cpu).
  auto run = [&](cpu_set_t mask, int cpu) {
    Seen seen;
    std::thread([&] {
      cpu_set_t pin = only({here});
      if (sched_setaffinity(0, sizeof pin, &pin) != 0 ||
          sched_setaffinity(0, sizeof mask, &mask) != 0)
        return;
      seen.before = current_cpu();
      move_off_cpu(cpu);
      seen.after = sched_getcpu();
      cpu_set_t now;
      seen.kept = sched_getaffinity(0, sizeof now, &now) == 0 && CPU_EQUAL(&now, &mask);
    }).join();
    return seen;
  };
  Seen moved;
  for (int attempt = 0; attempt < 5 && moved.before != here; ++attempt)
    moved = run(only({here, there}), here);
  REQUIRE(moved.before == here);
  CHECK(moved.after == there);
  CHECK(moved.kept);
  Seen alone = run(only({here}), here);
  CHECK(alone.after == here);
  CHECK(alone.kept);
}

}  // namespace
}  // namespace jx::runtime
