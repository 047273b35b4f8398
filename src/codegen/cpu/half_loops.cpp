#include "codegen/cpu/half_loops.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
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

// The iterations of a loops.hpp loop (i from begin, next = i + step, while next < end) whose
// begin, step and end are constants, if they are.
std::optional<std::int64_t> constant_trips(const llvm::Loop& loop) {
  const llvm::BasicBlock* latch = loop.getLoopLatch();
  const llvm::BasicBlock* before = loop.getLoopPredecessor();
  auto* branch = latch ? llvm::dyn_cast<llvm::BranchInst>(latch->getTerminator()) : nullptr;
  if (!before || !branch || !branch->isConditional()) return std::nullopt;
  auto* compare = llvm::dyn_cast<llvm::ICmpInst>(branch->getCondition());
  auto* next = compare ? llvm::dyn_cast<llvm::BinaryOperator>(compare->getOperand(0)) : nullptr;
  auto* end = compare ? llvm::dyn_cast<llvm::ConstantInt>(compare->getOperand(1)) : nullptr;
  if (!next || !end || next->getOpcode() != llvm::Instruction::Add) return std::nullopt;
  auto* i = llvm::dyn_cast<llvm::PHINode>(next->getOperand(0));
  auto* step = llvm::dyn_cast<llvm::ConstantInt>(next->getOperand(1));
  if (!i || !step || i->getParent() != loop.getHeader() || step->getSExtValue() <= 0)
    return std::nullopt;
  auto* begin = llvm::dyn_cast<llvm::ConstantInt>(i->getIncomingValueForBlock(before));
  if (!begin) return std::nullopt;
  std::int64_t span = end->getSExtValue() - begin->getSExtValue();
  return std::max<std::int64_t>(0, (span + step->getSExtValue() - 1) / step->getSExtValue());
}

}  // namespace

void widen_half_loops(llvm::Module& module, unsigned vector_bytes) {
  const std::uint64_t lanes = vector_bytes / 4;
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
      if (!converts) continue;
      // A loop of a known count under 4 vectors takes the widest power of two that divides it,
      // so that no iterations are left to a scalar loop (f16[4096, 12] on AVX-512: 8 lanes ran
      // 45% slower than LLVM's own 4), and none below 4 lanes.
      std::uint64_t width = lanes;
      std::optional<std::int64_t> trips = constant_trips(*loop);
      if (trips && *trips > 0 && static_cast<std::uint64_t>(*trips) < 4 * lanes)
        width = std::min(width, static_cast<std::uint64_t>(*trips & -*trips));
      if (width >= 4)
        llvm::addStringMetadataToLoop(loop, "llvm.loop.vectorize.width",
                                      static_cast<unsigned>(width));
    }
  }
}

}  // namespace jx::codegen::cpu
