#include "runtime/cuda/context.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "hlo/gemm.hpp"
#include "jx/errors.hpp"
#include "runtime/cuda/cublas.hpp"
#include "runtime/cuda/driver.hpp"
#include "runtime/cuda/teardown.hpp"

namespace jx::runtime::cuda {

namespace {

// Uploads larger than this go through staging in chunks rather than pinning as much host memory.
constexpr std::size_t kMaxStagingBytes = std::size_t{64} << 20;
// cuBLAS's, cuBLASLt's and cuDNN's scratch: what cuBLAS asks for on Hopper (less elsewhere).
// Owning it keeps the libraries from allocating, which graph capture would not allow.
constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

CUdeviceptr device_ptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

}  // namespace

CudaLibraries process_libraries() { return {&driver(), &cublas, &cublas_lt, &cudnn}; }

void ModuleTraits::release(GpuContext& context, CUmodule module) noexcept {
  context.release_module(module);
}

void GraphTraits::release(GpuContext& context, CUgraphExec graph) noexcept {
  context.release_graph(graph);
}

GpuContext::GpuContext(const CudaLibraries& libraries, int ordinal)
    : libraries_(libraries),
      api_(*libraries.driver),
      ordinal_(ordinal),
      allocator_(
          [this](std::size_t bytes) -> void* {
            enter();
            CUdeviceptr p = 0;
            CUresult r = api_.cuMemAlloc(&p, bytes);
            if (r == CUDA_ERROR_OUT_OF_MEMORY) return nullptr;
            check(api_, r, "cuMemAlloc");
            return reinterpret_cast<void*>(p);
          },
          [this](void* p) { raw_free(p); }) {
  check(api_, api_.cuDeviceGet(&device_, ordinal), "cuDeviceGet");
  char name[256] = {};
  check(api_, api_.cuDeviceGetName(name, sizeof name, device_), "cuDeviceGetName");
  name_ = name;
  auto attribute = [&](CUdevice_attribute a) {
    int value = 0;
    check(api_, api_.cuDeviceGetAttribute(&value, a, device_), "cuDeviceGetAttribute");
    return value;
  };
  cc_major_ = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  cc_minor_ = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  sm_count_ = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  check(api_, api_.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  enter();
  check(api_, api_.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check(api_, api_.cuEventCreate(&staging_free_, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
}

GpuContext::~GpuContext() {
  current_for_release();
  // The libraries' handles first: they may hold work on the stream and memory of their own.
  if (cublas_) {
    cublasStatus_t status = libraries_.cublas().cublasDestroy(cublas_);
    if (status != CUBLAS_STATUS_SUCCESS)
      record_teardown_error("cuBLAS error in cublasDestroy: " +
                            describe(libraries_.cublas(), status));
  }
  if (cublas_lt_) {
    cublasStatus_t status = libraries_.cublas_lt().cublasLtDestroy(cublas_lt_);
    if (status != CUBLAS_STATUS_SUCCESS)
      record_teardown_error("cuBLASLt error in cublasLtDestroy: " +
                            describe(libraries_.cublas_lt(), status));
  }
  if (cudnn_) {
    cudnnStatus_t status = libraries_.cudnn().cudnnDestroy(cudnn_);
    if (status != CUDNN_STATUS_SUCCESS)
      record_teardown_error("cuDNN error in cudnnDestroy: " + describe(libraries_.cudnn(), status));
  }
  release(workspace_);
  try {
    allocator_.empty_cache();
  } catch (const std::exception& e) {
    record_teardown_error(e.what());
  }
  if (std::size_t in_use = allocator_.stats().bytes_in_use)
    record_teardown_error(std::to_string(in_use) + " bytes of GPU memory still in use when GPU " +
                          std::to_string(ordinal_) + "'s context was destroyed");
  if (staging_) check_teardown(api_.cuMemFreeHost(staging_), "cuMemFreeHost");
  if (staging_free_) check_teardown(api_.cuEventDestroy(staging_free_), "cuEventDestroy");
  if (stream_) {
    check_teardown(api_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
    check_teardown(api_.cuStreamDestroy(stream_), "cuStreamDestroy");
  }
  if (context_)
    check_teardown(api_.cuDevicePrimaryCtxRelease(device_), "cuDevicePrimaryCtxRelease");
}

void GpuContext::enter() {
  if (has_teardown_error_.load(std::memory_order_relaxed)) [[unlikely]] {
    std::string message;
    {
      std::lock_guard lock(teardown_mutex_);
      message = std::exchange(teardown_error_, {});
      has_teardown_error_ = false;
    }
    if (!message.empty()) throw Error(message);
  }
  make_current();
}

void GpuContext::make_current() {
  // The driver call is cheap but not free; jx sets contexts only here, so a thread-local
  // memory of the last one set is reliable.
  thread_local CUcontext current = nullptr;
  if (current == context_) return;
  check(api_, api_.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  current = context_;
}

void GpuContext::record_teardown_error(const std::string& message) noexcept {
  log_teardown_error(message);
  try {
    std::lock_guard lock(teardown_mutex_);
    if (teardown_error_.empty()) teardown_error_ = message;  // the first is the cause
    has_teardown_error_ = true;
  } catch (...) {  // a failed lock or allocation: the log has it
  }
}

void GpuContext::check_teardown(CUresult result, const char* what) noexcept {
  if (result == CUDA_SUCCESS) return;
  try {
    record_teardown_error(std::string("CUDA error in ") + what +
                          " (releasing a resource): " + describe(api_, result));
  } catch (...) {
    record_teardown_error(std::string("CUDA error in ") + what);
  }
}

bool GpuContext::current_for_release() noexcept {
  try {
    make_current();
    return true;
  } catch (const std::exception& e) {
    record_teardown_error(e.what());
    return false;
  }
}

void GpuContext::release_module(CUmodule module) noexcept {
  if (current_for_release()) check_teardown(api_.cuModuleUnload(module), "cuModuleUnload");
}

void GpuContext::release_graph(CUgraphExec graph) noexcept {
  if (current_for_release()) check_teardown(api_.cuGraphExecDestroy(graph), "cuGraphExecDestroy");
}

void GpuContext::raw_free(void* ptr) {
  {
    // A graph being captured may read the block, and the stream cannot be synchronized until
    // the capture ends: end_capture frees it.
    std::lock_guard lock(deferred_mutex_);
    if (capturing_) {
      deferred_frees_.push_back(ptr);
      return;
    }
  }
  make_current();  // a release: the remembered error is for the next call to report
  // Enqueued work may still read the block, and cuMemFree need not wait for it.
  check(api_, api_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
  check(api_, api_.cuMemFree(device_ptr(ptr)), "cuMemFree");
}

void* GpuContext::allocate(std::size_t bytes) {
  enter();
  return allocator_.allocate(bytes);
}

void GpuContext::release(void* ptr) noexcept {
  try {
    allocator_.release(ptr);
  } catch (const std::exception& e) {
    record_teardown_error(e.what());
  }
}

void GpuContext::empty_cache() {
  enter();
  allocator_.empty_cache();
}

void GpuContext::copy_to_device(void* dst, const void* host_src, std::size_t bytes) {
  enter();
  std::lock_guard lock(mutex_);
  for (std::size_t done = 0; done < bytes;) {
    std::size_t chunk = std::min(bytes - done, kMaxStagingBytes);
    // The previous upload from staging must be done before staging is written again.
    check(api_, api_.cuEventSynchronize(staging_free_), "cuEventSynchronize");
    if (staging_bytes_ < chunk) {
      if (staging_) check(api_, api_.cuMemFreeHost(staging_), "cuMemFreeHost");
      staging_ = nullptr;
      staging_bytes_ = 0;
      std::size_t size = std::bit_ceil(chunk);
      check(api_, api_.cuMemAllocHost(&staging_, size), "cuMemAllocHost");
      staging_bytes_ = size;
    }
    std::memcpy(staging_, static_cast<const char*>(host_src) + done, chunk);
    check(api_, api_.cuMemcpyHtoDAsync(device_ptr(dst) + done, staging_, chunk, stream_),
          "cuMemcpyHtoDAsync");
    check(api_, api_.cuEventRecord(staging_free_, stream_), "cuEventRecord");
    done += chunk;
  }
}

void GpuContext::copy_to_host(void* host_dst, const void* src, std::size_t bytes) {
  enter();
  if (bytes)
    check(api_, api_.cuMemcpyDtoHAsync(host_dst, device_ptr(src), bytes, stream_),
          "cuMemcpyDtoHAsync");
  check(api_, api_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

void GpuContext::copy_on_device(void* dst, const void* src, std::size_t bytes) {
  if (!bytes) return;
  enter();
  check(api_, api_.cuMemcpyDtoDAsync(device_ptr(dst), device_ptr(src), bytes, stream_),
        "cuMemcpyDtoDAsync");
}

void GpuContext::memset(void* dst, unsigned char value, std::size_t bytes) {
  if (!bytes) return;
  enter();
  check(api_, api_.cuMemsetD8Async(device_ptr(dst), value, bytes, stream_), "cuMemsetD8Async");
}

void GpuContext::synchronize() {
  enter();
  check(api_, api_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

double GpuContext::timed_ms(const std::function<void()>& enqueue) {
  enter();
  CUevent start = nullptr, end = nullptr;
  check(api_, api_.cuEventCreate(&start, 0), "cuEventCreate");
  if (CUresult r = api_.cuEventCreate(&end, 0); r != CUDA_SUCCESS) {
    check_teardown(api_.cuEventDestroy(start), "cuEventDestroy");
    check(api_, r, "cuEventCreate");
  }
  float ms = 0;
  try {
    check(api_, api_.cuEventRecord(start, stream_), "cuEventRecord");
    enqueue();
    enter();  // the work may have made another context current
    check(api_, api_.cuEventRecord(end, stream_), "cuEventRecord");
    check(api_, api_.cuEventSynchronize(end), "cuEventSynchronize");
    check(api_, api_.cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime");
  } catch (...) {
    check_teardown(api_.cuEventDestroy(start), "cuEventDestroy");
    check_teardown(api_.cuEventDestroy(end), "cuEventDestroy");
    throw;
  }
  check_teardown(api_.cuEventDestroy(start), "cuEventDestroy");
  check_teardown(api_.cuEventDestroy(end), "cuEventDestroy");
  return ms;
}

Module GpuContext::load_ptx(const std::string& ptx, std::string* info_log) {
  enter();
  std::vector<char> info(16 << 10), error(16 << 10);
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  // Sizes travel as pointer-sized integers, as the driver's option values do.
  void* values[] = {info.data(), reinterpret_cast<void*>(std::uintptr_t{info.size() - 1}),
                    error.data(), reinterpret_cast<void*>(std::uintptr_t{error.size() - 1})};
  CUmodule module = nullptr;
  CUresult r = api_.cuModuleLoadDataEx(&module, ptx.c_str(), 4, options, values);
  if (info_log) *info_log = info.data();
  if (r != CUDA_SUCCESS) {
    std::string message = "CUDA could not load the PTX: " + describe(api_, r);
    if (error[0]) message += std::string("\n") + error.data();
    throw CompileError(message);
  }
  return Module(*this, module);
}

CUfunction GpuContext::function(const Module& module, const std::string& name) {
  enter();
  CUfunction f = nullptr;
  CUresult r = api_.cuModuleGetFunction(&f, module.get(), name.c_str());
  if (r == CUDA_ERROR_NOT_FOUND) throw CompileError("the PTX module has no kernel " + name);
  check(api_, r, "cuModuleGetFunction");
  return f;
}

void GpuContext::launch(CUfunction function, Dim3 grid, Dim3 block, unsigned shared_bytes,
                        void** args) {
  enter();
  check(api_,
        api_.cuLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                            shared_bytes, stream_, args, nullptr),
        "cuLaunchKernel");
}

void* GpuContext::workspace_locked() {
  if (!workspace_) workspace_ = allocator_.allocate(kWorkspaceBytes);
  return workspace_;
}

cublasHandle_t GpuContext::cublas_handle() {
  std::lock_guard lock(mutex_);
  if (cublas_) return cublas_;
  const CublasApi& api = libraries_.cublas();
  cublasHandle_t handle = nullptr;
  check(api, api.cublasCreate(&handle), "cublasCreate");
  check(api, api.cublasSetStream(handle, stream_), "cublasSetStream");
  check(api, api.cublasSetWorkspace(handle, workspace_locked(), kWorkspaceBytes),
        "cublasSetWorkspace");
  return cublas_ = handle;
}

cublasLtHandle_t GpuContext::cublas_lt_handle() {
  std::lock_guard lock(mutex_);
  const CublasLtApi& api = libraries_.cublas_lt();
  if (!cublas_lt_) check(api, api.cublasLtCreate(&cublas_lt_), "cublasLtCreate");
  return cublas_lt_;
}

void GpuContext::gemm(const hlo::GemmShape& shape, const void* lhs, const void* rhs, void* out) {
  if (shape.batch == 0 || shape.m == 0 || shape.n == 0) return;
  enter();
  if (shape.k == 0) {
    std::size_t elements = static_cast<std::size_t>(shape.batch * shape.m * shape.n);
    memset(out, 0, elements * itemsize(shape.dtype));
    return;
  }
  cublasHandle_t handle = cublas_handle();
  cuda::gemm(libraries_.cublas(), handle, shape, lhs, rhs, out);
}

void GpuContext::gemm_epilogue(const hlo::GemmShape& shape, const void* lhs, const void* rhs,
                               void* out, GemmActivation activation, const void* bias) {
  if (shape.batch == 0 || shape.m == 0 || shape.n == 0) return;
  enter();
  if (shape.k == 0) {
    // relu(0) = gelu(0) = 0; a bias alone would need a broadcast kernel.
    if (bias) throw Error("cuBLASLt GEMM with a bias and an empty contraction (k = 0)");
    std::size_t elements = static_cast<std::size_t>(shape.batch * shape.m * shape.n);
    memset(out, 0, elements * itemsize(shape.dtype));
    return;
  }
  cublasLtHandle_t handle = cublas_lt_handle();
  void* workspace;
  {
    std::lock_guard lock(mutex_);
    workspace = workspace_locked();
  }
  gemm_lt(libraries_.cublas_lt(), handle, stream_, shape, activation, bias, lhs, rhs, out,
          workspace, kWorkspaceBytes);
}

bool GpuContext::has_cudnn() {
  enter();
  {
    std::lock_guard lock(mutex_);
    if (cudnn_checked_) return cudnn_ != nullptr;
  }
  try {
    cudnn_handle();
  } catch (const Error&) {
    // Missing or unusable: convolutions become patches and cuBLAS GEMMs instead.
  }
  std::lock_guard lock(mutex_);
  cudnn_checked_ = true;
  return cudnn_ != nullptr;
}

cudnnHandle_t GpuContext::cudnn_handle() {
  std::lock_guard lock(mutex_);
  if (cudnn_) return cudnn_;
  if (!libraries_.cudnn) throw Error("cuDNN unavailable: this context has no cuDNN");
  const CudnnApi& api = libraries_.cudnn();
  cudnnHandle_t handle = nullptr;
  check(api, api.cudnnCreate(&handle), "cudnnCreate");
  if (cudnnStatus_t status = api.cudnnSetStream(handle, stream_); status != CUDNN_STATUS_SUCCESS) {
    api.cudnnDestroy(handle);
    check(api, status, "cudnnSetStream");
  }
  return cudnn_ = handle;
}

void GpuContext::convolve(const hlo::DnnConvolution& conv, const void* lhs, const void* rhs,
                          void* out) {
  enter();
  cudnnHandle_t handle = cudnn_handle();
  void* workspace;
  {
    std::lock_guard lock(mutex_);
    workspace = workspace_locked();
  }
  cuda::convolve(libraries_.cudnn(), handle, conv, lhs, rhs, out, workspace, kWorkspaceBytes);
}

void GpuContext::begin_capture() {
  enter();
  // Relaxed: the caching allocator may still call cuMemAlloc while a graph is captured.
  check(api_, api_.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_RELAXED),
        "cuStreamBeginCapture");
  std::lock_guard lock(deferred_mutex_);
  capturing_ = true;
}

Graph GpuContext::end_capture() {
  enter();
  CUgraph graph = nullptr;
  CUresult ended = api_.cuStreamEndCapture(stream_, &graph);
  std::vector<void*> deferred;
  {
    std::lock_guard lock(deferred_mutex_);
    capturing_ = false;
    deferred.swap(deferred_frees_);
  }
  for (void* ptr : deferred) raw_free(ptr);
  check(api_, ended, "cuStreamEndCapture");
  CUgraphExec exec = nullptr;
  CUresult r = api_.cuGraphInstantiate(&exec, graph, 0);
  check(api_, api_.cuGraphDestroy(graph), "cuGraphDestroy");
  check(api_, r, "cuGraphInstantiate");
  return Graph(*this, exec);
}

void GpuContext::replay(const Graph& graph) {
  enter();
  check(api_, api_.cuGraphLaunch(graph.get(), stream_), "cuGraphLaunch");
}

GpuContext& gpu_context(int ordinal) {
  driver();  // throws when the backend is unavailable
  struct Registry {
    std::mutex mutex;
    std::vector<std::unique_ptr<GpuContext>> contexts;
  };
  static auto* registry = new Registry;  // never destroyed, nor are the contexts
  std::lock_guard lock(registry->mutex);
  if (registry->contexts.empty())
    registry->contexts.resize(static_cast<std::size_t>(device_count()));
  int count = static_cast<int>(registry->contexts.size());
  if (ordinal < 0 || ordinal >= count)
    throw Error("GPU ordinal " + std::to_string(ordinal) +
                " out of range: " + std::to_string(count) + " GPU(s) found");
  auto& context = registry->contexts[static_cast<std::size_t>(ordinal)];
  if (!context) context = std::make_unique<GpuContext>(process_libraries(), ordinal);
  return *context;
}

DeviceBuffer::DeviceBuffer(GpuContext& context, std::size_t bytes)
    : context_(&context), data_(context.allocate(bytes)), bytes_(bytes) {}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : context_(std::exchange(other.context_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    context_ = std::exchange(other.context_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::reset() noexcept {
  if (context_) context_->release(data_);
  context_ = nullptr;
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace jx::runtime::cuda
