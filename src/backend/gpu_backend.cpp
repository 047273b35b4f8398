// The GPU backend: kernels compiled to PTX with LLVM's NVPTX target and loaded by the CUDA
// driver, which compiles them for the device; large dots through cuBLAS, with their
// bias and activation through cuBLASLt.
#include "backend/backend.hpp"
#include "codegen/gpu/gpu_compiler.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/gpu/gpu_runtime.hpp"
#include "runtime/gpu/gpu_thunks.hpp"

namespace jx::backend {
namespace {

using runtime::cuda::GpuContext;

class GpuBackend : public Backend {
 public:
  explicit GpuBackend(GpuContext& context)
      : context_(context), runtime_(std::make_shared<runtime::gpu::GpuRuntime>(context)) {}

  Device device() const override { return {Platform::gpu, context_.ordinal()}; }

  void compile(const std::vector<codegen::KernelRequest>& requests, const std::string& module_name,
               const std::string& dump_prefix) override {
    kernels_.clear();
    module_.reset();
    if (requests.empty()) return;
    codegen::GpuCompileOptions options;
    options.target = {context_.compute_capability_major(), context_.compute_capability_minor()};
    options.module_name = module_name;
    options.dump_prefix = dump_prefix;
    codegen::PtxModule ptx = codegen::compile_ptx(requests, options);
    // Shared by every executable that launches its kernels: unloaded with the last of them.
    module_ = std::make_shared<const runtime::cuda::Module>(context_.load_ptx(ptx.ptx));
    for (const codegen::GpuKernel& k : ptx.kernels)
      kernels_.push_back({k, context_.function(*module_, k.symbol)});
  }

  std::unique_ptr<runtime::Thunk> kernel_thunk(std::size_t index,
                                               std::vector<runtime::Allocation> buffers,
                                               std::int64_t) const override {
    const Kernel& k = kernels_.at(index);
    return std::make_unique<runtime::gpu::GpuKernelThunk>(context_, k.info.symbol, k.function,
                                                          k.info.launch, std::move(buffers));
  }

  std::unique_ptr<runtime::Thunk> gemm_thunk(runtime::LibraryGemm gemm) const override {
    return std::make_unique<runtime::gpu::CublasGemmThunk>(context_, std::move(gemm));
  }

  std::shared_ptr<const void> code() const override { return module_; }
  std::shared_ptr<const runtime::DeviceRuntime> runtime() const override { return runtime_; }

 private:
  struct Kernel {
    codegen::GpuKernel info;
    runtime::cuda::CUfunction function;
  };
  GpuContext& context_;
  std::shared_ptr<runtime::gpu::GpuRuntime> runtime_;
  std::shared_ptr<const runtime::cuda::Module> module_;
  std::vector<Kernel> kernels_;
};

}  // namespace

std::unique_ptr<Backend> make_gpu_backend(GpuContext& context) {
  return std::make_unique<GpuBackend>(context);
}

}  // namespace jx::backend
