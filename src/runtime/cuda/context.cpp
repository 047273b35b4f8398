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

namespace jx::runtime::cuda {

namespace {

// Uploads larger than this go through staging in chunks rather than pinning as much host memory.
constexpr std::size_t kMaxStagingBytes = std::size_t{64} << 20;
// cuBLAS's and cuBLASLt's scratch: what cuBLAS asks for on Hopper (less elsewhere). Owning it
// keeps cuBLAS from allocating, which graph capture would not allow.
constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;

CUdeviceptr device_ptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

}  // namespace

GpuContext::GpuContext(int ordinal)
    : api_(driver()),
      ordinal_(ordinal),
      allocator_(
          [this](std::size_t bytes) -> void* {
            make_current();
            CUdeviceptr p = 0;
            CUresult r = api_.cuMemAlloc(&p, bytes);
            if (r == CUDA_ERROR_OUT_OF_MEMORY) return nullptr;
            check(r, "cuMemAlloc");
            return reinterpret_cast<void*>(p);
          },
          [this](void* p) { raw_free(p); }) {
  check(api_.cuDeviceGet(&device_, ordinal), "cuDeviceGet");
  char name[256] = {};
  check(api_.cuDeviceGetName(name, sizeof name, device_), "cuDeviceGetName");
  name_ = name;
  auto attribute = [&](CUdevice_attribute a) {
    int value = 0;
    check(api_.cuDeviceGetAttribute(&value, a, device_), "cuDeviceGetAttribute");
    return value;
  };
  cc_major_ = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  cc_minor_ = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  sm_count_ = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  check(api_.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  make_current();
  check(api_.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check(api_.cuEventCreate(&staging_free_, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
}

void GpuContext::make_current() const {
  // The driver call is cheap but not free; jx sets contexts only here, so a thread-local
  // memory of the last one set is reliable.
  thread_local CUcontext current = nullptr;
  if (current == context_) return;
  check(api_.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  current = context_;
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
  make_current();
  // Enqueued work may still read the block, and cuMemFree need not wait for it.
  check(api_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
  check(api_.cuMemFree(device_ptr(ptr)), "cuMemFree");
}

void* GpuContext::allocate(std::size_t bytes) {
  make_current();
  return allocator_.allocate(bytes);
}

void GpuContext::release(void* ptr) { allocator_.release(ptr); }

void GpuContext::empty_cache() {
  make_current();
  allocator_.empty_cache();
}

void GpuContext::copy_to_device(void* dst, const void* host_src, std::size_t bytes) {
  make_current();
  std::lock_guard lock(mutex_);
  for (std::size_t done = 0; done < bytes;) {
    std::size_t chunk = std::min(bytes - done, kMaxStagingBytes);
    // The previous upload from staging must be done before staging is written again.
    check(api_.cuEventSynchronize(staging_free_), "cuEventSynchronize");
    if (staging_bytes_ < chunk) {
      if (staging_) check(api_.cuMemFreeHost(staging_), "cuMemFreeHost");
      staging_ = nullptr;
      staging_bytes_ = 0;
      std::size_t size = std::bit_ceil(chunk);
      check(api_.cuMemAllocHost(&staging_, size), "cuMemAllocHost");
      staging_bytes_ = size;
    }
    std::memcpy(staging_, static_cast<const char*>(host_src) + done, chunk);
    check(api_.cuMemcpyHtoDAsync(device_ptr(dst) + done, staging_, chunk, stream_),
          "cuMemcpyHtoDAsync");
    check(api_.cuEventRecord(staging_free_, stream_), "cuEventRecord");
    done += chunk;
  }
}

void GpuContext::copy_to_host(void* host_dst, const void* src, std::size_t bytes) {
  make_current();
  if (bytes)
    check(api_.cuMemcpyDtoHAsync(host_dst, device_ptr(src), bytes, stream_), "cuMemcpyDtoHAsync");
  check(api_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

void GpuContext::copy_on_device(void* dst, const void* src, std::size_t bytes) {
  if (!bytes) return;
  make_current();
  check(api_.cuMemcpyDtoDAsync(device_ptr(dst), device_ptr(src), bytes, stream_),
        "cuMemcpyDtoDAsync");
}

void GpuContext::memset(void* dst, unsigned char value, std::size_t bytes) {
  if (!bytes) return;
  make_current();
  check(api_.cuMemsetD8Async(device_ptr(dst), value, bytes, stream_), "cuMemsetD8Async");
}

void GpuContext::synchronize() {
  make_current();
  check(api_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

CUmodule GpuContext::load_ptx(const std::string& ptx, std::string* info_log) {
  make_current();
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
  return module;
}

void GpuContext::unload(CUmodule module) {
  make_current();
  check(api_.cuModuleUnload(module), "cuModuleUnload");
}

CUfunction GpuContext::function(CUmodule module, const std::string& name) {
  make_current();
  CUfunction f = nullptr;
  CUresult r = api_.cuModuleGetFunction(&f, module, name.c_str());
  if (r == CUDA_ERROR_NOT_FOUND) throw CompileError("the PTX module has no kernel " + name);
  check(r, "cuModuleGetFunction");
  return f;
}

void GpuContext::launch(CUfunction function, Dim3 grid, Dim3 block, unsigned shared_bytes,
                        void** args) {
  make_current();
  check(api_.cuLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                            shared_bytes, stream_, args, nullptr),
        "cuLaunchKernel");
}

void* GpuContext::workspace_locked() {
  if (!workspace_) workspace_ = allocator_.allocate(kCublasWorkspaceBytes);
  return workspace_;
}

cublasHandle_t GpuContext::cublas_handle() {
  std::lock_guard lock(mutex_);
  if (cublas_) return cublas_;
  const CublasApi& api = cublas();
  cublasHandle_t handle = nullptr;
  check(api, api.cublasCreate(&handle), "cublasCreate");
  check(api, api.cublasSetStream(handle, stream_), "cublasSetStream");
  check(api, api.cublasSetWorkspace(handle, workspace_locked(), kCublasWorkspaceBytes),
        "cublasSetWorkspace");
  return cublas_ = handle;
}

cublasLtHandle_t GpuContext::cublas_lt_handle() {
  std::lock_guard lock(mutex_);
  if (!cublas_lt_) check(cublas_lt(), cublas_lt().cublasLtCreate(&cublas_lt_), "cublasLtCreate");
  return cublas_lt_;
}

void GpuContext::gemm(const hlo::GemmShape& shape, const void* lhs, const void* rhs, void* out) {
  if (shape.batch == 0 || shape.m == 0 || shape.n == 0) return;
  make_current();
  if (shape.k == 0) {
    std::size_t elements = static_cast<std::size_t>(shape.batch * shape.m * shape.n);
    memset(out, 0, elements * itemsize(shape.dtype));
    return;
  }
  cublasHandle_t handle = cublas_handle();
  cuda::gemm(cublas(), handle, shape, lhs, rhs, out);
}

void GpuContext::gemm_epilogue(const hlo::GemmShape& shape, const void* lhs, const void* rhs,
                               void* out, GemmActivation activation, const void* bias) {
  if (shape.batch == 0 || shape.m == 0 || shape.n == 0) return;
  make_current();
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
  gemm_lt(cublas_lt(), handle, stream_, shape, activation, bias, lhs, rhs, out, workspace,
          kCublasWorkspaceBytes);
}

void GpuContext::begin_capture() {
  make_current();
  // Relaxed: the caching allocator may still call cuMemAlloc while a graph is captured.
  check(api_.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_RELAXED), "cuStreamBeginCapture");
  std::lock_guard lock(deferred_mutex_);
  capturing_ = true;
}

CUgraphExec GpuContext::end_capture() {
  make_current();
  CUgraph graph = nullptr;
  CUresult ended = api_.cuStreamEndCapture(stream_, &graph);
  std::vector<void*> deferred;
  {
    std::lock_guard lock(deferred_mutex_);
    capturing_ = false;
    deferred.swap(deferred_frees_);
  }
  for (void* ptr : deferred) raw_free(ptr);
  check(ended, "cuStreamEndCapture");
  CUgraphExec exec = nullptr;
  CUresult r = api_.cuGraphInstantiate(&exec, graph, 0);
  check(api_.cuGraphDestroy(graph), "cuGraphDestroy");
  check(r, "cuGraphInstantiate");
  return exec;
}

void GpuContext::replay(CUgraphExec graph) {
  make_current();
  check(api_.cuGraphLaunch(graph, stream_), "cuGraphLaunch");
}

void GpuContext::destroy(CUgraphExec graph) {
  make_current();
  check(api_.cuGraphExecDestroy(graph), "cuGraphExecDestroy");
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
  if (!context) context.reset(new GpuContext(ordinal));
  return *context;
}

DeviceBuffer::DeviceBuffer(int ordinal, std::size_t bytes)
    : context_(&gpu_context(ordinal)), data_(context_->allocate(bytes)), bytes_(bytes) {}

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

void DeviceBuffer::reset() {
  if (context_) context_->release(data_);
  context_ = nullptr;
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace jx::runtime::cuda
