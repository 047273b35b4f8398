// The matrix kernel's packing (gemm_emitter.hpp): rhs panels into whole vectors (transposed
// or in bf16 pairs where it must), blocks of lhs, and reading and asking for rhs in place.
#include "codegen/cpu/gemm_emitter.hpp"
#include "codegen/cpu/gemm_tile_math.hpp"

namespace jx::codegen::cpu {

void GemmEmitter::pack_lhs(llvm::Value* batch, llvm::Value* p0, llvm::Value* depth,
                           llvm::Value* row_begin, llvm::Value* last_row, llvm::Value* tiles) {
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
        em_, em_.i64(0), in_runs, run, "gemm.pack_lhs_runs", [&](llvm::Value* p) { copy(p, run); },
        /*vectorize=*/false);
    emit_for(
        em_, in_runs, depth, "gemm.pack_lhs_steps", [&](llvm::Value* p) { copy(p, 1); },
        /*vectorize=*/false);
  });
}

std::vector<llvm::Value*> GemmEmitter::rhs_row(llvm::Value* batch, llvm::Value* step,
                                               llvm::Value* col, std::int64_t cols) {
  std::vector<llvm::Value*> row;
  for (int v = 0; v < vectors(cols); ++v) {
    llvm::Value* at =
        element(rhs_, rhs_at(batch, step, add(col, em_.i64(std::int64_t{v} * lanes_))));
    row.push_back(load_lanes(at, v + 1 < vectors(cols) ? lanes_ : last_lanes(cols)));
  }
  return row;
}

void GemmEmitter::prefetch_rhs(llvm::Value* batch, llvm::Value* step, llvm::Value* col,
                               std::int64_t cols, bool first_level) {
  for (std::int64_t c : line_columns(cols)) {
    llvm::Value* at = umin(add(col, em_.i64(c)), em_.i64(g_.n - 1));
    em_.prefetch(element(rhs_, rhs_at(batch, step, at)), /*write=*/false, first_level);
  }
}

void GemmEmitter::pack(llvm::Value* batch, llvm::Value* p0, llvm::Value* depth, llvm::Value* col,
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

llvm::Value* GemmEmitter::transposed_row(llvm::Type* elem, llvm::Value* at) {
  std::vector<llvm::Constant*> steps;
  for (unsigned l = 0; l < lanes_; ++l) steps.push_back(em_.i64(std::int64_t{l} * g_.k));
  return b_.CreateInBoundsGEP(elem, at, llvm::ConstantVector::get(steps));
}

void GemmEmitter::pack_rows(llvm::Value* batch, llvm::Value* p0, llvm::Value* begin,
                            llvm::Value* end, llvm::Value* col, std::int64_t cols,
                            int from_vector) {
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
            row = b_.CreateMaskedGather(vec_, transposed_row(elem_, at), align_, mask(live), zero);
          else
            row = load_lanes(at, live);
          store_panel(p, em_.i64(v), cols, row);
        }
      },
      /*vectorize=*/false);
}

llvm::Value* GemmEmitter::pair_row(llvm::Value* batch, llvm::Value* step, llvm::Value* second,
                                   llvm::Value* col, int v, std::int64_t cols) {
  llvm::Type* i16 = b_.getInt16Ty();
  auto* half = llvm::FixedVectorType::get(i16, lanes_);
  llvm::Align align(2);
  llvm::Value* zero = llvm::Constant::getNullValue(half);
  std::int64_t live = v + 1 < vectors(cols) ? lanes_ : last_lanes(cols);
  llvm::Value* first_col = add(col, em_.i64(std::int64_t{v} * lanes_));
  // Row `p` of rhs at the vector's columns, where `on`.
  auto row = [&](llvm::Value* p, llvm::Value* on) {
    llvm::Value* at = b_.CreateInBoundsGEP(i16, rhs_, rhs_at(batch, p, first_col));
    llvm::Value* lanes_on = b_.CreateAnd(mask(live), b_.CreateVectorSplat(lanes_, on));
    if (!g_.transpose_rhs) return b_.CreateMaskedLoad(half, at, align, lanes_on, zero);
    return b_.CreateMaskedGather(half, transposed_row(i16, at), align, lanes_on, zero);
  };
  return interleave(b_, {row(step, b_.getTrue()), row(add(step, em_.i64(1)), second)});
}

void GemmEmitter::pack_pairs(llvm::Value* batch, llvm::Value* p0, llvm::Value* depth,
                             llvm::Value* col, std::int64_t cols) {
  llvm::Value* pairs = b_.CreateLShr(b_.CreateAdd(depth, em_.i64(1)), em_.i64(1));
  emit_for(
      em_, em_.i64(0), pairs, "gemm.pack_pairs",
      [&](llvm::Value* q) {
        llvm::Value* step = add(p0, mul(q, 2));
        llvm::Value* second = b_.CreateICmpULT(add(mul(q, 2), em_.i64(1)), depth);
        for (int v = 0; v < vectors(cols); ++v)
          b_.CreateAlignedStore(pair_row(batch, step, second, col, v, cols),
                                pair_panel_at(q, v, cols), panel_align_);
      },
      /*vectorize=*/false);
}

void GemmEmitter::pack_square(llvm::Value* batch, llvm::Value* p0, llvm::Value* p, llvm::Value* col,
                              llvm::Value* v, std::int64_t cols) {
  std::vector<llvm::Value*> r;
  for (unsigned i = 0; i < lanes_; ++i) {
    llvm::Value* column = add(add(col, mul(v, lanes_)), em_.i64(i));
    r.push_back(
        b_.CreateAlignedLoad(vec_, element(rhs_, rhs_at(batch, add(p0, p), column)), align_));
  }
  transpose_square(b_, r);
  for (unsigned j = 0; j < lanes_; ++j) store_panel(add(p, em_.i64(j)), v, cols, r[j]);
}

}  // namespace jx::codegen::cpu
