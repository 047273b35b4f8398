// What differs between the CPU and the GPU when a program becomes an Executable: how kernels are
// compiled and launched, how library GEMMs are called, and where buffers live. The rest of
// building an executable (schedule, buffers, control flow, copies) is shared (compile.cpp).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "codegen/cpu/cpu_compiler.hpp"
#include "jx/device.hpp"
#include "runtime/thunks.hpp"

namespace jx::runtime::cuda {
class GpuContext;
}  // namespace jx::runtime::cuda

namespace jx::backend {

// Where one compile's native code comes from or goes (the persistent compilation cache): loaded
// from `load` instead of compiled when set; else compiled, and written to `save` when set. The
// code is the backend's own: the CPU's relocatable object, the GPU's PTX and launches.
struct CodeSlot {
  const std::string* load = nullptr;
  std::string* save = nullptr;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;

  // Compiles one program's kernels; `dump_prefix` (may be empty) names its LLVM/PTX dumps.
  virtual void compile(const std::vector<codegen::KernelRequest>& requests,
                       const std::string& module_name, const std::string& dump_prefix,
                       CodeSlot code) = 0;
  // The thunk of compiled request `index`, over its operands' and outputs' buffers.
  virtual std::unique_ptr<runtime::Thunk> kernel_thunk(std::size_t index,
                                                       std::vector<runtime::Allocation> buffers,
                                                       std::int64_t rows) const = 0;
  virtual std::unique_ptr<runtime::Thunk> gemm_thunk(runtime::LibraryGemm gemm) const = 0;
  // The thunk of a convolution the backend's DNN library computes (where dnn_convolutions()).
  virtual std::unique_ptr<runtime::Thunk> convolution_thunk(
      runtime::LibraryConvolution conv) const = 0;
  // Whether convolutions run through a DNN library here (cuDNN, where it loads): the pipeline
  // then keeps those the library computes (passes::PipelineOptions::dnn_convolutions).
  virtual bool dnn_convolutions() const = 0;
  // What keeps the compiled code alive, and the device runtime (null for the host).
  virtual std::shared_ptr<const void> code() const = 0;
  virtual std::shared_ptr<const runtime::DeviceRuntime> runtime() const = 0;
  // What compiled code depends on besides the program (the persistent cache's key): the
  // target (the CPU's features, a GPU's architecture) and the flags that change code.
  virtual std::string code_target() const = 0;
};

// A fresh backend for one program on `device` (compile holds that program's code).
std::unique_ptr<Backend> make_backend(const Device& device);

// The CPU's backend. With a runtime, its programs keep their buffers in that runtime's memory,
// which the host must be able to address: how tests run the device paths without a device.
std::unique_ptr<Backend> make_cpu_backend(
    std::shared_ptr<const runtime::DeviceRuntime> runtime = nullptr);

// The GPU's backend over `context` (make_backend uses the process's context of the device).
std::unique_ptr<Backend> make_gpu_backend(runtime::cuda::GpuContext& context);

// The code_target of `device`'s backend.
std::string code_target(const Device& device);
// Whether `device`'s backend runs convolutions through a DNN library (Backend::dnn_convolutions).
bool dnn_convolutions(const Device& device);

// Makes `make_backend` use `factory` for `platform`'s devices (nullptr: the built-in backend).
using BackendFactory = std::function<std::unique_ptr<Backend>(const Device&)>;
void set_backend_factory(Platform platform, BackendFactory factory);

// Calls `forget(platform)` after every set_backend_factory: what keeps programs built by a
// platform's backends (the eager operations' cache) drops them with the backend that built them.
void on_backend_factory_change(std::function<void(Platform)> forget);

// Whether `conv` runs through `platform`'s DNN library (cuDNN) instead of as a kernel: on the GPU,
// one in the library's form (the pipeline leaves no other convolution there).
bool library_convolution(const hlo::Instruction& conv, Platform platform);
// Whether `dot` runs as a library GEMM (BLAS, cuBLAS) on `platform` instead of a kernel.
bool library_gemm(const hlo::Instruction& dot, Platform platform);
// Whether `platform`'s GEMM library applies a bias and an activation as it writes (cuBLASLt):
// then a dot's epilogue fuses into its call (passes::GemmEpilogueFusion).
bool library_gemm_epilogues(Platform platform);
// Whether `dot` takes a dense layer's bias and activation, with an output of `out`, into the code
// that computes it: the library call where library_gemm_epilogues (f32 operands and output),
// the CPU's blocked kernel, which applies them as it stores its tiles.
bool fuses_gemm_epilogue(const hlo::Instruction& dot, DType out, Platform platform);
// Whether `product`, an f32 product of bf16 or f16 operands, reads them as they are: cuBLAS's
// (on tensor cores), or the CPU's blocked kernel for bf16 where bf16 pairs pay
// (cpu::CpuIsa::bf16_pairs_pay: AVX-512 BF16 on AMD's cores), a few rows read rhs in place
// (cpu::pairs_in_place), or AMX's tile unit computes it (codegen::kernel_reads_bf16). Otherwise
// they are converted to f32 first (passes::Upcast16BitDots).
bool reads_16bit_operands(const hlo::Instruction& product, Platform platform);

}  // namespace jx::backend
