#include "codegen/cpu/gemm_plan.hpp"

#include <algorithm>
#include <optional>

#include "jx/config.hpp"

namespace jx::codegen {
namespace {

// Below this many multiply-adds per product the element loop nest beats any kernel's setup.
constexpr std::int64_t kMinGemmMacs = 16 * 16 * 16;
// Above this many in all, BLAS is as fast or faster where the kernel does not beat it at any
// size (kernel_at_any_size): AVX-512 split in two 256-bit halves (Zen 4: 0.85x OpenBLAS on one
// core at 2048^3, with a first-level panel) and SSE (never timed).
constexpr std::int64_t kMaxBlockedMacs = std::int64_t{1} << 28;

}  // namespace

namespace cpu {

TileShape tile_shape(const CpuIsa& isa, const hlo::GemmShape& g, bool conv) {
  auto lanes = static_cast<std::int64_t>(isa.vector_bytes / itemsize(g.dtype));
  auto needed = static_cast<int>((g.n + lanes - 1) / lanes);
  // Two vectors (BLIS's 6x16 with AVX2, 6x32 with AVX-512), four where 512-bit operations run
  // at full rate (not for bf16 pairs).
  int widest = isa.full_width_512 && g.operand_dtype != bfloat16 ? 4 : 2;
  auto accumulators = static_cast<int>(widest * kTileRows);
  auto rows = static_cast<int>(std::min<std::int64_t>(g.m, accumulators));
  if (!conv && g.operand_dtype == g.dtype && g.m == rows) {
    constexpr int kMinRunVectors = 2, kMinDotColumns = 4;
    int per_row = accumulators / rows;
    if (!g.transpose_rhs && per_row >= kMinRunVectors)
      return {rows, std::min(needed, per_row) * lanes, RhsRead::kInPlace};
    if (g.transpose_rhs && !g.transpose_lhs && per_row >= kMinDotColumns)
      return {rows, std::min<std::int64_t>(g.n, per_row), RhsRead::kDotProducts};
  }
  return {static_cast<int>(std::min(kTileRows, g.m)), std::clamp(needed, 1, widest) * lanes,
          RhsRead::kPacked};
}

bool panel_in_second_level(const CpuIsa& isa, const hlo::GemmShape& g, int tile_vectors,
                           bool conv) {
  // AVX2's panel is one line of each rhs row it packs: down 4096 steps of a product split by
  // columns, that is a page a line, for few row tiles to read (Zen 5, f32 [16, 4096] x
  // [4096, 4096], one core: 9.2 -> 15.8 ms), where a first-level panel takes 256 steps at a time.
  if (conv) return false;
  return tile_vectors > 2 || (isa.vector_bytes == 32 && gemm_column_panels(isa, g) == 0);
}

bool kernel_at_any_size(const CpuIsa& isa, DType dtype) {
  // 512-bit vectors at full rate: twice OpenBLAS's 256-bit kernels. AVX2's f32 tile over a
  // second-level panel: level with OpenBLAS's Haswell kernels or ahead (Zen 5 under
  // --cpu_isa=avx2, one core, GMAC/s against sgemm alone: n = 1024 65.3 against 63.7, 2048 63.3
  // against 63.5, 4096 63.7 against 64.3; docs/performance.md). Its f64 tile fell behind dgemm
  // at 2048 (29.7-30.3 against 31.7-32.0 GMAC/s).
  return isa.full_width_512 || (isa.vector_bytes == 32 && dtype == float32);
}

}  // namespace cpu

std::int64_t gemm_column_panels(const cpu::CpuIsa& isa, const hlo::GemmShape& g) {
  // Split by rows, every thread packs and reads all of rhs; by columns, every thread reads all
  // of lhs. Columns, where they make at least as many parts as the rows' tiles: then rhs is the
  // larger operand (n of at least 2.7 m with AVX2's tile, 10.7 m with the wide one).
  // Zen 5, two threads, f32 [m, 4096] x [4096, 4096], ms: m = 1 4.3 -> 2.1, m = 16 5.7 -> 3.2,
  // m = 256 22.2 -> 19.4-19.9 (docs/performance.md).
  if (g.batch != 1) return 0;
  cpu::TileShape tile = cpu::tile_shape(isa, g, false);
  std::int64_t panels = (g.n + tile.columns - 1) / tile.columns;
  std::int64_t row_tiles = (g.m + tile.rows - 1) / tile.rows;
  return panels > 1 && panels >= row_tiles ? panels : 0;
}

DotStrategy gemm_strategy(const hlo::GemmShape& g) {
  if (g.m * g.n * g.k < kMinGemmMacs) return DotStrategy::kLoopNest;
  // An f32 product of bf16 operands (kept so by upcast-16bit-dots where the CPU multiplies bf16
  // pairs): the kernel at any size, as BLAS has no such product.
  if (g.operand_dtype == bfloat16 && g.dtype == float32) return DotStrategy::kBlockedKernel;
  // Other 16-bit operands reach the CPU as f32 products: any other mix is a loop nest.
  if (g.operand_dtype != g.dtype) return DotStrategy::kLoopNest;
  if (g.macs() > kMaxBlockedMacs &&
      !cpu::kernel_at_any_size(cpu::cpu_isa(config().cpu_isa), g.dtype))
    return DotStrategy::kBlas;
  return DotStrategy::kBlockedKernel;
}

DotStrategy dot_strategy(const hlo::Instruction& dot) {
  std::optional<hlo::GemmShape> g = hlo::as_gemm(dot);
  return g ? gemm_strategy(*g) : DotStrategy::kLoopNest;
}

bool kernel_applies_gemm_epilogue(const hlo::Instruction& dot) {
  return hlo::fits_gemm_epilogue(dot) && dot_strategy(dot) == DotStrategy::kBlockedKernel;
}

}  // namespace jx::codegen
