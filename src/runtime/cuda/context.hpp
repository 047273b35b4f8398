// One GPU as jx uses it: the device's primary context, one stream that all work goes to, a
// caching allocator, pinned staging for uploads, PTX modules and launches, cuBLAS, cuDNN, CUDA
// graphs.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cuda/caching_allocator.hpp"
#include "runtime/cuda/cublas_api.hpp"
#include "runtime/cuda/cublas_lt.hpp"
#include "runtime/cuda/cudnn.hpp"
#include "runtime/cuda/driver_api.hpp"

namespace jx::runtime::cuda {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// The vendor libraries a context calls: the process's own (gpu_context), or stand-ins that
// tests provide.
struct CudaLibraries {
  const DriverApi* driver = nullptr;
  const CublasApi& (*cublas)() = nullptr;       // throws "cuBLAS unavailable: ..." when missing
  const CublasLtApi& (*cublas_lt)() = nullptr;  // throws "cuBLASLt unavailable: ..."
  const CudnnApi& (*cudnn)() = nullptr;         // throws "cuDNN unavailable: ..."; optional
};

// driver(), cublas(), cublas_lt() and cudnn(). Throws the driver's "CUDA backend unavailable:
// ...".
CudaLibraries process_libraries();

class GpuContext;

// A driver handle owned: released through its context when destroyed or reset, a failure
// logged and remembered by the context, never thrown. Move-only: a copy would release the
// handle a second time.
template <class Traits>
class OwnedHandle {
 public:
  using Handle = typename Traits::Handle;
  OwnedHandle() = default;
  OwnedHandle(GpuContext& context, Handle handle) : context_(&context), handle_(handle) {}
  ~OwnedHandle() { reset(); }
  OwnedHandle(OwnedHandle&& other) noexcept
      : context_(std::exchange(other.context_, nullptr)),
        handle_(std::exchange(other.handle_, Handle{})) {}
  OwnedHandle& operator=(OwnedHandle&& other) noexcept {
    if (this != &other) {
      reset();
      context_ = std::exchange(other.context_, nullptr);
      handle_ = std::exchange(other.handle_, Handle{});
    }
    return *this;
  }
  OwnedHandle(const OwnedHandle&) = delete;
  OwnedHandle& operator=(const OwnedHandle&) = delete;

  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != Handle{}; }
  void reset() noexcept {
    if (handle_ != Handle{}) Traits::release(*context_, handle_);
    context_ = nullptr;
    handle_ = Handle{};
  }

 private:
  GpuContext* context_ = nullptr;
  Handle handle_{};
};

struct ModuleTraits {
  using Handle = CUmodule;
  static void release(GpuContext& context, CUmodule module) noexcept;  // cuModuleUnload
};
struct GraphTraits {
  using Handle = CUgraphExec;
  static void release(GpuContext& context, CUgraphExec graph) noexcept;  // cuGraphExecDestroy
};
using Module = OwnedHandle<ModuleTraits>;  // a loaded PTX module
using Graph = OwnedHandle<GraphTraits>;    // an instantiated CUDA graph

// Every method that calls the driver makes the context current on the calling thread, and enqueues
// on stream(): work runs in the order it was enqueued, whichever thread enqueued it. A failure
// while releasing something (a destructor's) is logged and thrown by the next call instead.
class GpuContext {
 public:
  // The primary context of device `ordinal` through `libraries`. gpu_context() holds the
  // process's contexts; tests make their own over stand-in libraries.
  GpuContext(const CudaLibraries& libraries, int ordinal);
  // Releases the stream, the cached memory, the staging, cuBLAS's handles and the primary
  // context, logging (never throwing) what fails. Modules, graphs and buffers must be gone.
  ~GpuContext();
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
  // Never throws: a block this context did not hand out is logged as a teardown error.
  void release(void* ptr) noexcept;
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
  // Runs `enqueue` between two events on the stream and waits for its work: its time on the
  // device in milliseconds (the profiler's kernel times).
  double timed_ms(const std::function<void()>& enqueue);

  // Compiles PTX for this device. Throws jx::CompileError with the driver's error log; the info
  // log (ptxas's messages) goes to `info_log` when given.
  Module load_ptx(const std::string& ptx, std::string* info_log = nullptr);
  // Valid while `module` is loaded.
  CUfunction function(const Module& module, const std::string& name);
  // `args` points at each kernel parameter's value, as cuLaunchKernel takes them.
  void launch(CUfunction function, Dim3 grid, Dim3 block, unsigned shared_bytes, void** args);

  // out[b] = op(lhs[b]) · op(rhs[b]), row-major (cuBLAS; created on first use).
  void gemm(const hlo::GemmShape& shape, const void* lhs, const void* rhs, void* out);
  // out[b] = activation(op(lhs[b]) · op(rhs[b]) + bias) in one kernel (cuBLASLt; see gemm_lt).
  // Throws cuBLASLt's "unavailable" error where it is missing.
  void gemm_epilogue(const hlo::GemmShape& shape, const void* lhs, const void* rhs, void* out,
                     GemmActivation activation, const void* bias);

  // Whether cuDNN loads and makes a handle on this device (asked once): convolutions then run
  // through it (convolve), and become patches and GEMMs where it does not.
  bool has_cudnn();
  // out = conv(lhs, rhs) in cuDNN's layouts (cuDNN; throws its "unavailable" error where it is
  // missing).
  void convolve(const hlo::DnnConvolution& conv, const void* lhs, const void* rhs, void* out);

  // Records what is enqueued between begin_capture and end_capture as a CUDA graph, instead of
  // running it; replay runs it again. The graph holds the device addresses it was captured with:
  // those buffers must stay allocated, and unused by others, while it may run.
  void begin_capture();
  Graph end_capture();
  void replay(const Graph& graph);

  // What ModuleTraits and GraphTraits release through: failures go to record_teardown_error.
  void release_module(CUmodule module) noexcept;
  void release_graph(CUgraphExec graph) noexcept;
  // Logs "CUDA error in <what> (releasing a resource): ..." and keeps it: the next call on this
  // context throws it (once), as the driver reports its own sticky errors.
  void record_teardown_error(const std::string& message) noexcept;

 private:
  // Throws the remembered teardown error, then makes the context current on this thread.
  void enter();
  void make_current();
  bool current_for_release() noexcept;  // false (and recorded) where that fails
  void check_teardown(CUresult result, const char* what) noexcept;
  void raw_free(void* ptr);
  cublasHandle_t cublas_handle();
  cublasLtHandle_t cublas_lt_handle();
  cudnnHandle_t cudnn_handle();
  void* workspace_locked();

  CudaLibraries libraries_;
  const DriverApi& api_;
  int ordinal_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  std::string name_;
  int cc_major_ = 0, cc_minor_ = 0, sm_count_ = 0;
  CachingAllocator allocator_;

  std::atomic<bool> has_teardown_error_{false};
  std::mutex teardown_mutex_;  // guards the message
  std::string teardown_error_;

  std::mutex deferred_mutex_;  // guards the two that follow
  bool capturing_ = false;
  std::vector<void*> deferred_frees_;  // raw frees waiting for the capture to end

  std::mutex mutex_;         // guards what follows
  void* staging_ = nullptr;  // pinned host memory
  std::size_t staging_bytes_ = 0;
  CUevent staging_free_ = nullptr;  // recorded after the last upload from staging
  cublasHandle_t cublas_ = nullptr;
  cublasLtHandle_t cublas_lt_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  bool cudnn_checked_ = false;  // has_cudnn asked
  void* workspace_ = nullptr;   // the libraries', all working in stream order
};

// The context of GPU `ordinal` over the process's libraries, made on first use and never
// destroyed (buffers may be freed from static destructors). Throws the driver's "CUDA backend
// unavailable: ..." error, or jx::Error "GPU ordinal 3 out of range: 1 GPU(s) found".
GpuContext& gpu_context(int ordinal);

// Device memory owned: back to its context's allocator when destroyed.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(GpuContext& context, std::size_t bytes);
  DeviceBuffer(int ordinal, std::size_t bytes) : DeviceBuffer(gpu_context(ordinal), bytes) {}
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  int ordinal() const { return context_ ? context_->ordinal() : -1; }
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  void reset() noexcept;

 private:
  GpuContext* context_ = nullptr;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace jx::runtime::cuda
