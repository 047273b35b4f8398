// The AMX kernel's emitter (gemm_amx.hpp): its loops over groups of panels, blocks of steps and
// blocks of rows, its tiles' products and its stores in gemm_amx.cpp; its packing in
// gemm_amx_packing.cpp.
#pragma once

#include <llvm/IR/IntrinsicsX86.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "codegen/cpu/gemm.hpp"
#include "codegen/cpu/gemm_plan.hpp"

namespace jx::codegen::cpu {

class AmxEmitter {
 public:
  AmxEmitter(ElementalEmitter& em, const hlo::GemmShape& g, llvm::Value* lhs, llvm::Value* rhs,
             llvm::Value* out, llvm::Value* workspace, const TileEpilogue& epilogue)
      : em_(em),
        b_(em.b()),
        g_(g),
        lhs_(lhs),
        rhs_(rhs),
        out_(out),
        panels_(workspace),
        layout_(amx_workspace(g)),
        epilogue_(epilogue) {
    lhs_block_ = byte_at(panels_, em_.i64(layout_.lhs_block));
    sums_ = byte_at(panels_, em_.i64(layout_.sums));
  }

  // The units' products, each's parts of rows, each part over its panels among the units.
  void emit(llvm::Value* unit_begin, llvm::Value* unit_end);

 private:
  // A tile register as the tiles here configure it: 16 rows of 64 bytes (32 bf16 steps of lhs,
  // 16 interleaved pairs of steps of rhs, or 16 f32 sums); a product's rows alone, where fewer,
  // in tiles of lhs and sums.
  static constexpr std::int64_t kRows = 16, kRowBytes = 64, kSteps = kAmxTileSteps;
  static constexpr std::int64_t kBlockRows = kAmxBlockRows;
  // A block is two tiles of lhs; a transposed rhs packs half a panel of columns by a tile of
  // steps as one square of pairs.
  static_assert(kBlockRows == 2 * kRows && kSteps == kAmxPanelColumns);
  static constexpr std::int64_t kPanelRowBytes = kAmxPanelRowBytes;

  // A block of steps: from `first` (a multiple of kSteps), `tiles` tiles of kSteps.
  struct Steps {
    llvm::Value *first, *tiles;
  };

  // The group's nth panel.
  llvm::Value* panel_at(llvm::Value* nth) {
    return byte_at(panels_, mul(nth, layout_.panel_bytes));
  }
  // The sums of a part's block of rows for the group's nth panel.
  llvm::Value* sums_of(llvm::Value* row_block, llvm::Value* nth) {
    if (!layout_.carried) return sums_;
    llvm::Value* at = add(mul(row_block, layout_.panels), nth);
    return byte_at(sums_, mul(at, kBlockRows * kAmxPanelColumns * 4));
  }

  llvm::Value* add(llvm::Value* a, llvm::Value* c) { return b_.CreateAdd(a, c, "", true, true); }
  llvm::Value* mul(llvm::Value* a, std::int64_t c) {
    return b_.CreateMul(a, em_.i64(c), "", true, true);
  }
  llvm::Value* byte_at(llvm::Value* base, llvm::Value* offset) {
    return b_.CreateInBoundsGEP(b_.getInt8Ty(), base, offset);
  }
  // The first `live` lanes of `lanes` (live may be anything: none below 0, all past lanes).
  llvm::Value* first_lanes(unsigned lanes, llvm::Value* live) {
    std::vector<llvm::Constant*> ids;
    for (unsigned l = 0; l < lanes; ++l) ids.push_back(em_.i64(l));
    return b_.CreateICmpSLT(llvm::ConstantVector::get(ids), b_.CreateVectorSplat(lanes, live));
  }
  // Element `index` of `base` for a masked load or store: not `inbounds`, as the first element
  // of a run that crosses an edge of its buffer may lie past it.
  llvm::Value* masked_at(llvm::Type* elem, llvm::Value* base, llvm::Value* index) {
    return b_.CreateGEP(elem, base, index);
  }
  // A run of `lanes` 16-bit elements (or `lanes` pairs of them, as i32) from `at`, zero in the
  // lanes past `mask` and, where `inside` is false, in all of them.
  llvm::Value* run(unsigned lanes, llvm::Value* at, llvm::Value* mask, llvm::Value* inside,
                   bool pairs = false) {
    auto* type = llvm::FixedVectorType::get(pairs ? b_.getInt32Ty() : b_.getInt16Ty(), lanes);
    if (inside) mask = b_.CreateAnd(mask, b_.CreateVectorSplat(lanes, inside));
    return b_.CreateMaskedLoad(type, at, llvm::Align(2), mask, llvm::Constant::getNullValue(type));
  }

  // The tile unit's operations, on tiles of `rows` x kRowBytes.
  llvm::Value* tile_op(llvm::Intrinsic::ID id, std::int64_t rows, std::vector<llvm::Value*> args) {
    args.insert(args.begin(),
                {b_.getInt16(static_cast<std::uint16_t>(rows)), b_.getInt16(kRowBytes)});
    return b_.CreateIntrinsic(id, {}, args);
  }
  llvm::Value* load_tile(std::int64_t rows, llvm::Value* at, std::int64_t stride) {
    return tile_op(llvm::Intrinsic::x86_tileloadd64_internal, rows, {at, em_.i64(stride)});
  }

  // f(c, begin_c, end_c) for each chunk c of `size` indices that [begin, end) reaches, with
  // [begin_c, end_c) the range's part in it, counted from the chunk's first index.
  void chunks(llvm::Value* begin, llvm::Value* end, std::int64_t size, const std::string& name,
              const std::function<void(llvm::Value*, llvm::Value*, llvm::Value*)>& f);

  // Panels [panel_begin, panel_end) of rows [row_begin, row_end), a group of panels and a block
  // of steps at a time: the group's panels packed for the block's steps, then every block of
  // rows passes over them, its lhs for those steps packed once for all, its sums carried in the
  // workspace to the next block of steps (sums_of) and stored after the last.
  void groups(llvm::Value* panel_begin, llvm::Value* panel_end, llvm::Value* row_begin,
              llvm::Value* row_end);

  // Rows [row, row + 32) of the panel at `col` for a block of steps: tiles of sums (rows 16 t / 2,
  // columns 16 (t % 2) of the block's 32 x 32 f32), zero or carried from the blocks of steps
  // before, through the block's steps, then stored to `sums` and, after the last block, through
  // the epilogue to out. A product of fewer than 32 rows configures its tiles of lhs and sums with
  // its rows alone (at most 16, one tile of lhs and two of sums), each tdpbf16ps taking time by
  // its rows.
  void block(llvm::Value* row, llvm::Value* col, llvm::Value* panel, const Steps& steps,
             llvm::Value* sums);

  // A vector of 16 of `d` from `at`, its lanes past `mask` zero, widened to f32.
  llvm::Value* load_f32(DType d, llvm::Value* at, llvm::Value* mask);

  // out[row + r, col : col + 32] = epilogue(sums[r]) for the block's rows inside out.
  void store(llvm::Value* row, llvm::Value* col, llvm::Value* sums);

  // Row q of the group's panels [first, last) for a block of steps: rhs rows 2q and 2q + 1 of
  // the block at each panel's 32 columns, interleaved; zero past the last column and past the
  // contraction. A row of every panel at a time, so that each step reads a run of an rhs row.
  void pack(llvm::Value* first, llvm::Value* last, const Steps& steps);

  // One panel of pack() of rhs stored [n, k], whose columns' steps lie in runs: a column's 16
  // pairs of steps are one vector of 32-bit pairs, and 16 columns' such vectors, transposed, are
  // 16 panel rows' halves. A last, odd step's pairs are gathered after, in its block.
  void pack_transposed(llvm::Value* col, llvm::Value* panel, const Steps& steps);

  // lhs rows [row, row + 32) of a block of steps in tile order: the block's tile s's two tiles
  // (16 rows of 32 steps each) at (2 s + t) KiB, zero past lhs's last row and step, so that each
  // tile is 1 KiB in a run (a product of fewer than 32 rows: its rows alone, all its tiles read).
  void pack_lhs(llvm::Value* row, const Steps& steps);

  // pack_lhs() of lhs stored [k, m]: a step's 32 rows are a run, and 32 steps' runs, transposed,
  // are the rows' runs of steps.
  void pack_lhs_transposed(llvm::Value* row, const Steps& steps);

  ElementalEmitter& em_;
  llvm::IRBuilder<>& b_;
  hlo::GemmShape g_;
  llvm::Value *lhs_, *rhs_, *out_;
  llvm::Value* panels_;  // the workspace's start: a group of packed panels
  AmxWorkspace layout_;
  TileEpilogue epilogue_;
  llvm::Value* lhs_block_;  // a block of 32 rows of lhs, packed (pack_lhs)
  llvm::Value* sums_;       // a block's 32 x 32 sums, or every block's of a part (carried)
};

}  // namespace jx::codegen::cpu
