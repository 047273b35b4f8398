// Row-parallel loops on a process-wide thread pool, one worker per core beside the calling
// thread, which takes a share of the rows itself.
#pragma once

#include <cstdint>
#include <functional>

namespace jx::runtime {

// Calls fn(begin, end) over disjoint ranges covering [0, rows), one per thread, and returns
// when all are done: at most min(rows, threads) calls, `threads` parallelism() where not given.
// With one core or one row, fn(0, rows) runs on the calling thread.
void parallel_for(std::int64_t rows, const std::function<void(std::int64_t, std::int64_t)>& fn);
void parallel_for(std::int64_t rows, int threads,
                  const std::function<void(std::int64_t, std::int64_t)>& fn);

// How many threads parallel_for uses (the calling thread included): one per core, or fewer
// under --cpu_threads.
int parallelism();

// Whether splitting a kernel of `rows` rows touching `bytes` (read and written) over the pool
// pays on this machine (it has more than one core); otherwise it runs whole on the calling
// thread. Decided when compiling; how many threads take the rows is decided as it runs.
bool split_pays(std::int64_t rows, std::int64_t bytes);

// Moves the calling thread off CPU `cpu` where it runs there and its affinity allows another
// CPU; its affinity is as before. (A worker woken on its caller's CPU does.) Linux only, as
// current_cpu (-1 elsewhere).
void move_off_cpu(int cpu);
int current_cpu();

}  // namespace jx::runtime
