// Each elementwise opcode's scalar semantics, written once: `Scalar<op>` is a functor on one
// element type (the 16-bit floats compute in float: drivers pass compute_t<T>, and round the
// result once as they store it). The HLO evaluator and the primitives' eager impls both apply these; the LLVM
// emitters (codegen/elemental) are the only other statement of an op's arithmetic. Every functor
// compiles for every element type, since dispatch instantiates all of them; the opcode table's
// dtypes (opcodes.def) keep the others from being called.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <type_traits>

#include "core/element_convert.hpp"
#include "hlo/ir.hpp"
#include "support/shifts.hpp"

namespace jx::hlo {

template <class T>
constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
// Float functions compile for integers in double; they never run there.
template <class T>
using Wide = std::conditional_t<is_float_element_v<T>, compute_t<T>, double>;

// Integer arithmetic wraps modulo 2^n, as XLA's does: signed overflow is undefined in C++, so it
// runs unsigned (the conversion back is modular since C++20), and at least as wide as unsigned
// int, which 16- and 8-bit operands would otherwise be promoted past, to a signed int.
template <class T, class Op>
T wrapping(T x, T y, Op op) {
  if constexpr (kIsInt<T>) {
    using U = wrapping_t<T>;
    return static_cast<T>(op(static_cast<U>(x), static_cast<U>(y)));
  } else {
    return static_cast<T>(op(x, y));
  }
}

// The primary template has no call operator: an opcode without scalar semantics.
template <Opcode op>
struct Scalar {};

// A unary float function `expr` of `v`, computed at the element's own float type.
#define JX_FLOAT_SCALAR(opcode, expr)  \
  template <>                          \
  struct Scalar<Opcode::opcode> {      \
    template <class T>                 \
    T operator()(T x) const {          \
      using W = Wide<T>;               \
      W v = static_cast<W>(x);         \
      return static_cast<T>(expr);     \
    }                                  \
  };
JX_FLOAT_SCALAR(kExp, std::exp(v))
JX_FLOAT_SCALAR(kExp2, std::exp2(v))
JX_FLOAT_SCALAR(kLog, std::log(v))
JX_FLOAT_SCALAR(kLog1p, std::log1p(v))
JX_FLOAT_SCALAR(kExpm1, std::expm1(v))
JX_FLOAT_SCALAR(kSin, std::sin(v))
JX_FLOAT_SCALAR(kCos, std::cos(v))
JX_FLOAT_SCALAR(kTan, std::tan(v))
JX_FLOAT_SCALAR(kAsin, std::asin(v))
JX_FLOAT_SCALAR(kAcos, std::acos(v))
JX_FLOAT_SCALAR(kAtan, std::atan(v))
JX_FLOAT_SCALAR(kSinh, std::sinh(v))
JX_FLOAT_SCALAR(kCosh, std::cosh(v))
JX_FLOAT_SCALAR(kTanh, std::tanh(v))
JX_FLOAT_SCALAR(kAsinh, std::asinh(v))
JX_FLOAT_SCALAR(kAcosh, std::acosh(v))
JX_FLOAT_SCALAR(kAtanh, std::atanh(v))
// With e = exp(-|x|), which never overflows: large negative x keeps its tiny result.
JX_FLOAT_SCALAR(kLogistic, (v >= W(0) ? W(1) : std::exp(-std::abs(v))) / (W(1) + std::exp(-std::abs(v))))
JX_FLOAT_SCALAR(kSqrt, std::sqrt(v))
JX_FLOAT_SCALAR(kRsqrt, W(1) / std::sqrt(v))
JX_FLOAT_SCALAR(kCbrt, std::cbrt(v))
JX_FLOAT_SCALAR(kFloor, std::floor(v))
JX_FLOAT_SCALAR(kCeil, std::ceil(v))
JX_FLOAT_SCALAR(kRoundAfz, std::round(v))
JX_FLOAT_SCALAR(kRoundEven, std::nearbyint(v))  // the default rounding mode: half to even
JX_FLOAT_SCALAR(kErf, std::erf(v))
#undef JX_FLOAT_SCALAR

template <>
struct Scalar<Opcode::kIsFinite> {
  template <class T>
  bool operator()(T x) const {
    return std::isfinite(static_cast<Wide<T>>(x));
  }
};
template <>
struct Scalar<Opcode::kNegate> {  // -INT_MIN = INT_MIN
  template <class T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>)
      return x;
    else
      return wrapping(T(0), x, std::minus<>{});
  }
};
template <>
struct Scalar<Opcode::kAbs> {  // abs(INT_MIN) = INT_MIN
  template <class T>
  T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>)
      return x;
    else
      return x < T(0) ? Scalar<Opcode::kNegate>{}(x) : x;
  }
};
template <>
struct Scalar<Opcode::kSign> {  // sign(NaN) = NaN, sign(-0.0) = +0.0
  template <class T>
  T operator()(T x) const {
    if constexpr (is_float_element_v<T>)
      if (std::isnan(x)) return x;
    return static_cast<T>((T(0) < x) - (x < T(0)));
  }
};
template <>
struct Scalar<Opcode::kNot> {  // logical on bool, bitwise on integers
  template <class T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>)
      return !x;
    else if constexpr (kIsInt<T>)
      return static_cast<T>(~x);
    else
      return x;
  }
};

// ---- binary ----------------------------------------------------------------------------------

template <>
struct Scalar<Opcode::kAdd> {
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (std::is_same_v<T, bool>)
      return x || y;
    else
      return wrapping(x, y, std::plus<>{});
  }
};
template <>
struct Scalar<Opcode::kSubtract> {
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (std::is_same_v<T, bool>)
      return x != y;
    else
      return wrapping(x, y, std::minus<>{});
  }
};
template <>
struct Scalar<Opcode::kMultiply> {
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (std::is_same_v<T, bool>)
      return x && y;
    else
      return wrapping(x, y, std::multiplies<>{});
  }
};
template <>
struct Scalar<Opcode::kDivide> {  // integers: toward zero, x / 0 = -1, INT_MIN / -1 = INT_MIN
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (kIsInt<T>) {
      if (y == 0) return static_cast<T>(-1);
      if constexpr (std::is_signed_v<T>)
        if (x == std::numeric_limits<T>::min() && y == T(-1)) return x;
    }
    if constexpr (std::is_same_v<T, bool>)
      return x;
    else
      return static_cast<T>(x / y);
  }
};
template <>
struct Scalar<Opcode::kRemainder> {  // the dividend's sign; integers: x % 0 = x, INT_MIN % -1 = 0
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (is_float_element_v<T>) {
      return static_cast<T>(std::fmod(static_cast<Wide<T>>(x), static_cast<Wide<T>>(y)));
    } else if constexpr (kIsInt<T>) {
      if (y == 0) return x;
      if constexpr (std::is_signed_v<T>)
        if (y == T(-1)) return T(0);
      return static_cast<T>(x % y);
    } else {
      return x;
    }
  }
};
template <>
struct Scalar<Opcode::kPower> {  // integers: repeated squaring, wrapping; x^-n = 0 unless |x| = 1
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (is_float_element_v<T>) {
      return static_cast<T>(std::pow(static_cast<Wide<T>>(x), static_cast<Wide<T>>(y)));
    } else if constexpr (std::is_same_v<T, bool>) {
      return y ? x : true;
    } else {
      if constexpr (std::is_signed_v<T>)
        if (y < 0) return x == 1 ? T(1) : x == -1 ? T(y % 2 ? -1 : 1) : T(0);
      Scalar<Opcode::kMultiply> mul;
      T acc = 1;
      for (T base = x; y; y = static_cast<T>(y >> 1), base = mul(base, base))
        if (y & 1) acc = mul(acc, base);
      return acc;
    }
  }
};
template <>
struct Scalar<Opcode::kMaximum> {  // NaN propagates, unlike std::max and std::fmax
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (is_float_element_v<T>)
      if (std::isnan(x) || std::isnan(y)) return std::isnan(x) ? x : y;
    return x > y ? x : y;
  }
};
template <>
struct Scalar<Opcode::kMinimum> {
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (is_float_element_v<T>)
      if (std::isnan(x) || std::isnan(y)) return std::isnan(x) ? x : y;
    return x < y ? x : y;
  }
};
template <>
struct Scalar<Opcode::kAtan2> {
  template <class T>
  T operator()(T x, T y) const {
    return static_cast<T>(std::atan2(static_cast<Wide<T>>(x), static_cast<Wide<T>>(y)));
  }
};

// `op` on integers and bool; floats never reach it.
template <class Op>
struct Bitwise {
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (is_float_element_v<T>)
      return x;
    else
      return static_cast<T>(Op{}(x, y));
  }
};
template <>
struct Scalar<Opcode::kAnd> : Bitwise<std::bit_and<>> {};
template <>
struct Scalar<Opcode::kOr> : Bitwise<std::bit_or<>> {};
template <>
struct Scalar<Opcode::kXor> : Bitwise<std::bit_xor<>> {};

// Shifts on integers (support/shifts.hpp: a count past the width gives 0, or the sign); bool and
// floats never reach them.
#define JX_SHIFT_SCALAR(opcode, fn)  \
  template <>                        \
  struct Scalar<Opcode::opcode> {    \
    template <class T>               \
    T operator()(T x, T y) const {   \
      if constexpr (kIsInt<T>)       \
        return fn(x, y);             \
      else                           \
        return x;                    \
    }                                \
  };
JX_SHIFT_SCALAR(kShiftLeft, shift_left)
JX_SHIFT_SCALAR(kShiftRightLogical, shift_right_logical)
JX_SHIFT_SCALAR(kShiftRightArithmetic, shift_right_arithmetic)
#undef JX_SHIFT_SCALAR

// ---- ternary and conversion ------------------------------------------------------------------

template <>
struct Scalar<Opcode::kClamp> {  // min(max(x, lo), hi); NaN anywhere gives NaN; lo > hi gives hi
  template <class T>
  T operator()(T lo, T x, T hi) const {
    if constexpr (is_float_element_v<T>)
      if (std::isnan(x) || std::isnan(lo) || std::isnan(hi))
        return std::numeric_limits<T>::quiet_NaN();
    x = x < lo ? lo : x;
    return x > hi ? hi : x;
  }
};

// Whether `op` has scalar semantics of `arity` operands here.
template <Opcode op>
constexpr bool kHasUnaryScalar = requires(Scalar<op> f, float x) { f(x); };
template <Opcode op>
constexpr bool kHasBinaryScalar = requires(Scalar<op> f, float x) { f(x, x); };

}  // namespace jx::hlo
