// Distances between floats in units in the last place, for the math-function accuracy tests.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace jx::testing {

// Floats in order map to consecutive integers (-0 and +0 both to 0).
template <class T>
std::int64_t ordered(T v) {
  using I = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  auto i = std::bit_cast<I>(v);
  return i < 0 ? -static_cast<std::int64_t>(i & std::numeric_limits<I>::max()) : i;
}

template <class T>
double ulp_distance(T a, T b) {
  std::int64_t i = ordered(a), j = ordered(b);
  if ((i < 0) != (j < 0))  // far apart; the subtraction could overflow
    return std::abs(static_cast<double>(i)) + std::abs(static_cast<double>(j));
  return static_cast<double>(i > j ? i - j : j - i);
}

// Both NaN, or equal including the sign of zero.
template <class T>
bool identical(T got, T want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == want && std::signbit(got) == std::signbit(want);
}

}  // namespace jx::testing
