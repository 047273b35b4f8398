// The MathTable's call and the CPU's table: inline vectorizable IR for the common transcendentals,
// LLVM intrinsics where they exist, libm otherwise.
#include "codegen/elemental/math_table.hpp"

#include <string>

#include "codegen/elemental/portable_math_ir.hpp"
#include "codegen/elemental/vector_math.hpp"
#include "jx/errors.hpp"

namespace jx::codegen {

llvm::Value* MathTable::call(llvm::IRBuilder<>& b, MathFn fn,
                             llvm::ArrayRef<llvm::Value*> args) const {
  const MathEntry& e = entry(fn);
  llvm::Type* type = args[0]->getType();  // a float or a vector of them
  llvm::Type* scalar = type->getScalarType();
  MathEmitter emit = scalar->isFloatTy() ? e.emit_f32 : scalar->isDoubleTy() ? e.emit_f64 : nullptr;
  if (emit) return emit(b, args);
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

namespace {

// The constant float c where v is one (or a vector of one), not NaN.
const llvm::APFloat* constant_number(llvm::Value* v) {
  auto* c = llvm::dyn_cast<llvm::Constant>(v);
  if (c && c->getType()->isVectorTy()) c = c->getSplatValue();
  auto* fp = llvm::dyn_cast_or_null<llvm::ConstantFP>(c);
  return fp && !fp->isNaN() ? &fp->getValueAPF() : nullptr;
}

// maximum and minimum of x and a constant c that is not NaN, as `c > x ? c : x` (`<` for
// minimum): NaN x gives x, as they should. That is x86's maxps(c, x) (minps), one instruction
// where llvm.maximum's lowering adds a NaN test and a blend. Only signed zeros differ:
// maximum(-0, +0) is +0, which adding +0 gives (x + 0 is x for every other x); minimum with
// c = -0 keeps the intrinsic.
template <bool kMax>
llvm::Value* max_or_min(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args) {
  auto id = kMax ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum;
  bool first = constant_number(args[0]) != nullptr;
  const llvm::APFloat* c = constant_number(args[first ? 0 : 1]);
  if (!c || (!kMax && c->isNegZero()))
    return b.CreateIntrinsic(id, {args[0]->getType()}, args);
  llvm::Value* k = args[first ? 0 : 1];
  llvm::Value* x = args[first ? 1 : 0];
  llvm::Value* y = b.CreateSelect(kMax ? b.CreateFCmpOGT(k, x) : b.CreateFCmpOLT(k, x), k, x);
  if (kMax && c->isPosZero()) y = b.CreateFAdd(y, llvm::ConstantFP::get(y->getType(), 0.0));
  return y;
}

}  // namespace

MathTable cpu_math_table(bool precise, TargetCalls calls) {
  namespace I = llvm::Intrinsic;
  namespace vm = vector_math;
  namespace pm = portable_math;
  // LLVM lowers llvm.exp, llvm.sin, ... to scalar libm calls, which keep loops from vectorizing:
  // the functions below are emitted inline instead, f32 throughout and f64 for exp and log. The
  // inverse trigonometric and hyperbolic functions, exp2 and cbrt take portable_math's float64
  // compositions at f32 (straight-line, so they vectorize too) and libm at f64.
  static const MathTable precise_table =
      MathTable()
          .set(MathFn::kExp,
               {.intrinsic = I::exp, .emit_f32 = vm::exp_f32, .emit_f64 = vm::exp_f64})
          .set(MathFn::kExpNonPositive,
               {.intrinsic = I::exp, .emit_f32 = vm::exp_f32, .emit_f64 = vm::exp_f64})
          .set(MathFn::kLog,
               {.intrinsic = I::log, .emit_f32 = vm::log_f32, .emit_f64 = vm::log_f64})
          .set(MathFn::kLog1p, {.f32 = "log1pf", .f64 = "log1p"})
          .set(MathFn::kExpm1, {.f32 = "expm1f", .f64 = "expm1"})
          .set(MathFn::kSin, {.intrinsic = I::sin, .emit_f32 = vm::sin_f32})
          .set(MathFn::kCos, {.intrinsic = I::cos, .emit_f32 = vm::cos_f32})
          .set(MathFn::kTan, {.f32 = "tanf", .f64 = "tan"})
          .set(MathFn::kTanh, {.f32 = "tanhf", .f64 = "tanh", .emit_f32 = vm::tanh_f32})
          .set(MathFn::kSqrt, {I::sqrt})
          .set(MathFn::kPow, {I::pow})
          .set(MathFn::kFloor, {I::floor})
          .set(MathFn::kCeil, {I::ceil})
          .set(MathFn::kRound, {I::round})
          .set(MathFn::kRoundEven, {I::roundeven})
          .set(MathFn::kFabs, {I::fabs})
          .set(MathFn::kErf, {.f32 = "erff", .f64 = "erf", .emit_f32 = vm::erf_f32})
          .set(MathFn::kAtan2, {.f32 = "atan2f", .f64 = "atan2"})
          .set(MathFn::kMaximum, {.emit_f32 = max_or_min<true>, .emit_f64 = max_or_min<true>})
          .set(MathFn::kMinimum, {.emit_f32 = max_or_min<false>, .emit_f64 = max_or_min<false>})
          .set(MathFn::kExp2, {.f32 = "exp2f", .f64 = "exp2", .emit_f32 = pm::exp2_f32})
          .set(MathFn::kCbrt, {.f32 = "cbrtf", .f64 = "cbrt", .emit_f32 = pm::cbrt_f32})
          .set(MathFn::kAsin, {.f32 = "asinf", .f64 = "asin", .emit_f32 = pm::asin_f32})
          .set(MathFn::kAcos, {.f32 = "acosf", .f64 = "acos", .emit_f32 = pm::acos_f32})
          .set(MathFn::kAtan, {.f32 = "atanf", .f64 = "atan", .emit_f32 = pm::atan_f32})
          .set(MathFn::kSinh, {.f32 = "sinhf", .f64 = "sinh", .emit_f32 = pm::sinh_f32})
          .set(MathFn::kCosh, {.f32 = "coshf", .f64 = "cosh", .emit_f32 = pm::cosh_f32})
          .set(MathFn::kAsinh, {.f32 = "asinhf", .f64 = "asinh", .emit_f32 = pm::asinh_f32})
          .set(MathFn::kAcosh, {.f32 = "acoshf", .f64 = "acosh", .emit_f32 = pm::acosh_f32})
          .set(MathFn::kAtanh, {.f32 = "atanhf", .f64 = "atanh", .emit_f32 = pm::atanh_f32});
  static const MathTable fast_table =
      MathTable(precise_table)
          .set(MathFn::kExp,
               {.intrinsic = I::exp, .emit_f32 = vm::fast_exp_f32, .emit_f64 = vm::exp_f64})
          .set(MathFn::kExpNonPositive, {.intrinsic = I::exp,
                                         .emit_f32 = vm::fast_exp_nonpositive_f32,
                                         .emit_f64 = vm::exp_f64})
          .set(MathFn::kTanh, {.f32 = "tanhf", .f64 = "tanh", .emit_f32 = vm::fast_tanh_f32})
          .set(MathFn::kErf, {.f32 = "erff", .f64 = "erf", .emit_f32 = vm::fast_erf_f32});
  MathTable table = precise ? precise_table : fast_table;
  // With a once-rounded ldexp, the precise exp costs less than the portable fast one.
  if (calls.ldexp)
    table
        .set(MathFn::kExp,
             {.intrinsic = I::exp, .emit_f32 = vm::exp_ldexp_f32, .emit_f64 = vm::exp_ldexp_f64})
        .set(MathFn::kExpNonPositive, {.intrinsic = I::exp,
                                       .emit_f32 = vm::exp_nonpositive_ldexp_f32,
                                       .emit_f64 = vm::exp_nonpositive_ldexp_f64});
  return table.set_target_calls(calls);
}

}  // namespace jx::codegen
