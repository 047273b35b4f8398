// Column reductions, for reduces that keep the operand's last dim (a sum over rows): a block per
// 32 consecutive output elements, a lane each, and the block's 8 warps split the reduced elements
// so that a warp reads 32 consecutive elements. The warps' partial results meet in shared memory;
// warp 0 applies the init values and stores the outputs, elementwise functions of the reduces.
#include "codegen/gpu/kernel.hpp"
#include "codegen/gpu/nvvm.hpp"
#include "codegen/gpu/reduction.hpp"

namespace jx::codegen::gpu {
namespace {

constexpr int kWarps = 8;

}  // namespace

GpuLaunch emit_column_kernel(KernelBody& k, const std::vector<const hlo::Instruction*>& reduces) {
  ElementalEmitter& em = k.em();
  auto& b = em.b();
  const Shape& out_shape = reduces.front()->shape.dims;
  std::int64_t outputs = shape_size(out_shape);
  std::int64_t tiles = ceil_div(outputs, kWarpSize);
  GpuLaunch launch{grid_for(tiles), kWarps * kWarpSize, 0};
  BlockReductions red(k, reduces, kWarps * kWarpSize);
  std::vector<Reduction*> all;
  for (Reduction& r : red.reductions()) all.push_back(&r);
  llvm::Value* tid = thread_id(em);
  llvm::Value* lane = b.CreateAnd(tid, em.i64(kWarpSize - 1), "lane");
  llvm::Value* warp = b.CreateUDiv(tid, em.i64(kWarpSize), "warp");
  const std::vector<const hlo::HloShape*>& shapes = k.output_shapes();

  emit_strided_loop(em, block_id(em), tiles, launch.grid, "tile", [&](llvm::Value* tile) {
    llvm::Value* o =
        b.CreateAdd(b.CreateMul(tile, em.i64(kWarpSize), "", true, true), lane, "o", true, true);
    // Lanes past the last output element compute it again, and store nothing.
    llvm::Value* clamped = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, o, em.i64(outputs - 1),
                                                   nullptr, "o.clamped");
    LoopIndex out(em, clamped, out_shape, "out");
    std::vector<llvm::Value*> inits;
    for (Reduction* r : all) inits.push_back(r->init(em.scalar_index()));
    red.fold(all, out.index(), warp, b.CreateAdd(warp, em.i64(kWarps)), kWarps);
    llvm::Value* slot = b.CreateAdd(b.CreateMul(warp, em.i64(kWarpSize)), lane);
    for (Reduction* r : all) red.store_partial(*r, red.load_acc(*r), slot);
    barrier(em);
    llvm::Value* stores =
        b.CreateAnd(b.CreateICmpEQ(warp, em.i64(0)), b.CreateICmpULT(o, em.i64(outputs)));
    emit_if(em, stores, "store", [&] {
      for (std::size_t j = 0; j < all.size(); ++j) {
        Reduction& r = *all[j];
        llvm::Value* total = red.load_partial(r, lane);
        for (int w = 1; w < kWarps; ++w)
          total =
              red.combine(r, total, red.load_partial(r, b.CreateAdd(lane, em.i64(w * kWarpSize))));
        r.value = red.combine(r, inits[j], total);
      }
      for (std::size_t j = 0; j < shapes.size(); ++j)
        em.store(shapes[j]->dtype, red.outputs()[j](out.index()), k.output(j), o);
    });
    barrier(em);  // the next tile reuses the partials
  });
  return launch;
}

}  // namespace jx::codegen::gpu
