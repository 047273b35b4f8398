// erf_inv, as JAX's primitive of that name, with no opcode of its own: its value is a composite
// of elementwise ops (XLA's ErfInv), which runs eagerly, lowers inline and fuses; its derivative
// is the closed form sqrt(pi)/2 exp(erf_inv(x)^2), so reverse mode never differentiates the
// composite's branches (a zero cotangent times the unselected branch's infinite slope is NaN).
#include <array>
#include <cmath>
#include <numbers>

#include "jx/lax.hpp"
#include "primitives/elementwise.hpp"
#include "primitives/sub_jaxprs.hpp"
#include "trace/tracer.hpp"
#include "transforms/ad_rules.hpp"

namespace jx {

Primitive erf_inv_p("erf_inv");

namespace {

using namespace lax;

// Giles, "Approximating the erfinv function" (2010), single precision: a polynomial in
// w - 2.5 for w = -log(1 - x²) < 5, else in sqrt(w) - 3 (the coefficients XLA uses).
constexpr std::array<double, 9> kCentral{2.81022636e-08,  3.43273939e-07, -3.5233877e-06,
                                         -4.39150654e-06, 0.00021858087,  -0.00125372503,
                                         -0.00417768164,  0.246640727,    1.50140941};
constexpr std::array<double, 9> kTail{-0.000200214257, 0.000100950558, 0.00134934322,
                                      -0.00367342844,  0.00573950773,  -0.0076224613,
                                      0.00943887047,   1.00167406,     2.83297682};

Array full_like(const Array& x, double v) {
  return broadcast_in_dim(convert_element_type(Array(v), x.dtype()), x.shape(), {});
}

Array composite(const Array& x) {
  // 16-bit floats compute in float32 and round the result, as XLA's ErfInv does.
  if (compute_dtype(x.dtype()) != x.dtype())
    return convert_element_type(composite(convert_element_type(x, compute_dtype(x.dtype()))),
                                x.dtype());
  // w = -log(1 - x²) as -(log1p(-|x|) + log1p(|x|)): 1 - x² formed from x*x near |x| = 1 keeps
  // few of its bits (64 float32 ULP in the result at 0.9998).
  Array a = abs(x);
  Array w = neg(add(log1p(neg(a)), log1p(a)));
  Array central = lt(w, full_like(w, 5));
  auto coefficient = [&](std::size_t i) {
    return select_n(central, {full_like(x, kTail[i]), full_like(x, kCentral[i])});
  };
  w = select_n(central, {lax::sub(sqrt(w), full_like(w, 3)), lax::sub(w, full_like(w, 2.5))});
  Array p = coefficient(0);
  for (std::size_t i = 1; i < kCentral.size(); ++i) p = add(coefficient(i), mul(p, w));
  Array y = mul(p, x);
  if (x.dtype() == float64) {
    // Newton on erf(y) = x: y -= (erf(y) - x) / (2/sqrt(pi) exp(-y²)); each step doubles the
    // ~1e-7 relative accuracy of the single-precision start.
    Array scale = full_like(x, std::sqrt(std::numbers::pi) / 2);
    for (int step = 0; step < 2; ++step)
      y = lax::sub(y, mul(mul(lax::sub(erf(y), x), scale), exp(mul(y, y))));
  }
  Array inf = full_like(x, INFINITY);
  return select_n(eq(a, full_like(x, 1)), {y, mul(x, inf)});
}

const bool kRegistered = [] {
  def_elementwise(erf_inv_p, 1, kFloating);
  erf_inv_p.impl = [](std::span<const Array> in, const Params&, std::span<const ShapedArray> out) {
    return sub::with_weak_types({composite(in[0])}, out);
  };
  erf_inv_p.lower = [](hlo::Builder& b, std::span<hlo::Instruction* const> operands, const Params&,
                       std::span<const ShapedArray>) {
    return sub::lower_traced(
        b, operands,
        [](const std::vector<Array>& x) { return std::vector<Array>{composite(x[0])}; },
        erf_inv_p.name);
  };
  batching::def_elementwise_batch(erf_inv_p);
  ad::def_elementwise_jvp(erf_inv_p, {[](const Array& t, std::span<const Array>, const Array& ans) {
                            return t * (std::sqrt(std::numbers::pi) / 2 * lax::exp(ans * ans));
                          }});
  return true;
}();

}  // namespace

namespace lax {

Array erf_inv(const Array& x) { return trace::bind1(erf_inv_p, {x}); }

}  // namespace lax
}  // namespace jx
