// The DeviceRuntime of one GPU executable: memory and copies through the device's context, and
// its CUDA graphs (--gpu_graphs), one per set of buffers it ran with.
#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <vector>

#include "runtime/cuda/context.hpp"
#include "runtime/device_runtime.hpp"

namespace jx::runtime::gpu {

class GpuRuntime : public DeviceRuntime {
 public:
  explicit GpuRuntime(cuda::GpuContext& context) : context_(context) {}
  GpuRuntime(const GpuRuntime&) = delete;
  GpuRuntime& operator=(const GpuRuntime&) = delete;

  Device device() const override { return {Platform::gpu, context_.ordinal()}; }
  std::shared_ptr<DeviceStorage> allocate(std::size_t nbytes) const override;
  void copy(void* dst, const void* src, std::size_t nbytes) const override;
  void read(void* host_dst, const void* src, std::size_t nbytes) const override;
  void write(void* dst, const void* host_src, std::size_t nbytes) const override;
  void replay(std::span<void* const> buffers, const std::function<void()>& enqueue) const override;
  void synchronize() const override { context_.synchronize(); }
  double timed_ms(const std::function<void()>& enqueue) const override {
    return context_.timed_ms(enqueue);
  }

 private:
  // Graphs hold device addresses: a few buffer sets are kept (a training step's buffers recur
  // once the caching allocator has warmed up), the oldest dropped first.
  static constexpr std::size_t kMaxGraphs = 4;
  // Buffer sets seen once, the latest few: calls whose buffers never recur keep no more.
  static constexpr std::size_t kMaxSeen = 16;

  cuda::GpuContext& context_;
  mutable std::mutex mutex_;
  mutable std::map<std::vector<void*>, cuda::Graph> graphs_;
  mutable std::vector<std::vector<void*>> graph_order_;  // keys of graphs_, oldest first
  mutable std::deque<std::vector<void*>> seen_once_;
};

}  // namespace jx::runtime::gpu
