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
  const LibraryGemm& g = gemm_;
  void* lhs = ctx.resolve(g.lhs);
  void* rhs = ctx.resolve(g.rhs);
  void* out = ctx.resolve(g.out);
  if (!g.has_epilogue()) return context_.gemm(g.shape, lhs, rhs, out);
  context_.gemm_epilogue(g.shape, lhs, rhs, out, g.activation,
                         g.bias ? ctx.resolve(*g.bias) : nullptr);
}

void CudnnConvolutionThunk::execute(const ExecutionContext& ctx) const {
  context_.convolve(conv_.conv, ctx.resolve(conv_.lhs), ctx.resolve(conv_.rhs),
                    ctx.resolve(conv_.out));
}

}  // namespace jx::runtime::gpu
