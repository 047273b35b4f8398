// The part of the CUDA Driver API jx uses, declared here so that jx builds without cuda.h: the
// handle types, the enum values, and one X-macro list of entry points that DriverApi holds.
#pragma once

#include <cstddef>

#include "runtime/cuda/api_table.hpp"

namespace jx::runtime::cuda {

// Enums without a fixed underlying type, as cuda.h declares them, so they match it in size.
enum CUresult {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  CUDA_ERROR_UNKNOWN =
      999,  // the largest code: the enum's range holds every code the driver returns
};

enum CUdevice_attribute {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

enum CUjit_option {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_LOG_VERBOSE = 12,
};

enum CUstreamCaptureMode {
  CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
  CU_STREAM_CAPTURE_MODE_RELAXED = 2,
};

// Flag words (the functions take them as unsigned int).
inline constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
inline constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;

using CUdevice = int;
using CUdeviceptr = unsigned long long;  // 64-bit builds only
struct CUctx_st;
using CUcontext = CUctx_st*;
struct CUmod_st;
using CUmodule = CUmod_st*;
struct CUfunc_st;
using CUfunction = CUfunc_st*;
struct CUstream_st;
using CUstream = CUstream_st*;
struct CUevent_st;
using CUevent = CUevent_st*;
struct CUgraph_st;
using CUgraph = CUgraph_st*;
struct CUgraphExec_st;
using CUgraphExec = CUgraphExec_st*;

// X(field, exported symbol, signature). The symbol is what cuda.h's macros resolve to: the _v2
// entry points where the original ones kept an old ABI, the legacy (not per-thread) stream ones.
#define JX_CUDA_DRIVER_FUNCTIONS(X)                                                                \
  X(cuInit, cuInit, CUresult(unsigned int))                                                        \
  X(cuDriverGetVersion, cuDriverGetVersion, CUresult(int*))                                        \
  X(cuGetErrorName, cuGetErrorName, CUresult(CUresult, const char**))                              \
  X(cuGetErrorString, cuGetErrorString, CUresult(CUresult, const char**))                          \
  X(cuDeviceGetCount, cuDeviceGetCount, CUresult(int*))                                            \
  X(cuDeviceGet, cuDeviceGet, CUresult(CUdevice*, int))                                            \
  X(cuDeviceGetName, cuDeviceGetName, CUresult(char*, int, CUdevice))                              \
  X(cuDeviceGetAttribute, cuDeviceGetAttribute, CUresult(int*, CUdevice_attribute, CUdevice))      \
  X(cuDeviceTotalMem, cuDeviceTotalMem_v2, CUresult(std::size_t*, CUdevice))                       \
  X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, CUresult(CUcontext*, CUdevice))            \
  X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, CUresult(CUdevice))                   \
  X(cuCtxSetCurrent, cuCtxSetCurrent, CUresult(CUcontext))                                         \
  X(cuCtxSynchronize, cuCtxSynchronize, CUresult())                                                \
  X(cuModuleLoadDataEx, cuModuleLoadDataEx,                                                        \
    CUresult(CUmodule*, const void*, unsigned int, CUjit_option*, void**))                         \
  X(cuModuleUnload, cuModuleUnload, CUresult(CUmodule))                                            \
  X(cuModuleGetFunction, cuModuleGetFunction, CUresult(CUfunction*, CUmodule, const char*))        \
  X(cuLaunchKernel, cuLaunchKernel,                                                                \
    CUresult(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,     \
             unsigned int, unsigned int, CUstream, void**, void**))                                \
  X(cuMemGetInfo, cuMemGetInfo_v2, CUresult(std::size_t*, std::size_t*))                           \
  X(cuMemAlloc, cuMemAlloc_v2, CUresult(CUdeviceptr*, std::size_t))                                \
  X(cuMemFree, cuMemFree_v2, CUresult(CUdeviceptr))                                                \
  X(cuMemAllocHost, cuMemAllocHost_v2, CUresult(void**, std::size_t))                              \
  X(cuMemFreeHost, cuMemFreeHost, CUresult(void*))                                                 \
  X(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2,                                                       \
    CUresult(CUdeviceptr, const void*, std::size_t, CUstream))                                     \
  X(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, CUresult(void*, CUdeviceptr, std::size_t, CUstream))  \
  X(cuMemcpyDtoDAsync, cuMemcpyDtoDAsync_v2,                                                       \
    CUresult(CUdeviceptr, CUdeviceptr, std::size_t, CUstream))                                     \
  X(cuMemsetD8Async, cuMemsetD8Async, CUresult(CUdeviceptr, unsigned char, std::size_t, CUstream)) \
  X(cuStreamCreate, cuStreamCreate, CUresult(CUstream*, unsigned int))                             \
  X(cuStreamSynchronize, cuStreamSynchronize, CUresult(CUstream))                                  \
  X(cuStreamDestroy, cuStreamDestroy_v2, CUresult(CUstream))                                       \
  X(cuEventCreate, cuEventCreate, CUresult(CUevent*, unsigned int))                                \
  X(cuEventDestroy, cuEventDestroy_v2, CUresult(CUevent))                                          \
  X(cuEventRecord, cuEventRecord, CUresult(CUevent, CUstream))                                     \
  X(cuEventSynchronize, cuEventSynchronize, CUresult(CUevent))                                     \
  X(cuEventElapsedTime, cuEventElapsedTime, CUresult(float*, CUevent, CUevent))                    \
  X(cuStreamBeginCapture, cuStreamBeginCapture_v2, CUresult(CUstream, CUstreamCaptureMode))        \
  X(cuStreamEndCapture, cuStreamEndCapture, CUresult(CUstream, CUgraph*))                          \
  X(cuGraphInstantiate, cuGraphInstantiateWithFlags,                                               \
    CUresult(CUgraphExec*, CUgraph, unsigned long long))                                           \
  X(cuGraphLaunch, cuGraphLaunch, CUresult(CUgraphExec, CUstream))                                 \
  X(cuGraphExecDestroy, cuGraphExecDestroy, CUresult(CUgraphExec))                                 \
  X(cuGraphDestroy, cuGraphDestroy, CUresult(CUgraph))

// The driver's entry points, all non-null once load_driver returns.
struct DriverApi {
  static constexpr const char* kLibrary = "CUDA backend";  // as messages name it
  JX_CUDA_DRIVER_FUNCTIONS(JX_API_FIELD)
  template <class Library>
  void bind(const Library& library) {
    JX_CUDA_DRIVER_FUNCTIONS(JX_API_REQUIRED)
  }
};

}  // namespace jx::runtime::cuda
