// FakeCuda's driver: every entry point of DriverApi over host memory, strict about handles and
// memory, answering misuse with the real driver's error codes.
#include <cstdlib>
#include <cstring>
#include <regex>
#include <sstream>

#include "support/fake_cuda_state.hpp"

namespace jx::testing {
namespace {

using namespace runtime::cuda;

// Every entry point starts here: the books locked, an injected failure answered.
#define JX_FAKE_ENTRY(entry)        \
  FakeCudaState& s = active_fake(); \
  std::lock_guard lock(s.mutex);    \
  if (std::optional<int> failure = s.injected(entry)) return static_cast<CUresult>(*failure)

constexpr std::pair<CUresult, std::pair<const char*, const char*>> kErrors[] = {
    {CUDA_SUCCESS, {"CUDA_SUCCESS", "no error"}},
    {CUDA_ERROR_INVALID_VALUE, {"CUDA_ERROR_INVALID_VALUE", "invalid argument"}},
    {CUDA_ERROR_OUT_OF_MEMORY, {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"}},
    {CUDA_ERROR_NOT_INITIALIZED, {"CUDA_ERROR_NOT_INITIALIZED", "initialization error"}},
    {CUDA_ERROR_INVALID_CONTEXT, {"CUDA_ERROR_INVALID_CONTEXT", "invalid device context"}},
    {CUDA_ERROR_INVALID_PTX, {"CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"}},
    {CUDA_ERROR_INVALID_HANDLE, {"CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"}},
    {CUDA_ERROR_NOT_FOUND, {"CUDA_ERROR_NOT_FOUND", "named symbol not found"}},
    {CUDA_ERROR_ILLEGAL_ADDRESS,
     {"CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"}},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     {"CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing"}},
    {CUDA_ERROR_UNKNOWN, {"CUDA_ERROR_UNKNOWN", "unknown error"}},
};

const std::pair<const char*, const char*>* error_text(CUresult r) {
  for (const auto& [code, text] : kErrors)
    if (code == r) return &text;
  return nullptr;
}

std::uintptr_t address(CUdeviceptr p) { return static_cast<std::uintptr_t>(p); }

// The kernels of a PTX module: each .entry's parameters, marking the 64-bit ones (addresses).
std::map<std::string, std::vector<bool>> ptx_kernels(const std::string& ptx) {
  std::map<std::string, std::vector<bool>> out;
  static const std::regex entry(R"(\.entry\s+([A-Za-z_$][\w$]*)\s*\(([^)]*)\))");
  static const std::regex param(R"(\.param\s+\.(\w+))");
  for (std::sregex_iterator e(ptx.begin(), ptx.end(), entry), end; e != end; ++e) {
    std::vector<bool>& params = out[(*e)[1]];
    std::string list = (*e)[2];
    for (std::sregex_iterator p(list.begin(), list.end(), param); p != end; ++p)
      params.push_back((*p)[1] == "u64" || (*p)[1] == "b64" || (*p)[1] == "s64");
  }
  return out;
}

// The JIT option `option`'s value among cuModuleLoadDataEx's, or null.
void* jit_option(unsigned n, CUjit_option* options, void** values, CUjit_option option) {
  for (unsigned i = 0; i < n; ++i)
    if (options[i] == option) return values[i];
  return nullptr;
}

CUresult load_module(CUmodule* module, const void* image, unsigned n, CUjit_option* options,
                     void** values) {
  JX_FAKE_ENTRY("cuModuleLoadDataEx");
  std::string ptx = static_cast<const char*>(image);
  if (ptx.find(".version") == std::string::npos || ptx.find(".target") == std::string::npos) {
    if (char* log = static_cast<char*>(jit_option(n, options, values, CU_JIT_ERROR_LOG_BUFFER))) {
      auto size = reinterpret_cast<std::uintptr_t>(
          jit_option(n, options, values, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES));
      std::snprintf(log, size, "ptxas fatal   : not a PTX module (no .version or .target)");
    }
    return CUDA_ERROR_INVALID_PTX;
  }
  std::uint64_t m = s.make(HandleKind::kModule);
  s.handles[m].kernels = ptx_kernels(ptx);
  *module = s.as_handle<CUmodule>(m);
  return CUDA_SUCCESS;
}

CUresult module_function(CUfunction* function, CUmodule module, const char* name) {
  JX_FAKE_ENTRY("cuModuleGetFunction");
  FakeHandle* m = s.live(id(module), HandleKind::kModule, "cuModuleGetFunction");
  if (!m) return CUDA_ERROR_INVALID_HANDLE;
  if (!m->kernels.count(name)) return CUDA_ERROR_NOT_FOUND;
  std::uint64_t f = s.make(HandleKind::kFunction);
  s.handles[f].owner = id(module);
  s.handles[f].name = name;
  *function = s.as_handle<CUfunction>(f);
  return CUDA_SUCCESS;
}

CUresult launch(CUfunction function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                unsigned by, unsigned bz, unsigned, CUstream stream, void** params, void** extra) {
  JX_FAKE_ENTRY("cuLaunchKernel");
  FakeHandle* f = s.live(id(function), HandleKind::kFunction, "cuLaunchKernel");
  if (!f) return CUDA_ERROR_INVALID_HANDLE;
  std::string kernel = "kernel " + f->name;
  if (!s.handles.at(f->owner).live)
    return s.violate(CUDA_ERROR_INVALID_HANDLE, "cuLaunchKernel: " + kernel + " of module #" +
                                                    std::to_string(f->owner) +
                                                    ", which was unloaded");
  if (gx * gy * gz == 0 || bx * by * bz == 0 || bx * by * bz > 1024 || extra)
    return s.violate(CUDA_ERROR_INVALID_VALUE, "cuLaunchKernel: " + kernel +
                                                   " launched with grid " + std::to_string(gx) +
                                                   " and block " + std::to_string(bx * by * bz));
  FakeOp op{kernel, {}, nullptr};
  const std::vector<bool>& addresses = s.handles.at(f->owner).kernels.at(f->name);
  for (std::size_t k = 0; k < addresses.size(); ++k) {
    if (!addresses[k]) continue;
    std::uintptr_t p = 0;
    std::memcpy(&p, params[k], sizeof p);
    std::string what = kernel + "'s parameter " + std::to_string(k);
    if (p != 0 && !s.in_live_memory(p, 1, false, "cuLaunchKernel", what))
      return CUDA_ERROR_ILLEGAL_ADDRESS;
    if (p != 0) op.touches.push_back({p, 1});
  }
  if (!s.enqueue(id(stream), std::move(op), "cuLaunchKernel")) return CUDA_ERROR_INVALID_HANDLE;
  ++s.launches;
  return CUDA_SUCCESS;
}

CUresult mem_alloc(CUdeviceptr* out, std::size_t bytes, bool pinned) {
  void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  FakeCudaState& s = active_fake();
  auto& m = s.memory[reinterpret_cast<std::uintptr_t>(p)];
  m = {bytes, pinned, true, s.next_memory_id++};
  *out = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

CUresult mem_free(std::uintptr_t base, bool pinned, const char* entry) {
  FakeCudaState& s = active_fake();
  auto it = s.memory.find(base);
  std::string what = std::string(entry) + ": " + (pinned ? "host memory " : "device memory ");
  if (it == s.memory.end() || it->second.pinned != pinned)
    return s.violate(CUDA_ERROR_INVALID_VALUE,
                     what + "at " + hex(base) + " was never allocated by this library");
  if (!it->second.live)
    return s.violate(CUDA_ERROR_INVALID_VALUE,
                     what + "of allocation #" + std::to_string(it->second.id) + " freed twice");
  if (s.pending_uses(base))
    return s.violate(CUDA_ERROR_ILLEGAL_ADDRESS, what + "of allocation #" +
                                                     std::to_string(it->second.id) +
                                                     " freed while enqueued work still uses it");
  it->second.live = false;  // kept allocated: a later use of the address is recognized
  return CUDA_SUCCESS;
}

// Whether `stream` may be waited for: not while it is being captured.
CUresult waitable(FakeCudaState& s, std::uint64_t stream, const char* entry) {
  FakeHandle* h = s.live(stream, HandleKind::kStream, entry);
  if (!h) return CUDA_ERROR_INVALID_HANDLE;
  if (h->capturing)
    return s.violate(
        CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
        std::string(entry) + ": stream #" + std::to_string(stream) + " is being captured");
  return CUDA_SUCCESS;
}

// A copy between device and host memory. A pinned host side is read or written when the copy
// runs; a pageable one as the real driver does: read at once (upload), or the stream is
// waited for (download).
CUresult copy(void* dst, const void* src, std::size_t bytes, CUstream stream, bool to_device,
              bool from_device, const char* entry) {
  FakeCudaState& s = active_fake();
  auto d = reinterpret_cast<std::uintptr_t>(dst), from = reinterpret_cast<std::uintptr_t>(src);
  auto pinned = [&](std::uintptr_t p) {
    auto it = s.memory.upper_bound(p);
    return it != s.memory.begin() && std::prev(it)->second.pinned &&
           p < std::prev(it)->first + std::prev(it)->second.bytes;
  };
  FakeOp op{entry, {}, nullptr};
  if (to_device || pinned(d)) {
    if (!s.in_live_memory(d, bytes, !to_device, entry, "the destination"))
      return CUDA_ERROR_INVALID_VALUE;
    op.touches.push_back({d, bytes});
  }
  if (from_device || pinned(from)) {
    if (!s.in_live_memory(from, bytes, !from_device, entry, "the source"))
      return CUDA_ERROR_INVALID_VALUE;
    op.touches.push_back({from, bytes});
    op.run = [dst, src, bytes] { std::memmove(dst, src, bytes); };
  } else {
    auto snapshot = std::make_shared<std::vector<char>>(static_cast<const char*>(src),
                                                        static_cast<const char*>(src) + bytes);
    op.run = [dst, snapshot] { std::memcpy(dst, snapshot->data(), snapshot->size()); };
  }
  bool download_to_pageable = !to_device && !pinned(d);
  if (download_to_pageable) {
    if (CUresult r = waitable(s, id(stream), entry)) return r;
  }
  if (!s.enqueue(id(stream), std::move(op), entry)) return CUDA_ERROR_INVALID_HANDLE;
  if (download_to_pageable) s.drain(id(stream));
  return CUDA_SUCCESS;
}

CUresult begin_capture(CUstream stream, CUstreamCaptureMode) {
  JX_FAKE_ENTRY("cuStreamBeginCapture");
  if (CUresult r = waitable(s, id(stream), "cuStreamBeginCapture")) return r;
  s.handles.at(id(stream)).capturing = true;
  return CUDA_SUCCESS;
}

CUresult end_capture(CUstream stream, CUgraph* graph) {
  JX_FAKE_ENTRY("cuStreamEndCapture");
  FakeHandle* h = s.live(id(stream), HandleKind::kStream, "cuStreamEndCapture");
  if (!h) return CUDA_ERROR_INVALID_HANDLE;
  if (!h->capturing)
    return s.violate(
        CUDA_ERROR_INVALID_VALUE,
        "cuStreamEndCapture: stream #" + std::to_string(id(stream)) + " is not being captured");
  h->capturing = false;
  std::uint64_t g = s.make(HandleKind::kGraph);
  s.handles[g].ops = std::exchange(s.handles.at(id(stream)).captured, {});
  *graph = s.as_handle<CUgraph>(g);
  return CUDA_SUCCESS;
}

// Destroys handle `h` of `kind` (a second destroy is a violation).
CUresult destroy(std::uint64_t h, HandleKind kind, const char* entry) {
  FakeCudaState& s = active_fake();
  FakeHandle* handle = s.live(h, kind, entry);
  if (!handle) return CUDA_ERROR_INVALID_HANDLE;
  handle->live = false;
  return CUDA_SUCCESS;
}

DriverApi make_driver_api() {
  DriverApi a;
  a.cuInit = [](unsigned) { return CUDA_SUCCESS; };
  a.cuDriverGetVersion = [](int* v) {
    *v = 13000;
    return CUDA_SUCCESS;
  };
  a.cuGetErrorName = [](CUresult r, const char** name) {
    const auto* text = error_text(r);
    *name = text ? text->first : nullptr;
    return text ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  };
  a.cuGetErrorString = [](CUresult r, const char** str) {
    const auto* text = error_text(r);
    *str = text ? text->second : nullptr;
    return text ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  };
  a.cuDeviceGetCount = [](int* n) {
    *n = 8;
    return CUDA_SUCCESS;
  };
  a.cuDeviceGet = [](CUdevice* d, int ordinal) {
    if (ordinal < 0 || ordinal >= 8) return CUDA_ERROR_INVALID_VALUE;
    *d = ordinal;
    return CUDA_SUCCESS;
  };
  a.cuDeviceGetName = [](char* name, int size, CUdevice) {
    std::snprintf(name, static_cast<std::size_t>(size), "Fake GPU (host memory)");
    return CUDA_SUCCESS;
  };
  a.cuDeviceGetAttribute = [](int* v, CUdevice_attribute attribute, CUdevice) {
    switch (attribute) {
      case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *v = 9;
        break;
      case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *v = 0;
        break;
      case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *v = 132;
        break;
      case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
        *v = 32;
        break;
      case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        *v = 1024;
        break;
      default:
        *v = 48 << 10;
    }
    return CUDA_SUCCESS;
  };
  a.cuDeviceTotalMem = [](std::size_t* bytes, CUdevice) {
    *bytes = std::size_t{80} << 30;
    return CUDA_SUCCESS;
  };
  a.cuDevicePrimaryCtxRetain = [](CUcontext* ctx, CUdevice device) {
    JX_FAKE_ENTRY("cuDevicePrimaryCtxRetain");
    auto [it, fresh] = s.primary_contexts.emplace(device, 0);
    if (fresh) it->second = s.make(HandleKind::kContext);
    ++s.handles.at(it->second).refs;
    *ctx = s.as_handle<CUcontext>(it->second);
    return CUDA_SUCCESS;
  };
  a.cuDevicePrimaryCtxRelease = [](CUdevice device) {
    JX_FAKE_ENTRY("cuDevicePrimaryCtxRelease");
    auto it = s.primary_contexts.find(device);
    if (it == s.primary_contexts.end() || s.handles.at(it->second).refs == 0)
      return s.violate(CUDA_ERROR_INVALID_CONTEXT,
                       "cuDevicePrimaryCtxRelease: device " + std::to_string(device) +
                           "'s primary context released more often than retained");
    --s.handles.at(it->second).refs;
    return CUDA_SUCCESS;
  };
  a.cuCtxSetCurrent = [](CUcontext ctx) {
    JX_FAKE_ENTRY("cuCtxSetCurrent");
    FakeHandle* h = s.live(id(ctx), HandleKind::kContext, "cuCtxSetCurrent");
    if (!h) return CUDA_ERROR_INVALID_CONTEXT;
    if (h->refs == 0)
      return s.violate(CUDA_ERROR_INVALID_CONTEXT,
                       "cuCtxSetCurrent: context #" + std::to_string(id(ctx)) + " was released");
    return CUDA_SUCCESS;
  };
  a.cuCtxSynchronize = [] {
    JX_FAKE_ENTRY("cuCtxSynchronize");
    s.drain_all();
    return CUDA_SUCCESS;
  };
  a.cuModuleLoadDataEx = load_module;
  a.cuModuleUnload = [](CUmodule m) {
    JX_FAKE_ENTRY("cuModuleUnload");
    return destroy(id(m), HandleKind::kModule, "cuModuleUnload");
  };
  a.cuModuleGetFunction = module_function;
  a.cuLaunchKernel = launch;
  a.cuMemGetInfo = [](std::size_t* free, std::size_t* total) {
    *free = *total = std::size_t{80} << 30;
    return CUDA_SUCCESS;
  };
  a.cuMemAlloc = [](CUdeviceptr* p, std::size_t bytes) {
    JX_FAKE_ENTRY("cuMemAlloc");
    return mem_alloc(p, bytes, false);
  };
  a.cuMemFree = [](CUdeviceptr p) {
    JX_FAKE_ENTRY("cuMemFree");
    return mem_free(address(p), false, "cuMemFree");
  };
  a.cuMemAllocHost = [](void** p, std::size_t bytes) {
    JX_FAKE_ENTRY("cuMemAllocHost");
    CUdeviceptr d = 0;
    CUresult r = mem_alloc(&d, bytes, true);
    *p = reinterpret_cast<void*>(d);
    return r;
  };
  a.cuMemFreeHost = [](void* p) {
    JX_FAKE_ENTRY("cuMemFreeHost");
    return mem_free(reinterpret_cast<std::uintptr_t>(p), true, "cuMemFreeHost");
  };
  a.cuMemcpyHtoDAsync = [](CUdeviceptr dst, const void* src, std::size_t n, CUstream stream) {
    JX_FAKE_ENTRY("cuMemcpyHtoDAsync");
    return copy(reinterpret_cast<void*>(dst), src, n, stream, true, false, "cuMemcpyHtoDAsync");
  };
  a.cuMemcpyDtoHAsync = [](void* dst, CUdeviceptr src, std::size_t n, CUstream stream) {
    JX_FAKE_ENTRY("cuMemcpyDtoHAsync");
    return copy(dst, reinterpret_cast<void*>(src), n, stream, false, true, "cuMemcpyDtoHAsync");
  };
  a.cuMemcpyDtoDAsync = [](CUdeviceptr dst, CUdeviceptr src, std::size_t n, CUstream stream) {
    JX_FAKE_ENTRY("cuMemcpyDtoDAsync");
    return copy(reinterpret_cast<void*>(dst), reinterpret_cast<void*>(src), n, stream, true, true,
                "cuMemcpyDtoDAsync");
  };
  a.cuMemsetD8Async = [](CUdeviceptr dst, unsigned char value, std::size_t n, CUstream stream) {
    JX_FAKE_ENTRY("cuMemsetD8Async");
    if (!s.in_live_memory(address(dst), n, false, "cuMemsetD8Async", "the destination"))
      return CUDA_ERROR_INVALID_VALUE;
    auto* p = reinterpret_cast<void*>(dst);
    FakeOp op{"cuMemsetD8Async", {{address(dst), n}}, [p, value, n] { std::memset(p, value, n); }};
    return s.enqueue(id(stream), std::move(op), "cuMemsetD8Async") ? CUDA_SUCCESS
                                                                   : CUDA_ERROR_INVALID_HANDLE;
  };
  a.cuStreamCreate = [](CUstream* stream, unsigned) {
    JX_FAKE_ENTRY("cuStreamCreate");
    *stream = s.as_handle<CUstream>(s.make(HandleKind::kStream));
    return CUDA_SUCCESS;
  };
  a.cuStreamSynchronize = [](CUstream stream) {
    JX_FAKE_ENTRY("cuStreamSynchronize");
    if (CUresult r = waitable(s, id(stream), "cuStreamSynchronize")) return r;
    s.drain(id(stream));
    return CUDA_SUCCESS;
  };
  a.cuStreamDestroy = [](CUstream stream) {
    JX_FAKE_ENTRY("cuStreamDestroy");
    if (CUresult r = waitable(s, id(stream), "cuStreamDestroy")) return r;
    s.drain(id(stream));  // as the driver does: the work finishes, then the stream goes
    return destroy(id(stream), HandleKind::kStream, "cuStreamDestroy");
  };
  a.cuEventCreate = [](CUevent* event, unsigned flags) {
    JX_FAKE_ENTRY("cuEventCreate");
    std::uint64_t e = s.make(HandleKind::kEvent);
    s.handles.at(e).timing = (flags & CU_EVENT_DISABLE_TIMING) == 0;
    *event = s.as_handle<CUevent>(e);
    return CUDA_SUCCESS;
  };
  a.cuEventDestroy = [](CUevent event) {
    JX_FAKE_ENTRY("cuEventDestroy");
    return destroy(id(event), HandleKind::kEvent, "cuEventDestroy");
  };
  a.cuEventRecord = [](CUevent event, CUstream stream) {
    JX_FAKE_ENTRY("cuEventRecord");
    FakeHandle* e = s.live(id(event), HandleKind::kEvent, "cuEventRecord");
    if (!e || !s.live(id(stream), HandleKind::kStream, "cuEventRecord"))
      return CUDA_ERROR_INVALID_HANDLE;
    e->stream = id(stream);
    return CUDA_SUCCESS;
  };
  a.cuEventSynchronize = [](CUevent event) {
    JX_FAKE_ENTRY("cuEventSynchronize");
    FakeHandle* e = s.live(id(event), HandleKind::kEvent, "cuEventSynchronize");
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    if (e->stream == 0) return CUDA_SUCCESS;  // never recorded: complete
    // Waiting for the whole stream: at least as much as the event, as a GPU may have done.
    std::uint64_t stream = e->stream;
    if (CUresult r = waitable(s, stream, "cuEventSynchronize")) return r;
    s.drain(stream);
    return CUDA_SUCCESS;
  };
  // Every pair of recorded, completed timing events is kFakeEventMs apart on the fake device.
  a.cuEventElapsedTime = [](float* ms, CUevent start, CUevent end) {
    JX_FAKE_ENTRY("cuEventElapsedTime");
    FakeHandle* a0 = s.live(id(start), HandleKind::kEvent, "cuEventElapsedTime");
    FakeHandle* a1 = s.live(id(end), HandleKind::kEvent, "cuEventElapsedTime");
    if (!a0 || !a1 || !a0->timing || !a1->timing) return CUDA_ERROR_INVALID_HANDLE;
    if (a0->stream == 0 || a1->stream == 0) return CUDA_ERROR_INVALID_HANDLE;  // unrecorded
    if (FakeHandle* st = s.live(a1->stream, HandleKind::kStream, "cuEventElapsedTime");
        st && !st->pending.empty())
      return CUDA_ERROR_NOT_READY;
    *ms = kFakeEventMs;
    return CUDA_SUCCESS;
  };
  a.cuStreamBeginCapture = begin_capture;
  a.cuStreamEndCapture = end_capture;
  a.cuGraphInstantiate = [](CUgraphExec* exec, CUgraph graph, unsigned long long) {
    JX_FAKE_ENTRY("cuGraphInstantiate");
    FakeHandle* g = s.live(id(graph), HandleKind::kGraph, "cuGraphInstantiate");
    if (!g) return CUDA_ERROR_INVALID_HANDLE;
    std::vector<FakeOp> ops = g->ops;
    std::uint64_t e = s.make(HandleKind::kGraphExec);
    s.handles[e].ops = std::move(ops);
    *exec = s.as_handle<CUgraphExec>(e);
    return CUDA_SUCCESS;
  };
  a.cuGraphLaunch = [](CUgraphExec exec, CUstream stream) {
    JX_FAKE_ENTRY("cuGraphLaunch");
    FakeHandle* e = s.live(id(exec), HandleKind::kGraphExec, "cuGraphLaunch");
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    std::vector<FakeOp> ops = e->ops;
    for (FakeOp& op : ops)
      if (!s.enqueue(id(stream), std::move(op), "cuGraphLaunch")) return CUDA_ERROR_INVALID_HANDLE;
    ++s.graph_launches;
    return CUDA_SUCCESS;
  };
  a.cuGraphExecDestroy = [](CUgraphExec exec) {
    JX_FAKE_ENTRY("cuGraphExecDestroy");
    return destroy(id(exec), HandleKind::kGraphExec, "cuGraphExecDestroy");
  };
  a.cuGraphDestroy = [](CUgraph graph) {
    JX_FAKE_ENTRY("cuGraphDestroy");
    return destroy(id(graph), HandleKind::kGraph, "cuGraphDestroy");
  };
  return a;
}

}  // namespace

const DriverApi& fake_driver_api() {
  static const DriverApi api = make_driver_api();
  return api;
}

}  // namespace jx::testing
