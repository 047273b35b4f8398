// The GPU backend: kernels compiled to PTX with LLVM's NVPTX target and loaded by the CUDA
// driver, which compiles them for the device; large dots through cuBLAS, with their
// bias and activation through cuBLASLt; convolutions through cuDNN where it loads.
#include "backend/backend.hpp"

#include <iterator>
#include <sstream>

#include "codegen/gpu/gpu_compiler.hpp"
#include "jx/errors.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/gpu/gpu_runtime.hpp"
#include "runtime/gpu/gpu_thunks.hpp"

namespace jx::backend {
namespace {

using runtime::cuda::GpuContext;

// A PtxModule as the persistent cache keeps it: a line per kernel ("symbol grid block
// shared_bytes"), an empty line, then the PTX.
std::string written_code(const codegen::PtxModule& ptx) {
  std::string out;
  for (const codegen::GpuKernel& k : ptx.kernels)
    out += k.symbol + " " + std::to_string(k.launch.grid) + " " + std::to_string(k.launch.block) +
           " " + std::to_string(k.launch.shared_bytes) + "\n";
  return out + "\n" + ptx.ptx;
}

codegen::PtxModule read_code(const std::string& code, std::size_t kernels) {
  codegen::PtxModule out;
  std::istringstream in(code);
  std::string line;
  while (std::getline(in, line) && !line.empty()) {
    std::istringstream fields(line);
    codegen::GpuKernel k;
    if (!(fields >> k.symbol >> k.launch.grid >> k.launch.block >> k.launch.shared_bytes))
      throw CompileError("gpu: a cached program's kernel line is malformed: " + line);
    out.kernels.push_back(std::move(k));
  }
  if (out.kernels.size() != kernels)
    throw CompileError("gpu: a cached program has " + std::to_string(out.kernels.size()) +
                       " kernels, its HLO " + std::to_string(kernels));
  out.ptx.assign(std::istreambuf_iterator<char>(in), {});
  return out;
}

class GpuBackend : public Backend {
 public:
  explicit GpuBackend(GpuContext& context)
      : context_(context), runtime_(std::make_shared<runtime::gpu::GpuRuntime>(context)) {}

  Device device() const override { return {Platform::gpu, context_.ordinal()}; }

  void compile(const std::vector<codegen::KernelRequest>& requests, const std::string& module_name,
               const std::string& dump_prefix, CodeSlot code) override {
    kernels_.clear();
    module_.reset();
    if (requests.empty()) return;
    codegen::PtxModule ptx;
    if (code.load) {
      ptx = read_code(*code.load, requests.size());
    } else {
      codegen::GpuCompileOptions options;
      options.target = {context_.compute_capability_major(), context_.compute_capability_minor()};
      options.module_name = module_name;
      options.dump_prefix = dump_prefix;
      ptx = codegen::compile_ptx(requests, options);
      if (code.save) *code.save = written_code(ptx);
    }
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

  std::unique_ptr<runtime::Thunk> convolution_thunk(
      runtime::LibraryConvolution conv) const override {
    return std::make_unique<runtime::gpu::CudnnConvolutionThunk>(context_, std::move(conv));
  }
  bool dnn_convolutions() const override { return context_.has_cudnn(); }

  std::shared_ptr<const void> code() const override { return module_; }
  std::shared_ptr<const runtime::DeviceRuntime> runtime() const override { return runtime_; }
  std::string code_target() const override {
    // With cuDNN, a program keeps convolutions that are patches and GEMMs without it.
    return "gpu sm_" + std::to_string(context_.compute_capability_major()) +
           std::to_string(context_.compute_capability_minor()) +
           (context_.has_cudnn() ? " cudnn" : "");
  }

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
