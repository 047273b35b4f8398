// The register-blocked matrix kernel (gemm.hpp) for the dots whose strategy is kBlockedKernel
// (gemm_plan.hpp). The contraction is cut into blocks of depth_ steps and the rows into blocks of
// block_rows_ (gemm_blocking); for each, a panel of rhs (its rows of two or four vectors of
// columns, transposed here when rhs is stored transposed) is packed into contiguous whole
// vectors (before its tiles, by its first tile, or ahead and kept; not at all where rhs's rows are
// exactly the tile's columns, rhs_is_panel), and every tile of out, 6 rows by 2 vectors (or 4),
// adds its share in registers: each step loads the panel row's vectors, broadcasts 6 lhs elements
// and issues 12 (or 24) independent multiply-adds, enough to cover the FMA latency on both ports.
// Blocks of lhs may be packed too (pack_lhs). The last block of the contraction may apply a dense
// layer's bias and activation as it stores a tile. A product of few rows reads rhs unpacked and
// splits over the threads by columns (TileShape, gemm_column_panels).
//
// The emitter's loops over blocks and panels are in gemm.cpp, its packing in gemm_packing.cpp,
// its tile in gemm_tile.cpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/cpu/gemm.hpp"
#include "codegen/cpu/gemm_plan.hpp"

namespace jx::codegen::cpu {

class GemmEmitter {
 public:
  // `workspace`: gemm_workspace(isa, g, conv).bytes of the call's own, or null where that is 0.
  GemmEmitter(ElementalEmitter& em, const CpuIsa& isa, const hlo::GemmShape& g, llvm::Value* lhs,
              llvm::Value* rhs, llvm::Value* out, llvm::Value* workspace,
              const TileEpilogue& epilogue, const hlo::ImplicitGemm* conv = nullptr);

  // Only the column panels [begin, end) of every product (gemm_column_panels), not all.
  void restrict_panels(llvm::Value* begin, llvm::Value* end) { panels_ = OuterRange{begin, end}; }

  // Rows [row_begin, row_end) of products [batch_begin, batch_end). Each block of the
  // contraction passes over every block of rows, whose share of lhs differs from one block of
  // the contraction to the next; but a convolution's taps all read one region of its image (the
  // windows overlap), so there each block of rows keeps that region and its block of out in the
  // second-level cache while every block of the contraction passes.
  void emit(llvm::Value* batch_begin, llvm::Value* batch_end, llvm::Value* row_begin,
            llvm::Value* row_end);

 private:
  llvm::Value* add(llvm::Value* a, llvm::Value* c) { return b_.CreateAdd(a, c, "", true, true); }
  llvm::Value* umin(llvm::Value* a, llvm::Value* c) {
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, a, c);
  }
  llvm::Value* mul(llvm::Value* a, std::int64_t c) {
    return b_.CreateMul(a, em_.i64(c), "", true, true);
  }
  // (outer * extent + inner), the row-major offset of one dimension into the next
  llvm::Value* nest(llvm::Value* outer, std::int64_t extent, llvm::Value* inner) {
    return add(mul(outer, extent), inner);
  }
  llvm::Value* lhs_at(llvm::Value* batch, llvm::Value* row, llvm::Value* p) {
    return g_.transpose_lhs ? nest(nest(batch, g_.k, p), g_.m, row)
                            : nest(nest(batch, g_.m, row), g_.k, p);
  }
  llvm::Value* rhs_at(llvm::Value* batch, llvm::Value* p, llvm::Value* col) {
    return g_.transpose_rhs ? nest(nest(batch, g_.n, col), g_.k, p)
                            : nest(nest(batch, g_.k, p), g_.n, col);
  }
  llvm::Value* out_at(llvm::Value* batch, llvm::Value* row, llvm::Value* col) {
    return nest(nest(batch, g_.m, row), g_.n, col);
  }
  llvm::Value* element(llvm::Value* base, llvm::Value* offset) {
    return b_.CreateInBoundsGEP(elem_, base, offset);
  }

  // Rows of one block of the contraction: `tiles` tiles from row_begin, none past last_row, the
  // first `whole` of them of tile_rows_ (the last may have last_tile_rows_).
  struct Block {
    llvm::Value *batch, *p0, *depth, *row_begin, *last_row, *tiles, *whole;
  };

  // Full panel c where the blocking keeps it.
  llvm::Value* kept_panel(llvm::Value* c) { return element(kept_, mul(c, panel_elems_)); }

  std::int64_t per_line() const { return 64 / itemsize(g_.dtype); }  // elements a line holds
  // Columns of a run of `cols` in a row of rhs or out, among whose lines is every line the run
  // touches: from its first, a line's columns apart. Buffers, and every tile's or panel's first
  // column, start on a line; where rows (n apart) are not a whole number of lines apart, a run
  // may start anywhere in one, so its last column too.
  std::vector<std::int64_t> line_columns(std::int64_t cols) const {
    bool to_last = g_.n * itemsize(g_.dtype) % 64 != 0;
    std::vector<std::int64_t> columns;
    for (std::int64_t c = 0; c < (to_last ? cols + per_line() - 1 : cols); c += per_line())
      columns.push_back(std::min(c, cols - 1));
    return columns;
  }

  // The first `count` lanes of a vector (a partial vector at the right edge).
  llvm::Value* mask(std::int64_t count) {
    std::vector<llvm::Constant*> bits;
    for (unsigned l = 0; l < lanes_; ++l) bits.push_back(b_.getInt1(l < count));
    return llvm::ConstantVector::get(bits);
  }
  // A vector of out's type from `at`, its first `live` lanes read and the rest zero.
  llvm::Value* load_lanes(llvm::Value* at, std::int64_t live) {
    if (live == lanes_) return b_.CreateAlignedLoad(vec_, at, align_);
    return b_.CreateMaskedLoad(vec_, at, align_, mask(live), llvm::Constant::getNullValue(vec_));
  }
  int vectors(std::int64_t cols) const { return static_cast<int>((cols + lanes_ - 1) / lanes_); }
  // Lanes of the last of a tile's vectors that are inside out.
  std::int64_t last_lanes(std::int64_t cols) const {
    return cols - static_cast<std::int64_t>(lanes_) * (vectors(cols) - 1);
  }
  llvm::Value* panel_at(llvm::Value* p, llvm::Value* v, std::int64_t cols) {
    return element(panel_base_, add(mul(p, vectors(cols) * std::int64_t{lanes_}), mul(v, lanes_)));
  }
  // Stores `vector` as panel row p's vector v.
  void store_panel(llvm::Value* p, llvm::Value* v, std::int64_t cols, llvm::Value* vector) {
    b_.CreateAlignedStore(vector, panel_at(p, v, cols), panel_align_);
  }
  // Panel row q's vector v of bf16 pairs (pack_pairs).
  llvm::Value* pair_panel_at(llvm::Value* q, int v, std::int64_t cols) {
    return b_.CreateInBoundsGEP(panel_elem_, panel_,
                                add(mul(q, vectors(cols) * std::int64_t{2 * lanes_}),
                                    em_.i64(std::int64_t{v} * 2 * lanes_)));
  }

  // The blocks and panels (gemm.cpp).

  // emit_for, with no loop for a range that folded to one constant iteration.
  void for_range(llvm::Value* begin, llvm::Value* end, const std::string& name,
                 const std::function<void(llvm::Value*)>& body);

  // f(p0, depth) for the contraction's blocks of depth_ steps (one copy of the code serves every
  // block, the last, shorter one too).
  void depth_blocks(const std::function<void(llvm::Value*, llvm::Value*)>& f);

  // f(begin, end, first_block) for rows [row_begin, row_end) a block of block_rows_ at a time,
  // whose share of lhs stays in the second-level cache while every panel passes over it;
  // `first_block`: whether it is the first block.
  void row_blocks(llvm::Value* row_begin, llvm::Value* row_end,
                  const std::function<void(llvm::Value*, llvm::Value*, llvm::Value*)>& f);

  // Contraction steps [p0, p0 + depth) of rows [row_begin, row_end) of one block, all columns: a
  // panel of full-width tiles at a time, then one narrower panel for the rest. `first_block`:
  // whether it is the first block of rows (which packs the kept panels).
  void row_block(llvm::Value* batch, llvm::Value* p0, llvm::Value* depth, llvm::Value* row_begin,
                 llvm::Value* row_end, llvm::Value* first_block);

  // Every tile of the block over the panel at `col`, before_steps(q) before tile q's steps; the
  // first packs the panel where the blocking says so (first_tile_packs), or if short, pack().
  void tiles_over(const Block& block, llvm::Value* col, std::int64_t cols,
                  const std::function<void(llvm::Value*)>& before_steps);

  // Full panels [begin, end) packed ahead where the blocking keeps them: the first whole, then
  // each tile of a panel packs its share of the next panel's steps, and prefetches the share the
  // next tile packs into the second level.
  void panels_ahead(const Block& block, llvm::Value* begin, llvm::Value* end);

  // Full panels [begin, end) where the first block of rows kept them: each tile of a panel asks
  // for its share of the next panel's lines, which lie in order.
  void kept_panels(const Block& block, llvm::Value* begin, llvm::Value* end);

  // Packing and reading rhs and lhs (gemm_packing.cpp).

  // Copies lhs[row_begin : last_row + 1, p0 : p0 + depth] into the block, `tiles` tiles of
  // rows: tile q's step p holds its rows' elements side by side at (q · depth_ + p) · tile_rows_,
  // rows past the last repeating it, as the tiles compute them: runs of 4 steps interleaved in
  // registers, each asking for the next tile's rows (element by element: 4% of 512³ on Zen 1;
  // so 2%). A transposed lhs goes a step at a time.
  void pack_lhs(llvm::Value* batch, llvm::Value* p0, llvm::Value* depth, llvm::Value* row_begin,
                llvm::Value* last_row, llvm::Value* tiles);

  // rhs[step, col : col + cols] where it lies, a vector at a time, zero past the right edge.
  std::vector<llvm::Value*> rhs_row(llvm::Value* batch, llvm::Value* step, llvm::Value* col,
                                    std::int64_t cols);

  // Asks for every line of rhs[step, col : col + cols] (none past the last column) into the
  // first-level cache or, not `first_level`, the second.
  void prefetch_rhs(llvm::Value* batch, llvm::Value* step, llvm::Value* col, std::int64_t cols,
                    bool first_level);

  // Copies rhs[p0 : p0 + depth, col : col + cols] into the panel, row after row of whole vectors,
  // zero past the right edge: the tiles then load only aligned, whole vectors.
  void pack(llvm::Value* batch, llvm::Value* p0, llvm::Value* depth, llvm::Value* col,
            std::int64_t cols);

  // The addresses of a vector of an rhs row from `at`, where rhs is stored transposed (its
  // elements lie k apart).
  llvm::Value* transposed_row(llvm::Type* elem, llvm::Value* at);

  // Panel rows [begin, end), vectors from_vector on: one load (or gather) a vector.
  void pack_rows(llvm::Value* batch, llvm::Value* p0, llvm::Value* begin, llvm::Value* end,
                 llvm::Value* col, std::int64_t cols, int from_vector = 0);

  // rhs rows `step` and, where `second`, step + 1 at the columns of vector v of the tile's
  // `cols` from `col`, interleaved into pairs (zero past rhs's last column and the second row).
  llvm::Value* pair_row(llvm::Value* batch, llvm::Value* step, llvm::Value* second,
                        llvm::Value* col, int v, std::int64_t cols);
  // bf16 operands: panel row q holds steps p0 + 2q and p0 + 2q + 1 (zero past the depth) of
  // the panel's columns interleaved, a vector of 2 x lanes_ at a time, as the pair multiply-add
  // reads them.
  void pack_pairs(llvm::Value* batch, llvm::Value* p0, llvm::Value* depth, llvm::Value* col,
                  std::int64_t cols);

  // The lanes x lanes block of a transposed rhs at panel rows [p, p + lanes), panel vector v:
  // lanes contiguous loads, log2(lanes) rounds of two-vector shuffles, lanes stores.
  void pack_square(llvm::Value* batch, llvm::Value* p0, llvm::Value* p, llvm::Value* col,
                   llvm::Value* v, std::int64_t cols);

  // The tile (gemm_tile.cpp).

  // Panel row p, a vector at a time.
  std::vector<llvm::Value*> panel_row(llvm::Value* p, std::int64_t cols);

  // Asks for the lines of out[row + rows : row + 2 * rows, col : col + cols], the next tile's
  // share (none past last_row), for writing. A block of rows holds more of out than the
  // second-level cache, and the tile's first multiply-adds would wait on those loads (Zen 1, f32
  // n³, one core, against OpenBLAS: n = 3000 0.94 -> 0.99, 4096 0.91 -> 0.95).
  void prefetch_next_tile_out(llvm::Value* batch, llvm::Value* row, llvm::Value* last_row,
                              llvm::Value* col, std::int64_t cols);

  // out[rows, col : col + cols] += lhs[rows, p0 : p0 + depth] · panel for `rows` rows from
  // `row` (none past last_row), starting from zero at the first step of the contraction. The
  // tile stays in registers throughout; `before_steps` is emitted before its steps. `packs`:
  // it reads rhs where it lies and writes the panel (GemmBlocking::first_tile_packs).
  void tile(llvm::Value* batch, llvm::Value* row, llvm::Value* last_row, llvm::Value* p0,
            llvm::Value* depth, llvm::Value* col, std::int64_t cols, llvm::Value* packed_lhs,
            int rows, bool packs, const std::function<void()>& before_steps);

  // The whole contraction of a tile whose `cols` columns are rows of rhs stored [n, k]
  // (RhsRead::kDotProducts): per row of the tile and column, an accumulator of lanes_ steps at a
  // time (masked at the end), its lanes then summed in order into the tile's accumulators.
  void dot_product_steps(llvm::Value* batch, const std::vector<llvm::Value*>& row_of,
                         llvm::Value* col, std::int64_t cols,
                         const std::vector<llvm::AllocaInst*>& acc);

  // The tile's steps over bf16 operands, a pair at a time: each row's two lhs elements,
  // broadcast as one 32-bit lane, multiply-add the panel row's interleaved pairs (or, read in
  // place, rhs's two rows interleaved in registers: pair_row) into f32 lanes. An odd depth ends
  // with a pair whose second lhs element is zero (its panel half is too).
  void pair_steps(llvm::Value* batch, const std::vector<llvm::Value*>& row_of, llvm::Value* p0,
                  llvm::Value* depth, llvm::Value* col, std::int64_t cols,
                  const std::vector<llvm::AllocaInst*>& acc);

  // The tile's steps of a convolution, a run at a time: each row's lhs elements start at the
  // row's offset moved by the run's first step, and follow the run's stride.
  void run_steps(const std::vector<llvm::Value*>& row_of, llvm::Value* p0, llvm::Value* depth,
                 std::int64_t cols, const std::vector<llvm::AllocaInst*>& acc);

  // One step of the tile: each accumulator of row r, vector v, multiply-adds xs_of(r) (a row's
  // lhs, broadcast) and rhs_row[v] (a vector of the panel's row).
  void accumulate(const std::vector<llvm::AllocaInst*>& acc,
                  const std::vector<llvm::Value*>& rhs_row,
                  const std::function<llvm::Value*(std::size_t)>& xs_of);

  ElementalEmitter& em_;
  llvm::IRBuilder<>& b_;
  hlo::GemmShape g_;
  llvm::Value *lhs_, *rhs_, *out_;
  TileEpilogue epilogue_;
  llvm::Type* elem_;
  llvm::Align align_;  // an element's
  bool pairs_;         // bf16 operands of an f32 product, multiplied a pair of steps at a time
  bool bf16_pairs_;    // the CPU's pair multiply-add (CpuIsa::avx512_bf16)
  llvm::Type* panel_elem_ = nullptr;
  unsigned lanes_ = 0;
  llvm::FixedVectorType* vec_ = nullptr;
  int tile_rows_ = 1, tile_vectors_ = 1;
  int last_tile_rows_ = 0;  // a last tile's rows where every call's are known and not whole tiles
  std::int64_t tile_columns_ = 1;
  RhsRead rhs_read_ = RhsRead::kPacked;
  std::optional<OuterRange> panels_;  // the column panels computed, when not all
  bool first_tile_packs_ = false;     // GemmBlocking's
  bool rhs_is_panel_ = false;         // GemmBlocking's: panel_base_ points into rhs
  std::int64_t depth_ = 1, block_rows_ = 1;
  // depth_ rows of tile_vectors_ vectors (panel_elems_; none where rhs is the panel);
  // panel_base_: the panel that the tiles read and a pack writes, this one, a kept one or rhs
  llvm::Value* panel_ = nullptr;
  llvm::Align panel_align_;
  std::int64_t panel_elems_ = 0;
  llvm::Value* panel_base_ = nullptr;
  llvm::Value* kept_ = nullptr;       // the full panels of a block of the contraction (keep_panels)
  llvm::Value* lhs_block_ = nullptr;  // block_rows_ by depth_ of lhs, packed (pack_lhs)
  std::optional<hlo::ImplicitGemm> conv_;  // a convolution's lhs geometry, when it is one
};

}  // namespace jx::codegen::cpu
