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

class CublasGemmThunk : public Thunk {
 public:
  CublasGemmThunk(cuda::GpuContext& context, std::string name, hlo::GemmShape shape,
                  Allocation lhs, Allocation rhs, Allocation out)
      : context_(context), name_(std::move(name)), shape_(shape), lhs_(lhs), rhs_(rhs), out_(out) {}
  void execute(const ExecutionContext& ctx) const override;
  std::string str() const override;

 private:
  cuda::GpuContext& context_;
  std::string name_;
  hlo::GemmShape shape_;
  Allocation lhs_, rhs_, out_;
};

}  // namespace jx::runtime::gpu
