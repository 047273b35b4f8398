#include "codegen/cpu/gemm_plan.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

#include "jx/config.hpp"

namespace jx::codegen {
namespace {

// Below this many multiply-adds per product the element loop nest beats any kernel's setup.
constexpr std::int64_t kMinGemmMacs = 16 * 16 * 16;
// Above this many in all, BLAS is as fast or faster where the kernel does not beat it at any
// size (kernel_at_any_size): AVX-512 split in two 256-bit halves (Zen 4: 0.85x OpenBLAS on one
// core at 2048^3, with a first-level panel), SSE (never timed), and f64 with AVX2.
constexpr std::int64_t kMaxBlockedMacs = std::int64_t{1} << 28;

// Products over a block of the contraction at a time: the rhs panel of that depth, packed, stays
// in the first-level cache (the wide tile's in the second) while every row tile reads it.
// A first-level panel in place of a second-level one (a product split by rows) takes three
// quarters of the first level: its panel is packed once for many row tiles (Zen 1, f32 n = 1024 and
// 2048, one core, GMAC/s: 16.2, 15.7 at 16 KiB against 16.9, 16.6), where one split by columns
// feeds few (f32 [64, 4096] x [4096, 4096]: 16.0 against 7.5-9.8).
constexpr std::int64_t kPanelBytes = 16 << 10, kL1ForL2PanelBytes = 24 << 10,
                       kL2PanelBytes = 256 << 10, kLhsBlockBytes = 256 << 10,
                       kTlbReachBytes = 4 << 20, kKeptPanelsBytes = 8 << 20;

// The tile unit's kernel packs its panels a group of this many bytes at a time, every block of
// rows passing over the group (a Xeon with AMX, one core, medians of 10 calls, GMAC/s, groups of
// 256 KiB / 512 KiB / 1 MiB / 1.5 MiB / 3 MiB: n = 1024 333 / 403 / 440 / 372 / 349, n = 2048
// 258 / 337 / 401 / 390 / 303).
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
// convolution's. A panel is a few lines of each rhs row it packs: down 4096 steps of a product
// split by columns, that is a page a step, for few row tiles to read, where a first-level panel
// takes 128 or 256 steps at a time, packed by its first tile as it goes (`tiles_pack`: plain
// rows of f32 or f64). Zen 5, AVX2's 6x16, f32 [16, 4096] x [4096, 4096], one core: 9.2 ms with
// a first-level panel, 15.8 with a second-level one; a Xeon, the wide tile, f32 [m, 4096] x
// [4096, 4096], two threads, GMAC/s, second-level -> first-level: m = 48 117 -> 152, 64 131 ->
// 154, 128 158 -> 173, 256 and 512 level, [64, 1024] x [1024, 4096] 64 -> 85. A transposed rhs,
// packed whole, keeps the wide tile's second-level panel (m = 64: 148 against 93).
bool wants_second_level_panel(const cpu::CpuIsa& isa, int tile_vectors, bool column_split,
                              bool tiles_pack, bool conv) {
  if (conv) return false;
  if (column_split) return tile_vectors > 2 && !tiles_pack;
  return tile_vectors > 2 || isa.vector_bytes == 32;
}

// Whether the second level holds four such panels. With less, the panel and lhs streaming past
// it evict each other, and lhs comes from the last level, which such cores reach more slowly: a
// first-level panel keeps a block of lhs in the second level instead (Zen 1, 512 KiB, f32 n =
// 1024 and 2048, one core, GMAC/s: 12.3, 10.1 -> 16.9, 16.6; OpenBLAS 17.8, 18.4).
bool second_level_fits_panel(const cpu::CpuIsa& isa) {
  return isa.second_level_cache >= 4 * kL2PanelBytes;
}

}  // namespace

namespace cpu {

// A tile of 6 rows of two vectors (BLIS's 6x16 with AVX2; 6x32 with AVX-512): 12 accumulators,
// the panel's row and a broadcast in 15 registers. AVX-512's 32 registers would hold 14x32,
// which ran slower on a core that splits 512-bit operations in two (Zen 4: 34-38 against 43-50
// GMAC/s on one core at n = 1024 and 2048). Where 512-bit operations run at full rate, 6 rows of
// four vectors (24 accumulators, 29 registers): each broadcast of lhs feeds four multiply-adds,
// and a convolution of 64 out features reads its image once (Zen 5, one core: 122-125 against
// 119-122 GMAC/s at n = 1024, 119-120 against 116 at 2048). bf16 pairs keep two vectors.
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
    // as they go (gemm_blocking). A Xeon, f32 [m, 4096] x [4096, 4096], two threads, ms, in
    // place -> packed: m = 13 2.26-2.43 -> 2.04-2.13, 16 2.57-2.73 -> 2.40-2.48, 24 3.83-3.92 ->
    // 3.12-3.20, 32 5.19-5.42 -> 3.98-4.11; [16, 4096] x [4096, 1024] 0.83-0.85 -> 0.61. On one
    // thread in place runs ahead (m = 16 4.74-4.83 against 5.45-5.85, 24 6.8-7.0 against 7.5-7.6,
    // 32 level), as it does for f64 on two (m = 16 5.6-5.8 against 6.8-6.9): one kernel serves any
    // count of threads, and jx runs on every core unless told.
    std::int64_t packed_panels = (g.n + widest * lanes - 1) / (widest * lanes);
    bool packs_by_columns = widest == 4 && g.dtype == float32 && packed_panels > 1 &&
                            packed_panels >= (g.m + kTileRows - 1) / kTileRows;
    // AVX2's f32 tile packs first-level panels a line of each rhs row a step, which prefetchers
    // that stop at a page do not follow: in place pays for more rows there. A Xeon under
    // --cpu_isa=avx2, f32 [m, 4096] x [4096, 4096], ms on one and two threads, packed -> in place:
    // m = 40 26.8-27.0, 12.1-12.3 -> 14.8-17.7, 7.6-9.6; 48 28.8-29.2, 11.5-13.0 -> 18.8-19.5,
    // 9.4-10.8; 64 32.5-33.8, 14.3-16.1 -> 28.7-31.9, 15.2-16.4; 96 40.0-41.4, 19.0-19.2 ->
    // 48.0-48.3, 22.8-24.4.
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
  // tile's product keeps its panel in the second-level cache instead, a quarter of 1 MiB (1024
  // steps at 64 columns, 8 times the 128 of two thirds of a 48 KiB first level), and passes
  // every row over it (lhs then streams from the third level): each tile loads and stores its
  // share of out 8 times less often, while the second level feeds the panel's 4 vectors a step.
  // Zen 5, one core, GMAC/s: n = 1024 120-121 -> 126, 2048 116-117 -> 124-127; two cores at 2048
  // 235 -> 243-244. So does AVX2's 6x16 (4096 steps): Zen 5 under --cpu_isa=avx2, one core,
  // n = 512 64.1-65.9 -> 64.8-67.1, 2048 60.9-61.0 -> 63.3-63.5. A convolution's wide tile keeps
  // a first-level panel of two thirds of 48 KiB (its row blocks keep their image in the second
  // level). bf16 operands: pairs of contraction steps, each panel vector two steps of its
  // columns interleaved (half the bytes per step), depth even so that no block splits a pair.
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
  // The tiles over a packed first-level panel make it ready as they go (first_tile_packs,
  // keep_panels), where rhs rows lie apart, a line of each in a panel.
  bool rhs_is_panel = tiles_pack && g.n == tile.columns;
  bool packs_as_it_goes =
      tiles_pack && !rhs_is_panel && ((column_split && !panel_in_l2) || l1_for_l2);
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
      // each panel reads lhs from memory again. f32 [4096, 4096] x [4096, 4096], one core,
      // GMAC/s: --cpu_isa=avx2 (4096 steps) 55.1 -> 63.7 (OpenBLAS 64.3); native (1024 steps)
      // 126.8 -> 125.8, and [8192, 1024] x [1024, 1024] 114.9 -> 120.9.
      if (panel_in_l2)
        b.depth = std::min(b.depth, std::max(kPanelBytes / tile_width,
                                             isa.last_level_cache / 4 / (g.m * operand_bytes)));
      break;
    case RhsRead::kInPlace:
      // A long run down all of k reads a page a step; a core whose second level is too small for
      // a second-level panel reads it in blocks too. Zen 1, f32 [1, 4096] x [4096, 4096] (a run
      // of 384 bytes), ms on one and two threads: 15.6, 8.2 -> 5.1, 3.5 (OpenBLAS 10.2, 5.9).
      // So does a core whose prefetchers stop at a page: a Xeon with AVX-512, f32 [m, 4096] x
      // [4096, 4096], GMAC/s on one and two threads: m = 1 5.5, 10.1 -> 7.2, 13.9; m = 4 11.3,
      // 13.2 -> 24.9, 48.2.
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
  // most), and the tiles read the next one from where it is kept, in order. Zen 1, f32, one
  // core, against OpenBLAS, packing each block's panels ahead -> kept: 2048³ 0.94-0.95 ->
  // 0.97-1.01, 3000³ 0.99 -> 1.03, 4096³ 0.97-0.99 -> 0.99-1.02 (at 384 steps; packing ahead
  // alone takes 256, 0.93-0.95 at 384), [512, 4096] x [4096, 4096] (split by columns) 0.91 ->
  // 0.96-1.02 (docs/performance.md).
  std::int64_t kept_depth =
      std::min(b.depth, std::max<std::int64_t>(kKeptPanelsBytes / (g.n * operand_bytes), 1));
  // (Split by columns or by batches, a call computes all of a product's rows.)
  std::int64_t call_rows = column_split || g.batch > 1 ? g.m : (g.m + isa.cores - 1) / isa.cores;
  b.keep_panels = packs_as_it_goes && g.n >= tile.columns && call_rows > rows_of_block(kept_depth);
  if (b.keep_panels) b.depth = kept_depth;
  // Packing a first-level panel reads a line of each of its rows of rhs, every row on pages of
  // its own once rows lie a page or more apart: the address translations of a panel's rows must
  // stay within the second-level TLB's reach (1536 pages of 4 KiB on Zen 1 and Skylake). Zen 1,
  // f32 [2048, 2048] x [2048, 4096] (rows 16 KiB apart), one core, GMAC/s, measured when each
  // tile prefetched the next panel: 384 steps 7.3, 256 15.6, 192 14.4 (OpenBLAS 17.4-18.4).
  else if (tile.rhs == RhsRead::kPacked && l1_for_l2 && !g.transpose_rhs)
    b.depth = std::min(
        b.depth, std::max<std::int64_t>(kTlbReachBytes / (g.n * operand_bytes), pairs ? 2 : 1));
  // A transposed lhs holds a tile's rows of one step in one line, and its steps a row of lhs
  // apart: where that is a multiple of 4 KiB they fall in few cache sets, and a deep block
  // evicts its own lines before the next row tile reads them again. Zen 5, two cores, lhs
  // [2048, 1024] read transposed against [2048, 256]: 186 -> 243 GMAC/s (lhs as stored: 245).
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
  // Packing a first-level panel would wait on memory (rhs rows lie apart, a line of each in a
  // panel). Each tile asked for every line of the next panel as it went (Zen 5 under
  // --cpu_isa=avx2, f32 [m, 4096] x [4096, 4096] (split by columns), ms on one and two threads:
  // m = 16 9.35, 4.50 -> 7.09, 3.46; m = 64 21.0, 10.5 -> 18.8, 9.4), but rows a power of two
  // apart put those lines in one set of the first level and few of the second, which evicted
  // them before the panel was packed: on Zen 1 a fifth of m = 16 waited on the packing's loads.
  // So the first tile reads each line kPackLookahead steps after asking for it, and writes the
  // panel as it goes. Zen 1, ms on one and two threads: m = 16 19.5, 10.6 -> 16.9, 9.4; m = 40
  // 41.5, 21.6 -> 38.4, 20.5; m = 64 (each tile had packed a share of the next panel) 54.5,
  // 28.6 -> 50.9, 27.8 (a later run: level).
  // Kept panels are still packed by the tiles of the panel before, each a share of the steps
  // (keep_panels): packed by their first tile, 2048³ ran at 0.97 of OpenBLAS on one core against
  // 1.02. (A transposed lhs's depth may have made one block of rows: nothing to keep.)
  b.keep_panels = b.keep_panels && call_rows > b.block_rows;
  b.first_tile_packs = packs_as_it_goes && !b.keep_panels;
  // A block of lhs read in place keeps its rows where they lie, a row of lhs apart: where that
  // is a multiple of 4 KiB they share few sets of the second-level cache, which evicts them
  // before the next panel reads them again. Packed, a block is one contiguous run, read in
  // order; copying it pays where many panels read it (n of 16 panels or more). Zen 1, f32, one
  // core, GMAC/s: n = 2048 16.4 -> 17.3, 4096 15.9 -> 16.9 (OpenBLAS 18.4-18.8). So does a
  // product split by columns, where every call packs all of lhs: [m, 4096] x [4096, 4096],
  // m = 128 16.2 -> 17.7, 256 16.2-16.6 -> 17.6-18.0, 512 16.5-16.9 -> 18.3.
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
  // A Xeon with AMX, [m, 4096] x [4096, 4096] of bf16 into f32, two threads, GMAC/s, in place
  // against the tile unit: m = 1 23 / 20, 2 49 / 39, 3 59 / 55, 4 71 / 79, 8 81 / 149; under
  // --cpu_isa=avx512 (vdpbf16ps, no tile unit) against widening W first: m = 1 21 / 3, 4 66 / 12,
  // 16 72 / 44, 32 68 / 59; under --cpu_isa=avx2 (two FMAs a pair): m = 1 15 / 4, 8 29 / 25, 16
  // 31 / 40.
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
  // runs of 2 KiB (a Xeon with AMX, [16, 4096] x [4096, 4096] with rhs stored [n, k], two
  // threads, GMAC/s, blocks of 128 steps 138, of at least 256 / 512 / 1024 / 2048 162 / 170 /
  // 185 / 183).
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
  if (cpu::amx_computes(isa, g)) return cpu::amx_units(g);
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
