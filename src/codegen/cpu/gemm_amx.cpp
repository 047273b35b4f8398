#include "codegen/cpu/gemm_amx.hpp"

#include <llvm/IR/IntrinsicsX86.h>

#include <algorithm>
#include <array>

#include "codegen/cpu/gemm_tile_math.hpp"
#include "codegen/elemental/loops.hpp"

namespace jx::codegen::cpu {
namespace {

// A tile register as the tiles here configure it: 16 rows of 64 bytes (32 bf16 steps of lhs,
// 16 interleaved pairs of steps of rhs, or 16 f32 sums); a product's rows alone, where fewer, in
// tiles of lhs and sums.
constexpr std::int64_t kRows = 16, kRowBytes = 64, kSteps = kAmxTileSteps;
constexpr std::int64_t kBlockRows = kAmxBlockRows;
// A block is two tiles of lhs; a transposed rhs packs half a panel of columns by a tile of
// steps as one square of pairs.
static_assert(kBlockRows == 2 * kRows && kSteps == kAmxPanelColumns);
constexpr std::int64_t kPanelRowBytes = kAmxPanelRowBytes;

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
  void emit(llvm::Value* unit_begin, llvm::Value* unit_end) {
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

 private:
  // f(c, begin_c, end_c) for each chunk c of `size` indices that [begin, end) reaches, with
  // [begin_c, end_c) the range's part in it, counted from the chunk's first index.
  void chunks(llvm::Value* begin, llvm::Value* end, std::int64_t size, const std::string& name,
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

  // Panels [panel_begin, panel_end) of rows [row_begin, row_end), a group of panels and a block
  // of steps at a time: the group's panels packed for the block's steps, then every block of
  // rows passes over them, its lhs for those steps packed once for all, its sums carried in the
  // workspace to the next block of steps (sums_of) and stored after the last.
  void groups(llvm::Value* panel_begin, llvm::Value* panel_end, llvm::Value* row_begin,
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

  // Row q of the group's panels [first, last) for a block of steps: rhs rows 2q and 2q + 1 of
  // the block at each panel's 32 columns, interleaved; zero past the last column and past the
  // contraction. A row of every panel at a time, so that each step reads a run of an rhs row.
  void pack(llvm::Value* first, llvm::Value* last, const Steps& steps) {
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

  // One panel of pack() of rhs stored [n, k], whose columns' steps lie in runs: a column's 16
  // pairs of steps are one vector of 32-bit pairs, and 16 columns' such vectors, transposed, are
  // 16 panel rows' halves. A last, odd step's pairs are gathered after, in its block.
  void pack_transposed(llvm::Value* col, llvm::Value* panel, const Steps& steps) {
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

  // lhs rows [row, row + 32) of a block of steps in tile order: the block's tile s's two tiles
  // (16 rows of 32 steps each) at (2 s + t) KiB, zero past lhs's last row and step, so that each
  // tile is 1 KiB in a run (a product of fewer than 32 rows: its rows alone, all its tiles read).
  void pack_lhs(llvm::Value* row, const Steps& steps) {
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

  // pack_lhs() of lhs stored [k, m]: a step's 32 rows are a run, and 32 steps' runs, transposed,
  // are the rows' runs of steps.
  void pack_lhs_transposed(llvm::Value* row, const Steps& steps) {
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

  // Rows [row, row + 32) of the panel at `col` for a block of steps: tiles of sums (rows 16 t / 2,
  // columns 16 (t % 2) of the block's 32 x 32 f32), zero or carried from the blocks of steps
  // before, through the block's steps, then stored to `sums` and, after the last block, through
  // the epilogue to out. A product of fewer than 32 rows configures its tiles of lhs and sums with
  // its rows alone (at most 16, one tile of lhs and two of sums), each tdpbf16ps taking time by
  // its rows.
  void block(llvm::Value* row, llvm::Value* col, llvm::Value* panel, const Steps& steps,
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

  // A vector of 16 of `d` from `at`, its lanes past `mask` zero, widened to f32.
  llvm::Value* load_f32(DType d, llvm::Value* at, llvm::Value* mask) {
    auto* vec = llvm::FixedVectorType::get(storage_type(b_.getContext(), d), kRows);
    llvm::Value* v = b_.CreateMaskedLoad(vec, at, llvm::Align(itemsize(d)), mask,
                                         llvm::Constant::getNullValue(vec));
    return k16BitFloating.contains(d) ? widen_float(b_, v) : v;
  }

  // out[row + r, col : col + 32] = epilogue(sums[r]) for the block's rows inside out.
  void store(llvm::Value* row, llvm::Value* col, llvm::Value* sums) {
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

}  // namespace

void emit_amx_gemm(ElementalEmitter& em, const hlo::GemmShape& g, llvm::Value* lhs,
                   llvm::Value* rhs, llvm::Value* out, llvm::Value* workspace,
                   llvm::Value* unit_begin, llvm::Value* unit_end, const TileEpilogue& epilogue) {
  AmxEmitter(em, g, lhs, rhs, out, workspace, epilogue).emit(unit_begin, unit_end);
}

}  // namespace jx::codegen::cpu
