// Arrays in GPU memory: storage from the device's caching allocator, given back when the last
// array using it goes away.
#pragma once

#include <memory>

#include "core/device_storage.hpp"

namespace jx::runtime::gpu {

class GpuStorage : public DeviceStorage {
 public:
  GpuStorage(int ordinal, std::size_t nbytes);  // uninitialized
  ~GpuStorage() override;
  GpuStorage(const GpuStorage&) = delete;
  GpuStorage& operator=(const GpuStorage&) = delete;

  Device device() const override { return {Platform::gpu, ordinal_}; }
  void* data() const override { return data_; }
  std::size_t nbytes() const override { return nbytes_; }
  void wait() const override;

 protected:
  void copy_to_host(void* dst) const override;

 private:
  int ordinal_;
  void* data_ = nullptr;
  std::size_t nbytes_;
};

// `nbytes` host bytes copied to GPU `ordinal` (asynchronously, in stream order).
std::shared_ptr<GpuStorage> upload(int ordinal, const void* host, std::size_t nbytes);

}  // namespace jx::runtime::gpu
