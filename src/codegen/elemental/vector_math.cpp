// Branch-free exp, log, tanh, erf, sin and cos. Polynomials are minimax fits (Remez, weighted for
// relative error) whose f32 coefficients are written as f32 literals. Products of a reduction
// integer and a split constant are exact, so results do not depend on whether fmuladd fuses.
#include "codegen/elemental/vector_math.hpp"

#include <cmath>
#include <cstdint>
#include <span>
#include <utility>

#include "codegen/elemental/float_ir.hpp"
#include "codegen/elemental/target_calls.hpp"

namespace jx::codegen::vector_math {
namespace {

using llvm::Value;
namespace I = llvm::Intrinsic;

using float_ir::Format;
using float_ir::Ir;

// ---- exp

struct ExpParams {
  double lo, hi;                 // clamp: exp(lo) rounds to 0 and exp(hi) overflows
  double ln2_hi, ln2_lo;         // ln 2 = ln2_hi + ln2_lo; n·ln2_hi is exact (trailing zero bits)
  std::span<const double> poly;  // e^r ≈ 1 + r + r²·poly(r) on |r| ≤ ln2/2
};

constexpr double kExpPolyF32[] = {0.49999994f, 0.166665152f, 0.041668456f, 0.00836941879f,
                                  0.00138131448f};
constexpr ExpParams kExpF32{-104, 89, 0.693145751953125, 1.428606765330187e-06, kExpPolyF32};

constexpr double kExpPolyF64[] = {0.5,
                                  0.16666666666666685,
                                  0.041666666666666033,
                                  0.0083333333333157032,
                                  0.0013888888889134192,
                                  0.0001984126989972709,
                                  2.4801586903842124e-05,
                                  2.7557231481876168e-06,
                                  2.7557592379601305e-07,
                                  2.5113226432883871e-08,
                                  2.0825634928401357e-09};
constexpr ExpParams kExpF64{-746, 710, 0.69314718060195446014, -4.2009150726810845979e-11,
                            kExpPolyF64};

// e^r on |r| ≤ ln2/2 and n, for e^x = 2^n · e^r with n = rint(x / ln 2), r = x - n ln 2
// (Cody–Waite).
std::pair<Value*, Value*> exp_reduced(Ir& ir, Value* x, const ExpParams& p) {
  Value* n = ir.call(I::rint, ir.mul(x, ir.c(1.4426950408889634)));
  Value* r = ir.mad(n, ir.c(-p.ln2_hi), x);  // exact
  r = ir.mad(n, ir.c(-p.ln2_lo), r);
  return {ir.add(ir.mad(ir.mul(r, r), ir.poly(r, p.poly), r), ir.c(1.0)), n};
}

// e^x for x known to be a number whose e^x is a normal float (the caller bounds it): one
// scaling by 2^n suffices.
Value* exp_normal(Ir& ir, Value* x, const ExpParams& p) {
  auto [y, n] = exp_reduced(ir, x, p);
  return ir.mul(y, ir.pow2(ir.fp_to_int(n)));
}

Value* exp_impl(Ir& ir, Value* x, const ExpParams& p) {
  // The clamp keeps n in range and maps NaN to a bound; NaN is restored at the end.
  Value* xc = ir.maxnum(ir.minnum(x, ir.c(p.hi)), ir.c(p.lo));
  auto [y, n] = exp_reduced(ir, xc, p);
  // 2^n as 2^n1 · 2^n2, each a normal float: y·2^n1 is exact and the last product rounds once,
  // to a subnormal, 0 or infinity where the result is one.
  Value* ni = ir.fp_to_int(n);
  Value* n1 = ir.ashr(ni, 1);
  Value* scaled = ir.mul(ir.mul(y, ir.pow2(n1)), ir.pow2(ir.isub(ni, n1)));
  return ir.select(ir.is_nan(x), x, scaled);
}

// The fast form (float32): the argument clamped to where e^x is a normal float, one scaling by
// 2^n; below, 0 (what flushing a subnormal result gives), above, infinity.
constexpr double kNormalLo = -87.33654f;  // e^x < 2^-126 below
constexpr double kNormalHi = 88.72283f;   // e^x overflows above

Value* fast_exp_impl(Ir& ir, Value* x) {
  // NaN passes the clamp and makes e NaN, and so the result; minnum gives its n a number.
  Value* xc = ir.clamp(x, kNormalLo, kNormalHi);
  auto [e, n] = exp_reduced(ir, xc, kExpF32);
  // n reaches 128 just below the overflow, past the largest power of two: 2·2^127 there.
  Value* top = ir.lt(ir.c(127.0), n);
  Value* y = ir.mul(ir.select(top, ir.mul(e, ir.c(2.0)), e),
                    ir.pow2(ir.fp_to_int(ir.minnum(n, ir.c(127.0)))));
  y = ir.select(ir.lt(x, ir.c(kNormalLo)), ir.c(0.0), y);
  return ir.select(ir.lt(ir.c(kNormalHi), x), ir.inf(), y);
}

// The fast form where the caller knows x ≤ 0 (or NaN): the same values, with nothing that
// overflows to handle (six of its 23 vector instructions on x86).
Value* fast_exp_nonpositive_impl(Ir& ir, Value* x) {
  auto [e, n] = exp_reduced(ir, ir.at_least(x, kNormalLo), kExpF32);
  // n is NaN where x is, and its conversion poison: frozen, it is some integer, and e is NaN.
  Value* y = ir.mul(e, ir.pow2(ir.builder().CreateFreeze(ir.fp_to_int(n))));
  return ir.select(ir.lt(x, ir.c(kNormalLo)), ir.c(0.0), y);
}

// Where the target has a once-rounded ldexp (target_calls.hpp): the clamp keeps n in range, NaN
// passes it, and ldexp rounds y·2^n to a subnormal, 0 or infinity where the result is one. The same
// values as exp_impl's; the fast forms' too where they flush subnormal results. Where x is known
// to be at most 0 (or NaN), the upper clamp goes.
Value* exp_ldexp_impl(Ir& ir, Value* x, const ExpParams& p, bool nonpositive) {
  Value* xc = nonpositive ? ir.at_least(x, p.lo) : ir.clamp(x, p.lo, p.hi);
  auto [y, n] = exp_reduced(ir, xc, p);
  return emit_ldexp(ir.builder(), y, n);
}

// ---- log

struct LogParams {
  std::int64_t sqrt_half_bits;   // the bits of √½
  double ln2_hi, ln2_lo;         // as for exp
  std::span<const double> poly;  // R(z) = z·poly(z), z = s², for 2 atanh(s) = 2s + s·R(z)
};

constexpr double kLogPolyF32[] = {0.666667819f, 0.399770796f, 0.298851877f};
constexpr LogParams kLogF32{0x3f3504f3, 0.693145751953125, 1.428606765330187e-06, kLogPolyF32};

constexpr double kLogPolyF64[] = {0.66666666666667396, 0.39999999999377966, 0.28571428751305161,
                                  0.22222197587195408, 0.18183618993224798, 0.15312569803383291,
                                  0.14811540557576916};
constexpr LogParams kLogF64{0x3fe6a09e667f3bcd, 0.69314718060195446014, -4.2009150726810845979e-11,
                            kLogPolyF64};

// log x = e ln 2 + log(1+f) with x = 2^e (1+f), 1+f in [√½, √2); log(1+f) = 2 atanh(f/(2+f)).
Value* log_impl(Ir& ir, Value* x, const LogParams& p) {
  const Format& fmt = ir.format();
  // Subnormals are scaled into the normal range, and the scale taken back out of e.
  Value* subnormal = ir.lt(x, ir.c(std::ldexp(1.0, 1 - fmt.bias)));
  Value* xs = ir.select(subnormal, ir.mul(x, ir.c(std::ldexp(1.0, fmt.mantissa))), x);
  Value* e_adjust = ir.select(subnormal, ir.ci(-static_cast<std::int64_t>(fmt.mantissa)), ir.ci(0));
  // Subtracting √½'s bits moves the exponent step from m = 1 to m = √½.
  Value* t = ir.isub(ir.bits(xs), ir.ci(p.sqrt_half_bits));
  Value* e = ir.iadd(ir.ashr(t, fmt.mantissa), e_adjust);
  Value* mantissa_mask = ir.ci((std::int64_t{1} << fmt.mantissa) - 1);
  Value* m = ir.from_bits(ir.iadd(ir.iand(t, mantissa_mask), ir.ci(p.sqrt_half_bits)));
  Value* f = ir.sub(m, ir.c(1.0));  // exact
  Value* s = ir.div(f, ir.add(f, ir.c(2.0)));
  Value* z = ir.mul(s, s);
  Value* r = ir.mul(z, ir.poly(z, p.poly));
  Value* hfsq = ir.mul(ir.mul(f, ir.c(0.5)), f);
  // log(1+f) = f - (f²/2 - s(f²/2 + R)); the small terms are summed first.
  Value* ef = ir.int_to_fp(e);
  Value* small = ir.mad(s, ir.add(hfsq, r), ir.mul(ef, ir.c(p.ln2_lo)));
  Value* y = ir.mad(ef, ir.c(p.ln2_hi), ir.sub(f, ir.sub(hfsq, small)));
  y = ir.select(ir.eq(x, ir.inf()), x, y);
  y = ir.select(ir.eq(x, ir.c(0.0)), ir.neg(ir.inf()), y);
  y = ir.select(ir.lt(x, ir.c(0.0)), ir.nan(), y);
  return ir.select(ir.is_nan(x), x, y);
}

// ---- tanh (f32)

constexpr double kTanhPoly[] = {-0.333332807f, 0.133314416f, -0.0537397154f, 0.020639088f,
                                -0.00570498733f};

// |x| < 0.625: x + x³·P(x²). Above, 1 - 2/(e^2|x| + 1) with the sign of x; |x| is capped at
// 10, where tanh rounds to 1, so that e^2|x| stays finite.
Value* tanh_impl(Ir& ir, Value* x) {
  Value* a = ir.call(I::fabs, x);
  Value* x2 = ir.mul(x, x);
  Value* near_zero = ir.mad(ir.mul(x, x2), ir.poly(x2, kTanhPoly), x);
  // 2·min(|x|, 10) is in [0, 20] (NaN becomes 20: minnum drops it); NaN is restored below.
  Value* e = exp_normal(ir, ir.mul(ir.minnum(a, ir.c(10.0)), ir.c(2.0)), kExpF32);
  Value* far = ir.sub(ir.c(1.0), ir.div(ir.c(2.0), ir.add(e, ir.c(1.0))));
  // copysign also keeps tanh(-0) = -0, which the polynomial turns into +0.
  Value* y = ir.copysign(ir.select(ir.lt(a, ir.c(0.625)), near_zero, far), x);
  return ir.select(ir.is_nan(x), x, y);
}

// ---- erf (f32)

// erf(x)/x as a polynomial in x² on |x| < 1.
constexpr double kErfPoly[] = {1.12837911f,    -0.37612626f,     0.112835854f,   -0.0268538129f,
                               0.00518832775f, -0.000801019371f, 7.85386146e-05f};
// erfc(x)·e^x² as a polynomial in x - 2.5 on 1 ≤ x ≤ 4.
constexpr double kErfcPoly[] = {0.210807607f,    -0.0743421838f,  0.0249146242f,
                                -0.0081322547f,  0.00230250182f,  -0.000661117781f,
                                0.000543324277f, 0.000225065087f, 0.00010684364f};

// |x| < 1: x·P(x²). Above, 1 - e^-x²·Q(|x|) with the sign of x; |x| is capped at 4, where erf
// rounds to 1.
Value* erf_impl(Ir& ir, Value* x) {
  Value* a = ir.call(I::fabs, x);
  Value* near_zero = ir.mul(x, ir.poly(ir.mul(x, x), kErfPoly));
  Value* ac = ir.minnum(a, ir.c(4.0));
  Value* q = ir.poly(ir.sub(ac, ir.c(2.5)), kErfcPoly);
  Value* e = exp_impl(ir, ir.neg(ir.mul(ac, ac)), kExpF32);
  Value* far = ir.mad(ir.neg(e), q, ir.c(1.0));
  Value* y = ir.select(ir.lt(a, ir.c(1.0)), near_zero, ir.copysign(far, x));
  return ir.select(ir.is_nan(x), x, y);
}

// ---- fast tanh and erf (f32): one rational function of a clamped argument, as XLA's CPU
// backend evaluates them. Evaluated in float32 with FMA Horner steps, the roundings of the
// p + q steps reach a result just below 1 at almost full weight: 5 ULP at most, a floor that
// higher degrees do not lower (docs/math_accuracy.md).

// tanh x = x·(P(x²)/Q(x²)) on |x| ≤ 9.01091385, the least float whose tanh rounds to 1: the
// function is 1 there, as tanh is beyond. P(0) = Q(0) = 1, so tiny x give x exactly.
constexpr double kFastTanhClamp = 9.01091385f;
constexpr double kFastTanhP[] = {1.0f, 0.133803129f, 0.00349474046f, 2.05951019e-05f,
                                 1.3335236e-08f};
constexpr double kFastTanhQ[] = {1.0f, 0.467136323f, 0.0258737579f, 0.000328424736f,
                                 7.76861839e-07f};

// erf x = (x·P(x²))/Q(x²) on |x| ≤ 3.9192059, the least float whose erf rounds to 1. P and Q
// share a scale (Q(0) is not 1) whose float32 roundings err least.
constexpr double kFastErfClamp = 3.9192059f;
constexpr double kFastErfP[] = {1.60229874f,    0.270336181f,    0.0748987198f,
                                0.00534566771f, 0.000404544175f, 2.91203878e-06f};
constexpr double kFastErfQ[] = {1.42000031f,  0.712911785f,   0.16201885f,
                                0.021253245f, 0.00165051676f, 5.41002337e-05f};

// f(x) for an odd f, from the rational of x² given, within [-1, 1]. x² is capped at the clamp's
// square: past the clamp, x times the rational there only grows past its value at the clamp,
// which is 1 or more, and the final clamp gives ±1 (one instruction, where clamping x took two).
// The caps keep NaN, which the arithmetic carries through, and the final product keeps -0.
Value* odd_rational(Ir& ir, Value* x, double clamp, std::span<const double> p,
                    std::span<const double> q, bool divide_first) {
  Value* x2 = ir.at_most(ir.mul(x, x), static_cast<float>(clamp * clamp));
  Value* y = divide_first ? ir.mul(x, ir.div(ir.poly(x2, p), ir.poly(x2, q)))
                          : ir.div(ir.mul(x, ir.poly(x2, p)), ir.poly(x2, q));
  // The roundings can carry a result just below 1 to the float above it (tanh at 25,223 inputs,
  // erf at 47,294).
  return ir.clamp(y, -1.0, 1.0);
}

Value* fast_tanh_impl(Ir& ir, Value* x) {
  return odd_rational(ir, x, kFastTanhClamp, kFastTanhP, kFastTanhQ, /*divide_first=*/true);
}
Value* fast_erf_impl(Ir& ir, Value* x) {
  return odd_rational(ir, x, kFastErfClamp, kFastErfP, kFastErfQ, /*divide_first=*/false);
}

// ---- sin and cos (f32)

// π/2 in four parts; the first three have 9 significant bits, so j·part is exact for |j| ≤ 2^15
// and the reduction is accurate for |x| < 2^15.
constexpr double kPio2Parts[] = {1.5703125f, 0.00048351287841796875f, 3.1385570764541626e-07f,
                                 6.0771006282767104e-11f};
// sin r = r + r³·S(r²) and cos r = 1 - r²/2 + r⁴·C(r²) on |r| ≤ π/4.
constexpr double kSinPoly[] = {-0.166666538f, 0.0083321128f, -0.000195087414f};
constexpr double kCosPoly[] = {0.0416666456f, -0.00138872513f, 2.44256807e-05f};

// x = j·π/2 + r; sin x is ±sin r or ±cos r by the quadrant j mod 4, and cos x = sin at j + 1.
Value* sin_cos_impl(Ir& ir, Value* x, bool cosine) {
  Value* j = ir.call(I::rint, ir.mul(x, ir.c(0.63661977236758134)));
  Value* r = x;
  for (double part : kPio2Parts) r = ir.mad(j, ir.c(-part), r);
  // j mod 4 in floating point, exact for every j; NaN for non-finite x (replaced below) is
  // capped so that the conversion is defined.
  Value* jmod4 = ir.sub(j, ir.mul(ir.call(I::floor, ir.mul(j, ir.c(0.25))), ir.c(4.0)));
  Value* quadrant = ir.iadd(ir.fp_to_int(ir.minnum(jmod4, ir.c(3.0))), ir.ci(cosine ? 1 : 0));
  // Past the exact range r may be anything; capped, the result stays in [-1, 1].
  r = ir.maxnum(ir.minnum(r, ir.c(0.8)), ir.c(-0.8));
  Value* r2 = ir.mul(r, r);
  Value* s = ir.mad(ir.mul(r, r2), ir.poly(r2, kSinPoly), r);
  Value* c = ir.mad(ir.mul(r2, r2), ir.poly(r2, kCosPoly), ir.mad(r2, ir.c(-0.5), ir.c(1.0)));
  Value* odd = ir.ine(ir.iand(quadrant, ir.ci(1)), ir.ci(0));
  Value* y = ir.select(odd, c, s);
  Value* sign = ir.shl(ir.iand(quadrant, ir.ci(2)), ir.format().bits - 2);
  y = ir.from_bits(ir.ixor(ir.bits(y), sign));
  // The reduction turns -0 into +0.
  if (!cosine) y = ir.select(ir.eq(x, ir.c(0.0)), x, y);
  // x - x is NaN for ±inf and NaN.
  return ir.select(ir.lt(ir.call(I::fabs, x), ir.inf()), y, ir.sub(x, x));
}

}  // namespace

using float_ir::emit;

Value* exp_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x) { return exp_impl(ir, x, kExpF32); });
}
Value* exp_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x) { return exp_impl(ir, x, kExpF64); });
}
Value* fast_exp_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, fast_exp_impl);
}
Value* fast_exp_nonpositive_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, fast_exp_nonpositive_impl);
}
Value* exp_ldexp_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x) { return exp_ldexp_impl(ir, x, kExpF32, false); });
}
Value* exp_ldexp_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x) { return exp_ldexp_impl(ir, x, kExpF64, false); });
}
Value* exp_nonpositive_ldexp_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x) { return exp_ldexp_impl(ir, x, kExpF32, true); });
}
Value* exp_nonpositive_ldexp_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x) { return exp_ldexp_impl(ir, x, kExpF64, true); });
}
Value* log_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x) { return log_impl(ir, x, kLogF32); });
}
Value* log_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x) { return log_impl(ir, x, kLogF64); });
}
Value* tanh_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, tanh_impl);
}
Value* erf_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, erf_impl);
}
Value* fast_tanh_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, fast_tanh_impl);
}
Value* fast_erf_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, fast_erf_impl);
}
Value* sin_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x) { return sin_cos_impl(ir, x, false); });
}
Value* cos_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x) { return sin_cos_impl(ir, x, true); });
}

}  // namespace jx::codegen::vector_math
