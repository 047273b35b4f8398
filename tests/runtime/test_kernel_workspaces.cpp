// Kernel calls' workspaces (runtime/kernel_workspaces.hpp): a released one comes back to the
// next take that it holds, the smallest that fits first, so a kernel called in a loop reuses its
// workspace as it would its stack.
#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>

#include "runtime/kernel_workspaces.hpp"

namespace jx::runtime {
namespace {

// Sizes beyond any kernel's workspace (kept panels take 8 MiB at most), so that nothing another
// test released fits them, and both held at once (60 MiB, under the 64 MiB the pool keeps).
constexpr std::size_t kSmall = (20 << 20) + 64 * 7, kLarge = 2 * kSmall;

TEST_CASE("kernel workspaces: a released workspace comes back, the smallest that fits",
          "[runtime]") {
  std::unique_ptr<Buffer> small = take_workspace(kSmall);
  std::unique_ptr<Buffer> large = take_workspace(kLarge);
  CHECK(small->nbytes() >= kSmall);
  CHECK(large->nbytes() >= kLarge);
  void* small_at = small->data();
  void* large_at = large->data();
  CHECK(reinterpret_cast<std::uintptr_t>(small_at) % Buffer::kAlignment == 0);
  release_workspace(std::move(small));
  release_workspace(std::move(large));
  // The large one was released last; the small one still fits best.
  std::unique_ptr<Buffer> again = take_workspace(kSmall - 64);
  CHECK(again->data() == small_at);
  std::unique_ptr<Buffer> larger = take_workspace(kSmall + 1);
  CHECK(larger->data() == large_at);
  release_workspace(std::move(again));
  release_workspace(std::move(larger));
}

}  // namespace
}  // namespace jx::runtime
