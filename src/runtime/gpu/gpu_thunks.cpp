#include "runtime/gpu/gpu_thunks.hpp"

#include "runtime/cuda/context.hpp"

namespace jx::runtime::gpu {

void GpuKernelThunk::execute(const ExecutionContext& ctx) const {
  ResolvedBuffers buffers(ctx, buffers_);
  // cuLaunchKernel takes the address of each parameter's value; the values are the pointers.
  void* params_small[16];
  std::vector<void*> params_heap;
  void** params = params_small;
  if (buffers_.size() > std::size(params_small)) {
    params_heap.resize(buffers_.size());
    params = params_heap.data();
  }
  for (std::size_t k = 0; k < buffers_.size(); ++k) params[k] = &buffers.data()[k];
  context_.launch(function_, {static_cast<unsigned>(launch_.grid)},
                  {static_cast<unsigned>(launch_.block)},
                  static_cast<unsigned>(launch_.shared_bytes), params);
}

std::string GpuKernelThunk::str() const {
  std::string s = "launch " + name_ + "(";
  for (std::size_t i = 0; i < buffers_.size(); ++i) s += (i ? ", " : "") + buffers_[i].str();
  return s + ") grid=" + std::to_string(launch_.grid) + " block=" + std::to_string(launch_.block);
}

void CublasGemmThunk::execute(const ExecutionContext& ctx) const {
  context_.gemm(shape_, ctx.resolve(lhs_), ctx.resolve(rhs_), ctx.resolve(out_));
}

std::string CublasGemmThunk::str() const {
  const hlo::GemmShape& g = shape_;
  return "cublas gemm " + name_ + "(" + lhs_.str() + ", " + rhs_.str() + ", " + out_.str() +
         ") " + std::string(dtype_name(g.dtype)) + " batch=" + std::to_string(g.batch) +
         " m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) +
         (g.transpose_lhs ? " lhs^T" : "") + (g.transpose_rhs ? " rhs^T" : "");
}

}  // namespace jx::runtime::gpu
