#include "codegen/cpu/streaming_stores.hpp"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/Transforms/Utils/Local.h>

#include "core/buffer.hpp"

namespace jx::codegen::cpu {
namespace {

constexpr const char* kStreamingKind = "jx.streaming";

bool is_streaming(const llvm::Value* buffer) {
  auto* load = llvm::dyn_cast<llvm::LoadInst>(buffer);
  return load && load->getMetadata(kStreamingKind);
}

}  // namespace

void mark_streaming(llvm::LoadInst& buffer) {
  llvm::LLVMContext& ctx = buffer.getContext();
  buffer.setMetadata(kStreamingKind, llvm::MDNode::get(ctx, {}));
  auto* alignment = llvm::ConstantInt::get(llvm::Type::getInt64Ty(ctx), Buffer::kAlignment);
  buffer.setMetadata(llvm::LLVMContext::MD_align,
                     llvm::MDNode::get(ctx, {llvm::ConstantAsMetadata::get(alignment)}));
}

void emit_streaming_stores(llvm::Module& module) {
  const llvm::DataLayout& layout = module.getDataLayout();
  for (llvm::Function& f : module) {
    bool streams = false;
    for (llvm::BasicBlock& block : f)
      for (llvm::Instruction& i : block) {
        auto* store = llvm::dyn_cast<llvm::StoreInst>(&i);
        if (!store || !store->getValueOperand()->getType()->isVectorTy()) continue;
        llvm::Value* at = store->getPointerOperand();
        if (!is_streaming(llvm::getUnderlyingObject(at))) continue;
        // A non-temporal store of a whole vector must be aligned to its size.
        std::uint64_t size = layout.getTypeStoreSize(store->getValueOperand()->getType());
        llvm::Align known = llvm::getKnownAlignment(at, layout);
        if (known.value() < size) continue;
        store->setAlignment(known);
        store->setMetadata(
            llvm::LLVMContext::MD_nontemporal,
            llvm::MDNode::get(module.getContext(),
                              {llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(
                                  llvm::Type::getInt32Ty(module.getContext()), 1))}));
        streams = true;
      }
    if (!streams) continue;
    for (llvm::BasicBlock& block : f)
      if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(block.getTerminator()))
        llvm::IRBuilder<>(ret).CreateIntrinsic(llvm::Intrinsic::x86_sse_sfence, {}, {});
  }
}

}  // namespace jx::codegen::cpu
