// exp2, cbrt, the inverse trigonometric, hyperbolic and inverse hyperbolic functions, composed
// from the straight-line exp, log, log1p, expm1 and atan2 at float64. A float32 argument is
// widened and the result rounded once, so float32 is within an ulp of the true value (and
// vectorizes on the CPU); float64 has the few ulps its composition costs (docs/math_accuracy.md).
#include <cmath>
#include <numbers>

#include "codegen/elemental/portable_math_ir.hpp"
#include "codegen/elemental/vector_math.hpp"

namespace jx::codegen::portable_math {
namespace {

constexpr double kLn2 = std::numbers::ln2;
constexpr double kLn2Lo = 2.3190468138462996e-17;  // ln 2 - (double)ln 2
// Past this, x² + 1 and x² - 1 are x² in float64, and asinh x = acosh x = log(x) + ln 2.
constexpr double kHuge = 0x1p28;

// The float64 functions composed here call these.
Value* exp(Ir& ir, Value* x) { return vector_math::exp_f64(ir.builder(), {x}); }
Value* log(Ir& ir, Value* x) { return vector_math::log_f64(ir.builder(), {x}); }
Value* log1p(Ir& ir, Value* x) { return log1p_f64(ir.builder(), {x}); }
Value* expm1(Ir& ir, Value* x) { return expm1_f64(ir.builder(), {x}); }
Value* atan2(Ir& ir, Value* y, Value* x) { return atan2_f64(ir.builder(), {y, x}); }
Value* sqrt(Ir& ir, Value* x) { return ir.call(llvm::Intrinsic::sqrt, x); }

// e^(p + err) for a small err, as e^p (1 + err): an argument carried as two parts. Infinite p or
// e^p need no correction (and would turn it into NaN).
Value* exp_two_part(Ir& ir, Value* p, Value* err) {
  Value* r = exp(ir, p);
  return ir.select(ir.either(ir.is_inf(p), ir.is_inf(r)), r, ir.mad(r, err, r));
}

// 2^x = e^(x ln 2), with the product's rounding error (an FMA) and ln 2's own carried.
Value* exp2_of(Ir& ir, Value* x) {
  Value* p = ir.mul(x, ir.c(kLn2));
  return exp_two_part(ir, p, ir.mad(x, ir.c(kLn2Lo), ir.fma(x, ir.c(kLn2), ir.neg(p))));
}

// y = e^(ln|x| / 3), then one Newton step on y³ = |x| whose residual y³ - |x| is exact but for
// its last rounding (y² split by an FMA), so that the step rounds only once. Below 2^-900, |x| is
// scaled by 2^300 (and y by 2^-100) so that the residual's terms stay normal. 0, inf and NaN pass
// through.
Value* cbrt_of(Ir& ir, Value* x) {
  Value* a = ir.fabs(x);
  Value* tiny = ir.lt(a, ir.c(0x1p-900));
  Value* s = ir.select(tiny, ir.mul(a, ir.c(0x1p300)), a);
  Value* y = exp(ir, ir.mul(log(ir, s), ir.c(1.0 / 3.0)));
  Value* y2 = ir.mul(y, y);
  Value* y2_err = ir.fma(y, y, ir.neg(y2));
  Value* residual = ir.mad(y2_err, y, ir.fma(y2, y, ir.neg(s)));
  y = ir.sub(y, ir.div(residual, ir.mul(ir.c(3.0), y2)));
  y = ir.select(tiny, ir.mul(y, ir.c(0x1p-100)), y);
  Value* special = ir.either(ir.eq(a, ir.c(0.0)), ir.either(ir.is_inf(a), ir.is_nan(a)));
  return ir.copysign(ir.select(special, a, y), x);
}

// asin x = atan2(x, √((1-x)(1+x))); acos x = atan2(√((1-x)(1+x)), x); atan x = atan2(x, 1).
Value* cos_of_asin(Ir& ir, Value* x) {
  return sqrt(ir, ir.mul(ir.sub(ir.c(1.0), x), ir.add(ir.c(1.0), x)));
}
Value* asin_of(Ir& ir, Value* x) { return atan2(ir, x, cos_of_asin(ir, x)); }
Value* acos_of(Ir& ir, Value* x) { return atan2(ir, cos_of_asin(ir, x), x); }
Value* atan_of(Ir& ir, Value* x) { return atan2(ir, x, ir.c(1.0)); }

// e^|x| / 2 = e^(|x| - ln 2), with the subtraction's rounding error and ln 2's own carried: sinh
// and cosh past 700, where it overflows as they do.
Value* half_exp(Ir& ir, Value* a) {
  TwoPart d = ir.two_sum(a, ir.c(-kLn2));
  return exp_two_part(ir, d.hi, ir.sub(d.lo, ir.c(kLn2Lo)));
}

// sinh |x| = (t + t/(t+1)) / 2 with t = e^|x| - 1, exact near 0.
Value* sinh_of(Ir& ir, Value* x) {
  Value* a = ir.fabs(x);
  Value* t = expm1(ir, a);
  Value* small = ir.mul(ir.c(0.5), ir.add(t, ir.div(t, ir.add(t, ir.c(1.0)))));
  return ir.copysign(ir.select(ir.gt(a, ir.c(700.0)), half_exp(ir, a), small), x);
}
Value* cosh_of(Ir& ir, Value* x) {
  Value* a = ir.fabs(x);
  Value* e = exp(ir, a);
  Value* small = ir.mul(ir.c(0.5), ir.add(e, ir.div(ir.c(1.0), e)));
  return ir.select(ir.gt(a, ir.c(700.0)), half_exp(ir, a), small);
}

// asinh |x| = log1p(a + a²/(1 + √(1 + a²))), exact near 0.
Value* asinh_of(Ir& ir, Value* x) {
  Value* a = ir.fabs(x);
  Value* a2 = ir.mul(a, a);
  Value* r = log1p(ir, ir.add(a, ir.div(a2, ir.add(ir.c(1.0), sqrt(ir, ir.add(ir.c(1.0), a2))))));
  Value* huge = ir.add(log(ir, a), ir.c(kLn2));
  return ir.copysign(ir.select(ir.gt(a, ir.c(kHuge)), huge, r), x);
}
// acosh x = log1p(t + √(2t + t²)) with t = x - 1, exact near 1; NaN below 1.
Value* acosh_of(Ir& ir, Value* x) {
  Value* t = ir.sub(x, ir.c(1.0));
  Value* r = log1p(ir, ir.add(t, sqrt(ir, ir.mad(t, t, ir.add(t, t)))));
  Value* huge = ir.add(log(ir, x), ir.c(kLn2));
  Value* below = ir.lt(x, ir.c(1.0));
  return ir.select(below, ir.nan(), ir.select(ir.gt(x, ir.c(kHuge)), huge, r));
}
// atanh x = log1p(2x / (1 - x)) / 2; ±inf at ±1, NaN past them.
Value* atanh_of(Ir& ir, Value* x) {
  Value* a = ir.fabs(x);
  Value* r = ir.mul(ir.c(0.5), log1p(ir, ir.div(ir.add(a, a), ir.sub(ir.c(1.0), a))));
  return ir.copysign(ir.select(ir.gt(a, ir.c(1.0)), ir.nan(), r), x);
}

// f at float64 for a float32 argument: widened, computed, rounded once.
template <Value* (*f)(Ir&, Value*)>
Value* via_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  llvm::Type* f32 = args[0]->getType();
  Value* wide = b.CreateFPExt(args[0], f32->getWithNewType(b.getDoubleTy()));
  Ir ir(b, wide->getType());
  return b.CreateFPTrunc(f(ir, wide), f32);
}
template <Value* (*f)(Ir&, Value*)>
Value* at_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  Ir ir(b, args[0]->getType());
  return f(ir, args[0]);
}

}  // namespace

#define JX_COMPOSITE(name)                                               \
  Value* name##_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) { \
    return via_f64<name##_of>(b, args);                                  \
  }                                                                      \
  Value* name##_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) { \
    return at_f64<name##_of>(b, args);                                   \
  }
JX_COMPOSITE(exp2)
JX_COMPOSITE(cbrt)
JX_COMPOSITE(asin)
JX_COMPOSITE(acos)
JX_COMPOSITE(atan)
JX_COMPOSITE(sinh)
JX_COMPOSITE(cosh)
JX_COMPOSITE(asinh)
JX_COMPOSITE(acosh)
JX_COMPOSITE(atanh)
#undef JX_COMPOSITE

}  // namespace jx::codegen::portable_math
