// Prefix scans (cumsum and the other cumulative reductions) on the GPU, in one of two forms:
//
// - Many rows along an inner axis: a thread per row, folding it in order with a running
//   accumulator, as the eager impl does. Neighbouring threads take neighbouring inner positions,
//   so their loads coalesce.
// - Otherwise the rows are cut into tiles of kTile elements, a block per tile, in one pass with a
//   decoupled look-back: each thread folds kItems consecutive elements, the block scans the
//   threads' totals (warp shuffles, then the warps' totals), and thread 0 finds the tile's
//   prefix from the tiles before it in its row. A tile publishes its total as soon as it knows
//   it and its inclusive prefix once it has that; the look-back combines totals until it meets a
//   prefix. Blocks take tiles in the order they start (an atomic ticket), so every tile a block
//   waits for belongs to a block that is already running: no launch can deadlock.
//
// The scan's init value is its combiner's identity (0 for a sum, -inf for a max, ...), which
// stands in for "nothing" everywhere below.
#include "codegen/gpu/kernel.hpp"
#include "codegen/gpu/nvvm.hpp"
#include "hlo/window.hpp"

namespace jx::codegen::gpu {
namespace {

constexpr int kScanBlock = 256;
constexpr int kItems = 8;
constexpr std::int64_t kTile = std::int64_t{kScanBlock} * kItems;
constexpr int kWarps = kScanBlock / kWarpSize;

class ScanKernel {
 public:
  ScanKernel(KernelBody& k, const hlo::Instruction& scan)
      : k_(k), em_(k.em()), b_(em_.b()), scan_(scan), p_(*hlo::as_prefix_scan(scan)) {
    const Shape& dims = scan.shape.dims;
    auto axis = static_cast<std::size_t>(p_.axis);
    n_ = dims[axis];
    outer_.assign(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(axis));
    inner_.assign(dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, dims.end());
    rows_ = shape_size(outer_) * shape_size(inner_);
    type_ = em_.type(scan.shape.dtype);
  }

  GpuLaunch emit() {
    if (rows_ == 0 || n_ == 0) return {1, kWarpSize, 0};
    in_ = k_.generators_of({scan_.operands[0], scan_.operands[1]});
    init_ = in_[1](em_.scalar_index());
    if (shape_size(inner_) >= kWarpSize && rows_ >= 64 * kScanBlock) return emit_row_per_thread();
    return emit_tiles();
  }

 private:
  llvm::Value* combine(llvm::Value* earlier, llvm::Value* later) {
    return em_.apply(*scan_.called[0], {earlier, later});
  }

  // The index of step `step` (0 first in scan order) of the row at outer index o, inner index j.
  IrIndex index_at(const LoopIndex& o, const LoopIndex& j, llvm::Value* step) {
    llvm::Value* pos = p_.reverse ? b_.CreateSub(em_.i64(n_ - 1), step, "", true, true) : step;
    IrIndex index{o.index().dims, nullptr};
    index.dims.push_back(pos);
    index.dims.insert(index.dims.end(), j.index().dims.begin(), j.index().dims.end());
    index.linear = em_.linear_index(index, scan_.shape.dims);
    return index;
  }

  GpuLaunch emit_row_per_thread() {
    GpuLaunch launch{grid_for(ceil_div(rows_, kScanBlock)), kScanBlock, 0};
    llvm::AllocaInst* acc = em_.entry_alloca(type_, "scan.acc");
    llvm::Value* first =
        b_.CreateAdd(b_.CreateMul(block_id(em_), em_.i64(kScanBlock), "", true, true),
                     thread_id(em_), "first", true, true);
    emit_strided_loop(em_, first, rows_, launch.grid * kScanBlock, "row", [&](llvm::Value* row) {
      LoopIndex o(em_, b_.CreateUDiv(row, em_.i64(shape_size(inner_))), outer_, "outer");
      LoopIndex j(em_, b_.CreateURem(row, em_.i64(shape_size(inner_))), inner_, "inner");
      b_.CreateStore(init_, acc);
      emit_strided_loop(em_, em_.i64(0), n_, 1, "scan", [&](llvm::Value* step) {
        IrIndex index = index_at(o, j, step);
        llvm::Value* v = combine(b_.CreateLoad(type_, acc), in_[0](index));
        b_.CreateStore(v, acc);
        em_.store(scan_.shape.dtype, v, k_.output(0), index.linear);
      });
    });
    return launch;
  }

  GpuLaunch emit_tiles() {
    std::int64_t tiles_per_row = ceil_div(n_, kTile), tiles = rows_ * tiles_per_row;
    llvm::Module& module = em_.module();
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::Value* tid = thread_id(em_);
    llvm::Value* lane = b_.CreateAnd(tid, em_.i64(kWarpSize - 1), "lane");
    llvm::Value* warp = b_.CreateUDiv(tid, em_.i64(kWarpSize), "warp");
    auto is_thread0 = [&] { return b_.CreateICmpEQ(tid, em_.i64(0)); };

    // The ticket: which launch this is (tickets are never reset) and which tile.
    llvm::GlobalVariable* tickets = global_array(module, i64, 1, "scan.tickets");
    llvm::GlobalVariable* ticket_slot = shared_array(module, i64, 1, "scan.ticket");
    emit_if(em_, is_thread0(), "take_ticket", [&] {
      llvm::Value* t =
          b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, array_element(em_, tickets, em_.i64(0)),
                             em_.i64(1), llvm::MaybeAlign(8), llvm::AtomicOrdering::Monotonic);
      b_.CreateStore(t, array_element(em_, ticket_slot, em_.i64(0)));
    });
    barrier(em_);
    llvm::Value* ticket = b_.CreateLoad(i64, array_element(em_, ticket_slot, em_.i64(0)));
    llvm::Value* launch_no = b_.CreateUDiv(ticket, em_.i64(tiles), "launch");
    llvm::Value* tile = b_.CreateURem(ticket, em_.i64(tiles), "tile");
    llvm::Value* row = b_.CreateUDiv(tile, em_.i64(tiles_per_row), "row");
    llvm::Value* tile_in_row = b_.CreateURem(tile, em_.i64(tiles_per_row), "tile_in_row");
    LoopIndex o(em_, b_.CreateUDiv(row, em_.i64(shape_size(inner_))), outer_, "outer");
    LoopIndex j(em_, b_.CreateURem(row, em_.i64(shape_size(inner_))), inner_, "inner");

    // This thread's elements, in scan order, and their fold. Steps past the row's end read its
    // last element and count as the identity.
    llvm::Value* first_step = b_.CreateAdd(b_.CreateMul(tile_in_row, em_.i64(kTile)),
                                           b_.CreateMul(tid, em_.i64(kItems)), "first_step");
    std::vector<llvm::Value*> items, valid, indices;
    llvm::Value* total = init_;
    for (int i = 0; i < kItems; ++i) {
      llvm::Value* step = b_.CreateAdd(first_step, em_.i64(i));
      valid.push_back(b_.CreateICmpULT(step, em_.i64(n_)));
      IrIndex index = index_at(o, j, b_.CreateSelect(valid.back(), step, em_.i64(n_ - 1)));
      indices.push_back(index.linear);
      items.push_back(b_.CreateSelect(valid.back(), in_[0](index), init_));
      total = combine(total, items.back());
    }

    // Inclusive scan of the threads' totals within each warp, then over the warps.
    llvm::Value* inclusive = total;
    for (int d = 1; d < kWarpSize; d *= 2) {
      llvm::Value* from = shuffle_up(em_, inclusive, d);
      inclusive =
          b_.CreateSelect(b_.CreateICmpUGE(lane, em_.i64(d)), combine(from, inclusive), inclusive);
    }
    llvm::Value* lane_before = shuffle_up(em_, inclusive, 1);
    llvm::Value* within_warp =
        b_.CreateSelect(b_.CreateICmpEQ(lane, em_.i64(0)), init_, lane_before, "within_warp");
    llvm::Type* slot = slot_type();
    llvm::GlobalVariable* warp_totals = shared_array(module, slot, kWarps, "scan.warp_totals");
    llvm::GlobalVariable* warp_before = shared_array(module, slot, kWarps + 1, "scan.warp_before");
    emit_if(em_, b_.CreateICmpEQ(lane, em_.i64(kWarpSize - 1)), "warp_total",
            [&] { store_slot(inclusive, array_element(em_, warp_totals, warp)); });
    barrier(em_);

    emit_if(em_, is_thread0(), "tile_prefix", [&] {
      llvm::Value* running = init_;
      for (int w = 0; w < kWarps; ++w) {
        store_slot(running, array_element(em_, warp_before, em_.i64(w)));
        running = combine(running, load_slot(array_element(em_, warp_totals, em_.i64(w))));
      }
      llvm::Value* prefix = look_back(launch_no, tile, tile_in_row, running, tiles);
      // Slot kWarps: the prefix of the tile, from the tiles before it.
      store_slot(prefix, array_element(em_, warp_before, em_.i64(kWarps)));
    });
    barrier(em_);

    llvm::Value* acc =
        combine(load_slot(array_element(em_, warp_before, em_.i64(kWarps))),
                combine(load_slot(array_element(em_, warp_before, warp)), within_warp));
    for (int i = 0; i < kItems; ++i) {
      acc = combine(acc, items[static_cast<std::size_t>(i)]);
      llvm::Value* v = acc;
      llvm::Value* at = indices[static_cast<std::size_t>(i)];
      emit_if(em_, valid[static_cast<std::size_t>(i)], "store",
              [&] { em_.store(scan_.shape.dtype, v, k_.output(0), at); });
    }
    return {tiles, kScanBlock, 0};
  }

  // Thread 0: publishes the tile's total, combines the totals of the tiles before it in its row
  // until one has published its inclusive prefix (the row's first tile always has: its prefix
  // is the identity), publishes its own, and returns the tile's exclusive prefix.
  // Tags say what a tile has published in launch L: 2L+1 its total, 2L+2 its prefix.
  llvm::Value* look_back(llvm::Value* launch_no, llvm::Value* tile, llvm::Value* tile_in_row,
                         llvm::Value* tile_total, std::int64_t tiles) {
    llvm::Module& module = em_.module();
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::Type* slot = slot_type();
    auto count = static_cast<std::uint64_t>(tiles);
    llvm::GlobalVariable* tags = global_array(module, i64, count, "scan.tags");
    llvm::GlobalVariable* totals = global_array(module, slot, count, "scan.totals");
    llvm::GlobalVariable* prefixes = global_array(module, slot, count, "scan.prefixes");
    llvm::Value* total_tag = b_.CreateAdd(b_.CreateMul(launch_no, em_.i64(2)), em_.i64(1));
    llvm::Value* prefix_tag = b_.CreateAdd(total_tag, em_.i64(1));
    auto publish = [&](llvm::GlobalVariable* values, llvm::Value* v, llvm::Value* tag) {
      store_slot(v, array_element(em_, values, tile));
      fence_device(em_);
      b_.CreateStore(tag, array_element(em_, tags, tile), /*isVolatile=*/true);
    };
    llvm::Value* first_in_row = b_.CreateICmpEQ(tile_in_row, em_.i64(0));
    llvm::AllocaInst* prefix = em_.entry_alloca(type_, "scan.prefix");
    b_.CreateStore(init_, prefix);
    emit_if(em_, b_.CreateNot(first_in_row), "look_back", [&] {
      publish(totals, tile_total, total_tag);
      llvm::Function* fn = b_.GetInsertBlock()->getParent();
      auto* wait = llvm::BasicBlock::Create(em_.ctx(), "look_back.wait", fn);
      auto* take = llvm::BasicBlock::Create(em_.ctx(), "look_back.take", fn);
      auto* done = llvm::BasicBlock::Create(em_.ctx(), "look_back.done", fn);
      llvm::Value* previous = b_.CreateSub(tile, em_.i64(1));
      llvm::BasicBlock* entry = b_.GetInsertBlock();
      b_.CreateBr(wait);
      b_.SetInsertPoint(wait);
      llvm::PHINode* before = b_.CreatePHI(i64, 2, "before");
      before->addIncoming(previous, entry);
      // Written by other blocks during this launch: volatile loads bypass the L1 cache.
      llvm::Value* tag = b_.CreateLoad(i64, array_element(em_, tags, before), /*isVolatile=*/true);
      b_.CreateCondBr(b_.CreateICmpUGE(tag, total_tag), take, wait);
      before->addIncoming(before, wait);  // spinning
      b_.SetInsertPoint(take);
      fence_device(em_);
      llvm::Value* has_prefix = b_.CreateICmpEQ(tag, prefix_tag);
      llvm::Value* value =
          b_.CreateSelect(has_prefix, load_slot(array_element(em_, prefixes, before), true),
                          load_slot(array_element(em_, totals, before), true));
      b_.CreateStore(combine(value, b_.CreateLoad(type_, prefix)), prefix);
      // The combiner may have added blocks: the back edge leaves from the last.
      before->addIncoming(b_.CreateSub(before, em_.i64(1)), b_.GetInsertBlock());
      b_.CreateCondBr(has_prefix, done, wait);
      b_.SetInsertPoint(done);
    });
    llvm::Value* exclusive = b_.CreateLoad(type_, prefix);
    publish(prefixes, combine(exclusive, tile_total), prefix_tag);
    return exclusive;
  }

  // Values in shared and global memory: pred takes a byte.
  llvm::Type* slot_type() { return type_->isIntegerTy(1) ? b_.getInt8Ty() : type_; }
  void store_slot(llvm::Value* v, llvm::Value* at) {
    b_.CreateStore(type_->isIntegerTy(1) ? b_.CreateZExt(v, b_.getInt8Ty()) : v, at);
  }
  llvm::Value* load_slot(llvm::Value* at, bool is_volatile = false) {
    llvm::Value* v = b_.CreateLoad(slot_type(), at, is_volatile);
    return type_->isIntegerTy(1) ? b_.CreateTrunc(v, type_) : v;
  }

  KernelBody& k_;
  ElementalEmitter& em_;
  llvm::IRBuilderBase& b_;
  const hlo::Instruction& scan_;
  hlo::PrefixScan p_;
  std::int64_t n_ = 0, rows_ = 0;
  Shape outer_, inner_;
  llvm::Type* type_ = nullptr;
  std::vector<ElementGenerator> in_;
  llvm::Value* init_ = nullptr;
};

}  // namespace

GpuLaunch emit_scan_kernel(KernelBody& k, const hlo::Instruction& scan) {
  return ScanKernel(k, scan).emit();
}

}  // namespace jx::codegen::gpu
