// Conversions between element types as XLA does them, and the type each element type computes
// in: the eager impls, the HLO evaluator and Array's readers share these.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "jx/float16.hpp"

namespace jx {

// The 16-bit floats compute in float and round each result, as XLA's CPU backend does.
template <class T>
using compute_t = std::conditional_t<std::is_same_v<T, BFloat16> || std::is_same_v<T, Float16>,
                                     float, T>;

// XLA's conversions: float → int saturates and maps NaN to 0; a float to a narrower float rounds
// to nearest even, overflowing to ±inf; int → narrower int wraps; x != 0 to bool.
template <class O, class T>
O convert_element(T x) {
  using C = compute_t<T>;
  constexpr bool kIntOut = std::is_integral_v<O> && !std::is_same_v<O, bool>;
  if constexpr (std::is_same_v<O, T>) {
    return x;  // bit for bit: a 16-bit NaN keeps its payload
  } else if constexpr (std::is_same_v<O, bool>) {
    return static_cast<C>(x) != C(0);
  } else if constexpr (is_float_element_v<T> && kIntOut) {
    double v = static_cast<double>(x);
    if (std::isnan(v)) return O(0);
    using L = std::numeric_limits<O>;
    if (v <= static_cast<double>(L::lowest())) return L::lowest();
    if (v >= static_cast<double>(L::max())) return L::max();
    return static_cast<O>(v);
  } else if constexpr (std::is_same_v<O, float> && std::is_same_v<T, double>) {
    // Past FLT_MAX plus half an ulp the cast is undefined in C++; IEEE rounds to infinity.
    constexpr double kLimit = std::numeric_limits<float>::max() + 0x1p103;
    constexpr float kInf = std::numeric_limits<float>::infinity();
    if (std::isfinite(x) && std::abs(x) >= kLimit) return x > 0 ? kInf : -kInf;
    return static_cast<O>(x);
  } else if constexpr (kIntOut && std::is_integral_v<T>) {
    return static_cast<O>(x);  // modular since C++20: an int to a narrower int wraps
  } else if constexpr (std::is_same_v<O, BFloat16> || std::is_same_v<O, Float16>) {
    return O(x);  // one rounding from the exact value (jx/float16.hpp)
  } else {
    return static_cast<O>(static_cast<compute_t<T>>(x));
  }
}

// The unsigned type integer arithmetic on T wraps in: T's width, but never narrower than unsigned
// int (an unsigned short would be promoted to int, where a product can overflow).
template <class T>
using wrapping_t = std::common_type_t<std::make_unsigned_t<T>, unsigned>;

// acc + a * b in a compute type: integers wrap (unsigned arithmetic keeps that defined), as XLA's
// do; bool is or-of-ands.
template <class C>
C mul_add(C acc, C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    return acc || (a && b);
  } else if constexpr (std::is_integral_v<C>) {
    using U = wrapping_t<C>;
    return static_cast<C>(static_cast<U>(acc) + static_cast<U>(a) * static_cast<U>(b));
  } else {
    return static_cast<C>(acc + a * b);
  }
}

}  // namespace jx
