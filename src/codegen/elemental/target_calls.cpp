#include "codegen/elemental/target_calls.hpp"

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

// `scalar`, or a vector of it with as many lanes as `like` has.
llvm::Type* lanes_of(llvm::Type* scalar, llvm::Type* like) {
  if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(like))
    return llvm::FixedVectorType::get(scalar, vector->getNumElements());
  return scalar;
}

// The declaration of <prefix><type of the first argument>, all arguments of that type: no
// memory, no side effects, so that the optimizer moves, merges and drops calls as it would an
// arithmetic instruction. Nothing calls a vector variant until the vectorizer does, so it is
// listed in llvm.compiler.used, which keeps dead-code elimination from dropping it (as LLVM keeps
// its vector libraries' variants).
llvm::Function* declare(llvm::Module& module, std::string_view prefix, llvm::Type* result,
                        llvm::Type* argument, unsigned arity) {
  std::string name = std::string(prefix) + type_suffix(argument);
  if (llvm::Function* f = module.getFunction(name)) return f;
  std::vector<llvm::Type*> params(arity, argument);
  auto* f = llvm::Function::Create(llvm::FunctionType::get(result, params, false),
                                   llvm::Function::ExternalLinkage, name, module);
  f->setDoesNotThrow();
  f->setWillReturn();
  f->setDoesNotAccessMemory();
  f->addFnAttr(llvm::Attribute::Speculatable);
  if (argument->isVectorTy()) llvm::appendToCompilerUsed(module, {f});
  return f;
}

// A call of <prefix> on `args` (of one type) returning `result_scalar` per lane; a scalar call
// names its 128-, 256- and 512-bit variants.
llvm::Value* emit_call(llvm::IRBuilder<>& b, std::string_view prefix, llvm::Type* result_scalar,
                       llvm::ArrayRef<llvm::Value*> args) {
  llvm::Module& module = *b.GetInsertBlock()->getModule();
  llvm::Type* type = args[0]->getType();
  auto arity = static_cast<unsigned>(args.size());
  llvm::CallInst* call =
      b.CreateCall(declare(module, prefix, lanes_of(result_scalar, type), type, arity), args);
  if (type->isVectorTy()) return call;
  std::vector<std::string> variants;
  std::string scalar_name = call->getCalledFunction()->getName().str();
  for (unsigned bits : {128u, 256u, 512u}) {
    unsigned lanes = bits / type->getPrimitiveSizeInBits();
    auto* vector = llvm::FixedVectorType::get(type, lanes);
    llvm::Function* f = declare(module, prefix, lanes_of(result_scalar, vector), vector, arity);
    variants.push_back("_ZGV_LLVM_N" + std::to_string(lanes) + std::string(arity, 'v') + "_" +
                       scalar_name + "(" + f->getName().str() + ")");
  }
  llvm::VFABI::setVectorVariantNames(call, variants);
  return call;
}

}  // namespace

llvm::Value* emit_ldexp(llvm::IRBuilder<>& b, llvm::Value* y, llvm::Value* n) {
  return emit_call(b, kLdexpPrefix, y->getType()->getScalarType(), {y, n});
}

llvm::Value* emit_round_bf16(llvm::IRBuilder<>& b, llvm::Value* v) {
  return emit_call(b, kRoundBf16Prefix, b.getBFloatTy(), {v});
}

void replace_calls(llvm::Module& module, std::string_view prefix,
                   llvm::function_ref<llvm::Value*(llvm::CallInst&)> lower) {
  std::vector<llvm::Function*> functions;
  for (llvm::Function& f : module)
    if (f.getName().starts_with(prefix)) functions.push_back(&f);
  if (functions.empty()) return;
  llvm::removeFromUsedLists(module,
                            [&](llvm::Constant* c) { return c->getName().starts_with(prefix); });
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

}  // namespace jx::codegen
