// A strict stand-in for the CUDA driver, cuBLAS, cuBLASLt and cuDNN, in host memory, so that the
// GPU runtime's own code (GpuContext, the GPU backend, its thunks, CUDA graphs) runs without a GPU.
// Device memory is host memory; work enqueued on a stream runs when the host waits for it, not
// before; GEMMs and convolutions compute (and are recorded); kernels are checked but not run (PTX
// cannot run here). Every handle is tracked: a use after release, a double release, a launch, copy
// or GEMM outside live memory, or a wait on a stream being captured is a violation, answered with
// the error code the real driver gives and recorded; so is whatever is still live at the end.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "runtime/cuda/context.hpp"

namespace jx::testing {

// One cuBLAS or cuBLASLt GEMM as the library was asked for it (column-major terms).
struct GemmRecord {
  std::string library;  // "cuBLAS" or "cuBLASLt"
  runtime::cuda::cublasComputeType_t compute_type{};
  runtime::cuda::cudaDataType_t data_type{};          // of the product
  runtime::cuda::cudaDataType_t operand_data_type{};  // of its operands
  int m = 0, n = 0, k = 0, batch = 1;
  unsigned epilogue = 1;  // cuBLASLt's (CUBLASLT_EPILOGUE_DEFAULT for cuBLAS)
};

// One cuDNN forward convolution as the library ran it: the algorithm and math type it ran with,
// its groups, the filter's format and the (batch, feature, spatial...) dims of x, w and y.
struct ConvolutionRecord {
  int algo = -1;
  runtime::cuda::cudnnMathType_t math{};
  int groups = 1;
  runtime::cuda::cudnnTensorFormat_t format{};
  std::vector<int> x_dims, w_dims, y_dims;
};

struct FakeCudaState;

// The libraries' state while it lives; one at a time. Not thread-safe beyond what jx does (one
// thread enqueues at a time, under the context's locks).
class FakeCuda {
 public:
  FakeCuda();
  // Fails the running test (Catch CHECK) on a violation or leak nobody took.
  ~FakeCuda();
  FakeCuda(const FakeCuda&) = delete;
  FakeCuda& operator=(const FakeCuda&) = delete;

  runtime::cuda::CudaLibraries libraries() const;

  // What went wrong so far, in order, each naming the entry point: "cuModuleGetFunction: module
  // #3 was unloaded". take_violations empties the list (for tests that provoke them).
  std::vector<std::string> violations() const;
  std::vector<std::string> take_violations();
  // What is still live: "allocation #5 (4096 bytes)", "module #3", "stream #2", ...
  std::vector<std::string> leaks() const;

  std::vector<GemmRecord> gemms() const;
  std::vector<ConvolutionRecord> convolutions() const;
  // From now on, contexts made over libraries() find no cuDNN, as a machine without it.
  void remove_cudnn();
  int launches() const;  // kernel launches enqueued
  int graph_launches() const;
  // Makes the next call of `entry` ("cuModuleUnload") return `result` and do nothing else.
  void fail_next(const std::string& entry, runtime::cuda::CUresult result);

 private:
  std::unique_ptr<FakeCudaState> state_;
};

// While alive, programs for GPUs compile with the real GPU backend (PTX, cuBLAS thunks, CUDA
// graphs) onto one GpuContext per device over a FakeCuda. Destroying it drops the context and
// then checks the fake: nothing violated, nothing leaked.
// What cuEventElapsedTime reports between any two events on the fake device: a profiler span
// of this length is the device's time, not the host's.
inline constexpr float kFakeEventMs = 0.5f;

class FakeCudaGpus {
 public:
  FakeCudaGpus();
  ~FakeCudaGpus();
  FakeCudaGpus(const FakeCudaGpus&) = delete;
  FakeCudaGpus& operator=(const FakeCudaGpus&) = delete;

  FakeCuda& fake() { return fake_; }
  // The context of `device` (made on first use), as the backends use it.
  runtime::cuda::GpuContext& context(const Device& device);
  // Takes the fake GPUs away now: their backend is replaced, which drops the programs built on
  // them (jit wrappers of one function share theirs for the process's life), and their contexts
  // are destroyed. The leak check then runs on what they left.
  void destroy_contexts();

 private:
  FakeCuda fake_;
  std::vector<std::unique_ptr<runtime::cuda::GpuContext>> contexts_;
};

}  // namespace jx::testing
