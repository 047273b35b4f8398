// The caching allocator over host malloc/free standing in for cuMemAlloc/cuMemFree: rounding,
// reuse of the smallest fitting block, statistics, empty_cache, and the retry after emptying the
// cache when the raw allocator runs out.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <thread>
#include <vector>

#include "jx/errors.hpp"
#include "runtime/cuda/caching_allocator.hpp"
#include "support/error_of.hpp"

namespace jx::runtime::cuda {
namespace {

using jx::testing::error_of;

constexpr std::size_t kMiB = std::size_t{1} << 20;

// malloc and free with a byte budget, counting what is outstanding.
struct RawHeap {
  std::size_t budget = SIZE_MAX;
  std::size_t outstanding = 0;
  std::size_t failures = 0;
  std::map<void*, std::size_t> live;

  CachingAllocator allocator() {
    return CachingAllocator(
        [this](std::size_t bytes) -> void* {
          if (outstanding + bytes > budget) {
            ++failures;
            return nullptr;
          }
          outstanding += bytes;
          void* p = std::malloc(bytes);
          live.emplace(p, bytes);
          return p;
        },
        [this](void* p) {
          REQUIRE(live.count(p) == 1);
          outstanding -= live[p];
          live.erase(p);
          std::free(p);
        });
  }
};

TEST_CASE("CachingAllocator: sizes round to 512 bytes up to 1 MiB and to 2 MiB above", "[cuda]") {
  CHECK(CachingAllocator::round_size(1) == 512);
  CHECK(CachingAllocator::round_size(512) == 512);
  CHECK(CachingAllocator::round_size(513) == 1024);
  CHECK(CachingAllocator::round_size(kMiB) == kMiB);
  CHECK(CachingAllocator::round_size(kMiB + 1) == 2 * kMiB);
  CHECK(CachingAllocator::round_size(5 * kMiB) == 6 * kMiB);
}

TEST_CASE("CachingAllocator: a freed block is reused: the smallest that fits", "[cuda]") {
  RawHeap heap;
  CachingAllocator alloc = heap.allocator();
  CHECK(alloc.allocate(0) == nullptr);
  void* a = alloc.allocate(1000);  // 1024
  void* b = alloc.allocate(3000);  // 3072
  void* c = alloc.allocate(1500);  // 1536
  CHECK(alloc.stats().bytes_in_use == 1024 + 3072 + 1536);
  CHECK(alloc.stats().raw_allocations == 3);
  alloc.release(a);
  alloc.release(b);
  alloc.release(c);
  alloc.release(nullptr);
  CHECK(alloc.stats().bytes_in_use == 0);
  CHECK(alloc.stats().bytes_cached == 1024 + 3072 + 1536);

  void* e = alloc.allocate(1200);
  CHECK(e == c);  // 1536 fits best; 3072 would too
  void* f = alloc.allocate(900);
  CHECK(f == a);
  // The only block left (3072) would waste more than half of itself on 512 bytes.
  void* d = alloc.allocate(500);
  CHECK(d != b);
  AllocatorStats s = alloc.stats();
  CHECK(s.raw_allocations == 4);
  CHECK(s.bytes_in_use == 1536 + 1024 + 512);
  CHECK(s.bytes_cached == 3072);
  CHECK(heap.live.size() == 4);
  for (void* p : {d, e, f}) alloc.release(p);
}

TEST_CASE("CachingAllocator: empty_cache returns the cached blocks and only them", "[cuda]") {
  RawHeap heap;
  {
    CachingAllocator alloc = heap.allocator();
    void* a = alloc.allocate(4 * kMiB);
    void* b = alloc.allocate(100);
    alloc.release(a);
    alloc.empty_cache();
    CHECK(alloc.stats().bytes_cached == 0);
    CHECK(alloc.stats().raw_frees == 1);
    CHECK(heap.live.size() == 1);
    CHECK(heap.live.count(b) == 1);
    alloc.release(b);
  }
  CHECK(heap.live.empty());  // the destructor emptied the cache
}

TEST_CASE("CachingAllocator: out of memory it empties the cache and retries once", "[cuda]") {
  RawHeap heap;
  heap.budget = 8 * kMiB;
  CachingAllocator alloc = heap.allocator();
  void* a = alloc.allocate(2 * kMiB);
  void* b = alloc.allocate(4 * kMiB);
  alloc.release(b);
  // 6 MiB fits the budget only once the cached 4 MiB block, too small to serve it, is freed.
  void* c = alloc.allocate(5 * kMiB);  // 6 MiB
  CHECK(heap.failures == 1);
  CHECK(alloc.stats().bytes_cached == 0);
  CHECK(alloc.stats().bytes_in_use == 8 * kMiB);

  alloc.release(c);
  alloc.release(a);
  void* d = alloc.allocate(7 * kMiB);  // 8 MiB: fails, empties 8 MiB of cache, fails no more
  CHECK(heap.failures == 2);
  CHECK(error_of<Error>([&] { alloc.allocate(1); }) ==
        "out of GPU memory allocating 1 bytes (0 bytes cached, 8388608 in use)");
  alloc.release(d);
  CHECK(error_of<Error>([&] { alloc.allocate(9 * kMiB); }) ==
        "out of GPU memory allocating 9437184 bytes (8388608 bytes cached, 0 in use)");
  CHECK(alloc.stats().bytes_cached == 0);
  CHECK(heap.live.empty());
}

TEST_CASE("CachingAllocator: threads allocating and releasing at once", "[cuda]") {
  RawHeap heap;  // its books are not thread-safe: the allocator calls it under its lock
  CachingAllocator alloc = heap.allocator();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&alloc, t] {
      for (int i = 0; i < 2000; ++i) {
        std::size_t bytes = static_cast<std::size_t>(1 + (i * 37 + t) % 5000);
        auto* p = static_cast<unsigned char*>(alloc.allocate(bytes));
        p[0] = p[bytes - 1] = static_cast<unsigned char>(t);
        alloc.release(p);
      }
    });
  for (auto& t : threads) t.join();
  CHECK(alloc.stats().bytes_in_use == 0);
  CHECK(alloc.stats().bytes_cached == heap.outstanding);
}

}  // namespace
}  // namespace jx::runtime::cuda
