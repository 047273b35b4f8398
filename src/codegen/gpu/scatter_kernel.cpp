// Scatter kernels: a thread per update element (grid-stride), each combining its update into
// the result, which already holds the operand. Updates with repeated indices race, so every
// combine is atomic: an addition of 32- or 64-bit numbers is one atomic instruction, any other
// combiner (and any narrower type) a compare-and-swap loop. A scatter that replaces stores (of
// repeated indices one update wins, as XLA leaves it).
#include "codegen/gpu/kernel.hpp"
#include "codegen/gpu/nvvm.hpp"

namespace jx::codegen::gpu {
namespace {

constexpr int kScatterBlock = 256;

// `value` combined into the element at `address` as one atomic step.
void atomic_combine(ElementalEmitter& em, const hlo::Computation& combiner, DType d,
                    llvm::Value* address, llvm::Value* value) {
  auto& b = em.b();
  const hlo::Instruction* root = combiner.root();
  if (root->opcode == hlo::Opcode::kParameter) {  // the update replaces
    em.store(d, value, address, em.i64(0));
    return;
  }
  bool wide = itemsize(d) >= 4 && d != bool_;
  if (root->opcode == hlo::Opcode::kAdd && wide) {
    auto op = is_floating(d) ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add;
    b.CreateAtomicRMW(op, address, value, llvm::MaybeAlign(itemsize(d)),
                      llvm::AtomicOrdering::Monotonic);
    return;
  }
  // Compare-and-swap on the element's bits until no other thread wrote between read and write.
  llvm::Type* storage = storage_type(em.ctx(), d);
  llvm::Type* bits = b.getIntNTy(static_cast<unsigned>(8 * itemsize(d)));
  auto value_of = [&](llvm::Value* word) {
    llvm::Value* v = b.CreateBitCast(word, storage);
    if (k16BitFloating.contains(d)) return widen_float(b, v);
    return d == bool_ ? b.CreateICmpNE(v, b.getInt8(0)) : v;
  };
  auto word_of = [&](llvm::Value* v) {
    if (k16BitFloating.contains(d)) v = narrow_float(b, v, d);
    if (d == bool_) v = b.CreateZExt(v, b.getInt8Ty());
    return b.CreateBitCast(v, bits);
  };
  llvm::BasicBlock* before = b.GetInsertBlock();
  llvm::Function* f = before->getParent();
  llvm::Value* first = b.CreateLoad(bits, address, "seen");
  auto* loop = llvm::BasicBlock::Create(em.ctx(), "cas", f);
  auto* done = llvm::BasicBlock::Create(em.ctx(), "cas.done", f);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* seen = b.CreatePHI(bits, 2, "seen");
  seen->addIncoming(first, before);
  llvm::Value* want = word_of(em.apply(combiner, {value_of(seen), value}));
  llvm::Value* pair =
      b.CreateAtomicCmpXchg(address, seen, want, llvm::MaybeAlign(itemsize(d)),
                            llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
  seen->addIncoming(b.CreateExtractValue(pair, 0), loop);
  b.CreateCondBr(b.CreateExtractValue(pair, 1), done, loop);
  b.SetInsertPoint(done);
}

}  // namespace

GpuLaunch emit_scatter_kernel(KernelBody& k) {
  const hlo::Instruction& scatter = k.root();
  ElementalEmitter& em = k.em();
  auto& b = em.b();
  const hlo::HloShape& shape = scatter.shape;
  const Shape& update_dims = scatter.operands[2]->shape.dims;
  SliceMap m = scatter_slice_map(scatter);
  Shape window = scatter_window(m, shape.dims, update_dims);
  std::vector<ElementGenerator> in = k.generators_of({scatter.operands[1], scatter.operands[2]});
  std::int64_t n = shape_size(update_dims);
  GpuLaunch launch{grid_for(ceil_div(n, kScatterBlock)), kScatterBlock, 0};
  if (n == 0) return launch;
  llvm::Value* first = b.CreateAdd(b.CreateMul(block_id(em), em.i64(launch.block), "", true, true),
                                   thread_id(em), "first", true, true);
  emit_strided_loop(em, first, n, launch.grid * launch.block, "update", [&](llvm::Value* i) {
    LoopIndex u(em, i, update_dims, "update");
    SliceTarget t = emit_slice_target(em, m, shape.dims, window, scatter.operands[1]->shape.dtype,
                                      in[0], u.index());
    emit_if(em, t.in_bounds, "scatter.in", [&] {
      llvm::Value* at = em.linear_index(IrIndex{t.dims, nullptr}, shape.dims);
      llvm::Type* storage = storage_type(em.ctx(), shape.dtype);
      llvm::Value* address = b.CreateInBoundsGEP(storage, k.output(0), at);
      atomic_combine(em, *scatter.called.at(0), shape.dtype, address, in[1](u.index()));
    });
  });
  return launch;
}

}  // namespace jx::codegen::gpu
