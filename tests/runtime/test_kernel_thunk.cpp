// The CPU kernel thunk's calling convention (codegen/cpu/cpu_compiler.hpp), with a kernel written
// in C++: every row runs once over the threads, and a kernel with a workspace gets one of its own
// in each call, after its buffers, 64-byte aligned.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/buffer.hpp"
#include "jx/config.hpp"
#include "runtime/thunks.hpp"
#include "support/config_guard.hpp"

namespace jx::runtime {
namespace {

constexpr std::int64_t kRows = 1000, kWorkspaceBytes = 1 << 20;

// out[r] for rows [begin, end): 1 where the call's workspace is aligned and stayed its own (it
// fills it with `begin`, then reads it back), else 2.
void kernel(void* const* buffers, std::int64_t begin, std::int64_t end) {
  auto* out = static_cast<std::int64_t*>(buffers[0]);
  auto* space = static_cast<std::int64_t*>(buffers[1]);
  bool own = reinterpret_cast<std::uintptr_t>(space) % 64 == 0;
  for (std::int64_t i = 0; i < kWorkspaceBytes / 8; ++i) space[i] = begin;
  for (std::int64_t i = 0; i < kWorkspaceBytes / 8; ++i) own = own && space[i] == begin;
  for (std::int64_t r = begin; r < end; ++r) out[r] += own ? 1 : 2;
}

TEST_CASE("kernel thunk: each call has a workspace of its own after the buffers", "[runtime]") {
  testing::ConfigGuard guard;
  Buffer memory(kRows * 8, Buffer::Uninitialized{});  // aligned, as the thunk checks
  auto* out = memory.as<std::int64_t>();
  KernelThunk thunk("kernel", kernel, {{Allocation::Kind::kOutput, 0}}, kRows,
                    /*scratch_words=*/0, kWorkspaceBytes);
  CHECK(thunk.str() == "kernel kernel(out0) rows=1000 parallel workspace=1048576");
  ExecutionContext ctx;
  ctx.outputs = {out};
  for (int threads : {1, 2, 0}) {  // 0: one per core
    INFO("--cpu_threads=" << threads);
    config().cpu_threads = threads;
    for (int run = 0; run < 20; ++run) {
      std::fill(out, out + kRows, 0);
      thunk.execute(ctx);
      CHECK(std::vector<std::int64_t>(out, out + kRows) == std::vector<std::int64_t>(kRows, 1));
    }
  }
}

}  // namespace
}  // namespace jx::runtime
