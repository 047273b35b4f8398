// Host buffers: 64-byte aligned, owned through shared_ptr so arrays share them cheaply.
#pragma once

#include <cstddef>
#include <memory>

namespace jx {

class Buffer {
 public:
  static constexpr std::size_t kAlignment = 64;
  struct Uninitialized {};

  explicit Buffer(std::size_t nbytes);        // zero-filled
  Buffer(std::size_t nbytes, Uninitialized);  // for a producer that writes every byte
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  std::size_t nbytes() const { return nbytes_; }
  void* data() { return data_; }
  const void* data() const { return data_; }
  template <class T>
  T* as() {
    return static_cast<T*>(data_);
  }
  template <class T>
  const T* as() const {
    return static_cast<const T*>(data_);
  }

 private:
  void* data_;
  std::size_t nbytes_;
};

}  // namespace jx
