// The matrix kernel's loops (gemm_emitter.hpp): the contraction's blocks, the blocks of rows,
// the panels of columns, where each panel is packed, and the entry points.
#include "codegen/cpu/gemm.hpp"

#include "codegen/cpu/gemm_amx.hpp"
#include "codegen/cpu/gemm_emitter.hpp"
#include "codegen/cpu/gemm_tile_math.hpp"
#include "support/check.hpp"

namespace jx::codegen::cpu {

GemmEmitter::GemmEmitter(ElementalEmitter& em, const CpuIsa& isa, const hlo::GemmShape& g,
                         llvm::Value* lhs, llvm::Value* rhs, llvm::Value* out,
                         llvm::Value* workspace, const TileEpilogue& epilogue,
                         const hlo::ImplicitGemm* conv)
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
  rhs_is_panel_ = blocking.rhs_is_panel;
  GemmWorkspace layout = gemm_workspace(isa, g, conv);
  JX_CHECK((layout.bytes > 0) == (workspace != nullptr));
  auto at = [&](std::int64_t offset) {
    return offset < 0 ? nullptr
                      : b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), workspace,
                                                      static_cast<std::uint64_t>(offset));
  };
  kept_ = at(layout.kept);
  lhs_block_ = at(layout.lhs_block);
  panel_ = panel_base_ = at(layout.panel);
  JX_CHECK(!(first_tile_packs_ || kept_) ||  // packed as the tiles go, a row of rhs a step
           (tile.rhs == RhsRead::kPacked && !pairs_ && !conv && !g.transpose_rhs));
  // rhs, read as its own panel, is aligned as its elements are.
  panel_align_ = rhs_is_panel_ ? align_ : llvm::Align(isa.vector_bytes);
  panel_elem_ = pairs_ ? b_.getInt16Ty() : elem_;
  panel_elems_ = panel_elements(isa, g, tile, depth_);
}

void GemmEmitter::emit(llvm::Value* batch_begin, llvm::Value* batch_end, llvm::Value* row_begin,
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

void GemmEmitter::for_range(llvm::Value* begin, llvm::Value* end, const std::string& name,
                            const std::function<void(llvm::Value*)>& body) {
  auto* cb = llvm::dyn_cast<llvm::ConstantInt>(begin);
  auto* ce = llvm::dyn_cast<llvm::ConstantInt>(end);
  if (cb && ce && cb->getSExtValue() + 1 == ce->getSExtValue()) return body(begin);
  emit_for(em_, begin, end, name, body, /*vectorize=*/false);
}

void GemmEmitter::depth_blocks(const std::function<void(llvm::Value*, llvm::Value*)>& f) {
  std::int64_t blocks = (g_.k + depth_ - 1) / depth_;
  for_range(em_.i64(0), em_.i64(blocks), "gemm.depth", [&](llvm::Value* q) {
    llvm::Value* p0 = mul(q, depth_);
    f(p0, umin(em_.i64(depth_), b_.CreateSub(em_.i64(g_.k), p0)));
  });
}

void GemmEmitter::row_blocks(
    llvm::Value* row_begin, llvm::Value* row_end,
    const std::function<void(llvm::Value*, llvm::Value*, llvm::Value*)>& f) {
  llvm::Value* blocks = b_.CreateUDiv(
      add(b_.CreateSub(row_end, row_begin), em_.i64(block_rows_ - 1)), em_.i64(block_rows_));
  for_range(em_.i64(0), blocks, "gemm.row_blocks", [&](llvm::Value* q) {
    llvm::Value* begin = add(row_begin, mul(q, block_rows_));
    f(begin, umin(add(begin, em_.i64(block_rows_)), row_end), b_.CreateICmpEQ(q, em_.i64(0)));
  });
}

void GemmEmitter::row_block(llvm::Value* batch, llvm::Value* p0, llvm::Value* depth,
                            llvm::Value* row_begin, llvm::Value* row_end,
                            llvm::Value* first_block) {
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
    if (rhs_is_panel_)
      panel_base_ = element(rhs_, rhs_at(batch, p0, col));
    else if (rhs_read_ == RhsRead::kPacked && !first_tile_packs_)
      pack(batch, p0, depth, col, cols);
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

void GemmEmitter::tiles_over(const Block& block, llvm::Value* col, std::int64_t cols,
                             const std::function<void(llvm::Value*)>& before_steps) {
  auto tile_q = [&](llvm::Value* q, int rows, bool packs = false) {
    llvm::Value* lhs = lhs_block_ ? element(lhs_block_, mul(q, tile_rows_ * depth_)) : nullptr;
    tile(block.batch, add(block.row_begin, mul(q, tile_rows_)), block.last_row, block.p0,
         block.depth, col, cols, lhs, rows, packs, [&] { before_steps(q); });
  };
  auto packing_tile = [&] { tile_q(em_.i64(0), tile_rows_, true); };
  if (first_tile_packs_ && !last_tile_rows_)  // whole == tiles >= 1: no block is empty
    packing_tile();
  else if (first_tile_packs_)  // a last block may be one short tile, which does not pack
    emit_if_else(em_, b_.CreateICmpUGT(block.whole, em_.i64(0)), "gemm.packing_tile", packing_tile,
                 [&] { pack(block.batch, block.p0, block.depth, col, cols); });
  for_range(em_.i64(first_tile_packs_ ? 1 : 0), block.whole, "gemm.rows",
            [&](llvm::Value* q) { tile_q(q, tile_rows_); });
  if (last_tile_rows_)
    emit_if(em_, b_.CreateICmpULT(block.whole, block.tiles), "gemm.short_tile",
            [&] { tile_q(block.whole, last_tile_rows_); });
}

void GemmEmitter::panels_ahead(const Block& block, llvm::Value* begin, llvm::Value* end) {
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

void GemmEmitter::kept_panels(const Block& block, llvm::Value* begin, llvm::Value* end) {
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

void emit_implicit_gemm(ElementalEmitter& em, const CpuIsa& isa, const hlo::ImplicitGemm& conv,
                        llvm::Value* lhs, llvm::Value* rhs, llvm::Value* out,
                        llvm::Value* workspace, const std::optional<OuterRange>& rows) {
  GemmEmitter gemm(em, isa, conv.shape, lhs, rhs, out, workspace, {}, &conv);
  gemm.emit(em.i64(0), em.i64(1), rows ? rows->begin : em.i64(0),
            rows ? rows->end : em.i64(conv.shape.m));
}

void emit_blocked_gemm(ElementalEmitter& em, const CpuIsa& isa, const hlo::GemmShape& g,
                       const Shape& out_dims, llvm::Value* lhs, llvm::Value* rhs, llvm::Value* out,
                       llvm::Value* workspace, const std::optional<OuterRange>& rows,
                       const TileEpilogue& epilogue) {
  if (amx_computes(isa, g))
    return emit_amx_gemm(em, g, lhs, rhs, out, workspace, rows ? rows->begin : em.i64(0),
                         rows ? rows->end : em.i64(amx_units(g)), epilogue);
  // The vector kernel adds into its output block by block: no epilogue rounds to 16 bits.
  JX_CHECK(!k16BitFloating.contains(epilogue.out) &&
           (!epilogue.bias || epilogue.bias_dtype == g.dtype));
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
