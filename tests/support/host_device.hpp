// A device whose memory is the host's: runs the runtime's device paths (arguments copied to the
// device, outputs living there, donation, loop flags read back, replay of whole sequences)
// without an accelerator, and counts what crosses between host and device. It is strict: it
// keeps the books of its memory, every copy, kernel and GEMM is checked against them (a buffer
// outside live memory throws HostDeviceError), and memory still allocated when HostGpus ends
// fails the test.
#pragma once

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "core/array_impl.hpp"
#include "runtime/device_runtime.hpp"

namespace jx::testing {

// A device buffer used outside the memory of its device: what a GPU reports as an illegal
// address, raised where it happens.
class HostDeviceError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// The live allocations of the devices of one HostGpus.
class HostMemoryLedger {
 public:
  void add(const void* base, std::size_t bytes, const Device& device);
  void remove(const void* base);
  // Throws HostDeviceError "<what>: <n> bytes at 0x.. are not in live memory of gpu:7" unless
  // [p, p + bytes) lies within one live allocation on `device`.
  void check(const void* p, std::size_t bytes, const Device& device, const std::string& what) const;
  std::vector<std::string> live() const;  // "gpu:7: 64 bytes at 0x..."

 private:
  struct Block {
    std::size_t bytes;
    Device device;
  };
  mutable std::mutex mutex_;
  std::map<std::uintptr_t, Block> blocks_;
};

class HostStorage : public DeviceStorage {
 public:
  // Booked in `ledger` (none: untracked) while it lives.
  HostStorage(Device device, std::size_t nbytes, std::shared_ptr<HostMemoryLedger> ledger);
  ~HostStorage() override;
  Device device() const override { return device_; }
  void* data() const override { return const_cast<void*>(buffer_.data()); }
  std::size_t nbytes() const override { return buffer_.nbytes(); }
  void wait() const override {}

 protected:
  void copy_to_host(void* dst) const override;

 private:
  Device device_;
  Buffer buffer_;
  std::shared_ptr<HostMemoryLedger> ledger_;
};

struct HostDeviceCounts {
  std::atomic<int> allocations{0}, copies{0}, reads{0}, writes{0}, replays{0}, kernels{0}, gemms{0};
};

class HostDeviceRuntime : public runtime::DeviceRuntime {
 public:
  HostDeviceRuntime(Device device, std::shared_ptr<HostDeviceCounts> counts,
                    std::shared_ptr<HostMemoryLedger> ledger)
      : device_(device), counts_(std::move(counts)), ledger_(std::move(ledger)) {}
  Device device() const override { return device_; }
  std::shared_ptr<DeviceStorage> allocate(std::size_t nbytes) const override;
  void copy(void* dst, const void* src, std::size_t nbytes) const override;
  void read(void* host_dst, const void* src, std::size_t nbytes) const override;
  void write(void* dst, const void* host_src, std::size_t nbytes) const override;
  void replay(std::span<void* const> buffers, const std::function<void()>& enqueue) const override;
  void synchronize() const override {}

 private:
  Device device_;
  std::shared_ptr<HostDeviceCounts> counts_;
  std::shared_ptr<HostMemoryLedger> ledger_;
};

// While alive, programs for GPUs compile with the CPU's code generator onto HostDeviceRuntimes
// sharing `counts` and one ledger; their kernels and GEMMs check their buffers against it. At
// the end, memory still booked fails the test (CHECK), as a leak.
class HostGpus {
 public:
  HostGpus();
  ~HostGpus();
  HostGpus(const HostGpus&) = delete;
  HostGpus& operator=(const HostGpus&) = delete;

  std::shared_ptr<HostDeviceCounts> counts;
  std::shared_ptr<HostMemoryLedger> ledger;
};

// The ledger of the HostGpus alive now, or null.
std::shared_ptr<HostMemoryLedger> active_host_ledger();

// An array on `device` (host memory behind it, booked with the live HostGpus) holding `values`.
template <class T>
Array host_device_array(const Device& device, const Shape& shape, const std::vector<T>& values) {
  auto storage =
      std::make_shared<HostStorage>(device, values.size() * sizeof(T), active_host_ledger());
  std::memcpy(storage->data(), values.data(), values.size() * sizeof(T));
  return make_device_array(ShapedArray{shape, dtype_of<T>(), false}, std::move(storage));
}

}  // namespace jx::testing
