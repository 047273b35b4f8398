// What an executable needs of the accelerator its buffers live on: memory, copies in stream
// order, reads that wait for the work before them, and optional replay of a recorded thunk
// sequence. An executable without one runs on the host. No CUDA type appears here.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>

#include "core/device_storage.hpp"

namespace jx::runtime {

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;
  virtual Device device() const = 0;
  virtual std::shared_ptr<DeviceStorage> allocate(std::size_t nbytes) const = 0;
  virtual void copy(void* dst, const void* src, std::size_t nbytes) const = 0;  // on the device
  virtual void read(void* host_dst, const void* src, std::size_t nbytes) const = 0;
  virtual void write(void* dst, const void* host_src, std::size_t nbytes) const = 0;
  // Runs `enqueue`, which only enqueues the work of one executable (each has its own runtime):
  // recorded once per distinct set of `buffers` and replayed afterwards when the device
  // supports it and the configuration asks for it (CUDA graphs), else simply called.
  virtual void replay(std::span<void* const> buffers,
                      const std::function<void()>& enqueue) const = 0;
  // Waits for the work enqueued so far.
  virtual void synchronize() const = 0;
  // Runs `enqueue` and waits for its work: its time on the device in milliseconds, as the
  // device measures it where it can (CUDA events), else the host's clock around it and a
  // synchronize. A profiler trace times each thunk so.
  virtual double timed_ms(const std::function<void()>& enqueue) const;
};

}  // namespace jx::runtime
