// An array's bytes in an accelerator's memory. The runtime of each device implements it; core
// only reads values through the host copy, made once on first read (arrays are immutable).
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>

#include "core/buffer.hpp"
#include "jx/device.hpp"

namespace jx {

class DeviceStorage {
 public:
  virtual ~DeviceStorage() = default;
  virtual Device device() const = 0;
  virtual void* data() const = 0;  // the device address
  virtual std::size_t nbytes() const = 0;
  virtual void wait() const = 0;  // until the work enqueued before now is done

  // The values on the host: copied at the first call (waiting for the work that writes them),
  // then kept.
  const Buffer& host_copy() const {
    std::call_once(host_once_, [this] {
      host_ = std::make_unique<Buffer>(nbytes(), Buffer::Uninitialized{});
      copy_to_host(host_->data());
    });
    return *host_;
  }

 protected:
  virtual void copy_to_host(void* dst) const = 0;

 private:
  mutable std::once_flag host_once_;
  mutable std::unique_ptr<Buffer> host_;
};

}  // namespace jx
