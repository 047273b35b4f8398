// Buffers come from aligned_alloc (those of 2 MiB or more from a mapping of their own, on huge
// pages where the OS gives them), but released ones are kept for reuse at both ends of the size
// range. Large ones go to a process-wide cache: a jitted function called in a loop gets its
// previous output's memory back instead of fresh pages from the OS, whose first touch (a page
// fault and zeroing per page) would cost as much as the kernel writing them. Small ones go to
// per-thread free lists: glibc's aligned allocation and release of a few bytes costs more than
// a whole small jitted call otherwise.
#include "core/buffer.hpp"
#include "jx/config.hpp"
#include "jx/errors.hpp"
#include "support/hot_thread_local.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace jx {
namespace {

// A buffer of a huge page or more is a mapping of its own that starts on a huge-page boundary and
// offers its whole huge pages to the OS (Linux's MADV_HUGEPAGE; in THP's madvise mode only memory
// so marked gets them): a kernel streaming through it, or a matrix kernel walking its operands,
// then takes one address translation per 2 MiB instead of 512. Its own mapping, not malloc's
// heap, so that the advice ends with the buffer and no huge page reaches past it. Where the OS
// declines, or a fresh buffer is allocated under --cpu_huge_pages=false, pages stay 4 KiB.
// (AddressSanitizer checks malloc's blocks alone: under it, they all stay malloc's.)
#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kHugePage = 2 << 20, kPage = 4 << 10;
bool own_mapping(std::size_t padded) { return padded >= kHugePage; }
std::size_t mapping_bytes(std::size_t padded) { return (padded + kPage - 1) / kPage * kPage; }

void* allocate(std::size_t padded) {
  if (!own_mapping(padded)) return std::aligned_alloc(Buffer::kAlignment, padded);
  bool huge = config().cpu_huge_pages;  // read first: it throws on a bad JX_FLAGS
  // A huge page longer, the excess on either side of the aligned start unmapped again.
  std::size_t bytes = mapping_bytes(padded);
  void* raw =
      mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  auto* first = static_cast<char*>(raw);
  std::size_t head = (kHugePage - reinterpret_cast<std::uintptr_t>(first) % kHugePage) % kHugePage;
  if (head) munmap(first, head);
  munmap(first + head + bytes, kHugePage - head);
  void* p = first + head;
  if (huge) madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
  return p;
}

void release(void* p, std::size_t padded) {
  if (own_mapping(padded)) {
    munmap(p, mapping_bytes(padded));
  } else {
    std::free(p);
  }
}
#else
void* allocate(std::size_t padded) { return std::aligned_alloc(Buffer::kAlignment, padded); }
void release(void* p, std::size_t) { std::free(p); }
#endif

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
    while (held_ + padded > kCacheCapacity) release_oldest();
    free_.push_back({padded, p});
    held_ += padded;
    return true;
  }
  // Gives every kept block back to the OS.
  void clear() {
    std::lock_guard lock(mu_);
    while (!free_.empty()) release_oldest();
  }

 private:
  struct Block {
    std::size_t size;
    void* data;
  };
  void release_oldest() {
    release(free_.front().data, free_.front().size);
    held_ -= free_.front().size;
    free_.erase(free_.begin());
  }
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
  if (!data_) {  // what the cache keeps may be what is missing
    cache().clear();
    data_ = allocate(padded);
  }
  if (!data_) throw Error("out of host memory allocating " + std::to_string(nbytes) + " bytes");
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
  if (padded < kCachedMin || !cache().give(data_, padded)) release(data_, padded);
}

}  // namespace jx
