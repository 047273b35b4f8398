// Counted loops and loop nests, emitted bottom-tested (the trip count is known to be >= 1).
#include "codegen/cpu/loops.hpp"

namespace jx::codegen::cpu {

void emit_for(llvm::IRBuilder<>& b, std::int64_t n, const std::string& name,
              const std::function<void(llvm::Value*)>& body) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* preheader = b.GetInsertBlock();
  auto* loop_bb = llvm::BasicBlock::Create(b.getContext(), name + ".loop", fn);
  auto* exit_bb = llvm::BasicBlock::Create(b.getContext(), name + ".exit", fn);
  b.CreateBr(loop_bb);
  b.SetInsertPoint(loop_bb);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, name);
  i->addIncoming(b.getInt64(0), preheader);
  body(i);
  llvm::Value* next =
      b.CreateAdd(i, b.getInt64(1), name + ".next", /*HasNUW=*/true, /*HasNSW=*/true);
  b.CreateCondBr(b.CreateICmpULT(next, b.getInt64(static_cast<std::uint64_t>(n))), loop_bb,
                 exit_bb);
  i->addIncoming(next, b.GetInsertBlock());
  b.SetInsertPoint(exit_bb);
}

void emit_loop_nest(ElementalEmitter& em, const Shape& shape, const std::string& name,
                    const std::function<void(const IrIndex&)>& body) {
  if (shape_size(shape) == 0) return;
  std::vector<llvm::Value*> dims(shape.size());
  std::function<void(std::size_t, llvm::Value*)> level = [&](std::size_t d, llvm::Value* linear) {
    if (d == shape.size()) {
      body(IrIndex{dims, linear});
      return;
    }
    auto inner = [&](llvm::Value* i) {
      dims[d] = i;
      auto& b = em.b();
      level(d + 1,
            b.CreateAdd(b.CreateMul(linear, em.i64(shape[d]), "", true, true), i, "", true, true));
    };
    if (shape[d] == 1)
      inner(em.i64(0));
    else
      emit_for(em.b(), shape[d], name + "." + std::to_string(d), inner);
  };
  level(0, em.i64(0));
}

}  // namespace jx::codegen::cpu
