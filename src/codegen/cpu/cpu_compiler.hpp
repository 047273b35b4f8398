// The CPU backend's entry point: compiles HLO kernels to native code with LLVM ORC.
// No LLVM type appears here, so the rest of jx builds without LLVM headers.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/gemm.hpp"
#include "hlo/ir.hpp"

namespace jx::codegen {

namespace cpu {
struct CpuIsa;  // codegen/cpu/cpu_isa.hpp
}

class MathTable;  // codegen/elemental/math_table.hpp

// One kernel: computes `root` (an instruction or a fusion of the entry computation) into its
// output buffers. ABI: void symbol(void* const* buffers, int64_t begin, int64_t end), with
// buffers = root's operands' buffers, then one buffer per output (a multi-output fusion has
// one per tuple element), then, for a kernel with kernel_scratch_words(root) > 0, that many
// 64-bit words, zero when the run starts and shared by its calls (a tiled scan's tickets and
// prefixes), then, for one with kernel_workspace_bytes > 0, that many bytes of the call's own,
// 64-byte aligned and uninitialized (a matrix product's packed panels and block of lhs, rather
// than its stack). A partitioned kernel computes rows [begin, end) of its outputs (of
// kernel_rows(root)); any other computes everything and ignores begin and end, so its loops
// keep constant bounds.
struct KernelRequest {
  const hlo::Instruction* root;
  std::string symbol;
  bool partitioned = false;
  // Per output: the operand whose buffer it overwrites (the runtime passes the same pointer
  // twice), or -1. Only for operands the kernel reads at the output's own index.
  std::vector<int> output_aliases;
};

// How many independent rows a kernel for `root` has: the shared dimension 0 of its outputs (for
// a loop kernel or one of row reductions over the last dim, its leading dims together up to 64
// rows; for a matrix product of few rows, its column panels, and for one on AMX's tile unit, its
// units: gemm_column_panels), or 1 when they
// differ or are 0-d; for a prefix scan along
// dimension 0, its dimension 1 (which its kernel splits instead), along a later one the dims
// before it together; for a tiled scan, its tiles
// (codegen/cpu/prefix_scan.hpp); for an implicit-GEMM convolution, its product's rows
// (hlo::as_implicit_gemm).
std::int64_t kernel_rows(const hlo::Instruction& root);
// The scratch words a kernel for `root` takes after its buffers; 0 for most.
std::int64_t kernel_scratch_words(const hlo::Instruction& root);

// How the CPU backend computes a dot. A small or general one: a loop nest per output element,
// summed in order as the eager evaluator does. A matrix product (hlo::as_gemm) up to 2^28
// multiply-adds: a packed, register-blocked kernel of our own (gemm.hpp), which beats BLAS's
// fixed cost and threading there and runs on jx's own threads. Larger ones: the kernel too
// where it beats BLAS at any size (cpu::kernel_at_any_size: f32 with AVX2, 512-bit vectors at
// full rate); elsewhere a BLAS call (a GemmThunk, not a kernel).
enum class DotStrategy { kLoopNest, kBlockedKernel, kBlas };
DotStrategy dot_strategy(const hlo::Instruction& dot);
DotStrategy gemm_strategy(const hlo::GemmShape& gemm);
// The column panels a blocked kernel's product splits over the threads by (its kernel_rows,
// under --cpu_isa), or 0 when it splits by rows: a product of few rows and more columns; or, for
// one on AMX's tile unit, its units of a panel and a part of the rows of one product
// (cpu::amx_units).
std::int64_t gemm_column_panels(const cpu::CpuIsa& isa, const hlo::GemmShape& gemm);
// Whether the blocked kernel reads the bf16 operands of the f32 `product` as they are: as pairs
// (CpuIsa::bf16_pairs_pay, or few rows reading rhs in place: cpu::pairs_in_place) or on the
// tile unit (gemm_amx.hpp); else upcast-16bit-dots widens them first.
bool kernel_reads_bf16(const hlo::Instruction& product);
// Whether the blocked kernel computes `dot` with a dense layer's bias and activation applied as
// it stores its tiles, into an output of `out` (passes::GemmEpilogueFusion then makes one kernel
// of the three): f32 products of f32 operands, and the tile unit's (gemm_amx.hpp), which may
// round to a 16-bit output too (the vector kernel adds into its f32 output block by block).
bool kernel_applies_gemm_epilogue(const hlo::Instruction& dot, DType out);

struct CpuCompileOptions {
  int opt_level = 2;
  std::string module_name = "jit";
  std::string dump_prefix;          // when set: <prefix>.ir-no-opt.ll and <prefix>.ir-with-opt.ll
  const MathTable* math = nullptr;  // none: cpu_math_table(precise_math)
  bool precise_math = false;        // --precise_math
  std::string isa = "native";       // --cpu_isa: avx2, avx512 or native
  int vector_width = 0;             // --cpu_vector_width: 256 or 512 bits; 0, the ISA's
  // A core's second-level cache the kernels block for, bytes (0: the host's, CpuIsa): what a
  // host of another cache size would run.
  std::int64_t second_level_cache = 0;
  // The cores a kernel's rows split over, as the matrix kernel's plan counts them (0: the
  // host's, CpuIsa).
  int cores = 0;
  // Compile for AMX's tile unit whatever the host has (cpu::with_amx_tiles): the code a host with
  // it runs, compiled (not run) on any.
  bool amx_tiles = false;
};

namespace cpu {
// The CPU that kernels compiled under `options` are for.
CpuIsa compile_isa(const CpuCompileOptions& options);
}  // namespace cpu

// The workspace bytes each call of a kernel for `root`, compiled under `options`, takes after its
// buffers and scratch: a matrix kernel's (a dot's, or a convolution's); 0 for the others.
std::int64_t kernel_workspace_bytes(const hlo::Instruction& root, const CpuCompileOptions& options);

// Compiled code for a set of kernels. Destroying it frees the code (its ORC resource tracker).
class CompiledKernels {
 public:
  virtual ~CompiledKernels() = default;
  virtual void* symbol(const std::string& name) const = 0;
};

// Compiles `kernels` into one object and links it; `object`, when given, receives that
// relocatable object (ELF), which load_kernels links again in this process or another.
std::shared_ptr<CompiledKernels> compile_kernels(const std::vector<KernelRequest>& kernels,
                                                 const CpuCompileOptions& options,
                                                 std::string* object = nullptr);
// The version of the LLVM that compiles kernels, "19.1.7".
std::string llvm_version();

// Links an object compile_kernels wrote and finds `symbols` (its requests' symbols) in it.
// Throws jx::CompileError for an object that is not one or lacks a symbol.
std::shared_ptr<CompiledKernels> load_kernels(std::string_view object,
                                              const std::vector<std::string>& symbols);

}  // namespace jx::codegen
