#include "codegen/cpu/half_loops.hpp"

#include <algorithm>

#include <llvm/Analysis/LoopInfo.h>
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
          llvm::getOptionalBoolLoopAttribute(loop, "llvm.loop.vectorize.enable") == false)
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
