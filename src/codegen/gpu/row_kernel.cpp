// Row kernels: a block per row, the leading dims every reduce keeps, for reduces of trailing dims
// and what reads them (a reduce alone, a mean, softmax, layer norm). For each reduce in turn, the
// block's threads fold strided parts of the row's reduced elements, the partial results meet
// through warp shuffles and shared memory, and thread 0 applies the init value and shares the
// result; later reduces and the outputs read it. Outputs of the row's shape are stored by thread
// 0, elements of rows by all threads, a block's width apart.
#include "codegen/gpu/kernel.hpp"
#include "codegen/gpu/nvvm.hpp"
#include "codegen/gpu/reduction.hpp"

namespace jx::codegen::gpu {
namespace {

constexpr int kMaxBlock = 256;

}  // namespace

GpuLaunch emit_row_kernel(KernelBody& k, const std::vector<const hlo::Instruction*>& reduces) {
  ElementalEmitter& em = k.em();
  auto& b = em.b();
  const Shape& row_shape = reduces.front()->shape.dims;
  std::int64_t rows = shape_size(row_shape);
  // A power of two no larger than any reduced extent: every thread has an element.
  int block = kMaxBlock;
  for (const hlo::Instruction* r : reduces)
    while (block > reduction_shape(*r).reduced_size) block /= 2;
  int warps = block / kWarpSize;
  GpuLaunch launch{grid_for(rows), block, 0};
  // Partials: one per warp, then the block's result.
  BlockReductions red(k, reduces, static_cast<std::uint64_t>(warps) + 1);
  llvm::Value* tid = thread_id(em);
  llvm::Value* lane = b.CreateAnd(tid, em.i64(kWarpSize - 1), "lane");
  llvm::Value* warp = b.CreateUDiv(tid, em.i64(kWarpSize), "warp");
  llvm::Value* result_slot = em.i64(warps);

  const std::vector<const hlo::HloShape*>& shapes = k.output_shapes();
  std::vector<std::size_t> row_outputs, element_outputs;
  for (std::size_t o = 0; o < shapes.size(); ++o)
    (shapes[o]->dims.size() == row_shape.size() ? row_outputs : element_outputs).push_back(o);

  auto row_body = [&](llvm::Value* row_linear) {
    LoopIndex row(em, row_linear, row_shape, "row");
    for (Reduction& r : red.reductions()) {
      llvm::Value* init = r.init(em.scalar_index());
      red.fold({&r}, row.index(), tid, b.CreateAdd(tid, em.i64(block)), block);
      red.reduce_warp(r);
      emit_if(em, b.CreateICmpEQ(lane, em.i64(0)), "warp_result",
              [&] { red.store_partial(r, red.load_acc(r), warp); });
      barrier(em);
      emit_if(em, b.CreateICmpEQ(tid, em.i64(0)), "block_result", [&] {
        llvm::Value* total = red.load_partial(r, em.i64(0));
        for (int w = 1; w < warps; ++w)
          total = red.combine(r, total, red.load_partial(r, em.i64(w)));
        red.store_partial(r, red.combine(r, init, total), result_slot);
      });
      barrier(em);
      r.value = red.load_partial(r, result_slot);
    }
    if (!row_outputs.empty())
      emit_if(em, b.CreateICmpEQ(tid, em.i64(0)), "store_row", [&] {
        for (std::size_t o : row_outputs)
          em.store(shapes[o]->dtype, red.outputs()[o](row.index()), k.output(o), row_linear);
      });
    if (element_outputs.empty()) return;
    const Shape& dims = shapes[element_outputs.front()]->dims;
    std::int64_t per_row = shape_size(dims) / std::max<std::int64_t>(rows, 1);
    llvm::Value* row_start = b.CreateMul(row_linear, em.i64(per_row), "", true, true);
    emit_strided_loop(em, tid, per_row, block, "element", [&](llvm::Value* c) {
      llvm::Value* linear = b.CreateAdd(row_start, c, "", true, true);
      LoopIndex index(em, linear, dims, "element");
      for (std::size_t o : element_outputs)
        em.store(shapes[o]->dtype, red.outputs()[o](index.index()), k.output(o), linear);
    });
  };
  // One row needs no loop, and none may be open: generators may move work that depends on no
  // index out to the outermost loop, which would be outside the row's reduces.
  if (rows == 1)
    row_body(em.i64(0));
  else if (rows > 1)
    emit_strided_loop(em, block_id(em), rows, launch.grid, "row", row_body);
  return launch;
}

}  // namespace jx::codegen::gpu
