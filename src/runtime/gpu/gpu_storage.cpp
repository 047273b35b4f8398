#include "runtime/gpu/gpu_storage.hpp"

#include "runtime/cuda/context.hpp"

namespace jx::runtime::gpu {

GpuStorage::GpuStorage(cuda::GpuContext& context, std::size_t nbytes)
    : context_(context), data_(nbytes > 0 ? context.allocate(nbytes) : nullptr), nbytes_(nbytes) {}

GpuStorage::~GpuStorage() {
  if (data_) context_.release(data_);
}

Device GpuStorage::device() const { return {Platform::gpu, context_.ordinal()}; }

void GpuStorage::wait() const { context_.synchronize(); }

void GpuStorage::copy_to_host(void* dst) const {
  if (nbytes_ > 0) context_.copy_to_host(dst, data_, nbytes_);
}

}  // namespace jx::runtime::gpu
