// Prefix scans (cumsum and the other cumulative reductions) on the GPU: a thread per row along
// the scan's axis, each folding its row in order with a running accumulator, as the eager impl
// does. That is O(n) work where the window generator of a loop kernel would do O(n^2), but a
// row runs on one thread: few long rows leave the GPU nearly idle. A block-cooperative scan
// (a warp-shuffle scan per tile with a carried prefix) is what would fix that; for now rows are
// sequential. Threads next to each other take neighbouring inner positions, so loads coalesce
// when the axis is not the last dim.
#include "codegen/gpu/kernel.hpp"
#include "codegen/gpu/nvvm.hpp"
#include "hlo/window.hpp"

namespace jx::codegen::gpu {
namespace {

constexpr int kScanBlock = 256;

}  // namespace

GpuLaunch emit_scan_kernel(KernelBody& k, const hlo::Instruction& scan) {
  ElementalEmitter& em = k.em();
  auto& b = em.b();
  hlo::PrefixScan p = *hlo::as_prefix_scan(scan);
  const Shape& dims = scan.shape.dims;
  auto axis = static_cast<std::size_t>(p.axis);
  std::int64_t n = dims[axis];
  Shape outer(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(axis));
  Shape inner(dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, dims.end());
  std::int64_t inner_size = shape_size(inner), rows = shape_size(outer) * inner_size;
  int block =
      rows >= kScanBlock
          ? kScanBlock
          : static_cast<int>(ceil_div(std::max<std::int64_t>(rows, 1), kWarpSize) * kWarpSize);
  GpuLaunch launch{grid_for(ceil_div(rows, block)), block, 0};
  if (rows == 0) return launch;
  std::vector<ElementGenerator> in = k.generators_of({scan.operands[0], scan.operands[1]});
  DType dtype = scan.shape.dtype;
  llvm::Type* type = em.type(dtype);
  llvm::AllocaInst* acc = em.entry_alloca(type, "scan.acc");
  llvm::Value* first = b.CreateAdd(b.CreateMul(block_id(em), em.i64(block), "", true, true),
                                   thread_id(em), "first", true, true);
  emit_strided_loop(em, first, rows, launch.grid * block, "row", [&](llvm::Value* row) {
    LoopIndex o(em, b.CreateUDiv(row, em.i64(inner_size)), outer, "outer");
    LoopIndex j(em, b.CreateURem(row, em.i64(inner_size)), inner, "inner");
    b.CreateStore(in[1](em.scalar_index()), acc);
    emit_strided_loop(em, em.i64(0), n, 1, "scan", [&](llvm::Value* step) {
      llvm::Value* pos = p.reverse ? b.CreateSub(em.i64(n - 1), step, "", true, true) : step;
      IrIndex index{o.index().dims, nullptr};
      index.dims.push_back(pos);
      index.dims.insert(index.dims.end(), j.index().dims.begin(), j.index().dims.end());
      index.linear = em.linear_index(index, dims);
      llvm::Value* v = em.apply(*scan.called[0], {b.CreateLoad(type, acc), in[0](index)});
      b.CreateStore(v, acc);
      em.store(dtype, v, k.output(0), index.linear);
    });
  });
  return launch;
}

}  // namespace jx::codegen::gpu
