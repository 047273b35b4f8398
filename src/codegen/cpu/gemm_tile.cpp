// The matrix kernel's tile (gemm_emitter.hpp): rows x vectors of out accumulated in registers
// over one block of the contraction, their steps for each way of reading the operands, and
// the store that applies a dense layer's epilogue.
#include <algorithm>

#include "codegen/cpu/gemm_emitter.hpp"
#include "codegen/cpu/gemm_tile_math.hpp"

namespace jx::codegen::cpu {

std::vector<llvm::Value*> GemmEmitter::panel_row(llvm::Value* p, std::int64_t cols) {
  std::vector<llvm::Value*> row;
  for (int v = 0; v < vectors(cols); ++v)
    row.push_back(b_.CreateAlignedLoad(vec_, panel_at(p, em_.i64(v), cols), panel_align_));
  return row;
}

void GemmEmitter::prefetch_next_tile_out(llvm::Value* batch, llvm::Value* row,
                                         llvm::Value* last_row, llvm::Value* col,
                                         std::int64_t cols) {
  for (int r = 0; r < tile_rows_; ++r) {
    llvm::Value* next = umin(add(row, em_.i64(tile_rows_ + r)), last_row);
    for (std::int64_t c : line_columns(cols))
      em_.prefetch(element(out_, out_at(batch, next, add(col, em_.i64(c)))), /*write=*/true);
  }
}

void GemmEmitter::tile(llvm::Value* batch, llvm::Value* row, llvm::Value* last_row, llvm::Value* p0,
                       llvm::Value* depth, llvm::Value* col, std::int64_t cols,
                       llvm::Value* packed_lhs, int rows, bool packs,
                       const std::function<void()>& before_steps) {
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
    pair_steps(batch, row_of, p0, depth, col, cols, acc);
  } else if (rhs_read_ == RhsRead::kDotProducts) {
    dot_product_steps(batch, row_of, col, cols, acc);
  } else if (conv_) {
    run_steps(row_of, p0, depth, cols, acc);
  } else {
    auto step_at = [&](llvm::Value* p) {
      llvm::Value* step = add(p0, p);
      std::vector<llvm::Value*> rhs_vectors = rhs_read_ == RhsRead::kInPlace || packs
                                                  ? rhs_row(batch, step, col, cols)
                                                  : panel_row(p, cols);
      if (packs) {
        for (int v = 0; v < n_vec; ++v)
          store_panel(p, em_.i64(v), cols, rhs_vectors[static_cast<std::size_t>(v)]);
        llvm::Value* ahead = umin(add(step, em_.i64(kPackLookahead)), em_.i64(g_.k - 1));
        prefetch_rhs(batch, ahead, col, cols, true);
      }
      accumulate(acc, rhs_vectors, [&](std::size_t r) {
        llvm::Value* at =
            packed_lhs ? element(packed_lhs,
                                 add(mul(p, tile_rows_), em_.i64(static_cast<std::int64_t>(r))))
                       : element(lhs_, lhs_at(batch, row_of[r], step));
        return b_.CreateVectorSplat(lanes_, b_.CreateAlignedLoad(elem_, at, align_));
      });
    };
    if (rhs_read_ == RhsRead::kPacked && !packs) {
      // Over a packed panel, two steps an iteration (an odd last one alone), half the loop's own
      // instructions a step: 2-8% faster where the panel is in the second level, level in the
      // first (docs/performance.md). The odd step's code only where a block may be odd.
      llvm::Value* even = b_.CreateAnd(depth, em_.i64(-2));
      emit_strided_for(
          em_, em_.i64(0), even, 2, "gemm.k",
          [&](llvm::Value* p) {
            step_at(p);
            step_at(add(p, em_.i64(1)));
          },
          /*vectorize=*/false);
      if (depth_ % 2 || g_.k % 2)
        emit_if(em_, b_.CreateICmpULT(even, depth), "gemm.k_odd", [&] { step_at(even); });
    } else {
      emit_for(em_, em_.i64(0), depth, "gemm.k", step_at, /*vectorize=*/false);
    }
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

void GemmEmitter::dot_product_steps(llvm::Value* batch, const std::vector<llvm::Value*>& row_of,
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
      llvm::AllocaInst* a = acc[r * static_cast<std::size_t>(n_vec) + static_cast<std::size_t>(v)];
      b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(vec_, a), lanes), a);
    }
}

void GemmEmitter::pair_steps(llvm::Value* batch, const std::vector<llvm::Value*>& row_of,
                             llvm::Value* p0, llvm::Value* depth, llvm::Value* col,
                             std::int64_t cols, const std::vector<llvm::AllocaInst*>& acc) {
  int n_vec = vectors(cols);
  llvm::Type* i16 = b_.getInt16Ty();
  llvm::Type* i32 = b_.getInt32Ty();
  auto* pair_vec = llvm::FixedVectorType::get(b_.getBFloatTy(), 2 * lanes_);
  auto step = [&](llvm::Value* q, bool last_alone) {
    llvm::Value* p = add(p0, mul(q, 2));
    std::vector<llvm::Value*> rhs_row;
    for (int v = 0; v < n_vec; ++v)
      rhs_row.push_back(
          rhs_read_ == RhsRead::kInPlace
              ? b_.CreateBitCast(pair_row(batch, p, b_.getInt1(!last_alone), col, v, cols),
                                 pair_vec)
              : b_.CreateAlignedLoad(pair_vec, pair_panel_at(q, v, cols), panel_align_));
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

void GemmEmitter::run_steps(const std::vector<llvm::Value*>& row_of, llvm::Value* p0,
                            llvm::Value* depth, std::int64_t cols,
                            const std::vector<llvm::AllocaInst*>& acc) {
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

void GemmEmitter::accumulate(const std::vector<llvm::AllocaInst*>& acc,
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

}  // namespace jx::codegen::cpu
