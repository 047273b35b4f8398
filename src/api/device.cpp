// jx::devices, cpu, gpu and device_put.
#include "api/device.hpp"

#include <cstring>
#include <ostream>

#include "backend/backend.hpp"
#include "core/array_impl.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/driver.hpp"

namespace jx {

std::string Device::str() const {
  return (platform_ == Platform::cpu ? "cpu:" : "gpu:") + std::to_string(id_);
}

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

std::vector<Device> devices() {
  std::vector<Device> out{cpu()};
  for (int i = 0; i < runtime::cuda::device_count(); ++i) out.emplace_back(Platform::gpu, i);
  return out;
}

Device cpu() { return {}; }

Device gpu(int id) {
  runtime::cuda::gpu_context(id);  // throws when the backend or the device is missing
  return {Platform::gpu, id};
}

void api::check_device(const Device& d) {
  if (d.platform() == Platform::cpu && d.id() != 0)
    throw ValueError("Unknown device " + d.str() + ": the CPU is cpu:0");
}

Array device_put(const Array& x, const Device& device) {
  api::check_device(device);
  const detail::ArrayImpl& impl = impl_of(x);
  if (impl.tracer) return x;  // under a trace, the jitted program decides where it runs
  if (device == impl.device()) {
    if (impl.committed) return x;
    auto committed = std::make_shared<detail::ArrayImpl>(impl);
    committed->committed = true;
    return Array(std::move(committed));
  }
  const Buffer& host = concrete_buffer(x, "device_put");
  if (device.platform() == Platform::cpu) {
    auto copy = std::make_shared<Buffer>(host.nbytes(), Buffer::Uninitialized{});
    std::memcpy(copy->data(), host.data(), host.nbytes());
    Array out = make_array(impl.aval, std::move(copy));
    out.impl()->committed = true;
    return out;
  }
  // The device's own runtime (the one its programs use) holds the copy.
  std::shared_ptr<const runtime::DeviceRuntime> runtime = backend::make_backend(device)->runtime();
  std::shared_ptr<DeviceStorage> storage = runtime->allocate(host.nbytes());
  runtime->write(storage->data(), host.data(), host.nbytes());
  return make_device_array(impl.aval, std::move(storage));
}

}  // namespace jx
