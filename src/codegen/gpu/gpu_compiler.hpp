// The GPU backend's code generator: HLO kernels to PTX with LLVM's NVPTX target, no GPU or CUDA
// toolkit needed. No LLVM type appears here, so the rest of jx builds without LLVM headers; the
// runtime (src/runtime/cuda) loads the PTX and launches the kernels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/cpu/cpu_compiler.hpp"  // KernelRequest
#include "hlo/ir.hpp"

namespace jx::codegen {

// A compute capability, 6.0 or later. PTX is made for the newest architecture LLVM knows that is
// not newer (sm_90 at most): the driver compiles PTX for any later GPU.
struct GpuTarget {
  int major = 8, minor = 0;
};

// How to launch one kernel: a 1-D grid of 1-D blocks. Kernels are written for exactly these
// dims (their block size is built into their loops and shared memory); they use static shared
// memory only, so shared_bytes (dynamic shared memory) is 0 today.
struct GpuLaunch {
  std::int64_t grid = 1;  // blocks, at least 1
  int block = 1;          // threads per block, a multiple of 32, at most 256
  int shared_bytes = 0;
};

// One kernel of a PtxModule. ABI: `.entry symbol(ptr p0, ..., ptr pN)`, one pointer to device
// memory per buffer: the root's operands' buffers in operand order, then one buffer per output
// (a multi-output fusion has one per tuple element), as KernelRequest orders them. An output
// that aliases an operand (KernelRequest::output_aliases) is passed that operand's pointer
// again; the kernel writes it through the operand's parameter. Buffers need only their
// element's alignment. `symbol` is the request's symbol as a PTX name: every character but
// letters, digits, '_' and '$' replaced by '_', and a '_' put before a leading digit.
struct GpuKernel {
  std::string symbol;
  GpuLaunch launch;
};

struct GpuCompileOptions {
  GpuTarget target;
  std::string module_name = "jit";
  // When set: <prefix>.ir-no-opt.ll, <prefix>.ir-with-opt.ll and <prefix>.ptx.
  std::string dump_prefix;
  // libdevice's bitcode for the math functions: a path; empty = find_libdevice(); "none" (or
  // nothing found) = portable_math_table(), inline IR that calls nothing.
  std::string libdevice;
  int opt_level = 2;
};

struct PtxModule {
  std::string ptx;
  std::vector<GpuKernel> kernels;  // in request order
  bool libdevice = false;          // whether libdevice's math functions were linked in
  std::string arch;                // "sm_80"
};

// One PTX module holding a kernel per request (KernelRequest::partitioned is CPU-only and
// ignored). Each kernel is a grid-stride loop over its output elements (any fusion or
// instruction; a dot computes an element per thread), or, when its fusion allows, a cooperative
// kind: a block per row for reduces of at least 64 trailing elements and what reads them
// (softmax, layer norm; a few long rows of independent reduces get many blocks each), a block per
// 32 columns for reduces that keep the last dim, a transpose of the last two dims through
// shared-memory tiles (gpu/kernel_plan.hpp). Thread-safe. Throws jx::CompileError for what the GPU
// cannot compute (sort, control flow, tuples) and for unusable options.
PtxModule compile_ptx(const std::vector<KernelRequest>& kernels, const GpuCompileOptions& options);

// libdevice.10.bc: $JX_LIBDEVICE, then /usr/local/cuda/nvvm/libdevice/libdevice.10.bc, then
// /usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc, the first file that exists; "" when
// there is none.
std::string find_libdevice();

// Whether the GPU runs `dot` as a cuBLAS call: a matrix product (hlo::as_gemm, f32 or f64) big
// enough that a library GEMM pays for its launch. Any other dot is an emitted kernel, one
// thread per output element.
bool gpu_dot_uses_cublas(const hlo::Instruction& dot);

// Which kernels may share a launch with `kernel` and keep its plan: "" for a grid-stride loop
// over output elements (any others of those); for a kernel whose blocks share work (a
// reduction, a transpose, ...) its kind and its heroes' shapes.
std::string gpu_kernel_batch_key(const hlo::Instruction& kernel);

}  // namespace jx::codegen
