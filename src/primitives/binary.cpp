// Binary elementwise primitives: add sub mul div rem pow max min atan2 and or xor shift_left
// shift_right_logical shift_right_arithmetic.
#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>

#include "support/check.hpp"
#include "support/shifts.hpp"

#include "jx/lax.hpp"
#include "jx/numpy.hpp"
#include "primitives/ad_rules.hpp"
#include "primitives/elementwise.hpp"
#include "trace/tracer.hpp"

namespace jx {
namespace {

using trace::bind1;

// Lambdas are instantiated for every dtype though abstract_eval admits only some; these traits
// keep the rejected instantiations well-formed.
template <class T>
constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T>
using F = std::conditional_t<std::is_floating_point_v<T>, T, double>;

// Integers wrap modulo 2^n, as XLA's do; signed overflow is UB in C++, so the arithmetic runs in
// the unsigned type of the same width (the conversion back is modular since C++20).
template <class Op>
auto wrapping(Op op) {
  return [op](auto x, auto y) {
    using T = decltype(x);
    if constexpr (kIsInt<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(op(static_cast<U>(x), static_cast<U>(y)));
    } else {
      return static_cast<T>(op(x, y));
    }
  };
}

// XLA's integer division: toward zero; x / 0 = -1 (all bits set); INT_MIN / -1 = INT_MIN.
template <class T>
T divide(T x, T y) {
  if constexpr (kIsInt<T>) {
    if (y == 0) return static_cast<T>(-1);
    if constexpr (std::is_signed_v<T>)
      if (x == std::numeric_limits<T>::min() && y == T(-1)) return x;
    return static_cast<T>(x / y);
  } else if constexpr (std::is_floating_point_v<T>) {
    return x / y;
  } else {
    return x;  // bool: rejected by the dtype check
  }
}

// XLA's remainder: the sign of the dividend (C's fmod); integer x % 0 = x, INT_MIN % -1 = 0.
template <class T>
T remainder(T x, T y) {
  if constexpr (kIsInt<T>) {
    if (y == 0) return x;
    if constexpr (std::is_signed_v<T>)
      if (y == T(-1)) return T(0);
    return static_cast<T>(x % y);
  } else if constexpr (std::is_floating_point_v<T>) {
    return std::fmod(x, y);
  } else {
    return x;  // bool: rejected by the dtype check
  }
}

// max/min propagate NaN (XLA's semantics), unlike std::max/std::fmax.
template <class T>
T maximum(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x)) return x;
    if (std::isnan(y)) return y;
  }
  return x > y ? x : y;
}
template <class T>
T minimum(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x)) return x;
    if (std::isnan(y)) return y;
  }
  return x < y ? x : y;
}

// op on integers; other types are rejected by the dtype check.
template <class Op>
auto integer_only(Op op) {
  return [op](auto x, auto y) {
    using T = decltype(x);
    if constexpr (kIsInt<T>)
      return static_cast<T>(op(x, y));
    else
      return x;
  };
}

// Bitwise on integers, logical on bool.
template <class Op>
auto bitwise(Op op) {
  return [op](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, bool>)
      return static_cast<bool>(op(x, y));
    else if constexpr (kIsInt<T>)
      return static_cast<T>(op(x, y));
    else
      return x;  // floats: rejected by the dtype check
  };
}

}  // namespace

Primitive add_p("add"), sub_p("sub"), mul_p("mul"), div_p("div"), rem_p("rem"), pow_p("pow"),
    max_p("max"), min_p("min"), atan2_p("atan2"), and_p("and"), or_p("or"), xor_p("xor"),
    shift_left_p("shift_left"), shift_right_logical_p("shift_right_logical"),
    shift_right_arithmetic_p("shift_right_arithmetic");

namespace {

const bool kRegistered = [] {
  def_binary(add_p, hlo::Opcode::kAdd, kNumeric, wrapping(std::plus<>{}));
  def_binary(sub_p, hlo::Opcode::kSubtract, kNumeric, wrapping(std::minus<>{}));
  def_binary(mul_p, hlo::Opcode::kMultiply, kNumeric, wrapping(std::multiplies<>{}));
  def_binary(div_p, hlo::Opcode::kDivide, kNumeric, [](auto x, auto y) { return divide(x, y); });
  def_binary(rem_p, hlo::Opcode::kRemainder, kNumeric,
             [](auto x, auto y) { return remainder(x, y); });
  def_binary(pow_p, hlo::Opcode::kPower, kFloating, [](auto x, auto y) {
    using T = F<decltype(x)>;
    return std::pow(T(x), T(y));
  });
  def_binary(max_p, hlo::Opcode::kMaximum, kNumeric | kBool,
             [](auto x, auto y) { return maximum(x, y); });
  def_binary(min_p, hlo::Opcode::kMinimum, kNumeric | kBool,
             [](auto x, auto y) { return minimum(x, y); });
  def_binary(atan2_p, hlo::Opcode::kAtan2, kFloating, [](auto x, auto y) {
    using T = F<decltype(x)>;
    return std::atan2(T(x), T(y));
  });
  def_binary(and_p, hlo::Opcode::kAnd, kInteger | kBool, bitwise(std::bit_and<>{}));
  def_binary(or_p, hlo::Opcode::kOr, kInteger | kBool, bitwise(std::bit_or<>{}));
  def_binary(xor_p, hlo::Opcode::kXor, kInteger | kBool, bitwise(std::bit_xor<>{}));
  def_binary(shift_left_p, hlo::Opcode::kShiftLeft, kInteger,
             integer_only([](auto x, auto y) { return shift_left(x, y); }));
  def_binary(shift_right_logical_p, hlo::Opcode::kShiftRightLogical, kInteger,
             integer_only([](auto x, auto y) { return shift_right_logical(x, y); }));
  def_binary(shift_right_arithmetic_p, hlo::Opcode::kShiftRightArithmetic, kInteger,
             integer_only([](auto x, auto y) { return shift_right_arithmetic(x, y); }));
  return true;
}();

// ---- differentiation ----
using ad::unbroadcast;
using Terms = std::vector<ad::TangentTerm>;
using Xs = std::span<const Array>;

// JAX's convention where max/min tie: each side gets half the tangent.
Array balanced_eq(const Array& x, const Array& ans, const Array& y) {
  auto indicator = [&](const Array& a) {
    return lax::convert_element_type(np::equal(a, ans), ans.dtype());
  };
  return indicator(x) / (1.0 + indicator(y));
}

// Transpose rules for ops linear in each operand: `scale(k, ct, other)` is operand k's cotangent
// given the other operand's value (empty when that one is linear too).
TransposeRule transpose_by(
    std::function<Array(std::size_t k, const Array& ct, const Array& other)> scale) {
  return [scale](std::span<const Array> cts, std::span<const LinearOperand> ops, const Params&) {
    std::vector<Array> out(2);
    for (std::size_t k = 0; k < 2; ++k)
      if (ops[k].is_linear()) out[k] = unbroadcast(scale(k, cts[0], ops[1 - k].value), ops[k].aval);
    return out;
  };
}

const bool kDifferentiated = [] {
  auto t_ = [](const Array& t, Xs, const Array&) { return t; };
  ad::def_elementwise_jvp(add_p, {t_, t_});
  ad::def_elementwise_jvp(sub_p,
                          {t_, [](const Array& t, Xs, const Array&) { return lax::neg(t); }});
  ad::def_elementwise_jvp(mul_p,
                          {[](const Array& t, Xs x, const Array&) { return lax::mul(t, x[1]); },
                           [](const Array& t, Xs x, const Array&) { return lax::mul(x[0], t); }});
  ad::def_elementwise_jvp(div_p,
                          {[](const Array& t, Xs x, const Array&) { return lax::div(t, x[1]); },
                           [](const Array& t, Xs x, const Array& ans) {
                             return lax::div(lax::mul(lax::neg(t), ans), x[1]);
                           }});
  // x - y * trunc(x / y): the quotient is piecewise constant.
  ad::def_elementwise_jvp(rem_p, {t_, [](const Array& t, Xs x, const Array&) {
                                    Array q = x[0] / x[1];
                                    return -t * (np::sign(q) * np::floor(np::abs(q)));
                                  }});
  // As JAX: d/dx is 0 where y == 0, and d/dy is 0 where x == 0 (log x is not taken there).
  ad::def_elementwise_jvp(pow_p, {[](const Array& t, Xs x, const Array&) {
                                    Array d = x[1] * lax::pow(x[0], x[1] - 1.0);
                                    return t * np::where(np::equal(x[1], 0.0), 0.0, d);
                                  },
                                  [](const Array& t, Xs x, const Array& ans) {
                                    Array safe = np::where(np::equal(x[0], 0.0), 1.0, x[0]);
                                    return t * (np::log(safe) * ans);
                                  }});
  for (Primitive* p : {&max_p, &min_p})
    ad::def_elementwise_jvp(
        *p,
        {[](const Array& t, Xs x, const Array& ans) { return t * balanced_eq(x[0], ans, x[1]); },
         [](const Array& t, Xs x, const Array& ans) { return t * balanced_eq(x[1], ans, x[0]); }});
  ad::def_elementwise_jvp(atan2_p, {[](const Array& t, Xs x, const Array&) {
                                      return t * (x[1] / (x[0] * x[0] + x[1] * x[1]));
                                    },
                                    [](const Array& t, Xs x, const Array&) {
                                      return t * (-x[0] / (x[0] * x[0] + x[1] * x[1]));
                                    }});
  for (Primitive* p : {&and_p, &or_p, &xor_p, &shift_left_p, &shift_right_logical_p,
                       &shift_right_arithmetic_p})
    ad::def_zero_jvp(*p);

  add_p.transpose = transpose_by([](std::size_t, const Array& ct, const Array&) { return ct; });
  sub_p.transpose = transpose_by(
      [](std::size_t k, const Array& ct, const Array&) { return k == 0 ? ct : lax::neg(ct); });
  mul_p.transpose = transpose_by([](std::size_t k, const Array& ct, const Array& other) {
    JX_CHECK(other.valid(), "mul is linear in one operand at a time");
    return k == 0 ? lax::mul(ct, other) : lax::mul(other, ct);
  });
  div_p.transpose = transpose_by([](std::size_t k, const Array& ct, const Array& y) {
    JX_CHECK(k == 0 && y.valid(), "div is linear in its numerator only");
    return lax::div(ct, y);
  });
  return true;
}();

}  // namespace

namespace lax {

Array add(const Array& x, const Array& y) { return bind1(add_p, {x, y}); }
Array sub(const Array& x, const Array& y) { return bind1(sub_p, {x, y}); }
Array mul(const Array& x, const Array& y) { return bind1(mul_p, {x, y}); }
Array div(const Array& x, const Array& y) { return bind1(div_p, {x, y}); }
Array rem(const Array& x, const Array& y) { return bind1(rem_p, {x, y}); }
Array pow(const Array& x, const Array& y) { return bind1(pow_p, {x, y}); }
Array max(const Array& x, const Array& y) { return bind1(max_p, {x, y}); }
Array min(const Array& x, const Array& y) { return bind1(min_p, {x, y}); }
Array atan2(const Array& x, const Array& y) { return bind1(atan2_p, {x, y}); }
Array bitwise_and(const Array& x, const Array& y) { return bind1(and_p, {x, y}); }
Array bitwise_or(const Array& x, const Array& y) { return bind1(or_p, {x, y}); }
Array bitwise_xor(const Array& x, const Array& y) { return bind1(xor_p, {x, y}); }
Array shift_left(const Array& x, const Array& y) { return bind1(shift_left_p, {x, y}); }
Array shift_right_logical(const Array& x, const Array& y) {
  return bind1(shift_right_logical_p, {x, y});
}
Array shift_right_arithmetic(const Array& x, const Array& y) {
  return bind1(shift_right_arithmetic_p, {x, y});
}

}  // namespace lax
}  // namespace jx
