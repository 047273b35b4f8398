// Binary elementwise primitives: add sub mul div rem pow max min atan2 and or.
#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>

#include "jx/lax.hpp"
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
    max_p("max"), min_p("min"), atan2_p("atan2"), and_p("and"), or_p("or");

namespace {

const bool kRegistered = [] {
  def_binary(add_p, hlo::Opcode::kAdd, kNumeric, wrapping(std::plus<>{}));
  def_binary(sub_p, hlo::Opcode::kSubtract, kNumeric, wrapping(std::minus<>{}));
  def_binary(mul_p, hlo::Opcode::kMultiply, kNumeric, wrapping(std::multiplies<>{}));
  def_binary(div_p, hlo::Opcode::kDivide, kNumeric, [](auto x, auto y) { return divide(x, y); });
  def_binary(rem_p, hlo::Opcode::kRemainder, kNumeric, [](auto x, auto y) { return remainder(x, y); });
  def_binary(pow_p, hlo::Opcode::kPower, kFloating, [](auto x, auto y) {
    using T = F<decltype(x)>;
    return std::pow(T(x), T(y));
  });
  def_binary(max_p, hlo::Opcode::kMaximum, kNumeric | kBool, [](auto x, auto y) { return maximum(x, y); });
  def_binary(min_p, hlo::Opcode::kMinimum, kNumeric | kBool, [](auto x, auto y) { return minimum(x, y); });
  def_binary(atan2_p, hlo::Opcode::kAtan2, kFloating, [](auto x, auto y) {
    using T = F<decltype(x)>;
    return std::atan2(T(x), T(y));
  });
  def_binary(and_p, hlo::Opcode::kAnd, kInteger | kBool, bitwise(std::bit_and<>{}));
  def_binary(or_p, hlo::Opcode::kOr, kInteger | kBool, bitwise(std::bit_or<>{}));
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

}  // namespace lax
}  // namespace jx
