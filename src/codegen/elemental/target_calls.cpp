#include "codegen/elemental/ldexp.hpp"

#include <llvm/IR/VFABIDemangler.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <string>
#include <vector>

namespace jx::codegen {
namespace {

std::string type_suffix(llvm::Type* type) {
  std::string scalar = type->getScalarType()->isFloatTy() ? "f32" : "f64";
  if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type))
    return "v" + std::to_string(vector->getNumElements()) + scalar;
  return scalar;
}

// The declaration of jx_ldexp_<type>: no memory, no side effects, so that the optimizer moves,
// merges and drops calls as it would an arithmetic instruction. Nothing calls a vector variant
// until the vectorizer does, so it is listed in llvm.compiler.used, which keeps dead-code
// elimination from dropping it (as LLVM keeps its vector libraries' variants).
llvm::Function* declare(llvm::Module& module, llvm::Type* type) {
  std::string name = std::string(kLdexpPrefix) + type_suffix(type);
  if (llvm::Function* f = module.getFunction(name)) return f;
  auto* f = llvm::Function::Create(llvm::FunctionType::get(type, {type, type}, false),
                                   llvm::Function::ExternalLinkage, name, module);
  f->setDoesNotThrow();
  f->setWillReturn();
  f->setDoesNotAccessMemory();
  f->addFnAttr(llvm::Attribute::Speculatable);
  if (type->isVectorTy()) llvm::appendToCompilerUsed(module, {f});
  return f;
}

}  // namespace

llvm::Value* emit_ldexp(llvm::IRBuilder<>& b, llvm::Value* y, llvm::Value* n) {
  llvm::Module& module = *b.GetInsertBlock()->getModule();
  llvm::Type* type = y->getType();
  llvm::CallInst* call = b.CreateCall(declare(module, type), {y, n});
  if (type->isVectorTy()) return call;
  // The variants the vectorizer may call instead: 128, 256 and 512 bits.
  std::vector<std::string> variants;
  std::string scalar_name = call->getCalledFunction()->getName().str();
  for (unsigned bits : {128u, 256u, 512u}) {
    unsigned lanes = bits / type->getPrimitiveSizeInBits();
    llvm::Function* vector = declare(module, llvm::FixedVectorType::get(type, lanes));
    variants.push_back("_ZGV_LLVM_N" + std::to_string(lanes) + "vv_" + scalar_name + "(" +
                       vector->getName().str() + ")");
  }
  llvm::VFABI::setVectorVariantNames(call, variants);
  return call;
}

}  // namespace jx::codegen
