// FakeCuda's books: handles, memory checks, streams that run their work when waited for, and the
// end-of-life check; FakeCudaGpus, which puts the GPU backend on top of it.
#include "support/fake_cuda.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <sstream>

#include "support/fake_cuda_state.hpp"

namespace jx::testing {
namespace {

FakeCudaState* active = nullptr;
// Handle numbers are unique across fakes too: a stale handle from an earlier test is recognized.
std::atomic<std::uint64_t> next_handle{0x10000};

}  // namespace

std::string hex(std::uintptr_t address) {
  std::ostringstream os;
  os << "0x" << std::hex << address;
  return os.str();
}

const char* kind_name(HandleKind kind) {
  switch (kind) {
    case HandleKind::kContext:
      return "context";
    case HandleKind::kStream:
      return "stream";
    case HandleKind::kEvent:
      return "event";
    case HandleKind::kModule:
      return "module";
    case HandleKind::kFunction:
      return "function";
    case HandleKind::kGraph:
      return "graph";
    case HandleKind::kGraphExec:
      return "graph exec";
    case HandleKind::kCublas:
      return "cuBLAS handle";
    case HandleKind::kCublasLt:
      return "cuBLASLt handle";
    case HandleKind::kLtMatmulDesc:
      return "cuBLASLt matmul descriptor";
    case HandleKind::kLtLayout:
      return "cuBLASLt layout";
    case HandleKind::kLtPreference:
      return "cuBLASLt preference";
    case HandleKind::kCudnn:
      return "cuDNN handle";
    case HandleKind::kCudnnTensor:
      return "cuDNN tensor descriptor";
    case HandleKind::kCudnnFilter:
      return "cuDNN filter descriptor";
    case HandleKind::kCudnnConvolution:
      return "cuDNN convolution descriptor";
  }
  return "handle";
}

FakeCudaState& active_fake() {
  if (!active) FAIL("a CUDA entry point was called with no FakeCuda alive");
  return *active;
}

std::uint64_t FakeCudaState::make(HandleKind kind) {
  std::uint64_t id = next_handle.fetch_add(16);
  handles[id].kind = kind;
  return id;
}

FakeHandle* FakeCudaState::live(std::uint64_t id, HandleKind kind, const char* entry) {
  auto it = handles.find(id);
  std::string name = std::string(kind_name(kind)) + " #" + std::to_string(id);
  if (it == handles.end() || it->second.kind != kind) {
    violations.push_back(std::string(entry) + ": " + name + " was never created");
    return nullptr;
  }
  if (!it->second.live) {
    bool unloads = kind == HandleKind::kModule;
    violations.push_back(std::string(entry) + ": " + name + " was " +
                         (unloads ? "unloaded" : "destroyed"));
    return nullptr;
  }
  return &it->second;
}

std::optional<int> FakeCudaState::injected(const char* entry) {
  auto it = failures.find(entry);
  if (it == failures.end()) return std::nullopt;
  int result = it->second;
  failures.erase(it);
  return result;
}

bool FakeCudaState::in_live_memory(std::uintptr_t address, std::size_t bytes, bool pinned_ok,
                                   const char* entry, const std::string& what) {
  if (bytes == 0) return true;
  std::string where = std::string(entry) + ": " + what + " at " + hex(address);
  auto it = memory.upper_bound(address);
  if (it == memory.begin() || address >= std::prev(it)->first + std::prev(it)->second.bytes) {
    violations.push_back(where + " is not device memory");
    return false;
  }
  const FakeMemory& m = std::prev(it)->second;
  std::string block = "allocation #" + std::to_string(m.id);
  if (m.pinned && !pinned_ok) {
    violations.push_back(where + " is pinned host memory (" + block + "), not device memory");
    return false;
  }
  if (!m.live) {
    violations.push_back(where + " lies in " + block + ", which was freed");
    return false;
  }
  if (address + bytes > std::prev(it)->first + m.bytes) {
    violations.push_back(where + " (" + std::to_string(bytes) + " bytes) reaches past the end of " +
                         block + " (" + std::to_string(m.bytes) + " bytes)");
    return false;
  }
  return true;
}

bool FakeCudaState::enqueue(std::uint64_t stream, FakeOp op, const char* entry) {
  FakeHandle* s = live(stream, HandleKind::kStream, entry);
  if (!s) return false;
  if (s->capturing)
    s->captured.push_back(std::move(op));
  else
    s->pending.push_back(std::move(op));
  return true;
}

void FakeCudaState::drain(std::uint64_t stream) {
  FakeHandle& s = handles.at(stream);
  while (!s.pending.empty()) {
    FakeOp op = std::move(s.pending.front());
    s.pending.pop_front();
    bool ok = true;
    for (auto [address, bytes] : op.touches)
      ok = in_live_memory(address, bytes, true, "stream work", op.what) && ok;
    if (ok && op.run) op.run();
  }
}

void FakeCudaState::drain_all() {
  for (auto& [id, h] : handles)
    if (h.kind == HandleKind::kStream && h.live) drain(id);
}

bool FakeCudaState::pending_uses(std::uintptr_t base) const {
  const FakeMemory& m = memory.at(base);
  for (const auto& [id, h] : handles)
    for (const FakeOp& op : h.pending)
      for (auto [address, bytes] : op.touches)
        if (address < base + m.bytes && address + bytes > base) return true;
  return false;
}

FakeCuda::FakeCuda() : state_(std::make_unique<FakeCudaState>()) {
  REQUIRE(active == nullptr);
  active = state_.get();
  state_->handles[0].kind = HandleKind::kStream;  // the null stream, always there
}

FakeCuda::~FakeCuda() {
  std::vector<std::string> problems = violations();
  for (const std::string& leak : leaks()) problems.push_back("leaked: " + leak);
  for (const std::string& p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());
  for (auto& [base, m] : state_->memory) std::free(reinterpret_cast<void*>(base));
  active = nullptr;
}

runtime::cuda::CudaLibraries FakeCuda::libraries() const {
  return {&fake_driver_api(), &fake_cublas_api, &fake_cublas_lt_api,
          state_->cudnn_missing ? &missing_cudnn_api : &fake_cudnn_api};
}

std::vector<std::string> FakeCuda::violations() const {
  std::lock_guard lock(state_->mutex);
  return state_->violations;
}

std::vector<std::string> FakeCuda::take_violations() {
  std::lock_guard lock(state_->mutex);
  return std::exchange(state_->violations, {});
}

std::vector<std::string> FakeCuda::leaks() const {
  std::lock_guard lock(state_->mutex);
  std::vector<std::string> out;
  for (const auto& [base, m] : state_->memory)
    if (m.live)
      out.push_back(std::string(m.pinned ? "pinned " : "") + "allocation #" + std::to_string(m.id) +
                    " (" + std::to_string(m.bytes) + " bytes)");
  for (const auto& [id, h] : state_->handles)
    if (h.live && id != 0 && h.kind != HandleKind::kFunction && h.kind != HandleKind::kContext)
      out.push_back(std::string(kind_name(h.kind)) + " #" + std::to_string(id));
  for (const auto& [device, id] : state_->primary_contexts)
    if (state_->handles.at(id).refs > 0)
      out.push_back("the primary context of device " + std::to_string(device) + " (retained " +
                    std::to_string(state_->handles.at(id).refs) + " time(s))");
  return out;
}

std::vector<GemmRecord> FakeCuda::gemms() const {
  std::lock_guard lock(state_->mutex);
  return state_->gemms;
}

std::vector<ConvolutionRecord> FakeCuda::convolutions() const {
  std::lock_guard lock(state_->mutex);
  return state_->convolutions;
}

void FakeCuda::remove_cudnn() {
  std::lock_guard lock(state_->mutex);
  state_->cudnn_missing = true;
}

int FakeCuda::launches() const {
  std::lock_guard lock(state_->mutex);
  return state_->launches;
}

int FakeCuda::graph_launches() const {
  std::lock_guard lock(state_->mutex);
  return state_->graph_launches;
}

void FakeCuda::fail_next(const std::string& entry, runtime::cuda::CUresult result) {
  std::lock_guard lock(state_->mutex);
  state_->failures[entry] = static_cast<int>(result);
}

FakeCudaGpus::FakeCudaGpus() {
  backend::set_backend_factory(
      Platform::gpu, [this](const Device& d) { return backend::make_gpu_backend(context(d)); });
}

FakeCudaGpus::~FakeCudaGpus() { destroy_contexts(); }

runtime::cuda::GpuContext& FakeCudaGpus::context(const Device& device) {
  for (const auto& c : contexts_)
    if (c->ordinal() == device.id()) return *c;
  contexts_.push_back(std::make_unique<runtime::cuda::GpuContext>(fake_.libraries(), device.id()));
  return *contexts_.back();
}

void FakeCudaGpus::destroy_contexts() {
  backend::set_backend_factory(Platform::gpu, nullptr);
  contexts_.clear();
}

}  // namespace jx::testing
