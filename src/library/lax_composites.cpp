// jx::lax functions composed of primitives rather than primitives of their own.
#include <array>
#include <cmath>
#include <numbers>

#include "core/dtype_set.hpp"
#include "jx/lax.hpp"
#include "jx/numpy.hpp"

namespace jx::lax {
namespace {

// Giles, "Approximating the erfinv function" (2010), single precision: a polynomial in
// w - 2.5 for w = -log(1 - x²) < 5, else in sqrt(w) - 3 (the coefficients XLA uses).
constexpr std::array<double, 9> kCentral{2.81022636e-08,  3.43273939e-07, -3.5233877e-06,
                                         -4.39150654e-06, 0.00021858087,  -0.00125372503,
                                         -0.00417768164,  0.246640727,    1.50140941};
constexpr std::array<double, 9> kTail{-0.000200214257, 0.000100950558, 0.00134934322,
                                      -0.00367342844,  0.00573950773,  -0.0076224613,
                                      0.00943887047,   1.00167406,     2.83297682};

Array full_like(const Array& x, double v) {
  return broadcast_in_dim(convert_element_type(np::array(v), x.dtype()), x.shape(), {});
}

// x[start:limit:stride] along `axis`.
Array slice_in_dim(const Array& x, std::int64_t start, std::int64_t limit, std::int64_t stride,
                   std::int64_t axis) {
  std::vector<std::int64_t> starts(static_cast<std::size_t>(x.ndim()), 0),
      limits = x.shape(), strides(static_cast<std::size_t>(x.ndim()), 1);
  auto a = static_cast<std::size_t>(axis);
  starts[a] = start;
  limits[a] = limit;
  strides[a] = stride;
  return slice(x, starts, limits, strides);
}

// a and b alternating along `axis`, a first (a as long as b, or one longer): each padded with
// zeros into the other's places, then added (or-ed, for bool).
Array interleave(const Array& a, const Array& b, std::int64_t axis) {
  auto d = static_cast<std::size_t>(axis);
  bool same = a.shape()[d] == b.shape()[d];
  PaddingConfig pa(static_cast<std::size_t>(a.ndim()), {0, 0, 0}), pb = pa;
  pa[d] = {0, same ? 1 : 0, 1};
  pb[d] = {1, same ? 0 : 1, 1};
  Array zero = convert_element_type(np::array(0), a.dtype());
  Array (*op)(const Array&, const Array&) = a.dtype() == bool_ ? bitwise_or : add;
  return op(pad(a, zero, pa), pad(b, zero, pb));
}

// JAX's _scan: the odd elements of the scan are the scan of adjacent pairs combined; each even
// one combines the odd one before it with its own element.
Array scan_rounds(const std::function<Array(const Array&, const Array&)>& fn, const Array& x,
                  std::int64_t axis) {
  std::int64_t n = x.shape()[static_cast<std::size_t>(axis)];
  if (n < 2) return x;
  Array odd =
      scan_rounds(fn, fn(slice_in_dim(x, 0, n - 1, 2, axis), slice_in_dim(x, 1, n, 2, axis)), axis);
  std::int64_t m = odd.shape()[static_cast<std::size_t>(axis)];
  Array rest = slice_in_dim(x, 2, n, 2, axis);
  Array even = fn(n % 2 == 0 ? slice_in_dim(odd, 0, m - 1, 1, axis) : odd, rest);
  even = concatenate({slice_in_dim(x, 0, 1, 1, axis), even}, axis);
  return interleave(even, odd, axis);
}

}  // namespace

Array erf_inv(const Array& x) {
  // 16-bit floats compute in float32 and round the result, as XLA's ErfInv does.
  if (compute_dtype(x.dtype()) != x.dtype())
    return convert_element_type(erf_inv(convert_element_type(x, compute_dtype(x.dtype()))),
                                x.dtype());
  Array w = neg(log1p(neg(mul(x, x))));
  Array central = lt(w, full_like(w, 5));
  auto coefficient = [&](std::size_t i) {
    return select_n(central, {full_like(x, kTail[i]), full_like(x, kCentral[i])});
  };
  w = select_n(central, {sub(sqrt(w), full_like(w, 3)), sub(w, full_like(w, 2.5))});
  Array p = coefficient(0);
  for (std::size_t i = 1; i < kCentral.size(); ++i) p = add(coefficient(i), mul(p, w));
  Array y = mul(p, x);
  if (x.dtype() == float64) {
    // Newton on erf(y) = x: y -= (erf(y) - x) / (2/sqrt(pi) exp(-y²)); each step doubles the
    // ~1e-7 relative accuracy of the single-precision start.
    Array scale = full_like(x, std::sqrt(std::numbers::pi) / 2);
    for (int step = 0; step < 2; ++step)
      y = sub(y, mul(mul(sub(erf(y), x), scale), exp(mul(y, y))));
  }
  Array inf = full_like(x, INFINITY);
  return select_n(eq(abs(x), full_like(x, 1)), {y, mul(x, inf)});
}

Array associative_scan(const std::function<Array(const Array&, const Array&)>& fn, const Array& x,
                       std::int64_t axis, bool reverse) {
  if (axis < 0) axis += x.ndim();
  if (axis < 0 || axis >= x.ndim())
    throw ShapeError("associative_scan: axis out of bounds for array of shape " +
                     shape_str(x.shape()));
  if (!reverse) return scan_rounds(fn, x, axis);
  return rev(scan_rounds(fn, rev(x, {axis}), axis), {axis});
}

}  // namespace jx::lax
