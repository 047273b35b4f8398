#include "codegen/cpu/half_loops.hpp"

#include <algorithm>
#include <unordered_set>

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Dominators.h>
#include <llvm/Transforms/Utils/LoopUtils.h>

namespace jx::codegen::cpu {
namespace {

bool converts_half(const llvm::Instruction& i) {
  if (auto* ext = llvm::dyn_cast<llvm::FPExtInst>(&i))
    return ext->getSrcTy()->getScalarType()->isHalfTy();
  if (auto* trunc = llvm::dyn_cast<llvm::FPTruncInst>(&i))
    return trunc->getDestTy()->getScalarType()->isHalfTy();
  return false;
}

// Whether the loop carries a floating-point value from one iteration to the next through a
// stack slot it stores to, combined by an operation not marked reassociable (a window sum's
// in-order fold): LLVM lets a loop with a width hint reorder such a sum, which would change its
// result.
bool carries_ordered_float(const llvm::Loop& loop) {
  std::unordered_set<const llvm::Value*> slots;  // stack slots the loop stores to
  for (llvm::BasicBlock* block : loop.blocks())
    for (llvm::Instruction& i : *block)
      if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&i))
        if (auto* slot = llvm::dyn_cast<llvm::AllocaInst>(
                llvm::getUnderlyingObject(store->getPointerOperand())))
          slots.insert(slot);
  auto from_slot = [&](const llvm::Value* v) {
    auto* load = llvm::dyn_cast<llvm::LoadInst>(v);
    return load && slots.count(llvm::getUnderlyingObject(load->getPointerOperand()));
  };
  for (llvm::BasicBlock* block : loop.blocks())
    for (llvm::Instruction& i : *block)
      if (llvm::isa<llvm::FPMathOperator>(i) && !i.hasAllowReassoc() &&
          std::any_of(i.op_begin(), i.op_end(), [&](const llvm::Use& u) { return from_slot(u); }))
        return true;
  return false;
}

}  // namespace

void widen_half_loops(llvm::Module& module, unsigned vector_bytes) {
  for (llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    llvm::DominatorTree dominators(f);
    llvm::LoopInfo loops(dominators);
    for (llvm::Loop* loop : loops.getLoopsInPreorder()) {
      // Only loops.hpp's counted loops that may vectorize: a forced width on a loop the
      // vectorizer cannot take would be reported as a failure.
      if (!loop->isInnermost() || !loop->getLoopID() ||
          llvm::getOptionalBoolLoopAttribute(loop, "llvm.loop.vectorize.enable") == false ||
          carries_ordered_float(*loop))
        continue;
      bool converts = std::any_of(loop->block_begin(), loop->block_end(), [](llvm::BasicBlock* b) {
        return std::any_of(b->begin(), b->end(), converts_half);
      });
      if (converts)
        llvm::addStringMetadataToLoop(loop, "llvm.loop.vectorize.width", vector_bytes / 4);
    }
  }
}

}  // namespace jx::codegen::cpu
