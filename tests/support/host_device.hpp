// A device whose memory is the host's: runs the runtime's device paths (arguments copied to the
// device, outputs living there, donation, loop flags read back, replay of whole sequences)
// without an accelerator, and counts what crosses between host and device.
#pragma once

#include <atomic>
#include <cstring>
#include <memory>

#include "backend/backend.hpp"
#include "core/array_impl.hpp"
#include "runtime/device_runtime.hpp"

namespace jx::testing {

class HostStorage : public DeviceStorage {
 public:
  HostStorage(Device device, std::size_t nbytes)
      : device_(device), buffer_(nbytes, Buffer::Uninitialized{}) {}
  Device device() const override { return device_; }
  void* data() const override { return const_cast<void*>(buffer_.data()); }
  std::size_t nbytes() const override { return buffer_.nbytes(); }
  void wait() const override {}

 protected:
  void copy_to_host(void* dst) const override { std::memcpy(dst, buffer_.data(), nbytes()); }

 private:
  Device device_;
  Buffer buffer_;
};

struct HostDeviceCounts {
  std::atomic<int> allocations{0}, copies{0}, reads{0}, writes{0}, replays{0};
};

class HostDeviceRuntime : public runtime::DeviceRuntime {
 public:
  HostDeviceRuntime(Device device, std::shared_ptr<HostDeviceCounts> counts)
      : device_(device), counts_(std::move(counts)) {}
  Device device() const override { return device_; }
  std::shared_ptr<DeviceStorage> allocate(std::size_t nbytes) const override {
    ++counts_->allocations;
    return std::make_shared<HostStorage>(device_, nbytes);
  }
  void copy(void* dst, const void* src, std::size_t nbytes) const override {
    ++counts_->copies;
    std::memmove(dst, src, nbytes);
  }
  void read(void* host_dst, const void* src, std::size_t nbytes) const override {
    ++counts_->reads;
    std::memcpy(host_dst, src, nbytes);
  }
  void write(void* dst, const void* host_src, std::size_t nbytes) const override {
    ++counts_->writes;
    std::memcpy(dst, host_src, nbytes);
  }
  void replay(std::span<void* const>, const std::function<void()>& enqueue) const override {
    ++counts_->replays;
    enqueue();
  }

 private:
  Device device_;
  std::shared_ptr<HostDeviceCounts> counts_;
};

// While alive, programs for GPUs compile with the CPU's code generator onto HostDeviceRuntimes
// sharing `counts`.
class HostGpus {
 public:
  HostGpus() : counts(std::make_shared<HostDeviceCounts>()) {
    backend::set_backend_factory(Platform::gpu, [c = counts](const Device& d) {
      return backend::make_cpu_backend(std::make_shared<HostDeviceRuntime>(d, c));
    });
  }
  ~HostGpus() { backend::set_backend_factory(Platform::gpu, nullptr); }
  HostGpus(const HostGpus&) = delete;
  HostGpus& operator=(const HostGpus&) = delete;

  std::shared_ptr<HostDeviceCounts> counts;
};

// An array on `device` (host memory behind it) holding `values`.
template <class T>
Array host_device_array(const Device& device, const Shape& shape, const std::vector<T>& values) {
  auto storage = std::make_shared<HostStorage>(device, values.size() * sizeof(T));
  std::memcpy(storage->data(), values.data(), values.size() * sizeof(T));
  return make_device_array(ShapedArray{shape, dtype_of<T>(), false}, std::move(storage));
}

}  // namespace jx::testing
