// Devices: where arrays live and where jitted programs run. The CPU is always there; NVIDIA GPUs
// are found at run time through the CUDA driver (no CUDA toolkit is needed to build or use jx).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "jx/array.hpp"

namespace jx {

enum class Platform { cpu, gpu };

class Device {
 public:
  constexpr Device() = default;  // the CPU
  constexpr Device(Platform platform, int id) : platform_(platform), id_(id) {}

  Platform platform() const { return platform_; }
  int id() const { return id_; }
  std::string str() const;  // "cpu:0", "gpu:1"

  friend bool operator==(const Device&, const Device&) = default;

 private:
  Platform platform_ = Platform::cpu;
  int id_ = 0;
};

std::ostream& operator<<(std::ostream& os, const Device& d);

// Every device: the CPU first, then each GPU the CUDA driver reports (none without a driver).
std::vector<Device> devices();
Device cpu();
// GPU `id`. Throws jx::Error naming CUDA when the backend is unavailable (no libcuda, no device)
// or `id` is out of range.
Device gpu(int id = 0);

// `x`'s values on `device`, committed there: jitted calls and operations on it run there, and
// meeting an array committed to another device is an error. Arrays made without device_put are
// uncommitted: they live on the CPU and move to whichever device uses them.
Array device_put(const Array& x, const Device& device);

}  // namespace jx
