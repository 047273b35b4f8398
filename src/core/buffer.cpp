#include "core/buffer.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

namespace jx {

Buffer::Buffer(std::size_t nbytes) : nbytes_(nbytes) {
  // aligned_alloc wants a multiple of the alignment; a 0-byte buffer still gets a valid pointer.
  std::size_t padded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  data_ = std::aligned_alloc(kAlignment, padded ? padded : kAlignment);
  if (!data_) throw std::bad_alloc();
  std::memset(data_, 0, padded ? padded : kAlignment);
}

Buffer::~Buffer() { std::free(data_); }

}  // namespace jx
