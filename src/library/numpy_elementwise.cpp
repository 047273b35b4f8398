// np elementwise functions: unary maps, binary arithmetic, comparisons, logic, where and clip.
#include <limits>

#include "library/numpy_support.hpp"

namespace jx::np {
namespace {

using detail::binary;
using detail::prepare;
using detail::Promotion;
using detail::scalar_like;
using detail::select;

// Staged equations follow JAX's order, so nested lax calls never share one argument list
// (C++ leaves the order of argument evaluation unspecified).

Array promote_one(const Array& x, Promotion p) {
  return detail::convert(x, detail::result_type({x}, p));
}

// JAX's unary ops that promote to inexact: integer and bool inputs compute in float.
Array inexact_unary(const Array& x, Array (*f)(const Array&)) {
  return f(promote_one(x, Promotion::kInexact));
}
// The same for a function that makes NaNs or infinities, noting the caller's location.
Array noted_inexact_unary(const Array& x, Array (*f)(const Array&),
                          const std::source_location& at) {
  jx::detail::CallSite site(at);
  return inexact_unary(x, f);
}

// Operands of logical ops: bool as is, anything else as x != 0 (JAX's _logical_op).
Array truthy(const Array& x) { return x.dtype() == bool_ ? x : lax::ne(x, scalar_like(x, 0)); }

// A full-shaped constant like x: select_n takes cases of equal shape.
Array filled_like(const Array& x, double value) {
  return detail::broadcast_to_shape(scalar_like(x, value), x.shape());
}

// Python's float divmod (CPython's float_divmod, as JAX's _float_divmod): a, b same dtype.
std::pair<Array, Array> float_divmod(const Array& a, const Array& b) {
  Array mod = lax::rem(a, b);
  Array div = lax::div(lax::sub(a, mod), b);
  Array nonzero = lax::ne(mod, scalar_like(mod, 0));
  Array sign_b = lax::sign(b);
  Array ind = lax::bitwise_and(nonzero, lax::ne(sign_b, lax::sign(mod)));
  mod = select(ind, lax::add(mod, b), mod);
  div = select(ind, lax::sub(div, scalar_like(div, 1)), div);
  return {lax::round(div), mod};
}

// x ** n for integer x and n of equal shape: binary exponentiation unrolled over 6 bits, as
// JAX's _pow_int_int (a larger exponent overflows any base but 0 and ±1, which stay exact).
Array integer_power(Array x, Array n) {
  Array zero = scalar_like(n, 0), one = scalar_like(n, 1);
  // 0 ** n is 0 for n != 0, and 1 for n == 0.
  Array x_zero = lax::eq(x, zero);
  Array acc =
      select(lax::bitwise_and(x_zero, lax::ne(n, zero)), filled_like(n, 0), filled_like(n, 1));
  for (int bit = 0; bit < 6; ++bit) {
    Array odd = lax::ne(lax::bitwise_and(n, one), zero);
    acc = select(odd, lax::mul(acc, x), acc);
    x = lax::mul(x, x);
    n = lax::shift_right_logical(n, one);  // a negative exponent's bits, as JAX's
  }
  return acc;
}

// As jnp.log2 and jnp.log10: the natural log divided by the base's, in x's dtype.
Array log_base(const Array& x, int base, std::source_location at) {
  jx::detail::CallSite site(at);
  Array v = promote_one(x, Promotion::kInexact);
  return lax::div(lax::log(v), lax::log(scalar_like(v, base)));
}

}  // namespace

// ---- unary ---------------------------------------------------------------------------------

Array negative(const Array& x) { return lax::neg(x); }
Array positive(const Array& x) { return x; }
Array exp(const Array& x, std::source_location at) { return noted_inexact_unary(x, lax::exp, at); }
Array exp2(const Array& x) { return inexact_unary(x, lax::exp2); }
Array log(const Array& x, std::source_location at) { return noted_inexact_unary(x, lax::log, at); }
Array log2(const Array& x, std::source_location at) { return log_base(x, 2, at); }
Array log10(const Array& x, std::source_location at) { return log_base(x, 10, at); }
Array log1p(const Array& x, std::source_location at) {
  return noted_inexact_unary(x, lax::log1p, at);
}
Array expm1(const Array& x) { return inexact_unary(x, lax::expm1); }
Array sin(const Array& x) { return inexact_unary(x, lax::sin); }
Array cos(const Array& x) { return inexact_unary(x, lax::cos); }
Array tan(const Array& x) { return inexact_unary(x, lax::tan); }
Array arcsin(const Array& x, std::source_location at) {
  return noted_inexact_unary(x, lax::asin, at);
}
Array arccos(const Array& x, std::source_location at) {
  return noted_inexact_unary(x, lax::acos, at);
}
Array arctan(const Array& x) { return inexact_unary(x, lax::atan); }
Array sinh(const Array& x) { return inexact_unary(x, lax::sinh); }
Array cosh(const Array& x) { return inexact_unary(x, lax::cosh); }
Array tanh(const Array& x) { return inexact_unary(x, lax::tanh); }
Array arcsinh(const Array& x) { return inexact_unary(x, lax::asinh); }
Array arccosh(const Array& x, std::source_location at) {
  return noted_inexact_unary(x, lax::acosh, at);
}
Array arctanh(const Array& x, std::source_location at) {
  return noted_inexact_unary(x, lax::atanh, at);
}
Array sqrt(const Array& x, std::source_location at) {
  return noted_inexact_unary(x, lax::sqrt, at);
}
Array cbrt(const Array& x) { return inexact_unary(x, lax::cbrt); }

Array square(const Array& x) { return lax::integer_pow(promote_one(x, Promotion::kNumeric), 2); }

Array reciprocal(const Array& x, std::source_location at) {
  jx::detail::CallSite site(at);
  return lax::integer_pow(promote_one(x, Promotion::kInexact), -1);
}

Array abs(const Array& x) { return x.dtype() == bool_ || is_unsigned(x.dtype()) ? x : lax::abs(x); }

Array sign(const Array& x) { return lax::sign(x); }

// Integers and bools are already whole: floor, ceil and round return them unchanged.
Array floor(const Array& x) { return is_floating(x.dtype()) ? lax::floor(x) : x; }
Array ceil(const Array& x) { return is_floating(x.dtype()) ? lax::ceil(x) : x; }
Array round(const Array& x) {
  return is_floating(x.dtype()) ? lax::round(x, lax::RoundingMethod::kToNearestEven) : x;
}

Array logical_not(const Array& x) { return lax::bitwise_not(truthy(x)); }
Array bitwise_not(const Array& x) { return lax::bitwise_not(x); }

// Integers and bools are never inf or NaN (jnp.isfinite, isinf, isnan).
Array isfinite(const Array& x) {
  return is_floating(x.dtype()) ? lax::is_finite(x) : ones_like(x, bool_);
}
Array isinf(const Array& x) {
  if (!is_floating(x.dtype())) return zeros_like(x, bool_);
  return lax::eq(lax::abs(x), scalar_like(x, std::numeric_limits<double>::infinity()));
}
Array isnan(const Array& x) {
  return is_floating(x.dtype()) ? lax::ne(x, x) : zeros_like(x, bool_);
}

// ---- binary arithmetic ---------------------------------------------------------------------

// On bools, + is `or` and * is `and`, as in JAX.
Array add(const Array& x, const Array& y) {
  auto [a, b] = prepare("add", x, y);
  return a.dtype() == bool_ ? lax::bitwise_or(a, b) : lax::add(a, b);
}

Array subtract(const Array& x, const Array& y) { return binary("sub", x, y, lax::sub); }

Array multiply(const Array& x, const Array& y) {
  auto [a, b] = prepare("mul", x, y);
  return a.dtype() == bool_ ? lax::bitwise_and(a, b) : lax::mul(a, b);
}

Array divide(const Array& x, const Array& y, std::source_location at) {
  jx::detail::CallSite site(at);
  return binary("div", x, y, lax::div, Promotion::kInexact);
}
Array true_divide(const Array& x, const Array& y, std::source_location at) {
  return divide(x, y, at);
}

// lax::div truncates toward zero; floor division steps down when the signs differ and the
// division is inexact.
Array floor_divide(const Array& x, const Array& y, std::source_location at) {
  jx::detail::CallSite site(at);
  auto [a, b] = prepare("div", x, y, Promotion::kNumeric);
  if (is_unsigned(a.dtype())) return lax::div(a, b);
  if (!is_integral(a.dtype())) return float_divmod(a, b).first;
  Array q = lax::div(a, b);
  Array sign_a = lax::sign(a);
  Array signs_differ = lax::ne(sign_a, lax::sign(b));
  Array step_down = lax::bitwise_and(signs_differ, lax::ne(lax::rem(a, b), scalar_like(a, 0)));
  return select(step_down, lax::sub(q, scalar_like(q, 1)), q);
}

// lax::rem takes the dividend's sign; Python's % takes the divisor's: add b when they differ.
Array remainder(const Array& x, const Array& y, std::source_location at) {
  jx::detail::CallSite site(at);
  auto [a, b] = prepare("rem", x, y, Promotion::kNumeric);
  // As JAX: an integer divisor of 0 becomes 1, so x % 0 is 0 (numpy's answer).
  if (is_integral(b.dtype())) b = select(lax::eq(b, scalar_like(b, 0)), filled_like(b, 1), b);
  Array r = lax::rem(a, b);
  Array zero = scalar_like(r, 0);
  Array r_nonzero = lax::ne(r, zero);
  Array r_negative = lax::lt(r, zero);
  Array signs_differ = lax::ne(r_negative, lax::lt(b, zero));
  Array fix = lax::bitwise_and(signs_differ, r_nonzero);
  return select(fix, lax::add(r, b), r);
}
Array mod(const Array& x, const Array& y) { return remainder(x, y); }

Array power(const Array& x, const Array& y, std::source_location at) {
  jx::detail::CallSite site(at);
  // A concrete integer scalar exponent unrolls into multiplications, for any base (JAX's
  // case 1: exact for integers, and more precise than pow for floats).
  if (!y.is_tracer() && y.ndim() == 0 && is_integral(y.dtype())) {
    auto n = y.item<std::int64_t>();
    if (n >= std::numeric_limits<int>::min() && n <= std::numeric_limits<int>::max())
      return lax::integer_pow(promote_one(x, Promotion::kNumeric), static_cast<int>(n));
  }
  if (is_integral(detail::result_type({x, y}, Promotion::kNumeric).dtype)) {
    auto [a, b] = prepare("pow", x, y, Promotion::kNumeric, /*scalars_too=*/true);
    return integer_power(a, b);
  }
  return binary("pow", x, y, lax::pow, Promotion::kNumeric);
}

Array maximum(const Array& x, const Array& y) { return binary("max", x, y, lax::max); }
Array minimum(const Array& x, const Array& y) { return binary("min", x, y, lax::min); }

Array arctan2(const Array& x, const Array& y) {
  return binary("atan2", x, y, lax::atan2, Promotion::kInexact);
}

// max + log1p(exp(-|x - y|)) never overflows; x - y is NaN for a NaN input or for infinities
// of one sign, where x + y is the answer.
Array logaddexp(const Array& x, const Array& y) {
  auto [a, b] = prepare("max", x, y, Promotion::kInexact);
  Array amax = lax::max(a, b);
  Array delta = lax::sub(a, b);
  Array delta_nan = lax::ne(delta, delta);
  Array sum = lax::add(a, b);
  Array stable = lax::add(amax, lax::log1p(lax::exp(lax::neg(lax::abs(delta)))));
  return select(delta_nan, sum, stable);
}

// ---- comparisons and logic -----------------------------------------------------------------

Array equal(const Array& x, const Array& y) { return binary("eq", x, y, lax::eq); }
Array not_equal(const Array& x, const Array& y) { return binary("ne", x, y, lax::ne); }
Array less(const Array& x, const Array& y) { return binary("lt", x, y, lax::lt); }
Array less_equal(const Array& x, const Array& y) { return binary("le", x, y, lax::le); }
Array greater(const Array& x, const Array& y) { return binary("gt", x, y, lax::gt); }
Array greater_equal(const Array& x, const Array& y) { return binary("ge", x, y, lax::ge); }

Array logical_and(const Array& x, const Array& y) {
  Array a = truthy(x);
  return binary("and", a, truthy(y), lax::bitwise_and);
}
Array logical_or(const Array& x, const Array& y) {
  Array a = truthy(x);
  return binary("or", a, truthy(y), lax::bitwise_or);
}
Array bitwise_and(const Array& x, const Array& y) { return binary("and", x, y, lax::bitwise_and); }
Array bitwise_or(const Array& x, const Array& y) { return binary("or", x, y, lax::bitwise_or); }
Array bitwise_xor(const Array& x, const Array& y) { return binary("xor", x, y, lax::bitwise_xor); }
Array left_shift(const Array& x, const Array& y) {
  return binary("shift_left", x, y, lax::shift_left);
}
Array right_shift(const Array& x, const Array& y) {
  return binary("shift_right", x, y, [](const Array& a, const Array& b) {
    return is_unsigned(a.dtype()) ? lax::shift_right_logical(a, b)
                                  : lax::shift_right_arithmetic(a, b);
  });
}

// ---- selection -----------------------------------------------------------------------------

// Everything, 0-d operands included, is broadcast to one shape: select_n takes equal shapes.
Array where(const Array& condition, const Array& x, const Array& y) {
  std::vector<Array> xy = detail::promote({x, y});
  std::vector<Array> v = detail::broadcast_all("select_n", {truthy(condition), xy[0], xy[1]});
  if (v[1].size() == 0) return v[1];
  return select(v[0], v[1], v[2]);
}

Array clip(const Array& x, const std::optional<Array>& lo, const std::optional<Array>& hi) {
  Array out = x;
  if (lo) out = maximum(*lo, out);
  if (hi) out = minimum(*hi, out);
  return out;
}

Array stop_gradient(const Array& x) { return is_floating(x.dtype()) ? lax::stop_gradient(x) : x; }

}  // namespace jx::np
