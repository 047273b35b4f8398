#include "codegen/cpu/scatter.hpp"

#include "codegen/elemental/loops.hpp"

namespace jx::codegen::cpu {

// One loop nest over the updates, in row-major order, one thread: repeated indices then combine
// in update order, as the eager impl does. The window's dims are innermost, so the start vector
// is read once per window and the in-bounds test leaves the inner loop.
void emit_scatter(ElementalEmitter& em, const hlo::Instruction& scatter,
                  const ElementGenerator& indices, const ElementGenerator& updates,
                  llvm::Value* out) {
  const hlo::HloShape& shape = scatter.shape;
  const Shape& update_dims = scatter.operands[2]->shape.dims;
  SliceMap m = scatter_slice_map(scatter);
  Shape window = scatter_window(m, shape.dims, update_dims);
  DType index_dtype = scatter.operands[1]->shape.dtype;
  llvm::LLVMContext& ctx = em.ctx();
  emit_loop_nest(em, update_dims, "update", [&](const IrIndex& u) {
    auto& b = em.b();
    SliceTarget t = emit_slice_target(em, m, shape.dims, window, index_dtype, indices, u);
    llvm::Function* f = b.GetInsertBlock()->getParent();
    auto* then = llvm::BasicBlock::Create(ctx, "scatter.in", f);
    auto* done = llvm::BasicBlock::Create(ctx, "scatter.done", f);
    b.CreateCondBr(t.in_bounds, then, done);
    b.SetInsertPoint(then);
    llvm::Value* at = em.linear_index(IrIndex{t.dims, nullptr}, shape.dims);
    llvm::Value* old = em.load(shape.dtype, out, at, "old");
    em.store(shape.dtype, em.apply(*scatter.called.at(0), {old, updates(u)}), out, at);
    b.CreateBr(done);
    b.SetInsertPoint(done);
  });
}

}  // namespace jx::codegen::cpu
