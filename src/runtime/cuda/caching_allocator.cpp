#include "runtime/cuda/caching_allocator.hpp"

#include <string>

#include "jx/errors.hpp"
#include "support/check.hpp"

namespace jx::runtime::cuda {

namespace {

constexpr std::size_t kSmallLimit = std::size_t{1} << 20;
constexpr std::size_t kSmallGranule = 512;
constexpr std::size_t kLargeGranule = std::size_t{2} << 20;

std::size_t round_up(std::size_t n, std::size_t granule) {
  return (n + granule - 1) / granule * granule;
}

}  // namespace

CachingAllocator::CachingAllocator(RawAllocate raw_allocate, RawFree raw_free)
    : raw_allocate_(std::move(raw_allocate)), raw_free_(std::move(raw_free)) {}

CachingAllocator::~CachingAllocator() {
  try {
    empty_cache();
  } catch (...) {
    // A destructor cannot report a failing free; the memory goes back when the process ends.
  }
}

std::size_t CachingAllocator::round_size(std::size_t bytes) {
  return round_up(bytes, bytes <= kSmallLimit ? kSmallGranule : kLargeGranule);
}

void* CachingAllocator::allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  std::size_t size = round_size(bytes);
  std::lock_guard lock(mutex_);
  // Without splitting, a much larger block would waste most of itself: such a request gets a
  // block of its own.
  auto it = free_blocks_.lower_bound(size);
  if (it != free_blocks_.end() && it->first / 2 <= size) {
    void* ptr = it->second;
    std::size_t block = it->first;
    free_blocks_.erase(it);
    stats_.bytes_cached -= block;
    stats_.bytes_in_use += block;
    in_use_.emplace(ptr, block);
    return ptr;
  }
  void* ptr = raw_allocate_(size);
  if (!ptr) {
    std::size_t cached = stats_.bytes_cached;
    empty_cache_locked();
    ptr = raw_allocate_(size);
    if (!ptr)
      throw Error("out of GPU memory allocating " + std::to_string(bytes) + " bytes (" +
                  std::to_string(cached) + " bytes cached, " + std::to_string(stats_.bytes_in_use) +
                  " in use)");
  }
  ++stats_.raw_allocations;
  stats_.bytes_in_use += size;
  in_use_.emplace(ptr, size);
  return ptr;
}

void CachingAllocator::release(void* ptr) {
  if (!ptr) return;
  std::lock_guard lock(mutex_);
  auto it = in_use_.find(ptr);
  JX_CHECK(it != in_use_.end(), "releasing a block this allocator did not hand out");
  stats_.bytes_in_use -= it->second;
  stats_.bytes_cached += it->second;
  free_blocks_.emplace(it->second, ptr);
  in_use_.erase(it);
}

void CachingAllocator::empty_cache() {
  std::lock_guard lock(mutex_);
  empty_cache_locked();
}

void CachingAllocator::empty_cache_locked() {
  // One block at a time, so that a raw free that throws leaves the books right.
  while (!free_blocks_.empty()) {
    auto [size, ptr] = *free_blocks_.begin();
    free_blocks_.erase(free_blocks_.begin());
    stats_.bytes_cached -= size;
    raw_free_(ptr);
    ++stats_.raw_frees;
  }
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace jx::runtime::cuda
