// The register-blocked matrix kernel for the dots whose strategy is kBlockedKernel
// (gemm_plan.hpp). The contraction is cut into blocks of depth_ steps and the rows into blocks of
// block_rows_ (gemm_blocking); for each, a panel of rhs (its rows of two or four vectors of
// columns, transposed here when rhs is stored transposed) is packed into contiguous whole
// vectors (before its tiles, by its first tile, or ahead and kept), and every tile of out, 6 rows
// by 2 vectors (or 4), adds its share in registers: each step loads the panel row's vectors,
// broadcasts 6 lhs elements and issues 12 (or 24) independent multiply-adds, enough to cover the
// FMA latency on both ports. Blocks of lhs may be packed too (pack_lhs). The last block of the
// contraction may apply a dense layer's bias and activation as it stores a tile. A product of few
// rows reads rhs unpacked and splits over the threads by columns (TileShape, gemm_column_panels).
#include <algorithm>
#include <optional>

#include "codegen/cpu/cpu_compiler.hpp"
#include "codegen/cpu/gemm.hpp"
#include "codegen/cpu/gemm_plan.hpp"
#include "codegen/cpu/gemm_tile_math.hpp"
#include "hlo/gemm.hpp"
#include "support/check.hpp"

namespace jx::codegen::cpu {
namespace {

class GemmEmitter {
 public:
  // `workspace`: gemm_workspace_bytes of it, where the blocking keeps its panels.
  GemmEmitter(ElementalEmitter& em, const CpuIsa& isa, const hlo::GemmShape& g, llvm::Value* lhs,
              llvm::Value* rhs, llvm::Value* out, llvm::Value* workspace,
              const TileEpilogue& epilogue, const hlo::ImplicitGemm* conv = nullptr)
      : em_(em),
        b_(em.b()),
        g_(g),
        lhs_(lhs),
        rhs_(rhs),
        out_(out),
        epilogue_(epilogue),
        elem_(em.type(g.dtype)),
        align_(itemsize(g.dtype)),
        pairs_(g.operand_dtype == bfloat16),
        bf16_pairs_(isa.avx512_bf16) {
    if (conv) conv_ = *conv;
    lanes_ = isa.vector_bytes / static_cast<unsigned>(itemsize(g.dtype));
    vec_ = llvm::FixedVectorType::get(elem_, lanes_);
    TileShape tile = tile_shape(isa, g, conv != nullptr);
    tile_rows_ = tile.rows;
    tile_columns_ = tile.columns;
    tile_vectors_ = tile.vectors(lanes_);
    rhs_read_ = tile.rhs;
    GemmBlocking blocking = gemm_blocking(isa, g, tile, conv);
    depth_ = blocking.depth;
    block_rows_ = blocking.block_rows;
    first_tile_packs_ = blocking.first_tile_packs;
    JX_CHECK(blocking.keep_panels == (workspace != nullptr));
    kept_ = workspace;
    JX_CHECK(!(first_tile_packs_ || kept_) ||  // packed as the tiles go, a row of rhs a step
             (tile.rhs == RhsRead::kPacked && !pairs_ && !conv && !g.transpose_rhs));
    if (blocking.pack_lhs) {
      lhs_block_ = em.entry_alloca(
          llvm::ArrayType::get(elem_, static_cast<std::uint64_t>(block_rows_ * depth_)),
          "gemm.lhs_block");
      lhs_block_->setAlignment(llvm::Align(isa.vector_bytes));
    }
    if (rhs_read_ != RhsRead::kPacked) return;
    panel_elem_ = pairs_ ? b_.getInt16Ty() : elem_;
    panel_elems_ = (pairs_ ? (depth_ + 1) / 2 * 2 : depth_) * tile_vectors_ * lanes_;
    panel_ = em.entry_alloca(
        llvm::ArrayType::get(panel_elem_, static_cast<std::uint64_t>(panel_elems_)), "gemm.panel");
    panel_->setAlignment(llvm::Align(isa.vector_bytes));
    panel_base_ = panel_;
  }

  // Only the column panels [begin, end) of every product (gemm_column_panels), not all.
  void restrict_panels(llvm::Value* begin, llvm::Value* end) { panels_ = OuterRange{begin, end}; }

  // Rows [row_begin, row_end) of products [batch_begin, batch_end). Each block of the
  // contraction passes over every block of rows, whose share of lhs differs from one block of
  // the contraction to the next; but a convolution's taps all read one region of its image (the
  // windows overlap), so there each block of rows keeps that region and its block of out in the
  // second-level cache while every block of the contraction passes.
  void emit(llvm::Value* batch_begin, llvm::Value* batch_end, llvm::Value* row_begin,
            llvm::Value* row_end) {
    auto* first = llvm::dyn_cast<llvm::ConstantInt>(row_begin);
    auto* end = llvm::dyn_cast<llvm::ConstantInt>(row_end);
    last_tile_rows_ =
        first && end ? static_cast<int>((end->getSExtValue() - first->getSExtValue()) % tile_rows_)
                     : 0;
    for_range(batch_begin, batch_end, "gemm.batch", [&](llvm::Value* batch) {
      if (!conv_) {
        depth_blocks([&](llvm::Value* p0, llvm::Value* depth) {
          row_blocks(row_begin, row_end,
                     [&](llvm::Value* begin, llvm::Value* end, llvm::Value* first_block) {
                       row_block(batch, p0, depth, begin, end, first_block);
                     });
        });
        return;
      }
      row_blocks(row_begin, row_end,
                 [&](llvm::Value* begin, llvm::Value* end, llvm::Value* first_block) {
                   depth_blocks([&](llvm::Value* p0, llvm::Value* depth) {
                     row_block(batch, p0, depth, begin, end, first_block);
                   });
                 });
    });
  }

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

  // emit_for, with no loop for a range that folded to one constant iteration.
  void for_range(llvm::Value* begin, llvm::Value* end, const std::string& name,
                 const std::function<void(llvm::Value*)>& body) {
    auto* cb = llvm::dyn_cast<llvm::ConstantInt>(begin);
    auto* ce = llvm::dyn_cast<llvm::ConstantInt>(end);
    if (cb && ce && cb->getSExtValue() + 1 == ce->getSExtValue()) return body(begin);
    emit_for(em_, begin, end, name, body, /*vectorize=*/false);
  }

  // f(p0, depth) for the contraction's blocks of depth_ steps (one copy of the code serves every
  // block, the last, shorter one too).
  void depth_blocks(const std::function<void(llvm::Value*, llvm::Value*)>& f) {
    std::int64_t blocks = (g_.k + depth_ - 1) / depth_;
    for_range(em_.i64(0), em_.i64(blocks), "gemm.depth", [&](llvm::Value* q) {
      llvm::Value* p0 = mul(q, depth_);
      f(p0, umin(em_.i64(depth_), b_.CreateSub(em_.i64(g_.k), p0)));
    });
  }

  // f(begin, end, first_block) for rows [row_begin, row_end) a block of block_rows_ at a time,
  // whose share of lhs stays in the second-level cache while every panel passes over it;
  // `first_block`: whether it is the first block.
  void row_blocks(llvm::Value* row_begin, llvm::Value* row_end,
                  const std::function<void(llvm::Value*, llvm::Value*, llvm::Value*)>& f) {
    llvm::Value* blocks = b_.CreateUDiv(
        add(b_.CreateSub(row_end, row_begin), em_.i64(block_rows_ - 1)), em_.i64(block_rows_));
    for_range(em_.i64(0), blocks, "gemm.row_blocks", [&](llvm::Value* q) {
      llvm::Value* begin = add(row_begin, mul(q, block_rows_));
      f(begin, umin(add(begin, em_.i64(block_rows_)), row_end), b_.CreateICmpEQ(q, em_.i64(0)));
    });
  }

  // Contraction steps [p0, p0 + depth) of rows [row_begin, row_end) of one block, all columns: a
  // panel of full-width tiles at a time, then one narrower panel for the rest. `first_block`:
  // whether it is the first block of rows (which packs the kept panels).
  void row_block(llvm::Value* batch, llvm::Value* p0, llvm::Value* depth, llvm::Value* row_begin,
                 llvm::Value* row_end, llvm::Value* first_block) {
    std::int64_t width = tile_columns_;
    std::int64_t full = g_.n / width, rest = g_.n % width;
    // Whole tiles, one copy of the code: the last tile's rows past the end repeat the last row,
    // computing and storing its values again (every load precedes every store); but where the
    // rows are known as the kernel compiles, a short last tile has code of its own.
    llvm::Value* rows = b_.CreateSub(row_end, row_begin);
    llvm::Value* tiles = b_.CreateUDiv(add(rows, em_.i64(tile_rows_ - 1)), em_.i64(tile_rows_));
    llvm::Value* whole = last_tile_rows_ ? b_.CreateUDiv(rows, em_.i64(tile_rows_)) : tiles;
    Block block{batch, p0, depth, row_begin, b_.CreateSub(row_end, em_.i64(1)), tiles, whole};
    if (lhs_block_) pack_lhs(batch, p0, depth, row_begin, block.last_row, tiles);
    auto panel = [&](llvm::Value* col, std::int64_t cols) {
      if (rhs_read_ == RhsRead::kPacked && !first_tile_packs_) pack(batch, p0, depth, col, cols);
      tiles_over(block, col, cols, [](llvm::Value*) {});
    };
    auto cols = [&](llvm::Value* c) { panel(mul(c, width), width); };
    llvm::Value* begin = panels_ ? panels_->begin : em_.i64(0);
    llvm::Value* end = panels_ ? umin(panels_->end, em_.i64(full)) : em_.i64(full);
    if (kept_)
      emit_if_else(
          em_, first_block, "gemm.keep_panels", [&] { panels_ahead(block, begin, end); },
          [&] { kept_panels(block, begin, end); });
    else if (!panels_)
      for_range(em_.i64(0), end, "gemm.cols", cols);
    else
      emit_for(em_, panels_->begin, end, "gemm.cols", cols, /*vectorize=*/false);
    if (!rest) return;
    if (!panels_) return panel(em_.i64(full * width), rest);
    emit_if(em_, b_.CreateICmpUGT(panels_->end, em_.i64(full)), "gemm.last_cols",
            [&] { panel(em_.i64(full * width), rest); });
  }

  // Rows of one block of the contraction: `tiles` tiles from row_begin, none past last_row, the
  // first `whole` of them of tile_rows_ (the last may have last_tile_rows_).
  struct Block {
    llvm::Value *batch, *p0, *depth, *row_begin, *last_row, *tiles, *whole;
  };

  // Every tile of the block over the panel at `col`, before_steps(q) before tile q's steps; the
  // first packs the panel where the blocking says so (first_tile_packs), or if short, pack().
  void tiles_over(const Block& block, llvm::Value* col, std::int64_t cols,
                  const std::function<void(llvm::Value*)>& before_steps) {
    auto tile_q = [&](llvm::Value* q, int rows, bool packs = false) {
      llvm::Value* lhs = lhs_block_ ? element(lhs_block_, mul(q, tile_rows_ * depth_)) : nullptr;
      tile(block.batch, add(block.row_begin, mul(q, tile_rows_)), block.last_row, block.p0,
           block.depth, col, cols, lhs, rows, packs, [&] { before_steps(q); });
    };
    if (first_tile_packs_)
      emit_if_else(
          em_, b_.CreateICmpUGT(block.whole, em_.i64(0)), "gemm.packing_tile",
          [&] { tile_q(em_.i64(0), tile_rows_, true); },
          [&] { pack(block.batch, block.p0, block.depth, col, cols); });
    for_range(em_.i64(first_tile_packs_ ? 1 : 0), block.whole, "gemm.rows",
              [&](llvm::Value* q) { tile_q(q, tile_rows_); });
    if (last_tile_rows_)
      emit_if(em_, b_.CreateICmpULT(block.whole, block.tiles), "gemm.short_tile",
              [&] { tile_q(block.whole, last_tile_rows_); });
  }

  // Full panel c where the blocking keeps it.
  llvm::Value* kept_panel(llvm::Value* c) { return element(kept_, mul(c, panel_elems_)); }

  // Full panels [begin, end) packed ahead where the blocking keeps them: the first whole, then
  // each tile of a panel packs its share of the next panel's steps, and prefetches the share the
  // next tile packs into the second level.
  void panels_ahead(const Block& block, llvm::Value* begin, llvm::Value* end) {
    llvm::Value *batch = block.batch, *p0 = block.p0, *depth = block.depth;
    std::int64_t width = tile_columns_;
    auto steps = [&](llvm::Value* q) { return share(b_, depth, block.tiles, q); };
    panel_base_ = kept_panel(begin);
    emit_if(em_, b_.CreateICmpULT(begin, end), "gemm.first_panel",
            [&] { pack(batch, p0, depth, mul(begin, width), width); });
    auto ahead = [&](llvm::Value* c, llvm::Value* q) {
      llvm::Value* next = add(c, em_.i64(1));
      emit_if(em_, b_.CreateICmpULT(next, end), "gemm.pack_ahead", [&] {
        panel_base_ = kept_panel(next);
        auto [first, last] = steps(q);
        pack_rows(batch, p0, first, last, mul(next, width), width);
      });
      panel_base_ = kept_panel(c);
      // After a panel's last tile, the next tile packs the panel after the next.
      llvm::Value* wrap = b_.CreateICmpEQ(add(q, em_.i64(1)), block.tiles);
      auto [first, last] = steps(b_.CreateSelect(wrap, em_.i64(0), add(q, em_.i64(1))));
      llvm::Value* col = mul(b_.CreateSelect(wrap, add(next, em_.i64(1)), next), width);
      auto prefetch = [&](llvm::Value* p) { prefetch_rhs(batch, add(p0, p), col, width, false); };
      emit_for(em_, first, last, "gemm.prefetch_ahead", prefetch, /*vectorize=*/false);
    };
    emit_for(
        em_, begin, end, "gemm.cols",
        [&](llvm::Value* c) {
          tiles_over(block, mul(c, width), width, [&](llvm::Value* q) { ahead(c, q); });
        },
        /*vectorize=*/false);
    panel_base_ = panel_;
  }

  // Full panels [begin, end) where the first block of rows kept them: each tile of a panel asks
  // for its share of the next panel's lines, which lie in order.
  void kept_panels(const Block& block, llvm::Value* begin, llvm::Value* end) {
    llvm::Value* lines = b_.CreateUDiv(mul(block.depth, tile_columns_), em_.i64(per_line()));
    emit_for(
        em_, begin, end, "gemm.cols",
        [&](llvm::Value* c) {
          panel_base_ = kept_panel(c);
          llvm::Value* next = kept_panel(umin(add(c, em_.i64(1)), b_.CreateSub(end, em_.i64(1))));
          tiles_over(block, mul(c, tile_columns_), tile_columns_, [&](llvm::Value* q) {
            auto [first, last] = share(b_, lines, block.tiles, q);
            auto line = [&](llvm::Value* l) { em_.prefetch(element(next, mul(l, per_line()))); };
            emit_for(em_, first, last, "gemm.prefetch_kept", line, /*vectorize=*/false);
          });
        },
        /*vectorize=*/false);
    panel_base_ = panel_;
  }

  // Copies lhs[row_begin : last_row + 1, p0 : p0 + depth] into the block, `tiles` tiles of
  // rows: tile q's step p holds its rows' elements side by side at (q · depth_ + p) · tile_rows_,
  // rows past the last repeating it, as the tiles compute them: runs of 4 steps interleaved in
  // registers, each asking for the next tile's rows (element by element: 4% of 512³ on Zen 1;
  // so 2%). A transposed lhs goes a step at a time.
  void pack_lhs(llvm::Value* batch, llvm::Value* p0, llvm::Value* depth, llvm::Value* row_begin,
                llvm::Value* last_row, llvm::Value* tiles) {
    std::int64_t run = g_.transpose_lhs ? 1 : 4;
    llvm::Value* in_runs = mul(b_.CreateUDiv(depth, em_.i64(run)), run);
    for_range(em_.i64(0), tiles, "gemm.pack_lhs", [&](llvm::Value* q) {
      std::vector<llvm::Value*> rows;  // the tile's, then the next tile's
      for (std::int64_t r = 0; r < 2 * tile_rows_; ++r)
        rows.push_back(umin(add(row_begin, add(mul(q, tile_rows_), em_.i64(r))), last_row));
      auto copy = [&](llvm::Value* p, std::int64_t steps) {
        auto at = [&](std::int64_t r) { return element(lhs_, lhs_at(batch, rows[r], add(p0, p))); };
        auto* type = llvm::FixedVectorType::get(elem_, static_cast<unsigned>(steps));
        std::vector<llvm::Value*> runs;
        for (std::int64_t r = 0; r < tile_rows_; ++r) {
          runs.push_back(b_.CreateAlignedLoad(type, at(r), align_));
          if (steps > 1) em_.prefetch(at(tile_rows_ + r));
        }
        b_.CreateAlignedStore(interleave(b_, runs),
                              element(lhs_block_, mul(nest(q, depth_, p), tile_rows_)), align_);
      };
      emit_strided_for(
          em_, em_.i64(0), in_runs, run, "gemm.pack_lhs_runs",
          [&](llvm::Value* p) { copy(p, run); },
          /*vectorize=*/false);
      emit_for(
          em_, in_runs, depth, "gemm.pack_lhs_steps", [&](llvm::Value* p) { copy(p, 1); },
          /*vectorize=*/false);
    });
  }

  std::int64_t per_line() const { return 64 / itemsize(g_.dtype); }  // elements a line holds

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
  // Panel row p, a vector at a time.
  std::vector<llvm::Value*> panel_row(llvm::Value* p, std::int64_t cols) {
    std::vector<llvm::Value*> row;
    for (int v = 0; v < vectors(cols); ++v)
      row.push_back(b_.CreateAlignedLoad(vec_, panel_at(p, em_.i64(v), cols), panel_->getAlign()));
    return row;
  }
  // rhs[step, col : col + cols] where it lies, a vector at a time, zero past the right edge.
  std::vector<llvm::Value*> rhs_row(llvm::Value* batch, llvm::Value* step, llvm::Value* col,
                                    std::int64_t cols) {
    std::vector<llvm::Value*> row;
    for (int v = 0; v < vectors(cols); ++v) {
      llvm::Value* at =
          element(rhs_, rhs_at(batch, step, add(col, em_.i64(std::int64_t{v} * lanes_))));
      row.push_back(load_lanes(at, v + 1 < vectors(cols) ? lanes_ : last_lanes(cols)));
    }
    return row;
  }

  // Asks for the lines of rhs[step, col : col + cols], a line's columns apart (none past the
  // last column), into the first-level cache or, not `first_level`, the second.
  void prefetch_rhs(llvm::Value* batch, llvm::Value* step, llvm::Value* col, std::int64_t cols,
                    bool first_level) {
    for (std::int64_t c = 0; c < cols; c += per_line())
      em_.prefetch(
          element(rhs_, rhs_at(batch, step, umin(add(col, em_.i64(c)), em_.i64(g_.n - 1)))),
          /*write=*/false, first_level);
  }

  // Asks for the lines of out[row + rows : row + 2 * rows, col : col + cols], the next tile's
  // share (none past last_row), for writing. A block of rows holds more of out than the
  // second-level cache, and the tile's first multiply-adds would wait on those loads (Zen 1, f32
  // n³, one core, against OpenBLAS: n = 3000 0.94 -> 0.99, 4096 0.91 -> 0.95).
  void prefetch_next_tile_out(llvm::Value* batch, llvm::Value* row, llvm::Value* last_row,
                              llvm::Value* col, std::int64_t cols) {
    for (int r = 0; r < tile_rows_; ++r) {
      llvm::Value* next = umin(add(row, em_.i64(tile_rows_ + r)), last_row);
      // Every line the row's columns touch: from the first column, a line apart, and the last.
      for (std::int64_t c = 0; c < cols + per_line() - 1; c += per_line())
        em_.prefetch(element(out_, out_at(batch, next, add(col, em_.i64(std::min(c, cols - 1))))),
                     /*write=*/true);
    }
  }

  // Copies rhs[p0 : p0 + depth, col : col + cols] into the panel, row after row of whole vectors,
  // zero past the right edge: the tiles then load only aligned, whole vectors.
  void pack(llvm::Value* batch, llvm::Value* p0, llvm::Value* depth, llvm::Value* col,
            std::int64_t cols) {
    if (pairs_) return pack_pairs(batch, p0, depth, col, cols);
    if (!g_.transpose_rhs || cols < lanes_ || depth_ < lanes_)
      return pack_rows(batch, p0, em_.i64(0), depth, col, cols);
    // A transposed rhs holds the panel's columns as rows: square blocks of them are loaded whole
    // and transposed in registers; what remains of the depth and the edge is gathered.
    auto square = static_cast<std::int64_t>(lanes_);
    int whole = static_cast<int>(cols / square);
    llvm::Value* squared = mul(b_.CreateUDiv(depth, em_.i64(square)), square);
    emit_strided_for(
        em_, em_.i64(0), squared, square, "gemm.pack",
        [&](llvm::Value* p) {
          emit_for(
              em_, whole, "gemm.pack_square",
              [&](llvm::Value* v) { pack_square(batch, p0, p, col, v, cols); },
              /*vectorize=*/false);
        },
        /*vectorize=*/false);
    if (whole < vectors(cols)) pack_rows(batch, p0, em_.i64(0), squared, col, cols, whole);
    pack_rows(batch, p0, squared, depth, col, cols);
  }

  // The addresses of a vector of an rhs row from `at`, where rhs is stored transposed (its
  // elements lie k apart).
  llvm::Value* transposed_row(llvm::Type* elem, llvm::Value* at) {
    std::vector<llvm::Constant*> steps;
    for (unsigned l = 0; l < lanes_; ++l) steps.push_back(em_.i64(std::int64_t{l} * g_.k));
    return b_.CreateInBoundsGEP(elem, at, llvm::ConstantVector::get(steps));
  }

  // Panel rows [begin, end), vectors from_vector on: one load (or gather) a vector.
  void pack_rows(llvm::Value* batch, llvm::Value* p0, llvm::Value* begin, llvm::Value* end,
                 llvm::Value* col, std::int64_t cols, int from_vector = 0) {
    llvm::Value* zero = llvm::Constant::getNullValue(vec_);
    emit_for(
        em_, begin, end, "gemm.pack_rows",
        [&](llvm::Value* p) {
          for (int v = from_vector; v < vectors(cols); ++v) {
            std::int64_t live = v + 1 < vectors(cols) ? lanes_ : last_lanes(cols);
            llvm::Value* first_col = add(col, em_.i64(std::int64_t{v} * lanes_));
            llvm::Value* at = element(rhs_, rhs_at(batch, add(p0, p), first_col));
            llvm::Value* row;
            if (g_.transpose_rhs)
              row =
                  b_.CreateMaskedGather(vec_, transposed_row(elem_, at), align_, mask(live), zero);
            else
              row = load_lanes(at, live);
            b_.CreateAlignedStore(row, panel_at(p, em_.i64(v), cols), panel_->getAlign());
          }
        },
        /*vectorize=*/false);
  }

  // bf16 operands: panel row q holds steps p0 + 2q and p0 + 2q + 1 (zero past the depth) of
  // the panel's columns interleaved, a vector of 2 x lanes_ at a time, as the pair multiply-add
  // reads them.
  void pack_pairs(llvm::Value* batch, llvm::Value* p0, llvm::Value* depth, llvm::Value* col,
                  std::int64_t cols) {
    llvm::Type* i16 = b_.getInt16Ty();
    auto* half = llvm::FixedVectorType::get(i16, lanes_);
    llvm::Align align(2);
    llvm::Value* zero = llvm::Constant::getNullValue(half);
    llvm::Value* pairs = b_.CreateLShr(b_.CreateAdd(depth, em_.i64(1)), em_.i64(1));
    emit_for(
        em_, em_.i64(0), pairs, "gemm.pack_pairs",
        [&](llvm::Value* q) {
          llvm::Value* step = add(p0, mul(q, 2));
          llvm::Value* second = b_.CreateICmpULT(add(mul(q, 2), em_.i64(1)), depth);
          for (int v = 0; v < vectors(cols); ++v) {
            std::int64_t live = v + 1 < vectors(cols) ? lanes_ : last_lanes(cols);
            llvm::Value* first_col = add(col, em_.i64(std::int64_t{v} * lanes_));
            // Row `p` of rhs at the vector's columns, where `on`.
            auto row = [&](llvm::Value* p, llvm::Value* on) {
              llvm::Value* at = b_.CreateInBoundsGEP(i16, rhs_, rhs_at(batch, p, first_col));
              llvm::Value* lanes_on = b_.CreateAnd(mask(live), b_.CreateVectorSplat(lanes_, on));
              if (!g_.transpose_rhs) return b_.CreateMaskedLoad(half, at, align, lanes_on, zero);
              return b_.CreateMaskedGather(half, transposed_row(i16, at), align, lanes_on, zero);
            };
            llvm::Value* both =
                interleave(b_, {row(step, b_.getTrue()), row(add(step, em_.i64(1)), second)});
            b_.CreateAlignedStore(both, pair_panel_at(q, v, cols), panel_->getAlign());
          }
        },
        /*vectorize=*/false);
  }
  llvm::Value* pair_panel_at(llvm::Value* q, int v, std::int64_t cols) {
    return b_.CreateInBoundsGEP(panel_elem_, panel_,
                                add(mul(q, vectors(cols) * std::int64_t{2 * lanes_}),
                                    em_.i64(std::int64_t{v} * 2 * lanes_)));
  }

  // The lanes x lanes block of a transposed rhs at panel rows [p, p + lanes), panel vector v:
  // lanes contiguous loads, log2(lanes) rounds of two-vector shuffles, lanes stores.
  void pack_square(llvm::Value* batch, llvm::Value* p0, llvm::Value* p, llvm::Value* col,
                   llvm::Value* v, std::int64_t cols) {
    std::vector<llvm::Value*> r;
    for (unsigned i = 0; i < lanes_; ++i) {
      llvm::Value* column = add(add(col, mul(v, lanes_)), em_.i64(i));
      r.push_back(
          b_.CreateAlignedLoad(vec_, element(rhs_, rhs_at(batch, add(p0, p), column)), align_));
    }
    transpose_square(b_, r);
    for (unsigned j = 0; j < lanes_; ++j)
      b_.CreateAlignedStore(r[j], panel_at(add(p, em_.i64(j)), v, cols), panel_->getAlign());
  }

  // out[rows, col : col + cols] += lhs[rows, p0 : p0 + depth] · panel for `rows` rows from
  // `row` (none past last_row), starting from zero at the first step of the contraction. The
  // tile stays in registers throughout; `before_steps` is emitted before its steps. `packs`:
  // it reads rhs where it lies and writes the panel (GemmBlocking::first_tile_packs).
  void tile(llvm::Value* batch, llvm::Value* row, llvm::Value* last_row, llvm::Value* p0,
            llvm::Value* depth, llvm::Value* col, std::int64_t cols, llvm::Value* packed_lhs,
            int rows, bool packs, const std::function<void()>& before_steps) {
    std::vector<llvm::Value*> row_of;
    for (int r = 0; r < rows; ++r) row_of.push_back(umin(add(row, em_.i64(r)), last_row));
    int n_vec = vectors(cols);
    std::int64_t last = last_lanes(cols);
    auto col_of = [&](int v) { return add(col, em_.i64(std::int64_t{v} * lanes_)); };
    auto out_of = [&](int r, int v) {
      return element(out_, out_at(batch, row_of[static_cast<std::size_t>(r)], col_of(v)));
    };
    if (rhs_read_ == RhsRead::kPacked) prefetch_next_tile_out(batch, row, last_row, col, cols);
    before_steps();
    llvm::Value* zero = llvm::Constant::getNullValue(vec_);
    llvm::Value* first = b_.CreateICmpEQ(p0, em_.i64(0));
    std::vector<llvm::AllocaInst*> acc;
    for (int r = 0; r < rows; ++r)
      for (int v = 0; v < n_vec; ++v) {
        llvm::Value* partial = load_lanes(out_of(r, v), v + 1 < n_vec ? lanes_ : last);
        acc.push_back(em_.entry_alloca(vec_, "gemm.acc"));
        b_.CreateStore(b_.CreateSelect(first, zero, partial), acc.back());
      }
    if (pairs_) {
      pair_steps(batch, row_of, p0, depth, cols, acc);
    } else if (rhs_read_ == RhsRead::kDotProducts) {
      dot_product_steps(batch, row_of, col, cols, acc);
    } else if (conv_) {
      run_steps(row_of, p0, depth, cols, acc);
    } else {
      emit_for(
          em_, em_.i64(0), depth, "gemm.k",
          [&](llvm::Value* p) {
            llvm::Value* step = add(p0, p);
            std::vector<llvm::Value*> rhs_vectors = rhs_read_ == RhsRead::kInPlace || packs
                                                        ? rhs_row(batch, step, col, cols)
                                                        : panel_row(p, cols);
            if (packs) {
              for (int v = 0; v < n_vec; ++v)
                b_.CreateAlignedStore(rhs_vectors[static_cast<std::size_t>(v)],
                                      panel_at(p, em_.i64(v), cols), panel_->getAlign());
              llvm::Value* ahead = umin(add(step, em_.i64(kPackLookahead)), em_.i64(g_.k - 1));
              prefetch_rhs(batch, ahead, col, cols, true);
            }
            accumulate(acc, rhs_vectors, [&](std::size_t r) {
              llvm::Value* at =
                  packed_lhs ? element(packed_lhs, add(mul(p, tile_rows_),
                                                       em_.i64(static_cast<std::int64_t>(r))))
                             : element(lhs_, lhs_at(batch, row_of[r], step));
              return b_.CreateVectorSplat(lanes_, b_.CreateAlignedLoad(elem_, at, align_));
            });
          },
          /*vectorize=*/false);
    }
    auto store = [&](bool finish) {
      for (int v = 0; v < n_vec; ++v) {
        bool whole = v + 1 < n_vec || last == lanes_;
        llvm::Value* bias = nullptr;
        if (finish && epilogue_.bias)
          bias = load_lanes(element(epilogue_.bias, col_of(v)), whole ? lanes_ : last);
        for (int r = 0; r < rows; ++r) {
          llvm::Value* sum = b_.CreateLoad(vec_, acc[static_cast<std::size_t>(r * n_vec + v)]);
          if (finish) sum = apply_epilogue(em_, epilogue_.activation, sum, bias);
          if (whole)
            b_.CreateAlignedStore(sum, out_of(r, v), align_);
          else
            b_.CreateMaskedStore(sum, out_of(r, v), align_, mask(last));
        }
      }
    };
    if (!epilogue_.applies()) return store(false);
    // The epilogue applies as the last block of the contraction stores the tile.
    emit_if_else(
        em_, b_.CreateICmpEQ(add(p0, depth), em_.i64(g_.k)), "gemm.finish", [&] { store(true); },
        [&] { store(false); });
  }

  // The whole contraction of a tile whose `cols` columns are rows of rhs stored [n, k]
  // (RhsRead::kDotProducts): per row of the tile and column, an accumulator of lanes_ steps at a
  // time (masked at the end), its lanes then summed in order into the tile's accumulators.
  void dot_product_steps(llvm::Value* batch, const std::vector<llvm::Value*>& row_of,
                         llvm::Value* col, std::int64_t cols,
                         const std::vector<llvm::AllocaInst*>& acc) {
    llvm::Value* zero = llvm::Constant::getNullValue(vec_);
    std::vector<llvm::AllocaInst*> sums;  // row r, column j: r * cols + j
    for (std::size_t k = 0; k < row_of.size() * static_cast<std::size_t>(cols); ++k) {
      sums.push_back(em_.entry_alloca(vec_, "gemm.dot"));
      b_.CreateStore(zero, sums.back());
    }
    auto step = [&](llvm::Value* p, std::int64_t live) {
      auto load = [&](llvm::Value* at) { return load_lanes(at, live); };
      std::vector<llvm::Value*> xs;
      for (llvm::Value* row : row_of) xs.push_back(load(element(lhs_, lhs_at(batch, row, p))));
      for (std::int64_t j = 0; j < cols; ++j) {
        llvm::Value* w = load(element(rhs_, rhs_at(batch, p, add(col, em_.i64(j)))));
        for (std::size_t r = 0; r < xs.size(); ++r) {
          llvm::AllocaInst* sum =
              sums[r * static_cast<std::size_t>(cols) + static_cast<std::size_t>(j)];
          b_.CreateStore(b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {vec_},
                                            {xs[r], w, b_.CreateLoad(vec_, sum)}),
                         sum);
        }
      }
    };
    std::int64_t whole = g_.k / lanes_ * lanes_;
    emit_strided_for(
        em_, em_.i64(0), em_.i64(whole), lanes_, "gemm.dot_k",
        [&](llvm::Value* p) { step(p, lanes_); }, /*vectorize=*/false);
    if (whole < g_.k) step(em_.i64(whole), g_.k - whole);
    int n_vec = vectors(cols);
    for (std::size_t r = 0; r < row_of.size(); ++r)
      for (int v = 0; v < n_vec; ++v) {
        llvm::Value* lanes = zero;
        for (std::int64_t l = 0; l < lanes_ && v * lanes_ + l < cols; ++l) {
          auto j = static_cast<std::size_t>(v * lanes_ + l);
          llvm::Value* sum = b_.CreateLoad(vec_, sums[r * static_cast<std::size_t>(cols) + j]);
          lanes = b_.CreateInsertElement(
              lanes, b_.CreateFAddReduce(llvm::ConstantFP::getNegativeZero(elem_), sum), l);
        }
        llvm::AllocaInst* a =
            acc[r * static_cast<std::size_t>(n_vec) + static_cast<std::size_t>(v)];
        b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(vec_, a), lanes), a);
      }
  }

  // The tile's steps over bf16 operands, a pair at a time: each row's two lhs elements,
  // broadcast as one 32-bit lane, multiply-add the panel row's interleaved pairs into f32 lanes.
  // An odd depth ends with a pair whose second lhs element is zero (its panel half is too).
  void pair_steps(llvm::Value* batch, const std::vector<llvm::Value*>& row_of, llvm::Value* p0,
                  llvm::Value* depth, std::int64_t cols,
                  const std::vector<llvm::AllocaInst*>& acc) {
    int n_vec = vectors(cols);
    llvm::Type* i16 = b_.getInt16Ty();
    llvm::Type* i32 = b_.getInt32Ty();
    auto* pair_vec = llvm::FixedVectorType::get(b_.getBFloatTy(), 2 * lanes_);
    auto step = [&](llvm::Value* q, bool last_alone) {
      std::vector<llvm::Value*> rhs_row;
      for (int v = 0; v < n_vec; ++v)
        rhs_row.push_back(
            b_.CreateAlignedLoad(pair_vec, pair_panel_at(q, v, cols), panel_->getAlign()));
      llvm::Value* p = add(p0, mul(q, 2));
      accumulate(acc, rhs_row, [&](std::size_t r) {
        auto lhs_element = [&](llvm::Value* step) {
          return b_.CreateInBoundsGEP(i16, lhs_, lhs_at(batch, row_of[r], step));
        };
        llvm::Value* pair;
        if (!g_.transpose_lhs && !last_alone) {
          pair = b_.CreateAlignedLoad(i32, lhs_element(p), llvm::Align(2));
        } else {
          pair = b_.CreateZExt(b_.CreateAlignedLoad(i16, lhs_element(p), llvm::Align(2)), i32);
          if (!last_alone) {
            llvm::Value* second =
                b_.CreateAlignedLoad(i16, lhs_element(add(p, em_.i64(1))), llvm::Align(2));
            pair = b_.CreateOr(pair, b_.CreateShl(b_.CreateZExt(second, i32), 16));
          }
        }
        return b_.CreateBitCast(b_.CreateVectorSplat(lanes_, pair), pair_vec);
      });
    };
    emit_for(
        em_, em_.i64(0), b_.CreateLShr(depth, em_.i64(1)), "gemm.k_pairs",
        [&](llvm::Value* q) { step(q, false); }, /*vectorize=*/false);
    emit_if(em_, b_.CreateTrunc(depth, b_.getInt1Ty()), "gemm.k_odd",
            [&] { step(b_.CreateLShr(depth, em_.i64(1)), true); });
  }

  // The tile's steps of a convolution, a run at a time: each row's lhs elements start at the
  // row's offset moved by the run's first step, and follow the run's stride.
  void run_steps(const std::vector<llvm::Value*>& row_of, llvm::Value* p0, llvm::Value* depth,
                 std::int64_t cols, const std::vector<llvm::AllocaInst*>& acc) {
    std::int64_t run = std::min(depth_, conv_->run().size);
    const std::vector<hlo::ImplicitGemm::Bound>& bounds = conv_->bounds;
    std::vector<llvm::Value*> origin;
    std::vector<std::vector<llvm::Value*>> at_row(row_of.size());  // [row][bound]: i · stride
    for (std::size_t r = 0; r < row_of.size(); ++r) {
      // Signed: with padding an offset may be negative.
      origin.push_back(
          b_.CreateNSWAdd(lhs_offset(b_, row_of[r], conv_->rows), em_.i64(conv_->lhs_origin)));
      for (const hlo::ImplicitGemm::Bound& bound : bounds)
        at_row[r].push_back(mul(axis_index(b_, row_of[r], conv_->rows, bound.row), bound.stride));
    }
    // A run in the padding reads zeros instead.
    llvm::AllocaInst* zeros = nullptr;
    if (!bounds.empty()) {
      zeros = em_.entry_alloca(llvm::ArrayType::get(elem_, static_cast<std::uint64_t>(run)),
                               "gemm.zeros");
      llvm::IRBuilderBase::InsertPointGuard guard(b_);  // zeroed once, in the entry block
      b_.SetInsertPoint(zeros->getNextNode());
      b_.CreateMemSet(zeros, b_.getInt8(0), static_cast<std::uint64_t>(run * itemsize(g_.dtype)),
                      llvm::MaybeAlign(itemsize(g_.dtype)));
    }
    llvm::Value* runs = b_.CreateUDiv(depth, em_.i64(run));
    emit_for(
        em_, em_.i64(0), runs, "gemm.runs",
        [&](llvm::Value* s) {
          llvm::Value* first = mul(s, run);  // the run's first step in the block
          llvm::Value* step = add(p0, first);
          llvm::Value* shift = lhs_offset(b_, step, conv_->steps);
          std::vector<llvm::Value*> at_step;  // per bound: j · dilation - lo
          for (const hlo::ImplicitGemm::Bound& bound : bounds)
            at_step.push_back(
                b_.CreateSub(mul(axis_index(b_, step, conv_->steps, bound.step), bound.dilation),
                             em_.i64(bound.lo)));
          std::vector<llvm::Value*> start;
          for (std::size_t r = 0; r < origin.size(); ++r) {
            // Outside lhs the offset may point before it: the GEP is chosen only when inside.
            llvm::Value* at = b_.CreateGEP(elem_, lhs_, b_.CreateNSWAdd(origin[r], shift));
            llvm::Value* inside = b_.getTrue();
            for (std::size_t k = 0; k < bounds.size(); ++k)
              inside = b_.CreateAnd(inside, b_.CreateICmpULT(b_.CreateAdd(at_row[r][k], at_step[k]),
                                                             em_.i64(bounds[k].size)));
            start.push_back(zeros ? b_.CreateSelect(inside, at, zeros) : at);
          }
          emit_for(
              em_, em_.i64(0), em_.i64(run), "gemm.k",
              [&](llvm::Value* j) {
                llvm::Value* along = mul(j, conv_->run().lhs_stride);
                accumulate(acc, panel_row(add(first, j), cols), [&](std::size_t r) {
                  return b_.CreateVectorSplat(
                      lanes_, b_.CreateAlignedLoad(elem_, element(start[r], along), align_));
                });
              },
              /*vectorize=*/false);
        },
        /*vectorize=*/false);
  }

  // One step of the tile: each accumulator of row r, vector v, multiply-adds xs_of(r) (a row's
  // lhs, broadcast) and rhs_row[v] (a vector of the panel's row).
  void accumulate(const std::vector<llvm::AllocaInst*>& acc,
                  const std::vector<llvm::Value*>& rhs_row,
                  const std::function<llvm::Value*(std::size_t)>& xs_of) {
    for (std::size_t r = 0; r < acc.size() / rhs_row.size(); ++r) {
      llvm::Value* xs = xs_of(r);
      for (std::size_t v = 0; v < rhs_row.size(); ++v) {
        llvm::AllocaInst* a = acc[r * rhs_row.size() + v];
        llvm::Value* sum = b_.CreateLoad(vec_, a);
        b_.CreateStore(
            pairs_ ? pair_multiply_add(b_, bf16_pairs_ && lanes_ == 16, sum, xs, rhs_row[v])
                   : b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {vec_}, {xs, rhs_row[v], sum}),
            a);
      }
    }
  }

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
  std::int64_t depth_ = 1, block_rows_ = 1;
  // depth_ rows of tile_vectors_ vectors (panel_elems_); panel_base_: the panel that the tiles
  // read and a pack writes, this one or a kept one
  llvm::AllocaInst* panel_ = nullptr;
  std::int64_t panel_elems_ = 0;
  llvm::Value* panel_base_ = nullptr;
  llvm::Value* kept_ = nullptr;  // the full panels of a block of the contraction (keep_panels)
  llvm::AllocaInst* lhs_block_ = nullptr;  // block_rows_ by depth_ of lhs, packed (pack_lhs)
  std::optional<hlo::ImplicitGemm> conv_;  // a convolution's lhs geometry, when it is one
};

}  // namespace

void emit_implicit_gemm(ElementalEmitter& em, const CpuIsa& isa, const hlo::ImplicitGemm& conv,
                        llvm::Value* lhs, llvm::Value* rhs, llvm::Value* out,
                        const std::optional<OuterRange>& rows) {
  GemmEmitter gemm(em, isa, conv.shape, lhs, rhs, out, nullptr, {}, &conv);
  gemm.emit(em.i64(0), em.i64(1), rows ? rows->begin : em.i64(0),
            rows ? rows->end : em.i64(conv.shape.m));
}

void emit_blocked_gemm(ElementalEmitter& em, const CpuIsa& isa, const hlo::GemmShape& g,
                       const Shape& out_dims, llvm::Value* lhs, llvm::Value* rhs, llvm::Value* out,
                       llvm::Value* workspace, const std::optional<OuterRange>& rows,
                       const TileEpilogue& epilogue) {
  GemmEmitter gemm(em, isa, g, lhs, rhs, out, workspace, epilogue);
  // A partitioned kernel owns rows [begin, end) of out's dimension 0: rows of the product when
  // it has no batch dims, else whole products of the first batch dim; or, for a product of few
  // rows, column panels.
  bool batched = out_dims.size() > 2;
  if (!rows) return gemm.emit(em.i64(0), em.i64(g.batch), em.i64(0), em.i64(g.m));
  if (gemm_column_panels(isa, g)) {
    gemm.restrict_panels(rows->begin, rows->end);
    return gemm.emit(em.i64(0), em.i64(1), em.i64(0), em.i64(g.m));
  }
  if (!batched) return gemm.emit(em.i64(0), em.i64(1), rows->begin, rows->end);
  std::int64_t per_row = g.batch / out_dims[0];
  auto& b = em.b();
  gemm.emit(b.CreateMul(rows->begin, em.i64(per_row)), b.CreateMul(rows->end, em.i64(per_row)),
            em.i64(0), em.i64(g.m));
}

}  // namespace jx::codegen::cpu
