// The MathTable's call and the CPU's table: LLVM intrinsics where they exist, libm otherwise.
#include "codegen/elemental/math_table.hpp"

#include <string>

#include "jx/errors.hpp"

namespace jx::codegen {

llvm::Value* MathTable::call(llvm::IRBuilder<>& b, MathFn fn,
                             llvm::ArrayRef<llvm::Value*> args) const {
  const MathEntry& e = entry(fn);
  llvm::Type* type = args[0]->getType();
  if (e.intrinsic != llvm::Intrinsic::not_intrinsic)
    return b.CreateIntrinsic(e.intrinsic, {type}, args);
  const char* name = type->isFloatTy() ? e.f32 : type->isDoubleTy() ? e.f64 : nullptr;
  if (!name)
    throw CompileError("codegen: no math function " + std::to_string(static_cast<int>(fn)) +
                       " for this type");
  llvm::Module* module = b.GetInsertBlock()->getModule();
  llvm::SmallVector<llvm::Type*, 2> params(args.size(), type);
  llvm::FunctionCallee callee =
      module->getOrInsertFunction(name, llvm::FunctionType::get(type, params, false));
  // As under -fno-math-errno: the result depends on the arguments alone, so calls may be
  // hoisted, merged or dropped.
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->setDoesNotThrow();
    f->setWillReturn();
    f->setDoesNotAccessMemory();
  }
  llvm::CallInst* call = b.CreateCall(callee, args);
  call->setDoesNotAccessMemory();
  return call;
}

const MathTable& cpu_math_table() {
  namespace I = llvm::Intrinsic;
  static const MathTable table = MathTable()
                                     .set(MathFn::kExp, {I::exp})
                                     .set(MathFn::kLog, {I::log})
                                     .set(MathFn::kLog1p, {I::not_intrinsic, "log1pf", "log1p"})
                                     .set(MathFn::kExpm1, {I::not_intrinsic, "expm1f", "expm1"})
                                     .set(MathFn::kSin, {I::sin})
                                     .set(MathFn::kCos, {I::cos})
                                     .set(MathFn::kTan, {I::not_intrinsic, "tanf", "tan"})
                                     .set(MathFn::kTanh, {I::not_intrinsic, "tanhf", "tanh"})
                                     .set(MathFn::kSqrt, {I::sqrt})
                                     .set(MathFn::kPow, {I::pow})
                                     .set(MathFn::kFloor, {I::floor})
                                     .set(MathFn::kCeil, {I::ceil})
                                     .set(MathFn::kRound, {I::round})
                                     .set(MathFn::kRoundEven, {I::roundeven})
                                     .set(MathFn::kFabs, {I::fabs})
                                     .set(MathFn::kErf, {I::not_intrinsic, "erff", "erf"})
                                     .set(MathFn::kAtan2, {I::not_intrinsic, "atan2f", "atan2"})
                                     .set(MathFn::kMaximum, {I::maximum})
                                     .set(MathFn::kMinimum, {I::minimum});
  return table;
}

}  // namespace jx::codegen
