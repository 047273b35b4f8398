#include "runtime/cuda/driver.hpp"

#include <cstdlib>
#include <variant>

#include "jx/errors.hpp"
#include "runtime/cuda/shared_library.hpp"

namespace jx::runtime::cuda {

DriverApi load_driver(const std::string& library) {
  SharedLibrary lib(library, "CUDA backend");
  if (!lib.ok()) throw Error(lib.error());
  DriverApi api;
  try {
#define JX_BIND(field, symbol, signature) lib.bind(api.field, #symbol);
    JX_CUDA_DRIVER_FUNCTIONS(JX_BIND)
#undef JX_BIND
  } catch (const Error&) {
    lib.close();
    throw;
  }
  return api;
}

DriverApi init_driver(const std::string& library) {
  DriverApi api = load_driver(library);
  if (CUresult r = api.cuInit(0); r != CUDA_SUCCESS)
    throw Error("CUDA backend unavailable: CUDA error in cuInit: " + describe(api, r));
  return api;
}

const DriverApi& driver() {
  // Never destroyed: GPU buffers may be released from static destructors.
  static const auto* loaded = [] {
    const char* path = std::getenv("JX_CUDA_DRIVER");
    try {
      return new std::variant<DriverApi, std::string>(init_driver(path ? path : "libcuda.so.1"));
    } catch (const Error& e) {
      return new std::variant<DriverApi, std::string>(std::string(e.what()));
    }
  }();
  if (const auto* message = std::get_if<std::string>(loaded)) throw Error(*message);
  return std::get<DriverApi>(*loaded);
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

void throw_cuda_error(CUresult result, const char* what) {
  throw Error(std::string("CUDA error in ") + what + ": " + describe(driver(), result));
}

}  // namespace jx::runtime::cuda
