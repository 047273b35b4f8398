// Buffers come from aligned_alloc, but released ones are kept for reuse at both ends of the size
// range. Large ones go to a process-wide cache: a jitted function called in a loop gets its
// previous output's memory back instead of fresh pages from the OS, whose first touch (a page
// fault and zeroing per 4 KiB) would cost as much as the kernel writing them. Small ones go to
// per-thread free lists: glibc's aligned allocation and release of a few bytes costs more than
// a whole small jitted call otherwise.
#include "core/buffer.hpp"
#include "jx/config.hpp"
#include "support/hot_thread_local.hpp"

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace jx {
namespace {

constexpr std::size_t kCachedMin = 1 << 20;        // smaller ones are malloc's business
constexpr std::size_t kCacheCapacity = 256 << 20;  // bytes held while unused

class LargeBufferCache {
 public:
  // The most recently released block of this size.
  void* take(std::size_t padded) {
    std::lock_guard lock(mu_);
    for (auto it = free_.rbegin(); it != free_.rend(); ++it) {
      if (it->size != padded) continue;
      void* p = it->data;
      free_.erase(std::next(it).base());
      held_ -= padded;
      return p;
    }
    return nullptr;
  }
  // Keeps `p`, freeing the least recently released blocks to make room: a loop's own buffers
  // then always come back, whatever earlier work left here. False when it alone is too large.
  bool give(void* p, std::size_t padded) {
    if (padded > kCacheCapacity) return false;
    std::lock_guard lock(mu_);
    while (held_ + padded > kCacheCapacity) {
      std::free(free_.front().data);
      held_ -= free_.front().size;
      free_.erase(free_.begin());
    }
    free_.push_back({padded, p});
    held_ += padded;
    return true;
  }

 private:
  struct Block {
    std::size_t size;
    void* data;
  };
  std::mutex mu_;
  std::vector<Block> free_;  // oldest release first
  std::size_t held_ = 0;
};

// Per-thread free lists of small blocks, one per size (a multiple of the alignment).
constexpr std::size_t kSmallMax = 256;
constexpr std::size_t kSmallKept = 64;  // blocks kept per size

struct SmallBlocks {
  std::vector<void*> free[kSmallMax / Buffer::kAlignment];
  ~SmallBlocks();
};

// Set when this thread's free lists are gone (thread exit): buffers released later are freed.
JX_HOT_THREAD_LOCAL bool small_blocks_gone = false;
JX_HOT_THREAD_LOCAL SmallBlocks small_blocks;

SmallBlocks::~SmallBlocks() {
  small_blocks_gone = true;
  for (auto& list : free)
    for (void* p : list) std::free(p);
}

std::vector<void*>* small_list(std::size_t padded) {
  if (padded > kSmallMax || small_blocks_gone) return nullptr;
  return &small_blocks.free[padded / Buffer::kAlignment - 1];
}

// Never destroyed: buffers may be released from static destructors.
LargeBufferCache& cache() {
  static auto* instance = new LargeBufferCache;
  return *instance;
}

// A buffer of a huge page or more starts on a huge-page boundary and offers its whole huge pages
// to the OS (Linux's MADV_HUGEPAGE; in THP's madvise mode only memory so marked gets them): a
// kernel streaming through it, or a matrix kernel walking its operands, then takes one address
// translation per 2 MiB instead of 512. Where the OS declines, or under --cpu_huge_pages=false,
// pages stay 4 KiB, as does the tail past the last whole huge page: no memory is committed
// beyond the buffer.
constexpr std::size_t kHugePage = 2 << 20;

void* allocate(std::size_t padded) {
  if (padded < kHugePage || !config().cpu_huge_pages)
    return std::aligned_alloc(Buffer::kAlignment, padded);
  void* p = nullptr;
  if (posix_memalign(&p, kHugePage, padded) != 0) return nullptr;
#if defined(__linux__)
  madvise(p, padded / kHugePage * kHugePage, MADV_HUGEPAGE);  // advice: refused, nothing changes
#endif
  return p;
}

std::size_t padded_size(std::size_t nbytes) {
  // aligned_alloc wants a multiple of the alignment; a 0-byte buffer still gets a valid pointer.
  std::size_t padded = (nbytes + Buffer::kAlignment - 1) / Buffer::kAlignment * Buffer::kAlignment;
  return padded ? padded : Buffer::kAlignment;
}

}  // namespace

Buffer::Buffer(std::size_t nbytes, Uninitialized) : nbytes_(nbytes) {
  std::size_t padded = padded_size(nbytes);
  data_ = nullptr;
  if (std::vector<void*>* list = small_list(padded); list && !list->empty()) {
    data_ = list->back();
    list->pop_back();
  } else if (padded >= kCachedMin) {
    data_ = cache().take(padded);
  }
  if (!data_) data_ = allocate(padded);
  if (!data_) throw std::bad_alloc();
}

Buffer::Buffer(std::size_t nbytes) : Buffer(nbytes, Uninitialized{}) {
  std::memset(data_, 0, padded_size(nbytes));
}

Buffer::~Buffer() {
  std::size_t padded = padded_size(nbytes_);
  if (std::vector<void*>* list = small_list(padded); list && list->size() < kSmallKept) {
    list->push_back(data_);
    return;
  }
  if (padded < kCachedMin || !cache().give(data_, padded)) std::free(data_);
}

}  // namespace jx
