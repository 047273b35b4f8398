// XLA's integer shifts, shared by the eager primitives and the HLO evaluator: the amount is
// read as unsigned, and an amount of the bit width or more shifts everything out (the
// arithmetic shift leaves the sign everywhere) instead of being undefined as in C++.
#pragma once

#include <limits>
#include <type_traits>

namespace jx {

template <class T>
T shift_left(T x, T y) {
  using U = std::make_unsigned_t<T>;
  if (static_cast<U>(y) >= std::numeric_limits<U>::digits) return T(0);
  return static_cast<T>(static_cast<U>(x) << static_cast<U>(y));
}

template <class T>
T shift_right_logical(T x, T y) {
  using U = std::make_unsigned_t<T>;
  if (static_cast<U>(y) >= std::numeric_limits<U>::digits) return T(0);
  return static_cast<T>(static_cast<U>(x) >> static_cast<U>(y));
}

// On an unsigned type the top bit is the sign, as XLA reads the bits.
template <class T>
T shift_right_arithmetic(T x, T y) {
  using S = std::make_signed_t<T>;
  using U = std::make_unsigned_t<T>;
  S s = static_cast<S>(x);
  if (static_cast<U>(y) >= std::numeric_limits<U>::digits) return static_cast<T>(s < 0 ? -1 : 0);
  return static_cast<T>(s >> static_cast<U>(y));
}

}  // namespace jx
