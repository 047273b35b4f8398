// What the CPU computes a dot with, and how its blocked kernel tiles, blocks and splits it: the
// strategy (dot_strategy, cpu_compiler.hpp), the kernel's tile (TileShape) and blocks
// (GemmBlocking), which the kernel's emitter (gemm_emitter.hpp) and its row count (kernel_rows,
// gemm_column_panels) follow.
#pragma once

#include <algorithm>
#include <cstdint>

#include "codegen/cpu/cpu_compiler.hpp"
#include "codegen/cpu/cpu_isa.hpp"
#include "hlo/convolution.hpp"
#include "hlo/gemm.hpp"

namespace jx::codegen::cpu {

// The kernel's tile: `rows` of out by `columns`, summed in registers. Packing rhs into panels
// pays where many row tiles read each panel; a product of one tile of rows reads rhs where it
// lies instead, in a tile of all its rows and as many accumulators, and one of a few tiles
// (kFewTilesRows rows at most) in tiles of three vectors (RhsRead; but the wide tile's f32
// products that split by columns). Not a convolution's; a bf16 rhs (pairs) in place, never as dot
// products.
enum class RhsRead {
  kPacked,
  // rhs [k, n]: each step reads a run of an rhs row, the tile's columns, at least two vectors.
  // A run shorter than kLongRunBytes is read in blocks of kInPlaceDepth steps, each of which
  // passes over all the tile's panels: the next panel reads the next run of the same rows, which
  // the hardware prefetchers follow (one panel down all of k reads a new page every step). A core
  // with a smaller second level reads every run in blocks, as does one whose prefetchers stop at
  // a page (gemm_blocking). Past one tile, where a panel packed from rows 16 KiB apart (a line of
  // each) serves few tiles, tiles of three vectors (8 rows where 512-bit vectors run at full
  // rate, else 4) read in place too, up to kFewTilesRows; the wide tile's f32 products split by
  // columns pack instead, their first tiles packing first-level panels as they go (tile_shape).
  // The figures: docs/performance.md, "The kernel's plan, rule by rule".
  kInPlace,
  // rhs [n, k]: each of the tile's columns is an rhs row, contiguous along the contraction: an
  // accumulator per row and column takes a vector of steps at a time, its lanes summed at the
  // end (dot products). At least 4 columns, each its own stream.
  kDotProducts,
};
struct TileShape {
  int rows;
  std::int64_t columns;
  RhsRead rhs;
  // Vectors of `lanes` a row of the tile spans.
  int vectors(std::int64_t lanes) const { return static_cast<int>((columns + lanes - 1) / lanes); }
};
constexpr std::int64_t kTileRows = 6, kInPlaceDepth = 16, kLongRunBytes = 256;
// The most rows a product reads rhs in place for, in tiles of three vectors (RhsRead::kInPlace),
// but the wide tile's f32 products split by columns, and AVX2's f32 tile where the prefetchers
// stop at a page (tile_shape).
constexpr std::int64_t kFewTilesRows = 32, kFewTilesRowsAvx2 = 48;

// The tile for `g` on `isa` (`conv`: an implicit-GEMM convolution's, which always packs).
TileShape tile_shape(const CpuIsa& isa, const hlo::GemmShape& g, bool conv);

// Where the blocking packs panels by their first tile (first_tile_packs), that tile asks for
// each line of rhs this many steps before it reads it.
constexpr std::int64_t kPackLookahead = 16;

// How the kernel blocks a product of `tile`s: the contraction in blocks of `depth` steps (the
// packed panel's rows), the rows in blocks of `block_rows`, who packs each panel, whether the
// panels are kept for the blocks of rows after the first, and whether each block of lhs
// (block_rows by depth) is packed, a tile's rows of a step side by side. `conv`: an
// implicit-GEMM convolution's geometry, or null.
struct GemmBlocking {
  std::int64_t depth = 1, block_rows = 1;
  // Each panel's first tile reads its steps of rhs where they lie and writes them into the panel
  // that the other tiles read, rather than the panel being copied before them.
  bool first_tile_packs = false;
  // Each block of the contraction packs its full panels once, ahead, as its first block of rows
  // goes, into the kernel's workspace (full panels by depth steps of the tile's columns), and
  // its other blocks of rows read them there: BLIS's packed block of rhs. Each tile of a panel
  // packs a share of the next panel's steps and prefetches the next tile's share into the
  // second level.
  bool keep_panels = false;
  bool pack_lhs = false;
  // rhs's rows are exactly the tile's columns (n of one to all of the tile's vectors, plain f32
  // or f64): rhs is already every panel of any depth, which the tiles read where it lies, with
  // nothing packed.
  bool rhs_is_panel = false;
};
GemmBlocking gemm_blocking(const CpuIsa& isa, const hlo::GemmShape& g, const TileShape& tile,
                           const hlo::ImplicitGemm* conv);

// Elements of one packed panel of `depth` steps of the tile's vectors (bf16 pairs: 16-bit
// elements, the depth rounded up to a whole pair).
std::int64_t panel_elements(const CpuIsa& isa, const hlo::GemmShape& g, const TileShape& tile,
                            std::int64_t depth);

// The kernel's own memory, in its call's workspace: the kept panels (GemmBlocking::keep_panels),
// the packed panel and the packed block of lhs, each at a byte offset that is a multiple of 64
// (-1: the kernel has none). They are not on the stack, where a block of lhs (256 KiB) would
// not fit a thread of a small one (a fiber's, or musl's 128 KiB).
struct GemmWorkspace {
  std::int64_t kept = -1, panel = -1, lhs_block = -1;
  std::int64_t bytes = 0;
};
GemmWorkspace gemm_workspace(const CpuIsa& isa, const hlo::GemmShape& g,
                             const hlo::ImplicitGemm* conv);

// Whether the vector kernel reads the bf16 rhs of an f32 product of few rows in place, each
// pair of its rows interleaved in registers (RhsRead::kInPlace), rather than the tile unit or a
// widened copy taking it: products memory-bound on rhs, which is then read once, at 2 bytes an
// element. Up to 8 rows (3 where a tile unit takes more); every few-rows product where AVX-512
// BF16 multiplies pairs and no tile unit does.
bool pairs_in_place(const CpuIsa& isa, const hlo::GemmShape& g);

// AMX's tile unit (gemm_amx.hpp) computes the f32 products of bf16 matrices (batched or not,
// either operand stored transposed or not) on a core with AMX-BF16 that the OS lets use it
// (CpuIsa::amx_bf16), but those pairs_in_place takes. Each of its tiles takes 32 steps of the
// contraction; its blocks are 32 rows by a panel of 32 columns, packed a pair of steps interleaved
// (kAmxPanelRowBytes) a row. A product splits over the threads by units of a panel and a part of
// the rows of one product of the batch (amx_units): the rows in as many parts as make kAmxMinUnits
// units, or one where the products' panels alone do, each call packing the panels of its units.
bool amx_computes(const CpuIsa& isa, const hlo::GemmShape& g);
constexpr std::int64_t kAmxTileSteps = 32, kAmxPanelColumns = 32, kAmxBlockRows = 32;
constexpr std::int64_t kAmxPanelRowBytes = kAmxPanelColumns * 2 * 2;
constexpr std::int64_t kAmxMinUnits = 16;  // the cores a product of few columns splits over
inline std::int64_t amx_padded_depth(const hlo::GemmShape& g) {
  return (g.k + kAmxTileSteps - 1) / kAmxTileSteps * kAmxTileSteps;
}
inline std::int64_t amx_panels(const hlo::GemmShape& g) {
  return (g.n + kAmxPanelColumns - 1) / kAmxPanelColumns;
}
inline std::int64_t amx_row_blocks(const hlo::GemmShape& g) {
  return (g.m + kAmxBlockRows - 1) / kAmxBlockRows;
}
inline std::int64_t amx_row_parts(const hlo::GemmShape& g) {
  std::int64_t units = g.batch * amx_panels(g);
  return std::min(amx_row_blocks(g), (kAmxMinUnits + units - 1) / units);
}
// Unit u: panel u % amx_panels of row part u / amx_panels % amx_row_parts of product
// u / (amx_panels · amx_row_parts).
inline std::int64_t amx_units(const hlo::GemmShape& g) {
  return g.batch * amx_row_parts(g) * amx_panels(g);
}
// A call's workspace: a group of `panels` panels packed for a block of `steps` steps (pairs
// interleaved, `panel_bytes` each) at 0, then a block of 32 rows of lhs for those steps packed in
// tile order (zero-padded), then sums of 32 x 32 f32: one block's where the steps are all of the
// padded depth, else, `carried` from one block of steps to the next, every block of rows' of a
// part for each panel of the group; each at a multiple of 64.
struct AmxWorkspace {
  std::int64_t steps, panels, panel_bytes, lhs_block, sums, bytes;
  bool carried;
};
AmxWorkspace amx_workspace(const hlo::GemmShape& g);

// Whether the kernel beats BLAS at any size on `isa` for products of `dtype` (else BLAS takes
// the largest products).
bool kernel_at_any_size(const CpuIsa& isa, DType dtype);

}  // namespace jx::codegen::cpu
