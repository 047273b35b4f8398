#include "runtime/cuda/driver.hpp"

#include <cstdlib>

#include "jx/errors.hpp"
#include "runtime/cuda/shared_library.hpp"

namespace jx::runtime::cuda {

DriverApi load_driver(const std::string& library) { return load_api<DriverApi>({library}); }

DriverApi init_driver(const std::string& library) {
  DriverApi api = load_driver(library);
  if (CUresult r = api.cuInit(0); r != CUDA_SUCCESS)
    throw Error("CUDA backend unavailable: CUDA error in cuInit: " + describe(api, r));
  return api;
}

const DriverApi& driver() {
  static const auto* loaded = new ProcessLibrary<DriverApi>([] {
    const char* path = std::getenv("JX_CUDA_DRIVER");
    return init_driver(path ? path : "libcuda.so.1");
  });
  return loaded->get();
}

int device_count() {
  try {
    int count = 0;
    return driver().cuDeviceGetCount(&count) == CUDA_SUCCESS ? count : 0;
  } catch (const Error&) {
    return 0;
  }
}

std::string describe(const DriverApi& api, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    return "CUresult " + std::to_string(static_cast<int>(result));
  std::string out = name;
  if (api.cuGetErrorString(result, &text) == CUDA_SUCCESS && text) out += std::string(": ") + text;
  return out;
}

void throw_cuda_error(const DriverApi& api, CUresult result, const char* what) {
  throw Error(std::string("CUDA error in ") + what + ": " + describe(api, result));
}

}  // namespace jx::runtime::cuda
