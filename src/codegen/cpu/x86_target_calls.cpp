#include "codegen/cpu/x86_target_calls.hpp"

#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>

#include <vector>

#include "codegen/elemental/elemental.hpp"
#include "codegen/elemental/target_calls.hpp"
#include "jx/errors.hpp"

namespace jx::codegen::cpu {
namespace {

// The first `lanes` indices, then poison up to `width`.
std::vector<int> first_lanes(unsigned lanes, unsigned width) {
  std::vector<int> mask(width, llvm::PoisonMaskElem);
  for (unsigned k = 0; k < lanes; ++k) mask[k] = static_cast<int>(k);
  return mask;
}

unsigned lanes_of(llvm::Type* type) {
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
  return vector ? vector->getNumElements() : 1;
}

// `v`, a scalar or a vector of up to `full` lanes, as the first lanes of a vector of `full`.
llvm::Value* widen(llvm::IRBuilder<>& b, llvm::Value* v, unsigned full) {
  unsigned lanes = lanes_of(v->getType());
  if (lanes > full) throw CompileError("codegen: a target call on more than 512 bits");
  if (!v->getType()->isVectorTy()) {
    auto* wide = llvm::FixedVectorType::get(v->getType(), full);
    return b.CreateInsertElement(llvm::PoisonValue::get(wide), v, b.getInt64(0));
  }
  return lanes == full ? v : b.CreateShuffleVector(v, first_lanes(lanes, full));
}

// The first lanes of a 512-bit `result`, as many as `like` has (a scalar for a scalar).
llvm::Value* narrow(llvm::IRBuilder<>& b, llvm::Value* result, llvm::Type* like) {
  unsigned lanes = lanes_of(like);
  if (!like->isVectorTy()) return b.CreateExtractElement(result, b.getInt64(0));
  return lanes == lanes_of(result->getType())
             ? result
             : b.CreateShuffleVector(result, first_lanes(lanes, lanes));
}

llvm::Value* lower_ldexp(llvm::CallInst& call) {
  llvm::IRBuilder<> b(&call);
  llvm::Type* type = call.getType();
  llvm::Type* scalar = type->getScalarType();
  bool f32 = scalar->isFloatTy();
  unsigned full = f32 ? 16 : 8;  // the lanes of a 512-bit vector
  llvm::Value* result = b.CreateIntrinsic(
      f32 ? llvm::Intrinsic::x86_avx512_mask_scalef_ps_512
          : llvm::Intrinsic::x86_avx512_mask_scalef_pd_512,
      {},
      {widen(b, call.getArgOperand(0), full), widen(b, call.getArgOperand(1), full),
       llvm::Constant::getNullValue(llvm::FixedVectorType::get(scalar, full)),
       f32 ? b.getInt16(0xffff) : b.getInt8(0xff),  // every lane
       b.getInt32(4)});                             // the current rounding mode
  return narrow(b, result, type);
}

// vcvtneps2bf16, unless a lane is subnormal: then narrow_float's form, in a block of its own. A
// scalar takes the instruction too, so that a loop's remainder rounds as its vectors do.
llvm::Value* lower_round_bf16(llvm::CallInst& call) {
  llvm::Value* v = call.getArgOperand(0);
  llvm::BasicBlock* head = call.getParent();
  llvm::BasicBlock* join = head->splitBasicBlock(&call, "bf16.join");
  llvm::BasicBlock* exact =
      llvm::BasicBlock::Create(call.getContext(), "bf16.subnormal", head->getParent(), join);
  head->getTerminator()->eraseFromParent();
  llvm::IRBuilder<> b(head);
  llvm::Value* wide = widen(b, v, 16);
  llvm::Value* converted =
      narrow(b, b.CreateIntrinsic(llvm::Intrinsic::x86_avx512bf16_cvtneps2bf16_512, {}, {wide}),
             v->getType());
  // vfpclassps's 0x20: subnormal lanes. It reads a subnormal as zero where denormals are
  // flushed, as vcvtneps2bf16 does and as the mode asks: then no vector branches.
  llvm::Value* subnormal = narrow(
      b,
      b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_fpclass_ps_512, {}, {wide, b.getInt32(0x20)}),
      v->getType());
  if (subnormal->getType()->isVectorTy()) subnormal = b.CreateOrReduce(subnormal);
  b.CreateCondBr(subnormal, exact, join,
                 llvm::MDBuilder(call.getContext()).createUnlikelyBranchWeights());
  llvm::IRBuilder<> e(exact);
  llvm::Value* rounded = narrow_float(e, v, bfloat16);
  e.CreateBr(join);
  llvm::IRBuilder<> j(join, join->begin());
  llvm::PHINode* phi = j.CreatePHI(call.getType(), 2);
  phi->addIncoming(converted, head);
  phi->addIncoming(rounded, exact);
  return phi;
}

}  // namespace

void lower_target_calls(llvm::Module& module) {
  replace_calls(module, kLdexpPrefix, lower_ldexp);
  replace_calls(module, kRoundBf16Prefix, lower_round_bf16);
}

}  // namespace jx::codegen::cpu
