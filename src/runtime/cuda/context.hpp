// One GPU as jx uses it: the device's primary context, one stream that all work goes to, a
// caching allocator, pinned staging for uploads, PTX modules and launches, cuBLAS, CUDA graphs.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/cuda/caching_allocator.hpp"
#include "runtime/cuda/cublas_api.hpp"
#include "runtime/cuda/cublas_lt.hpp"
#include "runtime/cuda/driver_api.hpp"

namespace jx::runtime::cuda {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// Every method that calls the driver makes the context current on the calling thread, and enqueues
// on stream(): work runs in the order it was enqueued, whichever thread enqueued it.
class GpuContext {
 public:
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  int ordinal() const { return ordinal_; }
  const std::string& name() const { return name_; }
  int compute_capability_major() const { return cc_major_; }
  int compute_capability_minor() const { return cc_minor_; }
  int sm_count() const { return sm_count_; }
  CUstream stream() const { return stream_; }

  // Device memory from the caching allocator; nullptr for 0 bytes. A block released while
  // enqueued work still reads it is safe to reuse: its next user is enqueued after that work.
  void* allocate(std::size_t bytes);
  void release(void* ptr);
  AllocatorStats memory_stats() const { return allocator_.stats(); }
  void empty_cache();

  // Copies host memory into pinned staging and enqueues the upload: the caller may reuse
  // `host_src` on return. Not for use during capture (the staging buffer is reused).
  void copy_to_device(void* dst, const void* host_src, std::size_t bytes);
  // Enqueues the download and waits for it (and everything before it).
  void copy_to_host(void* host_dst, const void* src, std::size_t bytes);
  void copy_on_device(void* dst, const void* src, std::size_t bytes);
  void memset(void* dst, unsigned char value, std::size_t bytes);
  // Waits for everything enqueued so far.
  void synchronize();

  // Compiles PTX for this device. Throws jx::CompileError with the driver's error log; the info
  // log (ptxas's messages) goes to `info_log` when given.
  CUmodule load_ptx(const std::string& ptx, std::string* info_log = nullptr);
  void unload(CUmodule module);
  CUfunction function(CUmodule module, const std::string& name);
  // `args` points at each kernel parameter's value, as cuLaunchKernel takes them.
  void launch(CUfunction function, Dim3 grid, Dim3 block, unsigned shared_bytes, void** args);

  // out[b] = op(lhs[b]) · op(rhs[b]), row-major (cuBLAS; created on first use).
  void gemm(const hlo::GemmShape& shape, const void* lhs, const void* rhs, void* out);
  // out[b] = activation(op(lhs[b]) · op(rhs[b]) + bias) in one kernel (cuBLASLt; see gemm_lt).
  // Throws cuBLASLt's "unavailable" error where it is missing.
  void gemm_epilogue(const hlo::GemmShape& shape, const void* lhs, const void* rhs, void* out,
                     GemmActivation activation, const void* bias);

  // Records what is enqueued between begin_capture and end_capture as a CUDA graph, instead of
  // running it; replay runs it again. The graph holds the device addresses it was captured with:
  // those buffers must stay allocated, and unused by others, while it may run.
  void begin_capture();
  CUgraphExec end_capture();
  void replay(CUgraphExec graph);
  void destroy(CUgraphExec graph);

 private:
  friend GpuContext& gpu_context(int ordinal);
  explicit GpuContext(int ordinal);

  void make_current() const;
  void raw_free(void* ptr);
  cublasHandle_t cublas_handle();
  cublasLtHandle_t cublas_lt_handle();
  void* workspace_locked();

  const DriverApi& api_;
  int ordinal_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  std::string name_;
  int cc_major_ = 0, cc_minor_ = 0, sm_count_ = 0;
  CachingAllocator allocator_;

  std::mutex deferred_mutex_;  // guards the two that follow
  bool capturing_ = false;
  std::vector<void*> deferred_frees_;  // raw frees waiting for the capture to end

  std::mutex mutex_;         // guards what follows
  void* staging_ = nullptr;  // pinned host memory
  std::size_t staging_bytes_ = 0;
  CUevent staging_free_ = nullptr;  // recorded after the last upload from staging
  cublasHandle_t cublas_ = nullptr;
  cublasLtHandle_t cublas_lt_ = nullptr;
  void* workspace_ = nullptr;  // cuBLAS's and cuBLASLt's, both working in stream order
};

// The context of GPU `ordinal`, made on first use and never destroyed (buffers may be freed
// from static destructors). Throws the driver's "CUDA backend unavailable: ..." error, or
// jx::Error "GPU ordinal 3 out of range: 1 GPU(s) found".
GpuContext& gpu_context(int ordinal);

// Device memory owned: back to its context's allocator when destroyed.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int ordinal, std::size_t bytes);
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;

  int ordinal() const { return context_ ? context_->ordinal() : -1; }
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  void reset();

 private:
  GpuContext* context_ = nullptr;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace jx::runtime::cuda
