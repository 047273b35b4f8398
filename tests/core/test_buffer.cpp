// The large-buffer cache: a loop's own buffers come back, whatever earlier work released.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <memory>
#include <vector>

#include "core/buffer.hpp"

namespace jx {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST_CASE(
    "a released large buffer comes back for the next one of its size, even when older "
    "releases filled the cache",
    "[buffer]") {
  // Earlier work leaves 200 MiB of released buffers behind.
  for (std::size_t mib : {120, 80}) Buffer(mib * kMiB, Buffer::Uninitialized{});
  // A loop over 100 MiB outputs: each one's memory is the previous one's. (Were the released
  // one freed instead, the malloc in between would likely take its pages.)
  void* previous = nullptr;
  std::vector<void*> elsewhere;
  for (int call = 0; call < 3; ++call) {
    auto out = std::make_unique<Buffer>(100 * kMiB, Buffer::Uninitialized{});
    if (call > 0) CHECK(out->data() == previous);
    previous = out->data();
    out.reset();
    elsewhere.push_back(std::malloc(100 * kMiB));
  }
  for (void* p : elsewhere) std::free(p);
}

}  // namespace
}  // namespace jx
