// Buffers come from aligned_alloc, except large ones, which a small cache keeps after release:
// a jitted function called in a loop gets its previous output's memory back instead of fresh
// pages from the OS, whose first touch (a page fault and zeroing per 4 KiB) would cost as much
// as the kernel writing them.
#include "core/buffer.hpp"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

namespace jx {
namespace {

constexpr std::size_t kCachedMin = 1 << 20;     // smaller ones are malloc's business
constexpr std::size_t kCacheCapacity = 256 << 20;  // bytes held while unused

class LargeBufferCache {
 public:
  void* take(std::size_t padded) {
    std::lock_guard lock(mu_);
    auto it = free_.find(padded);
    if (it == free_.end()) return nullptr;
    void* p = it->second;
    free_.erase(it);
    held_ -= padded;
    return p;
  }
  // False when full: the caller frees.
  bool give(void* p, std::size_t padded) {
    std::lock_guard lock(mu_);
    if (held_ + padded > kCacheCapacity) return false;
    free_.emplace(padded, p);
    held_ += padded;
    return true;
  }

 private:
  std::mutex mu_;
  std::multimap<std::size_t, void*> free_;
  std::size_t held_ = 0;
};

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
  data_ = padded >= kCachedMin ? cache().take(padded) : nullptr;
  if (!data_) data_ = std::aligned_alloc(kAlignment, padded);
  if (!data_) throw std::bad_alloc();
}

Buffer::Buffer(std::size_t nbytes) : Buffer(nbytes, Uninitialized{}) {
  std::memset(data_, 0, padded_size(nbytes));
}

Buffer::~Buffer() {
  std::size_t padded = padded_size(nbytes_);
  if (padded < kCachedMin || !cache().give(data_, padded)) std::free(data_);
}

}  // namespace jx
