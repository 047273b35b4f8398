// Loop kernels: every thread of the grid walks the output's elements, a grid's width apart, and
// computes each through the generators of the fused computation (a dot's generator loops over
// the contraction per element). A multi-output fusion stores every output of a shape in one
// loop, one loop per distinct shape.
#include <algorithm>

#include "codegen/gpu/kernel.hpp"
#include "codegen/gpu/nvvm.hpp"

namespace jx::codegen::gpu {
namespace {

constexpr int kLoopBlock = 256;

// Blocks of 256 threads; fewer, but whole warps, for small outputs.
GpuLaunch loop_launch(std::int64_t elements) {
  int block = elements >= kLoopBlock ? kLoopBlock
                                     : static_cast<int>(std::max<std::int64_t>(
                                           kWarpSize, ceil_div(elements, kWarpSize) * kWarpSize));
  return {grid_for(ceil_div(elements, block)), block, 0};
}

}  // namespace

GpuLaunch emit_loop_kernel(KernelBody& k) {
  ElementalEmitter& em = k.em();
  auto& b = em.b();
  std::vector<ElementGenerator> gens = k.output_generators();
  const std::vector<const hlo::HloShape*>& shapes = k.output_shapes();
  std::int64_t most = 0;
  for (const hlo::HloShape* s : shapes) most = std::max(most, s->size());
  GpuLaunch launch = loop_launch(most);
  llvm::Value* first = b.CreateAdd(b.CreateMul(block_id(em), em.i64(launch.block), "", true, true),
                                   thread_id(em), "first", true, true);

  std::vector<bool> done(shapes.size(), false);
  for (std::size_t j = 0; j < shapes.size(); ++j) {
    if (done[j]) continue;
    const Shape& dims = shapes[j]->dims;
    std::vector<std::size_t> same;
    for (std::size_t o = j; o < shapes.size(); ++o)
      if (shapes[o]->dims == dims) same.push_back(o), done[o] = true;
    if (shape_size(dims) == 0) continue;
    std::string name = "out" + std::to_string(j);
    emit_strided_loop(em, first, shape_size(dims), launch.grid * launch.block, name,
                      [&](llvm::Value* i) {
                        LoopIndex index(em, i, dims, name);
                        // Every value before any store: an output may overwrite an operand.
                        std::vector<llvm::Value*> values;
                        for (std::size_t o : same) values.push_back(gens[o](index.index()));
                        for (std::size_t v = 0; v < same.size(); ++v)
                          em.store(shapes[same[v]]->dtype, values[v], k.output(same[v]), i);
                      });
  }
  return launch;
}

}  // namespace jx::codegen::gpu
