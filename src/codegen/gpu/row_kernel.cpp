// Row kernels: a block per row, the leading dims every reduce keeps, for reduces of trailing dims
// and what reads them (a reduce alone, a mean, softmax, layer norm). For each reduce in turn, the
// block's threads fold strided parts of the row's reduced elements, the partial results meet
// through warp shuffles and shared memory, and the block shares the result; later reduces and
// the outputs read it. Outputs of the row's shape are stored by thread 0, elements of rows by all
// threads, a block's width apart.
//
// Few long rows are split over several blocks each (KernelPlan::blocks_per_row). Each block folds
// its part of the row and leaves the result in global memory, then counts itself done with an
// atomic add; the row's last block to finish combines the parts and stores the row's outputs.
// No block waits for another, so no launch can deadlock, and the parts are always combined in
// the same order, so the result does not depend on which block finishes last.
#include "codegen/gpu/kernel.hpp"
#include "codegen/gpu/nvvm.hpp"
#include "codegen/gpu/reduction.hpp"

namespace jx::codegen::gpu {
namespace {

class RowKernel {
 public:
  RowKernel(KernelBody& k, const KernelPlan& plan)
      : k_(k),
        em_(k.em()),
        b_(em_.b()),
        row_shape_(plan.heroes.front()->shape.dims),
        rows_(shape_size(row_shape_)),
        splits_(plan.blocks_per_row),
        block_(block_size(plan.heroes)),
        warps_(block_ / kWarpSize),
        red_(k, plan.heroes, static_cast<std::uint64_t>(warps_) + 1) {
    tid_ = thread_id(em_);
    lane_ = b_.CreateAnd(tid_, em_.i64(kWarpSize - 1), "lane");
    warp_ = b_.CreateUDiv(tid_, em_.i64(kWarpSize), "warp");
    const std::vector<const hlo::HloShape*>& shapes = k.output_shapes();
    for (std::size_t o = 0; o < shapes.size(); ++o)
      (shapes[o]->dims.size() == row_shape_.size() ? row_outputs_ : element_outputs_).push_back(o);
  }

  GpuLaunch emit() {
    if (splits_ > 1) return emit_split_rows();
    GpuLaunch launch{grid_for(rows_), block_, 0};
    // One row needs no loop, and none may be open: generators may move work that depends on no
    // index out to the outermost loop, which would be outside the row's reduces.
    if (rows_ == 1)
      emit_row(em_.i64(0));
    else if (rows_ > 1)
      emit_strided_loop(em_, block_id(em_), rows_, launch.grid, "row",
                        [&](llvm::Value* row) { emit_row(row); });
    return launch;
  }

 private:
  // A power of two no larger than any reduced extent: every thread has an element.
  static int block_size(const std::vector<const hlo::Instruction*>& reduces) {
    int block = kRowBlock;
    for (const hlo::Instruction* r : reduces)
      while (block > reduction_shape(*r).reduced_size) block /= 2;
    return block;
  }

  // The whole row in this block.
  void emit_row(llvm::Value* row_linear) {
    LoopIndex row(em_, row_linear, row_shape_, "row");
    for (Reduction& r : red_.reductions()) {
      llvm::Value* init = r.init(em_.scalar_index());
      r.value = red_.combine(r, init, block_total(r, row.index(), tid_, block_));
    }
    if (!row_outputs_.empty())
      emit_if(em_, b_.CreateICmpEQ(tid_, em_.i64(0)), "store_row",
              [&] { store_row_outputs(row, row_linear); });
    if (element_outputs_.empty()) return;
    const std::vector<const hlo::HloShape*>& shapes = k_.output_shapes();
    const Shape& dims = shapes[element_outputs_.front()]->dims;
    std::int64_t per_row = shape_size(dims) / std::max<std::int64_t>(rows_, 1);
    llvm::Value* row_start = b_.CreateMul(row_linear, em_.i64(per_row), "", true, true);
    emit_strided_loop(em_, tid_, per_row, block_, "element", [&](llvm::Value* c) {
      llvm::Value* linear = b_.CreateAdd(row_start, c, "", true, true);
      LoopIndex index(em_, linear, dims, "element");
      for (std::size_t o : element_outputs_)
        em_.store(shapes[o]->dtype, red_.outputs()[o](index.index()), k_.output(o), linear);
    });
  }

  // Block (row, part) of rows * splits: the row's outputs only, the reduces independent.
  GpuLaunch emit_split_rows() {
    llvm::Module& module = em_.module();
    llvm::Value* bid = block_id(em_);
    llvm::Value* row_linear = b_.CreateUDiv(bid, em_.i64(splits_), "row");
    llvm::Value* part = b_.CreateURem(bid, em_.i64(splits_), "part");
    LoopIndex row(em_, row_linear, row_shape_, "row");
    std::vector<llvm::GlobalVariable*> parts;
    llvm::Value* first = b_.CreateAdd(b_.CreateMul(part, em_.i64(block_)), tid_);
    for (Reduction& r : red_.reductions()) {
      llvm::Value* total = block_total(r, row.index(), first, splits_ * block_);
      parts.push_back(global_array(module, em_.type(r.reduce->shape.dtype),
                                   static_cast<std::uint64_t>(rows_ * splits_), "parts"));
      emit_if(em_, b_.CreateICmpEQ(tid_, em_.i64(0)), "store_part",
              [&] { b_.CreateStore(total, array_element(em_, parts.back(), bid)); });
    }
    // Thread 0 publishes the parts, then counts its block done; the block learns from it whether
    // it was the row's last.
    llvm::Type* i32 = b_.getInt32Ty();
    llvm::GlobalVariable* done =
        global_array(module, i32, static_cast<std::uint64_t>(rows_), "done");
    llvm::GlobalVariable* last = shared_array(module, i32, 1, "last");
    emit_if(em_, b_.CreateICmpEQ(tid_, em_.i64(0)), "count_done", [&] {
      fence_device(em_);
      llvm::Value* before =
          b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, array_element(em_, done, row_linear),
                             b_.getInt32(1), llvm::MaybeAlign(4), llvm::AtomicOrdering::Monotonic);
      llvm::Value* is_last =
          b_.CreateICmpEQ(before, b_.getInt32(static_cast<std::uint32_t>(splits_ - 1)));
      b_.CreateStore(b_.CreateZExt(is_last, i32), array_element(em_, last, em_.i64(0)));
    });
    barrier(em_);
    llvm::Value* is_last =
        b_.CreateICmpNE(b_.CreateLoad(i32, array_element(em_, last, em_.i64(0))), b_.getInt32(0));
    // Warp 0 of the last block: `splits` is a multiple of 32, so every lane folds parts.
    llvm::Value* combines = b_.CreateAnd(is_last, b_.CreateICmpEQ(warp_, em_.i64(0)));
    emit_if(em_, combines, "combine", [&] {
      llvm::Value* row_start = b_.CreateMul(row_linear, em_.i64(splits_), "", true, true);
      for (std::size_t j = 0; j < parts.size(); ++j) {
        Reduction& r = red_.reductions()[j];
        auto part_at = [&](std::int64_t s) {
          llvm::Value* at = b_.CreateAdd(row_start, b_.CreateAdd(lane_, em_.i64(s)));
          // Written by other blocks during this launch: volatile keeps the load from any cache.
          return b_.CreateLoad(em_.type(r.reduce->shape.dtype), array_element(em_, parts[j], at),
                               /*isVolatile=*/true);
        };
        llvm::Value* acc = part_at(0);
        for (std::int64_t s = kWarpSize; s < splits_; s += kWarpSize)
          acc = red_.combine(r, acc, part_at(s));
        b_.CreateStore(acc, r.acc);
        red_.reduce_warp(r);
      }
      emit_if(em_, b_.CreateICmpEQ(lane_, em_.i64(0)), "store_row", [&] {
        for (Reduction& r : red_.reductions())
          r.value = red_.combine(r, r.init(em_.scalar_index()), red_.load_acc(r));
        // Ready for the next launch.
        b_.CreateStore(b_.getInt32(0), array_element(em_, done, row_linear));
        store_row_outputs(row, row_linear);
      });
    });
    return {rows_ * splits_, block_, 0};
  }

  // The reduce of the elements first, first + step, ... of the row, over the whole block,
  // without the init value; every thread gets it.
  llvm::Value* block_total(Reduction& r, const IrIndex& row, llvm::Value* first,
                           std::int64_t step) {
    red_.fold({&r}, row, first, b_.CreateAdd(first, em_.i64(step)), step);
    red_.reduce_warp(r);
    emit_if(em_, b_.CreateICmpEQ(lane_, em_.i64(0)), "warp_result",
            [&] { red_.store_partial(r, red_.load_acc(r), warp_); });
    barrier(em_);
    llvm::Value* result_slot = em_.i64(warps_);
    emit_if(em_, b_.CreateICmpEQ(tid_, em_.i64(0)), "block_result", [&] {
      llvm::Value* total = red_.load_partial(r, em_.i64(0));
      for (int w = 1; w < warps_; ++w)
        total = red_.combine(r, total, red_.load_partial(r, em_.i64(w)));
      red_.store_partial(r, total, result_slot);
    });
    barrier(em_);
    return red_.load_partial(r, result_slot);
  }

  void store_row_outputs(const LoopIndex& row, llvm::Value* row_linear) {
    const std::vector<const hlo::HloShape*>& shapes = k_.output_shapes();
    for (std::size_t o : row_outputs_)
      em_.store(shapes[o]->dtype, red_.outputs()[o](row.index()), k_.output(o), row_linear);
  }

  KernelBody& k_;
  ElementalEmitter& em_;
  llvm::IRBuilderBase& b_;
  const Shape& row_shape_;
  std::int64_t rows_, splits_;
  int block_, warps_;
  BlockReductions red_;
  llvm::Value *tid_, *lane_, *warp_;
  std::vector<std::size_t> row_outputs_, element_outputs_;
};

}  // namespace

GpuLaunch emit_row_kernel(KernelBody& k, const KernelPlan& plan) {
  return RowKernel(k, plan).emit();
}

}  // namespace jx::codegen::gpu
