#include "runtime/gpu/gpu_storage.hpp"

#include "runtime/cuda/context.hpp"

namespace jx::runtime::gpu {

GpuStorage::GpuStorage(int ordinal, std::size_t nbytes)
    : ordinal_(ordinal),
      data_(nbytes > 0 ? cuda::gpu_context(ordinal).allocate(nbytes) : nullptr),
      nbytes_(nbytes) {}

GpuStorage::~GpuStorage() {
  if (data_) cuda::gpu_context(ordinal_).release(data_);
}

void GpuStorage::wait() const { cuda::gpu_context(ordinal_).synchronize(); }

void GpuStorage::copy_to_host(void* dst) const {
  if (nbytes_ > 0) cuda::gpu_context(ordinal_).copy_to_host(dst, data_, nbytes_);
}

std::shared_ptr<GpuStorage> upload(int ordinal, const void* host, std::size_t nbytes) {
  auto out = std::make_shared<GpuStorage>(ordinal, nbytes);
  if (nbytes > 0) cuda::gpu_context(ordinal).copy_to_device(out->data(), host, nbytes);
  return out;
}

}  // namespace jx::runtime::gpu
