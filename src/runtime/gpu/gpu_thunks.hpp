// The GPU's own thunks: a launch of a PTX kernel and a cuBLAS GEMM, both enqueued on the
// device's stream. Copies, loops, conditionals and sorts are the host's thunks, which move
// bytes through ExecutionContext and so work on any device.
#pragma once

#include <string>
#include <vector>

#include "codegen/gpu/gpu_compiler.hpp"
#include "runtime/cuda/driver_api.hpp"
#include "runtime/thunks.hpp"

namespace jx::runtime::cuda {
class GpuContext;
}  // namespace jx::runtime::cuda

namespace jx::runtime::gpu {

class GpuKernelThunk : public Thunk {
 public:
  GpuKernelThunk(cuda::GpuContext& context, std::string name, cuda::CUfunction function,
                 codegen::GpuLaunch launch, std::vector<Allocation> buffers)
      : context_(context),
        name_(std::move(name)),
        function_(function),
        launch_(launch),
        buffers_(std::move(buffers)) {}
  void execute(const ExecutionContext& ctx) const override;
  std::string str() const override;

 private:
  cuda::GpuContext& context_;
  std::string name_;
  cuda::CUfunction function_;
  codegen::GpuLaunch launch_;
  std::vector<Allocation> buffers_;
};

// The GEMM through cuBLAS, or cuBLASLt when it has an epilogue.
class CublasGemmThunk : public Thunk {
 public:
  CublasGemmThunk(cuda::GpuContext& context, LibraryGemm gemm)
      : context_(context), gemm_(std::move(gemm)) {}
  void execute(const ExecutionContext& ctx) const override;
  std::string str() const override { return "cublas gemm " + gemm_.str(); }

 private:
  cuda::GpuContext& context_;
  LibraryGemm gemm_;
};

// The convolution through cuDNN.
class CudnnConvolutionThunk : public Thunk {
 public:
  CudnnConvolutionThunk(cuda::GpuContext& context, LibraryConvolution conv)
      : context_(context), conv_(std::move(conv)) {}
  void execute(const ExecutionContext& ctx) const override;
  std::string str() const override { return "cudnn convolution " + conv_.str(); }

 private:
  cuda::GpuContext& context_;
  LibraryConvolution conv_;
};

}  // namespace jx::runtime::gpu
