// Arrays in GPU memory: storage from the device's caching allocator, given back when the last
// array using it goes away.
#pragma once

#include <memory>

#include "core/device_storage.hpp"

namespace jx::runtime::cuda {
class GpuContext;
}  // namespace jx::runtime::cuda

namespace jx::runtime::gpu {

class GpuStorage : public DeviceStorage {
 public:
  GpuStorage(cuda::GpuContext& context, std::size_t nbytes);  // uninitialized
  ~GpuStorage() override;  // never throws: a failed release is the context's teardown error
  GpuStorage(const GpuStorage&) = delete;
  GpuStorage& operator=(const GpuStorage&) = delete;

  Device device() const override;
  void* data() const override { return data_; }
  std::size_t nbytes() const override { return nbytes_; }
  void wait() const override;

 protected:
  void copy_to_host(void* dst) const override;

 private:
  cuda::GpuContext& context_;
  void* data_ = nullptr;
  std::size_t nbytes_;
};

}  // namespace jx::runtime::gpu
