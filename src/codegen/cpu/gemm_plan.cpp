#include "codegen/cpu/gemm_plan.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

#include "jx/config.hpp"

// Each rule below says why in a line or two; what it was measured against is in
// docs/performance.md, "The kernel's plan, rule by rule", under the rule's name.

namespace jx::codegen {
namespace {

// Below this many multiply-adds per product the element loop nest beats any kernel's setup.
constexpr std::int64_t kMinGemmMacs = 16 * 16 * 16;
// Above this many in all, BLAS is as fast or faster where the kernel does not beat it at any
// size (kernel_at_any_size).
constexpr std::int64_t kMaxBlockedMacs = std::int64_t{1} << 28;

// Products over a block of the contraction at a time: the rhs panel of that depth, packed, stays
// in the first-level cache (the wide tile's in the second) while every row tile reads it. A
// first-level panel standing in for a second-level one is packed once for many row tiles: it
// takes three quarters of the first level.
constexpr std::int64_t kPanelBytes = 16 << 10, kL1ForL2PanelBytes = 24 << 10,
                       kL2PanelBytes = 256 << 10, kLhsBlockBytes = 256 << 10,
                       kTlbReachBytes = 4 << 20, kKeptPanelsBytes = 8 << 20, kPageBytes = 4096;

// The tile unit's kernel packs its panels a group of this many bytes at a time, every block of
// rows passing over the group.
constexpr std::int64_t kAmxGroupBytes = 1 << 20;
// Where the panels of a group take a block of the steps, the sums that blocks of rows carry from
// one block of steps to the next take at most this many bytes (where one panel's fit).
constexpr std::int64_t kAmxCarriedSumsBytes = 512 << 10;

// Steps of a transposed lhs whose rows lie `stride` bytes apart that a block may hold: half the
// lines of a 1 MiB, 16-way second-level cache that such addresses can occupy (16 sets, so 128
// steps, at 4 KiB).
std::int64_t transposed_lhs_depth(std::int64_t stride) {
  constexpr std::int64_t kWays = 16, kLine = 64, kSets = 1024;
  std::int64_t sets = std::min(kSets, kSets * kLine / std::gcd(stride, kSets * kLine));
  return kWays * sets / 2;
}

// Whether the packed panel would stay in the second-level cache, every row of the product
// passing over it: the wide tile's, and AVX2's 6x16 where the product splits by rows; not a
// convolution's. Split by columns, a panel down all of k would read a page a step for few row
// tiles: a first-level panel, packed by its first tile as it goes (`tiles_pack`), takes 128 or
// 256 steps at a time instead; a transposed rhs, packed whole, keeps the second-level panel.
bool wants_second_level_panel(const cpu::CpuIsa& isa, int tile_vectors, bool column_split,
                              bool tiles_pack, bool conv) {
  if (conv) return false;
  if (column_split) return tile_vectors > 2 && !tiles_pack;
  return tile_vectors > 2 || isa.vector_bytes == 32;
}

// Whether the second level holds four such panels. With less, the panel and lhs streaming past
// it evict each other, and lhs comes from the last level, which such cores reach more slowly: a
// first-level panel keeps a block of lhs in the second level instead.
bool second_level_fits_panel(const cpu::CpuIsa& isa) {
  return isa.second_level_cache >= 4 * kL2PanelBytes;
}

// Whether a product of `panels` column panels and `m` rows in tiles of `tile_rows` splits over
// the threads by those panels (gemm_column_panels): split by rows, every thread packs and reads
// all of rhs; by columns, every thread reads all of lhs. Columns, where they make at least as
// many parts as the rows' tiles: then rhs is the larger operand.
bool splits_by_columns(std::int64_t panels, std::int64_t m, std::int64_t tile_rows) {
  return panels > 1 && panels >= (m + tile_rows - 1) / tile_rows;
}

}  // namespace

namespace cpu {

// A tile of 6 rows of two vectors (BLIS's 6x16 with AVX2; 6x32 with AVX-512): 12 accumulators,
// the panel's row and a broadcast in 15 registers. Where 512-bit operations run at full rate, 6
// rows of four vectors (24 accumulators, 29 registers): each broadcast of lhs feeds four
// multiply-adds, and a convolution of 64 out features reads its image once. bf16 pairs keep two.
TileShape tile_shape(const CpuIsa& isa, const hlo::GemmShape& g, bool conv) {
  auto lanes = static_cast<std::int64_t>(isa.vector_bytes / itemsize(g.dtype));
  auto needed = static_cast<int>((g.n + lanes - 1) / lanes);
  int widest = isa.full_width_512 && g.operand_dtype != bfloat16 ? 4 : 2;
  auto accumulators = static_cast<int>(widest * kTileRows);
  auto rows = static_cast<int>(std::min<std::int64_t>(g.m, accumulators));
  // bf16 pairs read in place too, interleaved in registers, but take no dot products.
  bool pairs = g.operand_dtype == bfloat16;
  if (!conv && (g.operand_dtype == g.dtype || pairs)) {
    constexpr int kMinRunVectors = 2, kMinDotColumns = 4, kFewTilesRunVectors = 3;
    int per_row = accumulators / rows;
    if (g.m == rows && !g.transpose_rhs && per_row >= kMinRunVectors)
      return {rows, std::min(needed, per_row) * lanes, RhsRead::kInPlace};
    if (g.m == rows && g.transpose_rhs && !g.transpose_lhs && per_row >= kMinDotColumns && !pairs)
      return {rows, std::min<std::int64_t>(g.n, per_row), RhsRead::kDotProducts};
    // The wide tile's f32 products that its packed tiles would split by columns
    // (gemm_column_panels) pack past one tile of rows: their first tiles pack first-level panels
    // as they go (gemm_blocking). In place runs ahead on one thread (and f64's on two), but one
    // kernel serves any count of threads, and jx runs on every core unless told.
    std::int64_t packed_panels = (g.n + widest * lanes - 1) / (widest * lanes);
    bool packs_by_columns =
        widest == 4 && g.dtype == float32 && splits_by_columns(packed_panels, g.m, kTileRows);
    // AVX2's f32 tile packs first-level panels a line of each rhs row a step, which prefetchers
    // that stop at a page do not follow: in place pays for more rows there.
    bool avx2_f32 = isa.vector_bytes == 32 && g.operand_dtype == float32 && !isa.zen;
    if (g.m <= (avx2_f32 ? kFewTilesRowsAvx2 : kFewTilesRows) && !packs_by_columns &&
        g.batch == 1 && !g.transpose_rhs)
      return {accumulators / kFewTilesRunVectors, std::min(needed, kFewTilesRunVectors) * lanes,
              RhsRead::kInPlace};
  }
  return {static_cast<int>(std::min(kTileRows, g.m)), std::clamp(needed, 1, widest) * lanes,
          RhsRead::kPacked};
}

GemmBlocking gemm_blocking(const CpuIsa& isa, const hlo::GemmShape& g, const TileShape& tile,
                           const hlo::ImplicitGemm* conv) {
  std::int64_t lanes = isa.vector_bytes / itemsize(g.dtype);
  int tile_vectors = tile.vectors(lanes);
  bool pairs = g.operand_dtype == bfloat16;
  // The panel (depth rows of the tile's width) fills half of a 32 KiB first-level cache, and
  // the block of lhs it meets (block_rows rows of depth) a quarter of a 1 MiB second. The wide
  // tile's panel (and AVX2's split by rows) stays in the second level instead, every row passing
  // over it: each tile loads and stores its share of out 8 times less often. A convolution's wide
  // tile keeps a first-level panel of two thirds of 48 KiB (its row blocks keep their image in
  // the second level). bf16 operands: pairs of contraction steps, each panel vector two steps of
  // its columns interleaved (half the bytes per step), depth even so that no block splits a pair.
  std::int64_t operand_bytes = itemsize(g.operand_dtype);
  std::int64_t tile_width = tile_vectors * lanes * operand_bytes;
  bool column_split = gemm_column_panels(isa, g) > 0;
  bool tiles_pack = tile.rhs == RhsRead::kPacked && !pairs && !g.transpose_rhs && !conv;
  bool wants_l2 =
      wants_second_level_panel(isa, tile_vectors, column_split, tiles_pack, conv != nullptr);
  bool panel_in_l2 = wants_l2 && second_level_fits_panel(isa);
  // A product that would pass every row over a second-level panel, on a core whose second level
  // is too small for one: it takes a first-level panel, and the choices below measured for it.
  bool l1_for_l2 = wants_l2 && !panel_in_l2;
  std::int64_t panel_bytes = panel_in_l2        ? kL2PanelBytes
                             : tile_vectors > 2 ? 2 * kPanelBytes
                             : l1_for_l2        ? kL1ForL2PanelBytes
                                                : kPanelBytes;
  bool rhs_is_panel = tiles_pack && g.n == tile.columns;
  // The tiles over a packed first-level panel make it ready as they go (first_tile_packs,
  // keep_panels), where rhs rows lie apart, a line of each in a panel. So does a second-level
  // panel whose rhs rows lie within a page of each other: its first tile's copy overlaps its
  // multiply-adds, where a copy ahead would hold up every thread's first tile (rows a page or
  // more apart, a page a step, keep the copy ahead).
  bool rows_within_page = g.n * operand_bytes < kPageBytes;
  bool packs_as_it_goes =
      tiles_pack && !rhs_is_panel &&
      ((column_split && !panel_in_l2) || l1_for_l2 || (panel_in_l2 && rows_within_page));
  auto rows_of_block = [&](std::int64_t depth) {
    std::int64_t rows = panel_in_l2 ? g.m : std::min(g.m, kLhsBlockBytes / (depth * operand_bytes));
    return (std::max<std::int64_t>(rows, 1) + tile.rows - 1) / tile.rows * tile.rows;
  };
  GemmBlocking b;
  b.rhs_is_panel = rhs_is_panel;
  // Read in place, rhs has no panel to keep in a cache (RhsRead); dot products take all of k.
  switch (tile.rhs) {
    case RhsRead::kPacked:
      b.depth = std::min<std::int64_t>(g.k, panel_bytes / tile_width);
      // Every row passes over a second-level panel, lhs streaming from the last-level cache
      // once a panel: its block of depth steps for all rows must fit in a quarter of it, or
      // each panel reads lhs from memory again.
      if (panel_in_l2)
        b.depth = std::min(b.depth, std::max(kPanelBytes / tile_width,
                                             isa.last_level_cache / 4 / (g.m * operand_bytes)));
      break;
    case RhsRead::kInPlace:
      // A long run down all of k reads a page a step; a core whose second level is too small for
      // a second-level panel reads it in blocks too, as does one whose prefetchers stop at a page.
      b.depth = tile_width < kLongRunBytes || !second_level_fits_panel(isa) || !isa.zen
                    ? std::min(g.k, kInPlaceDepth)
                    : g.k;
      break;
    case RhsRead::kDotProducts:
      b.depth = g.k;
      break;
  }
  // Each block of rows packs every panel again: where a call's rows (a core's share of a product
  // split by rows) make more than one block, every panel is packed once and kept (8 MiB at
  // most), and the tiles read the next one from where it is kept, in order.
  std::int64_t kept_depth =
      std::min(b.depth, std::max<std::int64_t>(kKeptPanelsBytes / (g.n * operand_bytes), 1));
  // (Split by columns or by batches, a call computes all of a product's rows.)
  std::int64_t call_rows = column_split || g.batch > 1 ? g.m : (g.m + isa.cores - 1) / isa.cores;
  b.keep_panels = packs_as_it_goes && g.n >= tile.columns && call_rows > rows_of_block(kept_depth);
  if (b.keep_panels) b.depth = kept_depth;
  // Packing a first-level panel reads a line of each of its rows of rhs, every row on pages of
  // its own once rows lie a page or more apart: the address translations of a panel's rows must
  // stay within the second-level TLB's reach (1536 pages of 4 KiB on Zen 1 and Skylake).
  else if (tile.rhs == RhsRead::kPacked && l1_for_l2 && !g.transpose_rhs)
    b.depth = std::min(
        b.depth, std::max<std::int64_t>(kTlbReachBytes / (g.n * operand_bytes), pairs ? 2 : 1));
  // A transposed lhs holds a tile's rows of one step in one line, and its steps a row of lhs
  // apart: where that is a multiple of 4 KiB they fall in few cache sets, and a deep block
  // evicts its own lines before the next row tile reads them again.
  if (g.transpose_lhs && !conv)
    b.depth = std::min(b.depth, transposed_lhs_depth(g.m * operand_bytes));
  if (pairs && b.depth < g.k) b.depth = b.depth / 2 * 2;
  // A convolution's blocks hold whole runs (of its last step axis), or whole parts of one.
  if (conv) {
    std::int64_t c = conv->run().size;
    if (b.depth >= c) {
      b.depth = b.depth / c * c;
    } else {
      while (c % b.depth) --b.depth;
    }
  }
  b.block_rows = rows_of_block(b.depth);
  // Packing a first-level panel ahead would wait on memory (rhs rows lie apart, a line of each
  // in a panel), and lines asked for a whole panel ahead, rows a power of two apart, fall in few
  // sets and are evicted first: the first tile reads each line kPackLookahead steps after asking
  // for it, and writes the panel as it goes. Kept panels are still packed by the tiles of the
  // panel before, each a share of the steps. (A transposed lhs's depth may have made one block
  // of rows: nothing to keep.)
  b.keep_panels = b.keep_panels && call_rows > b.block_rows;
  b.first_tile_packs = packs_as_it_goes && !b.keep_panels;
  // A block of lhs read in place keeps its rows where they lie, a row of lhs apart: where that
  // is a multiple of 4 KiB they share few sets of the second-level cache, which evicts them
  // before the next panel reads them again. Packed, a block is one contiguous run, read in
  // order; copying it pays where many panels read it (n of 16 panels or more), also where a
  // product splits by columns and every call packs all of lhs.
  b.pack_lhs = tile.rhs == RhsRead::kPacked && !pairs && !conv &&
               (l1_for_l2 || (column_split && !second_level_fits_panel(isa))) &&
               g.n >= 16 * tile.columns;
  return b;
}

std::int64_t panel_elements(const CpuIsa& isa, const hlo::GemmShape& g, const TileShape& tile,
                            std::int64_t depth) {
  std::int64_t lanes = isa.vector_bytes / itemsize(g.dtype);
  bool pairs = g.operand_dtype == bfloat16;
  return (pairs ? (depth + 1) / 2 * 2 : depth) * tile.vectors(lanes) * lanes;
}

GemmWorkspace gemm_workspace(const CpuIsa& isa, const hlo::GemmShape& g,
                             const hlo::ImplicitGemm* conv) {
  GemmWorkspace w;
  if (!conv && amx_computes(isa, g)) {
    w.bytes = amx_workspace(g).bytes;
    return w;
  }
  TileShape tile = tile_shape(isa, g, conv != nullptr);
  GemmBlocking b = gemm_blocking(isa, g, tile, conv);
  auto take = [&w](std::int64_t bytes) {
    std::int64_t at = w.bytes;
    w.bytes += (bytes + 63) / 64 * 64;
    return at;
  };
  // Kept panels and the block of lhs hold elements of the product's dtype (neither is taken
  // with bf16 pairs); a panel of pairs holds 16-bit halves.
  std::int64_t bytes = itemsize(g.dtype), panel_bytes = g.operand_dtype == bfloat16 ? 2 : bytes;
  if (b.keep_panels) w.kept = take(g.n / tile.columns * tile.columns * b.depth * bytes);
  if (tile.rhs == RhsRead::kPacked && !b.rhs_is_panel)
    w.panel = take(panel_elements(isa, g, tile, b.depth) * panel_bytes);
  if (b.pack_lhs) w.lhs_block = take(b.block_rows * b.depth * bytes);
  return w;
}

bool pairs_in_place(const CpuIsa& isa, const hlo::GemmShape& g) {
  // The tile unit overtakes pairs read in place past 3 rows, and widening W first does past 8
  // where no instruction multiplies pairs (AVX2); AVX-512 BF16's alone does not.
  std::int64_t most_rows = isa.amx_bf16 ? 3 : 8;
  bool pair_instruction_alone = isa.avx512_bf16 && isa.vector_bytes == 64 && !isa.amx_bf16;
  return g.operand_dtype == bfloat16 && g.dtype == float32 && isa.vector_bytes >= 32 &&
         (g.m <= most_rows || pair_instruction_alone) &&
         tile_shape(isa, g, /*conv=*/false).rhs == RhsRead::kInPlace;
}

bool amx_computes(const CpuIsa& isa, const hlo::GemmShape& g) {
  return isa.amx_bf16 && g.operand_dtype == bfloat16 && g.dtype == float32 &&
         !pairs_in_place(isa, g);
}

AmxWorkspace amx_workspace(const hlo::GemmShape& g) {
  constexpr std::int64_t kBlockSumsBytes = kAmxBlockRows * kAmxPanelColumns * 4;
  std::int64_t depth = amx_padded_depth(g), parts = amx_row_parts(g);
  std::int64_t part_blocks = (amx_row_blocks(g) + parts - 1) / parts;
  // As many panels as a group of every step holds, or as many as the carried sums of a part's
  // blocks of rows allow, where that is more: a product of few rows or a deep one reads long
  // runs of rhs rows and packs lhs once, at the cost of carrying its sums.
  std::int64_t whole_panels = kAmxGroupBytes / (depth / 2 * kAmxPanelRowBytes);
  std::int64_t carried_panels = kAmxCarriedSumsBytes / (part_blocks * kBlockSumsBytes);
  // A transposed rhs is packed from runs of a column's steps: in blocks of at least 1024 steps,
  // runs of 2 KiB.
  if (g.transpose_rhs)
    carried_panels = std::min(carried_panels, kAmxGroupBytes / (1024 / 2 * kAmxPanelRowBytes));
  AmxWorkspace w;
  w.panels = std::clamp<std::int64_t>(std::max(whole_panels, carried_panels), 1, amx_panels(g));
  std::int64_t group_steps = kAmxGroupBytes / (w.panels * kAmxPanelRowBytes) * 2;
  w.steps = std::clamp(group_steps / kAmxTileSteps * kAmxTileSteps, kAmxTileSteps, depth);
  w.carried = w.steps < depth;
  // A row of pairs more, so that the group's panels, packed a row of each at a time, do not all
  // start in the same sets of the first-level cache.
  w.panel_bytes = w.steps / 2 * kAmxPanelRowBytes + kAmxPanelRowBytes;
  w.lhs_block = w.panels * w.panel_bytes;
  w.sums = w.lhs_block + kAmxBlockRows * w.steps * 2;  // bf16
  w.bytes = w.sums + (w.carried ? part_blocks * w.panels : 1) * kBlockSumsBytes;
  return w;
}

bool kernel_at_any_size(const CpuIsa& isa, DType dtype) {
  // 512-bit vectors at full rate: twice OpenBLAS's 256-bit kernels. AVX2's f32 tile over a
  // second-level panel: level with OpenBLAS's Haswell kernels or ahead; its f64 tile falls behind.
  return isa.full_width_512 || (isa.vector_bytes == 32 && dtype == float32);
}

}  // namespace cpu

std::int64_t gemm_column_panels(const cpu::CpuIsa& isa, const hlo::GemmShape& g) {
  // (Columns where n is at least 2.7 m with AVX2's tile, 10.7 m with the wide one.)
  if (cpu::amx_computes(isa, g)) return cpu::amx_units(g);
  if (g.batch != 1) return 0;
  cpu::TileShape tile = cpu::tile_shape(isa, g, false);
  std::int64_t panels = (g.n + tile.columns - 1) / tile.columns;
  return splits_by_columns(panels, g.m, tile.rows) ? panels : 0;
}

DotStrategy gemm_strategy(const hlo::GemmShape& g) {
  if (g.m * g.n * g.k < kMinGemmMacs) return DotStrategy::kLoopNest;
  // An f32 product of bf16 operands (kept so by upcast-16bit-dots where the CPU multiplies bf16
  // pairs): the kernel at any size, as BLAS has no such product.
  if (g.operand_dtype == bfloat16 && g.dtype == float32) return DotStrategy::kBlockedKernel;
  // Other 16-bit operands reach the CPU as f32 products: any other mix is a loop nest.
  if (g.operand_dtype != g.dtype) return DotStrategy::kLoopNest;
  if (g.macs() > kMaxBlockedMacs && !cpu::kernel_at_any_size(cpu::configured_cpu_isa(), g.dtype))
    return DotStrategy::kBlas;
  return DotStrategy::kBlockedKernel;
}

DotStrategy dot_strategy(const hlo::Instruction& dot) {
  std::optional<hlo::GemmShape> g = hlo::as_gemm(dot);
  return g ? gemm_strategy(*g) : DotStrategy::kLoopNest;
}

bool kernel_reads_bf16(const hlo::Instruction& product) {
  std::optional<hlo::GemmShape> g = hlo::as_gemm(product);
  const cpu::CpuIsa& isa = cpu::configured_cpu_isa();
  // A transposed rhs that simplification folds into the product later is packed, not read in
  // place: its pairs are then widened instead.
  bool rhs_folds =
      product.operands.size() > 1 && product.operands[1]->opcode == hlo::Opcode::kTranspose;
  return g && g->operand_dtype == bfloat16 && gemm_strategy(*g) == DotStrategy::kBlockedKernel &&
         (isa.bf16_pairs_pay() || cpu::amx_computes(isa, *g) ||
          (cpu::pairs_in_place(isa, *g) && !rhs_folds));
}

bool kernel_applies_gemm_epilogue(const hlo::Instruction& dot, DType out) {
  std::optional<hlo::GemmShape> g = hlo::as_gemm(dot);
  if (!g || !hlo::fits_gemm_epilogue(dot) || gemm_strategy(*g) != DotStrategy::kBlockedKernel)
    return false;
  if (cpu::amx_computes(cpu::configured_cpu_isa(), *g))
    return out == float32 || k16BitFloating.contains(out);
  return g->operand_dtype == float32 && out == float32;
}

}  // namespace jx::codegen
