// The CUDA driver (libcuda), loaded at run time: without it, or without a GPU, the CUDA backend
// reports itself unavailable and the rest of jx runs as before.
#pragma once

#include <string>

#include "runtime/cuda/driver_api.hpp"

namespace jx::runtime::cuda {

// load_api<DriverApi>({library}): dlopens it and looks up every entry point; calls none of them.
// Throws jx::Error "CUDA backend unavailable: cannot load <library>: <dlerror>" or "CUDA backend
// unavailable: <library> has no <symbol>".
DriverApi load_driver(const std::string& library);

// load_driver, then cuInit(0), which fails without a GPU: jx::Error
// "CUDA backend unavailable: CUDA error in cuInit: <name>: <description>".
DriverApi init_driver(const std::string& library);

// The process's driver: init_driver of $JX_CUDA_DRIVER, or of "libcuda.so.1", done once. A failure
// is remembered, and every call rethrows its message.
const DriverApi& driver();

// The number of GPUs; 0 when the driver is unavailable. Never throws.
int device_count();

// "CUDA_ERROR_OUT_OF_MEMORY: out of memory", or "CUresult 2" where the driver cannot name it.
std::string describe(const DriverApi& api, CUresult result);

// Throws jx::Error "CUDA error in <what>: <describe(api, result)>".
[[noreturn]] void throw_cuda_error(const DriverApi& api, CUresult result, const char* what);

inline void check(const DriverApi& api, CUresult result, const char* what) {
  if (result != CUDA_SUCCESS) [[unlikely]]
    throw_cuda_error(api, result, what);
}

}  // namespace jx::runtime::cuda
