#include "codegen/cpu/streaming_stores.hpp"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicInst.h>
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

void set_nontemporal(llvm::StoreInst& store) {
  llvm::LLVMContext& ctx = store.getContext();
  store.setMetadata(llvm::LLVMContext::MD_nontemporal,
                    llvm::MDNode::get(ctx, {llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(
                                               llvm::Type::getInt32Ty(ctx), 1))}));
}

// Whether `f` compiles for a target with `feature` ("+avx512bf16").
bool has_feature(const llvm::Function& f, llvm::StringRef feature) {
  llvm::SmallVector<llvm::StringRef, 64> features;
  f.getFnAttribute("target-features").getValueAsString().split(features, ',');
  return llvm::is_contained(features, feature);
}

// Makes a vector store, aligned to its size, non-temporal. LLVM 19 selects an ordinary store for
// a non-temporal one of bfloat or half vectors where the target converts to them in one
// instruction (vcvtneps2bf16 with AVX-512 BF16, vcvtps2phx with AVX-512 FP16): the conversion's
// type folds into the store, through any bitcast, and no non-temporal pattern takes it. Such a
// store reads each line first: a bf16 chain of 32M elements from memory on two cores ran in
// 6.4-7.3 ms, against 4.5 with non-temporal stores. Those of a whole vector register are stored
// with vmovntdq in inline assembly.
void stream_store(llvm::StoreInst& store) {
  llvm::Value* value = store.getValueOperand();
  auto* type = llvm::cast<llvm::VectorType>(value->getType());
  llvm::Type* element = type->getElementType();
  const llvm::Function& f = *store.getFunction();
  std::uint64_t bytes = type->getPrimitiveSizeInBits().getFixedValue() / 8;
  bool whole_register = bytes == 16 || bytes == 32 || bytes == 64;
  if (!whole_register || (!(element->isBFloatTy() && has_feature(f, "+avx512bf16")) &&
                          !(element->isHalfTy() && has_feature(f, "+avx512fp16")))) {
    set_nontemporal(store);
    return;
  }
  llvm::IRBuilder<> b(&store);
  auto* bits = llvm::VectorType::getInteger(type);
  auto* signature = llvm::FunctionType::get(b.getVoidTy(), {bits, b.getPtrTy()}, false);
  // Registers 16-31 ("v") hold 512-bit vectors; narrower ones there would need AVX-512 VL.
  std::string constraints = bytes == 64 ? "v,r,~{memory}" : "x,r,~{memory}";
  b.CreateCall(
      llvm::InlineAsm::get(signature, "vmovntdq $0, ($1)", constraints, /*hasSideEffects=*/true),
      {b.CreateBitCast(value, bits), store.getPointerOperand()});
  store.eraseFromParent();
}

// A kernel that fills its output with one value becomes a memset, which the C library stores
// through the caches at any size (glibc 2.36 on a Zen 1 core: 12.7 ms for 100 MB, against 5.2
// with non-temporal stores). One of whole lines (a kernel's fill of a run of lines) becomes a
// loop of non-temporal stores of a line each; false for any other.
bool stream_fill(llvm::MemSetInst& fill, const llvm::DataLayout& layout) {
  constexpr unsigned kLineBits = 6;
  constexpr std::uint64_t kLine = std::uint64_t{1} << kLineBits;
  llvm::MaybeAlign align = fill.getDestAlign();
  if (!align || align->value() < kLine ||
      llvm::computeKnownBits(fill.getLength(), layout).countMinTrailingZeros() < kLineBits)
    return false;
  llvm::LLVMContext& ctx = fill.getContext();
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::BasicBlock* entry = fill.getParent();
  llvm::BasicBlock* done = entry->splitBasicBlock(&fill, "fill.done");
  auto* lines = llvm::BasicBlock::Create(ctx, "fill.lines", entry->getParent(), done);
  entry->getTerminator()->eraseFromParent();
  llvm::IRBuilder<> b(entry);
  llvm::Value* length = b.CreateZExtOrTrunc(fill.getLength(), i64);
  b.CreateCondBr(b.CreateICmpEQ(length, llvm::ConstantInt::get(i64, 0)), done, lines);
  b.SetInsertPoint(lines);
  llvm::PHINode* at = b.CreatePHI(i64, 2);
  at->addIncoming(llvm::ConstantInt::get(i64, 0), entry);
  llvm::Value* line = b.CreateVectorSplat(kLine, fill.getValue());
  set_nontemporal(*b.CreateAlignedStore(
      line, b.CreateInBoundsGEP(b.getInt8Ty(), fill.getDest(), at), llvm::Align(kLine)));
  llvm::Value* next = b.CreateNUWAdd(at, llvm::ConstantInt::get(i64, kLine));
  at->addIncoming(next, lines);
  b.CreateCondBr(b.CreateICmpULT(next, length), lines, done);
  fill.eraseFromParent();
  return true;
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
    std::vector<llvm::MemSetInst*> fills;
    std::vector<llvm::StoreInst*> stores;
    for (llvm::BasicBlock& block : f)
      for (llvm::Instruction& i : block) {
        if (auto* fill = llvm::dyn_cast<llvm::MemSetInst>(&i);
            fill && is_streaming(llvm::getUnderlyingObject(fill->getDest())))
          fills.push_back(fill);
        auto* store = llvm::dyn_cast<llvm::StoreInst>(&i);
        if (!store || !store->getValueOperand()->getType()->isVectorTy()) continue;
        llvm::Value* at = store->getPointerOperand();
        if (!is_streaming(llvm::getUnderlyingObject(at))) continue;
        // A non-temporal store of a whole vector must be aligned to its size.
        std::uint64_t size = layout.getTypeStoreSize(store->getValueOperand()->getType());
        llvm::Align known = llvm::getKnownAlignment(at, layout);
        if (known.value() < size) continue;
        store->setAlignment(known);
        stores.push_back(store);
      }
    for (llvm::StoreInst* store : stores) stream_store(*store);
    streams = !stores.empty();
    for (llvm::MemSetInst* fill : fills) streams |= stream_fill(*fill, layout);
    if (!streams) continue;
    for (llvm::BasicBlock& block : f)
      if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(block.getTerminator()))
        llvm::IRBuilder<>(ret).CreateIntrinsic(llvm::Intrinsic::x86_sse_sfence, {}, {});
  }
}

}  // namespace jx::codegen::cpu
