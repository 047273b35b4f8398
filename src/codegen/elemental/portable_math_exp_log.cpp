// expm1, log1p and pow at both float types, tanh and erf at float64. Relative accuracy near 0
// comes from carrying rounding errors along (expm1, pow) or correcting for them (log1p).
#include <cmath>
#include <cstdint>
#include <span>

#include "codegen/elemental/math_table.hpp"
#include "codegen/elemental/portable_math_ir.hpp"
#include "codegen/elemental/vector_math.hpp"

namespace jx::codegen::portable_math {
namespace {

namespace vm = vector_math;

// ---- expm1

struct Expm1Params {
  double lo, hi;                 // clamp: expm1(lo) rounds to -1, expm1(hi) overflows
  double ln2_hi, ln2_lo;         // ln 2 = ln2_hi + ln2_lo; n·ln2_hi is exact
  std::span<const double> poly;  // expm1 r = r + r²·poly(r) on |r| ≤ ln2/2
};

constexpr double kExpm1PolyF32[] = {0.5f,         0.16666667f,   0.041666463f,
                                    0.008333361f, 0.0013933856f, 0.00019857896f};
constexpr Expm1Params kExpm1F32{-18, 89, 0.693145751953125, 1.428606765330187e-06, kExpm1PolyF32};

constexpr double kExpm1PolyF64[] = {0.5,
                                    0.1666666666666667,
                                    0.041666666666666616,
                                    0.008333333333326,
                                    0.0013888888888918636,
                                    0.00019841269875303958,
                                    2.480158724477059e-05,
                                    2.7557254775735156e-06,
                                    2.7557349970170985e-07,
                                    2.5105480420184772e-08,
                                    2.088944736981456e-09};
constexpr Expm1Params kExpm1F64{-40, 710, 0.6931471805598903, 5.497923018708371e-14, kExpm1PolyF64};

// expm1 x = 2^n·(expm1 r + 1) - 1 with x = n ln 2 + r. expm1 r is carried as s + s_lo: at
// n = ±1, 2^n·s and 2^n - 1 partly cancel, which would magnify a rounding of s.
Value* expm1_impl(Ir& ir, Value* x, const Expm1Params& p) {
  const Format& fmt = ir.format();
  // The clamp keeps 2^n in range and maps NaN to a bound; NaN is restored at the end.
  Value* xc = ir.maxnum(ir.minnum(x, ir.c(p.hi)), ir.c(p.lo));
  Value* n = ir.rint(ir.mul(xc, ir.c(1.4426950408889634)));
  Value* r_hi = ir.mad(n, ir.c(-p.ln2_hi), xc);  // exact
  Value* r = ir.mad(n, ir.c(-p.ln2_lo), r_hi);
  Value* r_err = ir.mad(n, ir.c(-p.ln2_lo), ir.sub(r_hi, r));
  Value* q = ir.mul(ir.mul(r, r), ir.poly(r, p.poly));
  Value* s = ir.add(r, q);
  // s's rounding error (exact: |r| ≥ |q|), and r's error times the derivative e^r.
  Value* s_lo = ir.add(ir.sub(r, s), q);
  s_lo = ir.mad(r_err, ir.add(s, ir.c(1.0)), s_lo);
  // 2^n·s is exact and 2^n·s + (2^n - 1) rounds once. Where 2^n overflows (n = bias + 1) the
  // sum is made at 2^(n-1) and doubled; the -1 is far below its rounding there.
  Value* ni = ir.fp_to_int(n);
  Value* t = ir.pow2(ir.imin(ni, ir.ci(fmt.bias)));
  Value* y = ir.mad(t, s, ir.sub(t, ir.c(1.0)));
  y = ir.mad(t, s_lo, y);
  y = ir.mul(y, ir.select(ir.igt(ni, ir.ci(fmt.bias)), ir.c(2.0), ir.c(1.0)));
  // The reduction turns -0 into +0.
  y = ir.select(ir.eq(x, ir.c(0.0)), x, y);
  return ir.select(ir.is_nan(x), x, y);
}

// ---- log1p

// log1p x = log u + c/u to first order in c/u, with u = 1 + x rounded and c = x - (u - 1) its
// rounding error (exact).
Value* log1p_impl(Ir& ir, Value* x, MathEmitter log) {
  Value* u = ir.add(x, ir.c(1.0));
  Value* c = ir.sub(x, ir.sub(u, ir.c(1.0)));
  Value* y = ir.add(log(ir.builder(), {u}), ir.div(c, u));
  // c/u is NaN at x = +inf (inf - inf) and at x = -1 (0/0); and log1p(-0) = -0.
  y = ir.select(ir.eq(x, ir.inf()), x, y);
  y = ir.select(ir.eq(x, ir.c(-1.0)), ir.neg(ir.inf()), y);
  return ir.select(ir.eq(x, ir.c(0.0)), x, y);
}

// ---- tanh (f64)

// With e = expm1(2|x|): tanh |x| = e/(e + 2) below 0.55; above, 1 - 2/(e + 2), whose error is
// relative to the small 2/(e + 2). |x| is capped at 22, where tanh rounds to 1.
Value* tanh_f64_impl(Ir& ir, Value* x) {
  Value* a = ir.fabs(x);
  // minnum drops NaN; NaN is restored below.
  Value* e = expm1_impl(ir, ir.mul(ir.minnum(a, ir.c(22.0)), ir.c(2.0)), kExpm1F64);
  Value* e2 = ir.add(e, ir.c(2.0));
  Value* near_zero = ir.div(e, e2);
  Value* far = ir.sub(ir.c(1.0), ir.div(ir.c(2.0), e2));
  Value* y = ir.copysign(ir.select(ir.lt(a, ir.c(0.55)), near_zero, far), x);
  return ir.select(ir.is_nan(x), x, y);
}

// ---- erf (f64)

// erf(x)/x as a polynomial in x² on |x| < 0.875.
constexpr double kErfPoly[] = {
    1.1283791670955126,      -0.37612638903183737,   0.11283791670954303,
    -0.026866170644932613,   0.005223977622956131,   -0.0008548326839445217,
    0.00012055324326123262,  -1.492538148987655e-05, 1.6456518576040316e-06,
    -1.6288380605485619e-07, 1.4118058457709549e-08, -8.655115207200327e-10};
// erfc(x)·e^x² ≈ P(x)/Q(x) on 0.875 ≤ x ≤ 6, to 2^-60 of erfc (a weighted rational fit).
constexpr double kErfcP[] = {0.9999999828690307,    1.3150406456296004,  0.8610902522547722,
                             0.3230720963205496,    0.06909157248612693, 0.00680619420603047,
                             1.6800210229280452e-08};
constexpr double kErfcQ[] = {1.0,
                             2.4434196111607522,
                             2.6181951650555124,
                             1.5862181432308173,
                             0.5788312609476123,
                             0.12244533844861084,
                             0.012064670091377235};

// |x| < 0.875: x·P(x²). Above, 1 - e^-x²·P(|x|)/Q(|x|) with the sign of x; |x| is capped at 6,
// where erf rounds to 1. x² = h + l exactly, and e^-x² = e^-h·(1 - l).
Value* erf_f64_impl(Ir& ir, Value* x) {
  Value* a = ir.fabs(x);
  Value* near_zero = ir.mul(x, ir.poly(ir.mul(x, x), kErfPoly));
  Value* ac = ir.minnum(a, ir.c(6.0));
  Value* h = ir.mul(ac, ac);
  Value* l = ir.fma(ac, ac, ir.neg(h));
  Value* e = vm::exp_f64(ir.builder(), {ir.neg(h)});
  e = ir.mad(ir.neg(l), e, e);
  Value* erfc = ir.div(ir.mul(e, ir.poly(ac, kErfcP)), ir.poly(ac, kErfcQ));
  Value* far = ir.copysign(ir.sub(ir.c(1.0), erfc), x);
  Value* y = ir.select(ir.lt(a, ir.c(0.875)), near_zero, far);
  return ir.select(ir.is_nan(x), x, y);
}

// ---- pow

// float32: ln|x| and e^p at float64 (vector_math's) are precise far beyond float32's needs:
// where the result is finite and nonzero, |y·ln|x|| < 104, and its float64 rounding is 2^-45 of
// the result.
Value* pow_core_f32(Ir& ir, Value* a, Value* y) {
  llvm::IRBuilder<>& b = ir.builder();
  llvm::Type* f64 = ir.type()->getWithNewType(b.getDoubleTy());
  Value* ln_a = vm::log_f64(b, {b.CreateFPExt(a, f64)});
  Value* e = vm::exp_f64(b, {b.CreateFMul(b.CreateFPExt(y, f64), ln_a)});
  return b.CreateFPTrunc(e, ir.type());
}

// float64: y·ln|x| up to 745 must be good to 2^-54 absolute, so ln|x| is carried as hi + lo to
// about 2^-64 relatively, and products split exactly with fma.
constexpr std::int64_t kSqrtHalfBits = 0x3fe6a09e667f3bcd;
constexpr double kLn2Hi = 0.6931471805598903;  // 42 bits: e·kLn2Hi is exact
constexpr double kLn2Lo = 5.497923018708371e-14;
constexpr double kTwoThirdsHi = 0.6666666666666666, kTwoThirdsLo = 3.700743415417188e-17;
// 2 atanh s = 2s + (2/3)s³ + s⁵·R(s²) on |s| ≤ (√2 - 1)/(√2 + 1).
constexpr double kLogTailPoly[] = {0.40000000000000385, 0.2857142857099562, 0.22222222364397679,
                                   0.18181797371287878, 0.1538619103970622, 0.1326920005363781,
                                   0.13088861106105196};

// ln x for finite x > 0: x = 2^e·m with m in [√½, √2), ln m = 2 atanh s with s = (m - 1)/(m + 1),
// where s, s³ and (2/3)s³ are each carried in two parts.
TwoPart log_two_part(Ir& ir, Value* x) {
  const Format& fmt = ir.format();
  Value* subnormal = ir.lt(x, ir.c(std::ldexp(1.0, 1 - fmt.bias)));
  Value* xs = ir.select(subnormal, ir.mul(x, ir.c(std::ldexp(1.0, fmt.mantissa))), x);
  Value* e_adjust = ir.select(subnormal, ir.ci(-static_cast<std::int64_t>(fmt.mantissa)), ir.ci(0));
  Value* t = ir.isub(ir.bits(xs), ir.ci(kSqrtHalfBits));
  Value* e = ir.iadd(ir.ashr(t, fmt.mantissa), e_adjust);
  Value* mantissa_mask = ir.ci((std::int64_t{1} << fmt.mantissa) - 1);
  Value* m = ir.from_bits(ir.iadd(ir.iand(t, mantissa_mask), ir.ci(kSqrtHalfBits)));
  Value* f = ir.sub(m, ir.c(1.0));  // exact
  // s = f/d with d = 2 + f = d + d_err exactly; s_lo = (f - s·(d + d_err))/d.
  Value* d = ir.add(f, ir.c(2.0));
  Value* d_err = ir.add(ir.sub(ir.c(2.0), d), f);
  Value* s = ir.div(f, d);
  Value* s_lo = ir.div(ir.sub(ir.fma(ir.neg(s), d, f), ir.mul(s, d_err)), d);
  // s² = z + z_lo, s³ = c3 + c3_lo (with s_lo's share 3s²·s_lo), (2/3)s³ = p + p_lo.
  Value* z = ir.mul(s, s);
  Value* z_lo = ir.fma(s, s, ir.neg(z));
  Value* c3 = ir.mul(z, s);
  Value* c3_lo =
      ir.add(ir.fma(z, s, ir.neg(c3)), ir.mad(z_lo, s, ir.mul(ir.mul(z, ir.c(3.0)), s_lo)));
  Value* p = ir.mul(c3, ir.c(kTwoThirdsHi));
  Value* p_lo = ir.add(ir.fma(c3, ir.c(kTwoThirdsHi), ir.neg(p)),
                       ir.mad(c3_lo, ir.c(kTwoThirdsHi), ir.mul(c3, ir.c(kTwoThirdsLo))));
  Value* tail = ir.mul(ir.mul(c3, z), ir.poly(z, kLogTailPoly));
  // ln m = (2s + p) + small; |2s| ≥ |p|, so the sum's error is exact.
  Value* two_s = ir.mul(s, ir.c(2.0));
  Value* lm = ir.add(two_s, p);
  Value* small = ir.add(ir.mad(s_lo, ir.c(2.0), p_lo), tail);
  Value* lm_lo = ir.add(ir.add(ir.sub(two_s, lm), p), small);
  // + e·ln 2: |e·kLn2Hi| ≥ |ln m| unless e = 0, so again the sum's error is exact.
  Value* ef = ir.int_to_fp(e);
  Value* eh = ir.mul(ef, ir.c(kLn2Hi));
  Value* hi = ir.add(eh, lm);
  Value* lo = ir.add(ir.add(ir.sub(eh, hi), lm), ir.mad(ef, ir.c(kLn2Lo), lm_lo));
  return {hi, lo};
}

// e^(p + p_lo) for |p_lo| ≲ ulp(p): as vector_math's exp, with p_lo joining the reduced argument.
Value* exp_two_part(Ir& ir, Value* p, Value* p_lo) {
  // The clamp keeps n in range; p_lo is dropped with it (it is NaN when p is infinite).
  Value* pc = ir.maxnum(ir.minnum(p, ir.c(710.0)), ir.c(-746.0));
  p_lo = ir.select(ir.eq(pc, p), p_lo, ir.c(0.0));
  Value* n = ir.rint(ir.mul(pc, ir.c(1.4426950408889634)));
  Value* r_hi = ir.mad(n, ir.c(-kLn2Hi), pc);  // exact
  Value* r = ir.add(r_hi, ir.mad(n, ir.c(-kLn2Lo), p_lo));
  Value* er = ir.add(ir.mad(ir.mul(r, r), ir.poly(r, kExpm1PolyF64), r), ir.c(1.0));
  // 2^n as 2^n1·2^n2, each a normal float: the last product rounds once, to a subnormal, 0 or
  // infinity where the result is one.
  Value* ni = ir.fp_to_int(n);
  Value* n1 = ir.ashr(ni, 1);
  return ir.mul(ir.mul(er, ir.pow2(n1)), ir.pow2(ir.isub(ni, n1)));
}

Value* pow_core_f64(Ir& ir, Value* a, Value* y) {
  auto [hi, lo] = log_two_part(ir, a);
  Value* p = ir.mul(y, hi);
  Value* p_lo = ir.mad(y, lo, ir.fma(y, hi, ir.neg(p)));
  return exp_two_part(ir, p, p_lo);
}

// C's pow around |x|^y = core(|x|, y), which need only be right for finite nonzero |x| and
// finite y: the other cases, signs and NaNs are selected here.
template <class Core>
Value* pow_impl(Ir& ir, Value* x, Value* y, Core core) {
  Value* a = ir.fabs(x);
  Value* mag = core(ir, a, y);
  // |x| at 0 or inf, or y at ±inf: the result is 0 or inf, inf where |x| > 1 and y > 0 agree.
  Value* extreme = ir.either(ir.either(ir.eq(a, ir.c(0.0)), ir.is_inf(x)), ir.is_inf(y));
  Value* grows = ir.negate(ir.differ(ir.gt(a, ir.c(1.0)), ir.gt(y, ir.c(0.0))));
  mag = ir.select(extreme, ir.select(grows, ir.inf(), ir.c(0.0)), mag);
  mag = ir.select(ir.eq(a, ir.c(1.0)), ir.c(1.0), mag);  // (-1)^±inf = 1 too
  // ±inf count as even integers.
  Value* y_int = ir.eq(ir.floor(y), y);
  Value* half = ir.mul(y, ir.c(0.5));
  Value* y_odd = ir.both(y_int, ir.ne(ir.floor(half), half));
  Value* r = ir.select(ir.both(ir.sign_bit(x), y_odd), ir.neg(mag), mag);
  // A negative finite x to a non-integral power.
  Value* negative_finite = ir.both(ir.lt(x, ir.c(0.0)), ir.gt(x, ir.neg(ir.inf())));
  r = ir.select(ir.both(negative_finite, ir.negate(y_int)), ir.nan(), r);
  r = ir.select(ir.either(ir.is_nan(x), ir.is_nan(y)), ir.add(x, y), r);
  return ir.select(ir.either(ir.eq(y, ir.c(0.0)), ir.eq(x, ir.c(1.0))), ir.c(1.0), r);
}

}  // namespace

Value* expm1_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x) { return expm1_impl(ir, x, kExpm1F32); });
}
Value* expm1_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x) { return expm1_impl(ir, x, kExpm1F64); });
}
Value* log1p_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x) { return log1p_impl(ir, x, vm::log_f32); });
}
Value* log1p_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x) { return log1p_impl(ir, x, vm::log_f64); });
}
Value* tanh_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, tanh_f64_impl);
}
Value* erf_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, erf_f64_impl);
}
Value* pow_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x, Value* y) { return pow_impl(ir, x, y, pow_core_f32); });
}
Value* pow_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x, Value* y) { return pow_impl(ir, x, y, pow_core_f64); });
}

}  // namespace jx::codegen::portable_math
