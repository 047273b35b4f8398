// sin, cos and tan at float64, tan at float32, and atan2 at both: Cody–Waite reduction by π/2
// (or, for atan, by octant) and minimax polynomials (Remez, weighted for relative error).
#include <cmath>
#include <cstdint>
#include <span>

#include "codegen/elemental/portable_math_ir.hpp"

namespace jx::codegen::portable_math {
namespace {

constexpr double kTwoOverPi = 0.6366197723675814;

// π/2 in parts whose products with the quadrant j are exact, then a last rounded part. float64:
// 27-bit parts, exact for |j| < 2^26, so for |x| < 2^26·π/2 ≈ 1.05e8. float32: as vector_math,
// 9-bit parts, exact for |x| < 2^15.
constexpr double kPio2F64[] = {1.570796325802803, 9.920935739593517e-10, 5.721188709663575e-18,
                               1.6446256892965207e-26, 4.3359050650618903e-35};
constexpr double kPio2F32[] = {1.5703125f, 0.00048351287841796875f, 3.1385570764541626e-07f,
                               6.0771006282767104e-11f};

// x = j·π/2 + r + r_lo with |r| ≤ π/4 and r_lo the rounding errors of r, while the reduction is
// exact; and j mod 4.
struct Reduced {
  Value* r;
  Value* r_lo;
  Value* quadrant;  // integer
};

Reduced reduce_pio2(Ir& ir, Value* x) {
  std::span<const double> parts = kPio2F64;
  if (ir.format().bits == 32) parts = kPio2F32;
  Value* j = ir.rint(ir.mul(x, ir.c(kTwoOverPi)));
  Value* r = ir.mad(j, ir.c(-parts[0]), x);  // exact
  Value* r_lo = ir.c(0.0);
  for (double part : parts.subspan(1)) {
    TwoPart sum = ir.two_sum(r, ir.mul(j, ir.c(-part)));
    r = sum.hi;
    r_lo = ir.add(r_lo, sum.lo);
  }
  // j mod 4 in floating point, exact for every j; NaN for non-finite x (replaced by the callers)
  // is capped so that the conversion is defined.
  Value* jmod4 = ir.sub(j, ir.mul(ir.floor(ir.mul(j, ir.c(0.25))), ir.c(4.0)));
  Value* quadrant = ir.fp_to_int(ir.minnum(jmod4, ir.c(3.0)));
  // Past the exact range r may be anything; capped, the polynomials stay bounded.
  Value* capped = ir.maxnum(ir.minnum(r, ir.c(0.8)), ir.c(-0.8));
  r_lo = ir.select(ir.eq(capped, r), r_lo, ir.c(0.0));
  return {capped, r_lo, quadrant};
}

// The callers' last step: f(±0) = ±0 (the reduction turns -0 into +0) where `keep_zero`, and
// NaN for ±inf and NaN (x - x).
Value* finish(Ir& ir, Value* x, Value* y, bool keep_zero) {
  if (keep_zero) y = ir.select(ir.eq(x, ir.c(0.0)), x, y);
  return ir.select(ir.lt(ir.fabs(x), ir.inf()), y, ir.sub(x, x));
}

// ---- sin, cos, tan (f64)

// sin r = r + r³·S(r²) and cos r = 1 - r²/2 + r⁴·C(r²) on |r| ≤ π/4.
constexpr double kSinPoly[] = {-0.1666666666666664,     0.008333333333323548,
                               -0.00019841269830039754, 2.755731361261212e-06,
                               -2.5050728133988515e-08, 1.5894326666665873e-10};
constexpr double kCosPoly[] = {0.04166666666666665,    -0.0013888888888882768,
                               2.4801587294562535e-05, -2.7557315714061365e-07,
                               2.0875893711173255e-09, -1.1367741673759387e-11};

struct SinCos {
  Value* sin;
  Value* cos;
};

// sin and cos of r + r_lo, r_lo to first order: sin(r + r_lo) = sin r + r_lo·cos r.
SinCos sin_cos_poly(Ir& ir, Value* r, Value* r_lo) {
  Value* r2 = ir.mul(r, r);
  Value* half_r2 = ir.mul(r2, ir.c(0.5));
  Value* s_small =
      ir.mad(ir.mul(r, r2), ir.poly(r2, kSinPoly), ir.mul(r_lo, ir.sub(ir.c(1.0), half_r2)));
  Value* s = ir.add(r, s_small);
  // 1 - r²/2 rounds to w; its rounding error joins the small terms.
  Value* w = ir.sub(ir.c(1.0), half_r2);
  Value* w_err = ir.sub(ir.sub(ir.c(1.0), w), half_r2);
  Value* c_small = ir.mad(ir.mul(r2, r2), ir.poly(r2, kCosPoly), ir.mad(ir.neg(r), r_lo, w_err));
  return {s, ir.add(w, c_small)};
}

// sin x is ±sin r or ±cos r by the quadrant, and cos x = sin at quadrant + 1.
Value* sin_cos_f64(Ir& ir, Value* x, bool cosine) {
  auto [r, r_lo, quadrant] = reduce_pio2(ir, x);
  SinCos sc = sin_cos_poly(ir, r, r_lo);
  if (cosine) quadrant = ir.iadd(quadrant, ir.ci(1));
  Value* odd = ir.ine(ir.iand(quadrant, ir.ci(1)), ir.ci(0));
  Value* y = ir.select(odd, sc.cos, sc.sin);
  Value* sign = ir.shl(ir.iand(quadrant, ir.ci(2)), ir.format().bits - 2);
  y = ir.from_bits(ir.ixor(ir.bits(y), sign));
  return finish(ir, x, y, !cosine);
}

// tan x = sin r / cos r, or -cos r / sin r in odd quadrants: one division.
Value* tan_f64_impl(Ir& ir, Value* x) {
  auto [r, r_lo, quadrant] = reduce_pio2(ir, x);
  SinCos sc = sin_cos_poly(ir, r, r_lo);
  Value* odd = ir.ine(ir.iand(quadrant, ir.ci(1)), ir.ci(0));
  Value* y = ir.div(ir.select(odd, ir.neg(sc.cos), sc.sin), ir.select(odd, sc.sin, sc.cos));
  return finish(ir, x, y, true);
}

// ---- tan (f32)

// tan r = r + r³·T(r²) on |r| ≤ π/4.
constexpr double kTanPolyF32[] = {0.33333343f,  0.13332768f,     0.054055214f, 0.021280032f,
                                  0.010891345f, -2.7988748e-05f, 0.0044518323f};

// tan(r + r_lo) = tan r + r_lo·(1 + tan² r) to first order.
Value* tan_f32_impl(Ir& ir, Value* x) {
  auto [r, r_lo, quadrant] = reduce_pio2(ir, x);
  Value* r2 = ir.mul(r, r);
  Value* q = ir.mul(ir.mul(r, r2), ir.poly(r2, kTanPolyF32));
  Value* t0 = ir.add(r, q);
  Value* t = ir.add(r, ir.mad(r_lo, ir.mad(t0, t0, ir.c(1.0)), q));
  Value* odd = ir.ine(ir.iand(quadrant, ir.ci(1)), ir.ci(0));
  Value* y = ir.select(odd, ir.div(ir.c(-1.0), t), t);
  return finish(ir, x, y, true);
}

// ---- atan2

struct AtanParams {
  double pio4_hi, pio4_lo;       // π/4; k·pio4_hi is exact for k ≤ 4
  std::span<const double> poly;  // atan t = t + t³·A(t²) on |t| ≤ tan(π/8)
};

constexpr double kAtanPolyF32[] = {-0.3333332f, 0.19998531f, -0.14242917f, 0.105810575f,
                                   -0.060321156f};
constexpr AtanParams kAtanF32{0.7853984832763672, -3.1987892157303577e-07, kAtanPolyF32};

constexpr double kAtanPolyF64[] = {-0.3333333333333327,  0.19999999999969173,  -0.14285714281366568,
                                   0.11111110825572193,  -0.09090898581073562, 0.07692069160547031,
                                   -0.06663151896062113, 0.05847910313129155,  -0.05038162786592733,
                                   0.03800908236502497,  -0.017821949607806246};
constexpr AtanParams kAtanF64{0.7853981633970761, 3.7217737402433116e-13, kAtanPolyF64};

constexpr double kTanPio8 = 0.41421356237309503;

// With a = min(|x|,|y|) / max(|x|,|y|) in [0, 1], atan a = atan t, or π/4 + atan t with
// t = (a - 1)/(a + 1) when a > tan(π/8). Undoing the swap (π/2 - θ) and the sign of x (π - θ)
// makes the result k·π/4 ± atan t for an integer k in [0, 4]. t is carried as t + t_lo, and the
// sum rounds once at the end.
Value* atan2_impl(Ir& ir, Value* y, Value* x, const AtanParams& p) {
  const Format& fmt = ir.format();
  Value* ax = ir.fabs(x);
  Value* ay = ir.fabs(y);
  // Both infinite: the angle of (±1, ±1).
  Value* both_inf = ir.both(ir.is_inf(x), ir.is_inf(y));
  ax = ir.select(both_inf, ir.c(1.0), ax);
  ay = ir.select(both_inf, ir.c(1.0), ay);
  Value* swap = ir.lt(ax, ay);
  Value* num = ir.select(swap, ax, ay);
  Value* den = ir.select(swap, ay, ax);
  Value* mid = ir.gt(ir.div(num, den), ir.c(kTanPio8));
  // t = u/v: num/den, or (num - den)/(num + den). Both are scaled by a power of 2 at the ends of
  // the range, so that num + den does not overflow and 1/v does not either; u and v carry their
  // rounding errors.
  Value* scale = ir.select(ir.gt(den, ir.c(std::ldexp(1.0, fmt.bias - 3))), ir.c(0.25),
                           ir.select(ir.lt(den, ir.c(std::ldexp(1.0, -fmt.bias / 2))),
                                     ir.c(std::ldexp(1.0, fmt.bias / 2)), ir.c(1.0)));
  num = ir.mul(num, scale);
  den = ir.mul(den, scale);
  TwoPart diff = ir.two_sum(num, ir.neg(den));
  TwoPart sum = ir.two_sum(num, den);
  Value* u = ir.select(mid, diff.hi, num);
  Value* v = ir.select(mid, sum.hi, den);
  Value* rcp = ir.div(ir.c(1.0), v);
  Value* t = ir.mul(u, rcp);
  // (u + u_lo)/(v + v_lo) - t to first order; fma(-t, v, u) is exact.
  Value* residual = ir.add(ir.fma(ir.neg(t), v, u), ir.select(mid, diff.lo, ir.c(0.0)));
  Value* t_lo = ir.mul(ir.sub(residual, ir.mul(t, ir.select(mid, sum.lo, ir.c(0.0)))), rcp);
  // den = 0 (then num = 0) or inf (num finite): t = 0.
  Value* regular = ir.both(ir.gt(den, ir.c(0.0)), ir.lt(den, ir.inf()));
  t = ir.select(regular, t, ir.c(0.0));
  t_lo = ir.select(regular, t_lo, ir.c(0.0));
  // atan(t + t_lo) = t + t³·A(t²) + t_lo/(1 + t²).
  Value* t2 = ir.mul(t, t);
  Value* small = ir.mad(ir.mul(t, t2), ir.poly(t2, p.poly), ir.div(t_lo, ir.add(t2, ir.c(1.0))));
  // k = {0, 2, 4, 2}[swap, x < 0] ± mid, and atan t's sign flips when exactly one of them holds.
  Value* x_neg = ir.sign_bit(x);
  Value* sign = ir.select(ir.differ(swap, x_neg), ir.c(-1.0), ir.c(1.0));
  Value* base = ir.select(swap, ir.c(2.0), ir.select(x_neg, ir.c(4.0), ir.c(0.0)));
  Value* k = ir.add(base, ir.select(mid, sign, ir.c(0.0)));
  // k·pio4_hi is exact: k·pio4_hi ± t exactly as hi + lo, then everything else.
  TwoPart head = ir.two_sum(ir.mul(k, ir.c(p.pio4_hi)), ir.mul(sign, t));
  Value* tail = ir.add(head.lo, ir.mad(k, ir.c(p.pio4_lo), ir.mul(sign, small)));
  Value* result = ir.copysign(ir.add(head.hi, tail), y);
  return ir.select(ir.either(ir.is_nan(x), ir.is_nan(y)), ir.add(x, y), result);
}

}  // namespace

Value* sin_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x) { return sin_cos_f64(ir, x, false); });
}
Value* cos_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* x) { return sin_cos_f64(ir, x, true); });
}
Value* tan_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, tan_f32_impl);
}
Value* tan_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, tan_f64_impl);
}
Value* atan2_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* y, Value* x) { return atan2_impl(ir, y, x, kAtanF32); });
}
Value* atan2_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args) {
  return emit(b, args, [](Ir& ir, Value* y, Value* x) { return atan2_impl(ir, y, x, kAtanF64); });
}

}  // namespace jx::codegen::portable_math
