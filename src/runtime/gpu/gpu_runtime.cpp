#include "runtime/gpu/gpu_runtime.hpp"

#include <algorithm>

#include "jx/config.hpp"
#include "runtime/gpu/gpu_storage.hpp"

namespace jx::runtime::gpu {

std::shared_ptr<DeviceStorage> GpuRuntime::allocate(std::size_t nbytes) const {
  return std::make_shared<GpuStorage>(context_, nbytes);
}

void GpuRuntime::copy(void* dst, const void* src, std::size_t nbytes) const {
  if (nbytes > 0) context_.copy_on_device(dst, src, nbytes);
}

void GpuRuntime::read(void* host_dst, const void* src, std::size_t nbytes) const {
  if (nbytes > 0) context_.copy_to_host(host_dst, src, nbytes);
}

void GpuRuntime::write(void* dst, const void* host_src, std::size_t nbytes) const {
  if (nbytes > 0) context_.copy_to_device(dst, host_src, nbytes);
}

void GpuRuntime::replay(std::span<void* const> buffers,
                        const std::function<void()>& enqueue) const {
  if (!config().gpu_graphs) return enqueue();
  std::vector<void*> key(buffers.begin(), buffers.end());
  std::lock_guard lock(mutex_);  // one capture at a time: the stream is shared
  auto it = graphs_.find(key);
  // A set of buffers seen once runs as it is: one-off calls cost no capture, and the first run
  // makes what cannot be made during a capture (cuBLAS's handle).
  if (it == graphs_.end() &&
      std::find(seen_once_.begin(), seen_once_.end(), key) == seen_once_.end()) {
    if (seen_once_.size() == kMaxSeen) seen_once_.pop_front();
    seen_once_.push_back(key);
    return enqueue();
  }
  if (it == graphs_.end()) {
    if (graphs_.size() == kMaxGraphs) {
      graphs_.erase(graph_order_.front());
      graph_order_.erase(graph_order_.begin());
    }
    context_.begin_capture();
    try {
      enqueue();
    } catch (...) {
      try {
        context_.end_capture();  // destroyed at once
      } catch (...) {            // the first error is the one to report
      }
      throw;
    }
    it = graphs_.emplace(key, context_.end_capture()).first;
    graph_order_.push_back(key);
  }
  context_.replay(it->second);
}

}  // namespace jx::runtime::gpu
