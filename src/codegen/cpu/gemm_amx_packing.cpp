// The AMX kernel's packing (gemm_amx_emitter.hpp): rhs panels with pairs of steps interleaved
// (transposed in registers where rhs is stored [n, k]) and blocks of lhs in tile order.
#include <algorithm>

#include "codegen/cpu/gemm_amx_emitter.hpp"
#include "codegen/cpu/gemm_tile_math.hpp"
#include "codegen/elemental/loops.hpp"

namespace jx::codegen::cpu {

void AmxEmitter::pack(llvm::Value* first, llvm::Value* last, const Steps& steps) {
  if (g_.transpose_rhs) {
    emit_for(
        em_, first, last, "amx.pack_panels",
        [&](llvm::Value* j) {
          pack_transposed(mul(j, kAmxPanelColumns), panel_at(b_.CreateSub(j, first)), steps);
        },
        /*vectorize=*/false);
    return;
  }
  emit_for(
      em_, em_.i64(0), mul(steps.tiles, kSteps / 2), "amx.pack",
      [&](llvm::Value* q) {
        llvm::Value* pair = add(b_.CreateUDiv(steps.first, em_.i64(2)), q);
        emit_for(
            em_, first, last, "amx.pack_panels",
            [&](llvm::Value* j) {
              llvm::Value* col = mul(j, kAmxPanelColumns);
              llvm::Value* mask = first_lanes(kAmxPanelColumns, b_.CreateSub(em_.i64(g_.n), col));
              auto row = [&](std::int64_t offset) {
                llvm::Value* step = add(mul(pair, 2), em_.i64(offset));
                llvm::Value* at = masked_at(b_.getInt16Ty(), rhs_, add(mul(step, g_.n), col));
                return run(kAmxPanelColumns, at, mask, b_.CreateICmpSLT(step, em_.i64(g_.k)));
              };
              llvm::Value* to = byte_at(panel_at(b_.CreateSub(j, first)), mul(q, kPanelRowBytes));
              b_.CreateAlignedStore(interleave(b_, {row(0), row(1)}), to, llvm::Align(64));
            },
            /*vectorize=*/false);
      },
      /*vectorize=*/false);
}

void AmxEmitter::pack_transposed(llvm::Value* col, llvm::Value* panel, const Steps& steps) {
  constexpr unsigned kPairs = kSteps / 2;
  llvm::Value* first_tile = b_.CreateUDiv(steps.first, em_.i64(kSteps));
  emit_for(
      em_, em_.i64(0), steps.tiles, "amx.pack_transposed",
      [&](llvm::Value* t) {
        llvm::Value* s = add(first_tile, t);
        llvm::Value* whole = first_lanes(kPairs, b_.CreateSub(em_.i64(g_.k / 2), mul(s, kPairs)));
        for (std::int64_t half = 0; half < 2; ++half) {
          std::vector<llvm::Value*> runs;
          for (std::int64_t c = 0; c < kPairs; ++c) {
            llvm::Value* column = add(col, em_.i64(half * kPairs + c));
            llvm::Value* inside = b_.CreateICmpSLT(column, em_.i64(g_.n));
            llvm::Value* at =
                masked_at(b_.getInt16Ty(), rhs_, add(mul(column, g_.k), mul(s, kSteps)));
            runs.push_back(run(kPairs, at, whole, inside, /*pairs=*/true));
          }
          transpose_square(b_, runs);
          for (std::int64_t q = 0; q < kPairs; ++q) {
            llvm::Value* at = add(mul(add(mul(t, kPairs), em_.i64(q)), kPanelRowBytes),
                                  em_.i64(half * kPairs * 4));
            b_.CreateAlignedStore(runs[static_cast<std::size_t>(q)], byte_at(panel, at),
                                  llvm::Align(64));
          }
        }
      },
      /*vectorize=*/false);
  if (g_.k % 2 == 0) return;
  llvm::Value* pair_row = b_.CreateSub(em_.i64(g_.k / 2), b_.CreateUDiv(steps.first, em_.i64(2)));
  emit_if(em_, b_.CreateICmpULT(pair_row, mul(steps.tiles, kPairs)), "amx.pack_odd_step", [&] {
    std::vector<llvm::Constant*> strides;
    for (std::int64_t c = 0; c < kAmxPanelColumns; ++c) strides.push_back(em_.i64(c * g_.k));
    llvm::Value* last = masked_at(b_.getInt16Ty(), rhs_, add(mul(col, g_.k), em_.i64(g_.k - 1)));
    auto* run = llvm::FixedVectorType::get(b_.getInt16Ty(), kAmxPanelColumns);
    llvm::Value* steps_of_columns = b_.CreateMaskedGather(
        run, masked_at(b_.getInt16Ty(), last, llvm::ConstantVector::get(strides)), llvm::Align(2),
        first_lanes(kAmxPanelColumns, b_.CreateSub(em_.i64(g_.n), col)),
        llvm::Constant::getNullValue(run));
    b_.CreateAlignedStore(b_.CreateZExt(steps_of_columns, llvm::FixedVectorType::get(
                                                              b_.getInt32Ty(), kAmxPanelColumns)),
                          byte_at(panel, mul(pair_row, kPanelRowBytes)), llvm::Align(64));
  });
}

void AmxEmitter::pack_lhs(llvm::Value* row, const Steps& steps) {
  if (g_.transpose_lhs) return pack_lhs_transposed(row, steps);
  emit_for(
      em_, em_.i64(0), steps.tiles, "amx.pack_lhs",
      [&](llvm::Value* s) {
        llvm::Value* step = add(steps.first, mul(s, kSteps));
        llvm::Value* live = first_lanes(kSteps, b_.CreateSub(em_.i64(g_.k), step));
        emit_for(
            em_, std::min(g_.m, kBlockRows), "amx.pack_lhs_rows",
            [&](llvm::Value* r) {
              llvm::Value* at = add(row, r);
              llvm::Value* inside = b_.CreateICmpSLT(at, em_.i64(g_.m));
              llvm::Value* from = masked_at(b_.getInt16Ty(), lhs_, add(mul(at, g_.k), step));
              llvm::Value* to = add(mul(s, kBlockRows * kRowBytes), mul(r, kRowBytes));
              b_.CreateAlignedStore(run(kSteps, from, live, inside), byte_at(lhs_block_, to),
                                    llvm::Align(64));
            },
            /*vectorize=*/false);
      },
      /*vectorize=*/false);
}

void AmxEmitter::pack_lhs_transposed(llvm::Value* row, const Steps& steps) {
  llvm::Value* rows = first_lanes(kBlockRows, b_.CreateSub(em_.i64(g_.m), row));
  emit_for(
      em_, em_.i64(0), steps.tiles, "amx.pack_lhs_transposed",
      [&](llvm::Value* s) {
        std::vector<llvm::Value*> runs;
        for (std::int64_t p = 0; p < kSteps; ++p) {
          llvm::Value* step = add(add(steps.first, mul(s, kSteps)), em_.i64(p));
          llvm::Value* inside = b_.CreateICmpSLT(step, em_.i64(g_.k));
          runs.push_back(run(kBlockRows,
                             masked_at(b_.getInt16Ty(), lhs_, add(mul(step, g_.m), row)), rows,
                             inside));
        }
        transpose_square(b_, runs);
        for (std::int64_t r = 0; r < kBlockRows; ++r)
          b_.CreateAlignedStore(
              runs[static_cast<std::size_t>(r)],
              byte_at(lhs_block_, add(mul(s, kBlockRows * kRowBytes), em_.i64(r * kRowBytes))),
              llvm::Align(64));
      },
      /*vectorize=*/false);
}

}  // namespace jx::codegen::cpu
