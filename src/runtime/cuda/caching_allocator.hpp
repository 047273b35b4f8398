// A caching allocator over a raw allocate/free pair (cuMemAlloc/cuMemFree on a GPU): freed
// blocks are kept for reuse, since raw device allocation is slow and synchronizes the device.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>

namespace jx::runtime::cuda {

struct AllocatorStats {
  std::size_t bytes_in_use = 0;  // blocks handed out, at their rounded sizes
  std::size_t bytes_cached = 0;  // freed blocks kept for reuse
  std::size_t raw_allocations = 0;
  std::size_t raw_frees = 0;
};

class CachingAllocator {
 public:
  // Returns nullptr when out of memory (other failures may throw).
  using RawAllocate = std::function<void*(std::size_t bytes)>;
  using RawFree = std::function<void(void* ptr)>;

  CachingAllocator(RawAllocate raw_allocate, RawFree raw_free);
  // Frees the cached blocks; blocks still in use are the owner's problem.
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least `bytes`; nullptr for 0 bytes. The smallest cached block that fits (and
  // wastes at most half of itself) is reused; otherwise a raw allocation, retried once after
  // emptying the cache. Throws jx::Error
  // "out of GPU memory allocating N bytes (M bytes cached, K in use)".
  void* allocate(std::size_t bytes);
  // Returns a block from allocate to the cache; nullptr is ignored.
  void release(void* ptr);
  // Raw-frees every cached block.
  void empty_cache();

  AllocatorStats stats() const;

  // Sizes are rounded to 512 bytes up to 1 MiB, to 2 MiB above: blocks of a few sizes are
  // easy to reuse.
  static std::size_t round_size(std::size_t bytes);

 private:
  void empty_cache_locked();

  RawAllocate raw_allocate_;
  RawFree raw_free_;
  mutable std::mutex mutex_;
  std::multimap<std::size_t, void*> free_blocks_;  // by size, smallest first
  std::unordered_map<void*, std::size_t> in_use_;  // block → its size
  AllocatorStats stats_;
};

}  // namespace jx::runtime::cuda
