#include "codegen/cpu/x86_ldexp.hpp"

#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <vector>

#include "codegen/elemental/ldexp.hpp"
#include "jx/errors.hpp"

namespace jx::codegen::cpu {
namespace {

// The first `lanes` indices, then poison up to `width`.
std::vector<int> first_lanes(unsigned lanes, unsigned width) {
  std::vector<int> mask(width, llvm::PoisonMaskElem);
  for (unsigned k = 0; k < lanes; ++k) mask[k] = static_cast<int>(k);
  return mask;
}

// `v`, a scalar or a vector of up to `full` lanes, as the first lanes of a vector of `full`.
llvm::Value* widen(llvm::IRBuilder<>& b, llvm::Value* v, unsigned full) {
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(v->getType());
  if (!vector) {
    auto* wide = llvm::FixedVectorType::get(v->getType(), full);
    return b.CreateInsertElement(llvm::PoisonValue::get(wide), v, b.getInt64(0));
  }
  unsigned lanes = vector->getNumElements();
  return lanes == full ? v : b.CreateShuffleVector(v, first_lanes(lanes, full));
}

llvm::Value* lower(llvm::CallInst& call) {
  llvm::IRBuilder<> b(&call);
  llvm::Type* type = call.getType();
  llvm::Type* scalar = type->getScalarType();
  bool f32 = scalar->isFloatTy();
  unsigned full = f32 ? 16 : 8;  // the lanes of a 512-bit vector
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type);
  unsigned lanes = vector ? vector->getNumElements() : 1;
  // The widest are the vectorizer's 512-bit variants and the CPU's own 512-bit vectors.
  if (lanes > full) throw CompileError("codegen: ldexp of more than 512 bits");
  llvm::Value* result = b.CreateIntrinsic(
      f32 ? llvm::Intrinsic::x86_avx512_mask_scalef_ps_512
          : llvm::Intrinsic::x86_avx512_mask_scalef_pd_512,
      {},
      {widen(b, call.getArgOperand(0), full), widen(b, call.getArgOperand(1), full),
       llvm::Constant::getNullValue(llvm::FixedVectorType::get(scalar, full)),
       f32 ? b.getInt16(0xffff) : b.getInt8(0xff),  // every lane
       b.getInt32(4)});                             // the current rounding mode
  if (!vector) return b.CreateExtractElement(result, b.getInt64(0));
  return lanes == full ? result : b.CreateShuffleVector(result, first_lanes(lanes, lanes));
}

}  // namespace

void lower_ldexp_calls(llvm::Module& module) {
  std::vector<llvm::Function*> functions;
  for (llvm::Function& f : module)
    if (f.getName().starts_with(kLdexpPrefix)) functions.push_back(&f);
  if (functions.empty()) return;
  llvm::removeFromUsedLists(
      module, [](llvm::Constant* c) { return c->getName().starts_with(kLdexpPrefix); });
  for (llvm::Function* f : functions) {
    f->removeDeadConstantUsers();  // the used list the vector variants were kept in
    std::vector<llvm::CallInst*> calls;
    for (llvm::User* u : f->users()) calls.push_back(llvm::cast<llvm::CallInst>(u));
    for (llvm::CallInst* call : calls) {
      call->replaceAllUsesWith(lower(*call));
      call->eraseFromParent();
    }
    f->eraseFromParent();
  }
}

}  // namespace jx::codegen::cpu
