// The CPU backend: kernels JIT-compiled with LLVM ORC, large dots through BLAS.
#include "backend/backend.hpp"

#include <mutex>

#include "codegen/cpu/cpu_isa.hpp"
#include "codegen/gpu/gpu_compiler.hpp"
#include "jx/config.hpp"
#include "runtime/cuda/context.hpp"
#include "support/check.hpp"

namespace jx::backend {

namespace {

class CpuBackend : public Backend {
 public:
  explicit CpuBackend(std::shared_ptr<const runtime::DeviceRuntime> runtime)
      : runtime_(std::move(runtime)) {}
  Device device() const override { return runtime_ ? runtime_->device() : cpu(); }

  void compile(const std::vector<codegen::KernelRequest>& requests, const std::string& module_name,
               const std::string& dump_prefix, CodeSlot code) override {
    codegen::CpuCompileOptions options;
    options.module_name = module_name;
    options.dump_prefix = dump_prefix;
    options.precise_math = config().precise_math;
    options.isa = config().cpu_isa;
    options.vector_width = config().cpu_vector_width;
    symbols_.clear();
    scratch_words_.clear();
    workspace_bytes_.clear();
    for (const codegen::KernelRequest& r : requests) {
      symbols_.push_back(r.symbol);
      scratch_words_.push_back(codegen::kernel_scratch_words(*r.root));
      workspace_bytes_.push_back(codegen::kernel_workspace_bytes(*r.root, options));
    }
    if (requests.empty()) return;
    if (code.load) {
      code_ = codegen::load_kernels(*code.load, symbols_);
      return;
    }
    code_ = codegen::compile_kernels(requests, options, code.save);
  }

  std::unique_ptr<runtime::Thunk> kernel_thunk(std::size_t index,
                                               std::vector<runtime::Allocation> buffers,
                                               std::int64_t rows) const override {
    const std::string& symbol = symbols_.at(index);
    auto fn = reinterpret_cast<runtime::KernelThunk::Fn>(code_->symbol(symbol));
    return std::make_unique<runtime::KernelThunk>(
        symbol, fn, std::move(buffers), rows, scratch_words_.at(index), workspace_bytes_.at(index));
  }

  std::unique_ptr<runtime::Thunk> convolution_thunk(runtime::LibraryConvolution) const override {
    JX_CHECK(false, "the CPU computes its convolutions in kernels");
    return nullptr;
  }
  bool dnn_convolutions() const override { return false; }

  std::unique_ptr<runtime::Thunk> gemm_thunk(runtime::LibraryGemm gemm) const override {
    return std::make_unique<runtime::GemmThunk>(std::move(gemm));
  }

  std::shared_ptr<const void> code() const override {
    return std::shared_ptr<const void>(code_, code_.get());
  }
  std::shared_ptr<const runtime::DeviceRuntime> runtime() const override { return runtime_; }

  std::string code_target() const override {
    const Config& cfg = config();
    const codegen::cpu::CpuIsa& isa = codegen::cpu::configured_cpu_isa();
    // The vectors, the caches' sizes and the cores: the matrix kernel's tiles and blocks, and
    // so the workspace its code addresses (a second-level panel's depth follows the last level).
    return "cpu " + isa.cpu + " " + isa.features +
           " vector_bytes=" + std::to_string(isa.vector_bytes) +
           " l2=" + std::to_string(isa.second_level_cache) +
           " llc=" + std::to_string(isa.last_level_cache) + " cores=" + std::to_string(isa.cores) +
           " precise_math=" + std::to_string(cfg.precise_math) +
           " parallel_min_bytes=" + std::to_string(cfg.cpu_parallel_min_bytes);
  }

 private:
  std::shared_ptr<const runtime::DeviceRuntime> runtime_;
  std::vector<std::string> symbols_;
  std::vector<std::int64_t> scratch_words_;    // per kernel (codegen::kernel_scratch_words)
  std::vector<std::int64_t> workspace_bytes_;  // per kernel (codegen::kernel_workspace_bytes)
  std::shared_ptr<codegen::CompiledKernels> code_;
};

}  // namespace

bool library_convolution(const hlo::Instruction& conv, Platform platform) {
  return platform == Platform::gpu && conv.opcode == hlo::Opcode::kConvolution;
}

bool library_gemm(const hlo::Instruction& dot, Platform platform) {
  if (platform == Platform::gpu) return codegen::gpu_dot_uses_cublas(dot);
  return codegen::dot_strategy(dot) == codegen::DotStrategy::kBlas;
}

bool library_gemm_epilogues(Platform platform) { return platform == Platform::gpu; }

bool fuses_gemm_epilogue(const hlo::Instruction& dot, DType out, Platform platform) {
  if (library_gemm_epilogues(platform))
    return out == float32 && dot.operands[0]->shape.dtype == float32 && library_gemm(dot, platform);
  return platform == Platform::cpu && codegen::kernel_applies_gemm_epilogue(dot, out);
}
bool reads_16bit_operands(const hlo::Instruction& product, Platform platform) {
  if (platform == Platform::gpu) return library_gemm(product, platform);
  return codegen::kernel_reads_bf16(product);
}

std::unique_ptr<Backend> make_cpu_backend(std::shared_ptr<const runtime::DeviceRuntime> runtime) {
  return std::make_unique<CpuBackend>(std::move(runtime));
}

namespace {
std::mutex factories_mutex;
BackendFactory factories[2];  // by Platform

std::vector<std::function<void(Platform)>>& change_listeners() {
  static auto* listeners = new std::vector<std::function<void(Platform)>>;  // filled at load
  return *listeners;
}
}  // namespace

void set_backend_factory(Platform platform, BackendFactory factory) {
  {
    std::lock_guard lock(factories_mutex);
    factories[static_cast<int>(platform)] = std::move(factory);
  }
  for (const auto& forget : change_listeners()) forget(platform);
}

void on_backend_factory_change(std::function<void(Platform)> forget) {
  std::lock_guard lock(factories_mutex);
  change_listeners().push_back(std::move(forget));
}

std::string code_target(const Device& device) { return make_backend(device)->code_target(); }
bool dnn_convolutions(const Device& device) { return make_backend(device)->dnn_convolutions(); }

std::unique_ptr<Backend> make_backend(const Device& device) {
  {
    std::lock_guard lock(factories_mutex);
    if (const BackendFactory& f = factories[static_cast<int>(device.platform())]) return f(device);
  }
  if (device.platform() == Platform::gpu)
    return make_gpu_backend(runtime::cuda::gpu_context(device.id()));
  return make_cpu_backend();
}

}  // namespace jx::backend
