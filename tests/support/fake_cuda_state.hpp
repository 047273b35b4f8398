// FakeCuda's books, shared by its driver (fake_cuda_driver.cpp), its cuBLAS and cuBLASLt
// (fake_cublas.cpp) and its cuDNN (fake_cudnn.cpp): handles, memory, streams of pending work,
// captured graphs, violations.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "support/fake_cuda.hpp"

namespace jx::testing {

// A piece of enqueued work: the memory it touches (checked live when it runs) and what it does.
struct FakeOp {
  std::string what;
  std::vector<std::pair<std::uintptr_t, std::size_t>> touches;
  std::function<void()> run;
};

enum class HandleKind {
  kContext,
  kStream,
  kEvent,
  kModule,
  kFunction,
  kGraph,
  kGraphExec,
  kCublas,
  kCublasLt,
  kLtMatmulDesc,
  kLtLayout,
  kLtPreference,
  kCudnn,
  kCudnnTensor,
  kCudnnFilter,
  kCudnnConvolution,
};
const char* kind_name(HandleKind kind);

// Anything the libraries hand out. Handles are numbers that are never reused, so a stale one
// is always recognized.
struct FakeHandle {
  HandleKind kind;
  bool live = true;
  std::uint64_t owner = 0;  // a function's module, a stream's context
  std::string name;         // a function's kernel
  std::vector<FakeOp> ops;  // a graph's or executable graph's work
  // A module's kernels: name → for each parameter, whether it is 64 bits (an address).
  std::map<std::string, std::vector<bool>> kernels;
  std::uint64_t stream = 0;                        // an event's last stream, cuBLAS's stream
  bool timing = true;                              // an event made without CU_EVENT_DISABLE_TIMING
  std::map<int, std::int64_t> values;              // cuBLASLt descriptors' attributes, by number
  std::map<std::string, std::vector<int>> arrays;  // cuDNN descriptors' values, by name
  std::deque<FakeOp> pending;                      // a stream's enqueued work
  bool capturing = false;
  std::vector<FakeOp> captured;
  int refs = 0;  // a primary context's retains
};

struct FakeMemory {
  std::size_t bytes = 0;
  bool pinned = false;  // cuMemAllocHost's
  bool live = true;
  std::uint64_t id = 0;
};

struct FakeCudaState {
  std::recursive_mutex mutex;
  std::map<std::uint64_t, FakeHandle> handles;
  std::map<std::uintptr_t, FakeMemory> memory;    // by base address, freed ones kept
  std::map<int, std::uint64_t> primary_contexts;  // by device
  std::vector<std::string> violations;
  std::vector<GemmRecord> gemms;
  std::vector<ConvolutionRecord> convolutions;
  bool cudnn_missing = false;
  int launches = 0, graph_launches = 0;
  std::uint64_t next_memory_id = 1;
  std::map<std::string, int> failures;  // injected: entry → result

  // A fresh handle of `kind` (as the library's pointer type).
  std::uint64_t make(HandleKind kind);
  template <class T>
  T as_handle(std::uint64_t id) const {
    return reinterpret_cast<T>(static_cast<std::uintptr_t>(id));
  }
  template <class T>
  static std::uint64_t id_of(T handle) {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(handle));
  }
  // The live handle `id` of `kind`, or null after recording "<entry>: <kind> #id was ..."
  FakeHandle* live(std::uint64_t id, HandleKind kind, const char* entry);
  // Records a violation; returns `result` for the caller to give back.
  template <class R>
  R violate(R result, const std::string& message) {
    violations.push_back(message);
    return result;
  }
  // The injected failure of `entry`, consumed.
  std::optional<int> injected(const char* entry);

  // Whether [address, address + bytes) lies in one live allocation (device or pinned); a
  // violation naming `entry` and `what` when not.
  bool in_live_memory(std::uintptr_t address, std::size_t bytes, bool pinned_ok, const char* entry,
                      const std::string& what);
  // Enqueues on `stream` (or into its capture), or records a violation for a dead stream.
  bool enqueue(std::uint64_t stream, FakeOp op, const char* entry);
  // Runs a stream's pending work, oldest first, checking that what each op touches is live.
  void drain(std::uint64_t stream);
  void drain_all();
  // Whether any pending work on any stream touches the allocation at `base`.
  bool pending_uses(std::uintptr_t base) const;
};

std::string hex(std::uintptr_t address);  // "0x7f..."

// A library handle's number, and an address as a number: what the fake libraries' books key on.
template <class T>
std::uint64_t id(T handle) {
  return FakeCudaState::id_of(handle);
}
inline std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// How a fake library's entry point starts: the books locked, as `s`.
#define JX_FAKE_LIBRARY_ENTRY       \
  FakeCudaState& s = active_fake(); \
  std::lock_guard lock(s.mutex)

FakeCudaState& active_fake();  // the live FakeCuda's state; fails the test when there is none

// The tables FakeCuda hands out (fake_cuda_driver.cpp, fake_cublas.cpp).
const runtime::cuda::DriverApi& fake_driver_api();
const runtime::cuda::CublasApi& fake_cublas_api();
const runtime::cuda::CublasLtApi& fake_cublas_lt_api();
const runtime::cuda::CudnnApi& fake_cudnn_api();     // fake_cudnn.cpp
const runtime::cuda::CudnnApi& missing_cudnn_api();  // throws cuDNN's "unavailable" error

}  // namespace jx::testing
