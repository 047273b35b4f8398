// The AMX kernel's loops (gemm_amx_emitter.hpp): the units' products and parts of rows, groups
// of panels, blocks of steps and of rows, the tiles' products, and the stores through the
// epilogue; and its entry point.
#include "codegen/cpu/gemm_amx.hpp"

#include <algorithm>
#include <array>

#include "codegen/cpu/gemm_amx_emitter.hpp"
#include "codegen/cpu/gemm_tile_math.hpp"
#include "codegen/elemental/loops.hpp"

namespace jx::codegen::cpu {

void AmxEmitter::emit(llvm::Value* unit_begin, llvm::Value* unit_end) {
  std::int64_t panels = amx_panels(g_), parts = amx_row_parts(g_), blocks = amx_row_blocks(g_);
  llvm::Value *lhs = lhs_, *rhs = rhs_, *out = out_;
  unit_end = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, unit_end, em_.i64(amx_units(g_)));
  chunks(unit_begin, unit_end, parts * panels, "amx.batch",
         [&](llvm::Value* batch, llvm::Value* begin, llvm::Value* end) {
           auto* i16 = b_.getInt16Ty();
           lhs_ = b_.CreateInBoundsGEP(i16, lhs, mul(batch, g_.m * g_.k));
           rhs_ = b_.CreateInBoundsGEP(i16, rhs, mul(batch, g_.k * g_.n));
           out_ = b_.CreateInBoundsGEP(storage_type(b_.getContext(), epilogue_.out), out,
                                       mul(batch, g_.m * g_.n));
           chunks(begin, end, panels, "amx.parts",
                  [&](llvm::Value* part, llvm::Value* first, llvm::Value* last) {
                    auto row_of = [&](llvm::Value* p) {  // the first row of part p
                      return mul(b_.CreateUDiv(mul(p, blocks), em_.i64(parts)), kBlockRows);
                    };
                    llvm::Value* row_end = b_.CreateBinaryIntrinsic(
                        llvm::Intrinsic::umin, row_of(add(part, em_.i64(1))), em_.i64(g_.m));
                    groups(first, last, row_of(part), row_end);
                  });
         });
}

void AmxEmitter::chunks(llvm::Value* begin, llvm::Value* end, std::int64_t size,
                        const std::string& name,
                        const std::function<void(llvm::Value*, llvm::Value*, llvm::Value*)>& f) {
  llvm::Value* first_chunk = b_.CreateUDiv(begin, em_.i64(size));
  llvm::Value* end_chunk = b_.CreateUDiv(add(end, em_.i64(size - 1)), em_.i64(size));
  emit_for(
      em_, first_chunk, end_chunk, name,
      [&](llvm::Value* c) {
        llvm::Value* first = mul(c, size);
        auto clamp = [&](llvm::Value* i) {
          llvm::Value* low = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, i, first);
          llvm::Value* high =
              b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, low, add(first, em_.i64(size)));
          return b_.CreateSub(high, first);
        };
        f(c, clamp(begin), clamp(end));
      },
      /*vectorize=*/false);
}

void AmxEmitter::groups(llvm::Value* panel_begin, llvm::Value* panel_end, llvm::Value* row_begin,
                        llvm::Value* row_end) {
  std::int64_t depth = amx_padded_depth(g_);
  emit_strided_for(
      em_, panel_begin, panel_end, layout_.panels, "amx.groups",
      [&](llvm::Value* first) {
        llvm::Value* last = b_.CreateBinaryIntrinsic(
            llvm::Intrinsic::smin, add(first, em_.i64(layout_.panels)), panel_end);
        emit_strided_for(
            em_, em_.i64(0), em_.i64(depth), layout_.steps, "amx.depth",
            [&](llvm::Value* step) {
              Steps steps{step, em_.i64(layout_.steps / kSteps)};
              if (layout_.carried)
                steps.tiles = b_.CreateUDiv(
                    b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, em_.i64(layout_.steps),
                                             b_.CreateSub(em_.i64(depth), step)),
                    em_.i64(kSteps));
              pack(first, last, steps);
              emit_strided_for(
                  em_, row_begin, row_end, kBlockRows, "amx.rows",
                  [&](llvm::Value* row) {
                    pack_lhs(row, steps);
                    llvm::Value* row_block =
                        b_.CreateUDiv(b_.CreateSub(row, row_begin), em_.i64(kBlockRows));
                    emit_for(
                        em_, first, last, "amx.panels",
                        [&](llvm::Value* j) {
                          llvm::Value* nth = b_.CreateSub(j, first);
                          block(row, mul(j, kAmxPanelColumns), panel_at(nth), steps,
                                sums_of(row_block, nth));
                        },
                        /*vectorize=*/false);
                  },
                  /*vectorize=*/false);
            },
            /*vectorize=*/false);
      },
      /*vectorize=*/false);
}

void AmxEmitter::block(llvm::Value* row, llvm::Value* col, llvm::Value* panel, const Steps& steps,
                       llvm::Value* sums) {
  constexpr std::int64_t kSumRowBytes = kAmxPanelColumns * 4;
  // The rows of lhs tile t, and of sums tile t's (t / 2).
  auto rows = [&](std::size_t t) { return std::min(kRows, g_.m - kRows * std::int64_t(t)); };
  std::size_t lhs_tiles = g_.m > kRows ? 2 : 1, sum_tiles = 2 * lhs_tiles;
  auto sums_tile = [&](std::size_t t) {
    auto offset = static_cast<std::int64_t>(t / 2 * kRows * kSumRowBytes + t % 2 * kRowBytes);
    return byte_at(sums, em_.i64(offset));
  };
  auto* amx = llvm::Type::getX86_AMXTy(b_.getContext());
  llvm::Function* f = b_.GetInsertBlock()->getParent();
  auto* loop = llvm::BasicBlock::Create(b_.getContext(), "amx.steps", f);
  auto* done = llvm::BasicBlock::Create(b_.getContext(), "amx.steps_done", f);
  auto zeros = [&] {
    std::vector<llvm::Value*> z;
    for (std::size_t t = 0; t < sum_tiles; ++t)
      z.push_back(tile_op(llvm::Intrinsic::x86_tilezero_internal, rows(t / 2), {}));
    return z;
  };
  std::vector<llvm::Value*> start;
  if (layout_.carried) {  // zero in the first block of steps, else carried
    auto* first = llvm::BasicBlock::Create(b_.getContext(), "amx.sums_zero", f, loop);
    auto* later = llvm::BasicBlock::Create(b_.getContext(), "amx.sums_carried", f, loop);
    auto* entry = llvm::BasicBlock::Create(b_.getContext(), "amx.sums_start", f, loop);
    b_.CreateCondBr(b_.CreateICmpEQ(steps.first, em_.i64(0)), first, later);
    b_.SetInsertPoint(first);
    std::vector<llvm::Value*> zero = zeros();
    b_.CreateBr(entry);
    b_.SetInsertPoint(later);
    for (std::size_t t = 0; t < sum_tiles; ++t) {
      llvm::Value* carried = load_tile(rows(t / 2), sums_tile(t), kSumRowBytes);
      b_.SetInsertPoint(entry);
      llvm::PHINode* phi = b_.CreatePHI(amx, 2);
      phi->addIncoming(zero[t], first);
      phi->addIncoming(carried, later);
      start.push_back(phi);
      b_.SetInsertPoint(later);
    }
    b_.CreateBr(entry);
    b_.SetInsertPoint(entry);
  } else {
    start = zeros();
  }
  llvm::BasicBlock* before = b_.GetInsertBlock();
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode* s = b_.CreatePHI(b_.getInt64Ty(), 2, "amx.s");
  s->addIncoming(em_.i64(0), before);
  std::vector<llvm::PHINode*> carried;
  for (std::size_t t = 0; t < sum_tiles; ++t) {
    carried.push_back(b_.CreatePHI(amx, 2, "amx.sums"));
    carried[t]->addIncoming(start[t], before);
  }
  std::array<llvm::Value*, 2> lhs{}, rhs{};
  for (std::size_t t = 0; t < lhs_tiles; ++t) {
    llvm::Value* at = add(mul(s, kBlockRows * kRowBytes), em_.i64(t * kRows * kRowBytes));
    lhs[t] = load_tile(rows(t), byte_at(lhs_block_, at), kRowBytes);
  }
  llvm::Value* panel_rows = byte_at(panel, mul(s, kSteps / 2 * kPanelRowBytes));
  for (std::size_t v = 0; v < 2; ++v)
    rhs[v] =
        load_tile(kRows, byte_at(panel_rows, em_.i64(static_cast<std::int64_t>(v) * kRowBytes)),
                  kPanelRowBytes);
  std::vector<llvm::Value*> next;
  for (std::size_t t = 0; t < sum_tiles; ++t)
    next.push_back(tile_op(llvm::Intrinsic::x86_tdpbf16ps_internal, rows(t / 2),
                           {b_.getInt16(kRowBytes), carried[t], lhs[t / 2], rhs[t % 2]}));
  llvm::Value* s_next = add(s, em_.i64(1));
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  s->addIncoming(s_next, latch);
  for (std::size_t t = 0; t < sum_tiles; ++t) carried[t]->addIncoming(next[t], latch);
  b_.CreateCondBr(b_.CreateICmpULT(s_next, steps.tiles), loop, done);
  b_.SetInsertPoint(done);

  for (std::size_t t = 0; t < sum_tiles; ++t)
    tile_op(llvm::Intrinsic::x86_tilestored64_internal, rows(t / 2),
            {sums_tile(t), em_.i64(kSumRowBytes), next[t]});
  if (!layout_.carried) return store(row, col, sums);
  llvm::Value* end = add(steps.first, mul(steps.tiles, kSteps));
  emit_if(em_, b_.CreateICmpEQ(end, em_.i64(amx_padded_depth(g_))), "amx.last_steps",
          [&] { store(row, col, sums); });
}

llvm::Value* AmxEmitter::load_f32(DType d, llvm::Value* at, llvm::Value* mask) {
  auto* vec = llvm::FixedVectorType::get(storage_type(b_.getContext(), d), kRows);
  llvm::Value* v = b_.CreateMaskedLoad(vec, at, llvm::Align(itemsize(d)), mask,
                                       llvm::Constant::getNullValue(vec));
  return k16BitFloating.contains(d) ? widen_float(b_, v) : v;
}

void AmxEmitter::store(llvm::Value* row, llvm::Value* col, llvm::Value* sums) {
  DType out = epilogue_.out;
  bool rounds = k16BitFloating.contains(out);
  llvm::Type* out_elem = storage_type(b_.getContext(), out);
  std::array<llvm::Value*, 2> mask, bias{};
  for (std::size_t v = 0; v < 2; ++v) {
    llvm::Value* first = add(col, em_.i64(static_cast<std::int64_t>(v) * kRows));
    mask[v] = first_lanes(kRows, b_.CreateSub(em_.i64(g_.n), first));
    if (epilogue_.bias)
      bias[v] = load_f32(
          epilogue_.bias_dtype,
          masked_at(storage_type(b_.getContext(), epilogue_.bias_dtype), epilogue_.bias, first),
          mask[v]);
  }
  llvm::Value* rows = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, em_.i64(kBlockRows),
                                               b_.CreateSub(em_.i64(g_.m), row));
  emit_for(
      em_, em_.i64(0), rows, "amx.store",
      [&](llvm::Value* r) {
        for (std::size_t v = 0; v < 2; ++v) {
          auto lane = static_cast<std::int64_t>(v) * kRows;
          llvm::Value* from = b_.CreateInBoundsGEP(b_.getFloatTy(), sums,
                                                   add(mul(r, kAmxPanelColumns), em_.i64(lane)));
          llvm::Value* sum = b_.CreateAlignedLoad(
              llvm::FixedVectorType::get(b_.getFloatTy(), kRows), from, llvm::Align(64));
          if (rounds && epilogue_.applies()) sum = widen_float(b_, narrow_float(b_, sum, out));
          sum = apply_epilogue(em_, epilogue_.activation, sum, bias[v]);
          if (rounds) sum = narrow_float(b_, sum, out);
          llvm::Value* at = add(mul(add(row, r), g_.n), add(col, em_.i64(lane)));
          b_.CreateMaskedStore(sum, masked_at(out_elem, out_, at), llvm::Align(itemsize(out)),
                               mask[v]);
        }
      },
      /*vectorize=*/false);
}

void emit_amx_gemm(ElementalEmitter& em, const hlo::GemmShape& g, llvm::Value* lhs,
                   llvm::Value* rhs, llvm::Value* out, llvm::Value* workspace,
                   llvm::Value* unit_begin, llvm::Value* unit_end, const TileEpilogue& epilogue) {
  AmxEmitter(em, g, lhs, rhs, out, workspace, epilogue).emit(unit_begin, unit_end);
}

}  // namespace jx::codegen::cpu
