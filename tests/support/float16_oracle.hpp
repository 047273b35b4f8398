// An oracle for rounding to the 16-bit floats (bfloat16: 8 exponent bits and 7 mantissa bits;
// float16: 5 and 10), written without jx's own rounding code: every positive finite bit pattern
// is a candidate, their values increase with the pattern, and a binary search finds the two
// neighbours of |x|. The nearer one wins, a tie goes to the even pattern, and a value at or past
// the largest finite one plus half an ulp becomes ±inf (the infinity pattern follows the largest
// finite one, as a value one ulp above it). NaN stays NaN (quiet, sign kept).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace jx::testing {

// Values are compared in long double, which holds every int64 and uint64 exactly on the
// platforms jx builds for (x86-64: 64 significand bits; AArch64 Linux: 113), so that an integer
// source is rounded once, from its exact value.
static_assert(std::numeric_limits<long double>::digits >= 64,
              "the 16-bit float oracle needs a long double that holds every 64-bit integer");

template <int kExp, int kMant>
struct Binary16Format {
  static constexpr int kBias = (1 << (kExp - 1)) - 1;
  static constexpr std::uint16_t kSign = static_cast<std::uint16_t>(1u << (kExp + kMant));
  static constexpr std::uint16_t kInf = static_cast<std::uint16_t>(((1u << kExp) - 1) << kMant);
  static constexpr std::uint16_t kQuietNaN = static_cast<std::uint16_t>(kInf | 1u << (kMant - 1));

  // The value of a non-negative pattern up to kInf, where kInf counts as the next binade's
  // first value (2^(kBias + 1)): exponent field 0 is subnormal, m · 2^(1 - bias - kMant).
  static long double value(std::uint16_t bits) {
    unsigned e = bits >> kMant, m = bits & ((1u << kMant) - 1);
    if (e == 0) return std::ldexp(static_cast<long double>(m), 1 - kBias - kMant);
    return std::ldexp(static_cast<long double>(m + (1u << kMant)),
                      static_cast<int>(e) - kBias - kMant);
  }
};

template <int kExp, int kMant>
std::uint16_t nearest_16bit(long double x) {
  using F = Binary16Format<kExp, kMant>;
  const std::uint16_t sign = std::signbit(x) ? F::kSign : 0;
  if (std::isnan(x)) return static_cast<std::uint16_t>(sign | F::kQuietNaN);
  const long double a = std::fabs(x);
  if (std::isinf(a)) return static_cast<std::uint16_t>(sign | F::kInf);
  // lo: the largest pattern in [0, kInf] whose value is <= a. Values increase with the pattern.
  unsigned lo = 0, hi = F::kInf;
  if (F::value(F::kInf) <= a)  // at or past 2^(bias + 1)
    return static_cast<std::uint16_t>(sign | F::kInf);
  while (hi - lo > 1) {
    unsigned mid = (lo + hi) / 2;
    if (F::value(static_cast<std::uint16_t>(mid)) <= a)
      lo = mid;
    else
      hi = mid;
  }
  // Now value(lo) <= a < value(lo + 1).
  const long double below = a - F::value(static_cast<std::uint16_t>(lo));
  const long double above = F::value(static_cast<std::uint16_t>(lo + 1)) - a;
  unsigned pick = below < above ? lo : above < below ? lo + 1 : (lo % 2 == 0 ? lo : lo + 1);
  return static_cast<std::uint16_t>(sign | pick);  // pick == kInf: overflow to infinity
}

// The value of any pattern (NaN and the infinities included), from the same definition.
template <int kExp, int kMant>
double value_of_16bit(std::uint16_t bits) {
  using F = Binary16Format<kExp, kMant>;
  const double sign = bits & F::kSign ? -1.0 : 1.0;
  const auto magnitude = static_cast<std::uint16_t>(bits & (F::kSign - 1));
  if (magnitude > F::kInf) return std::numeric_limits<double>::quiet_NaN();
  if (magnitude == F::kInf) return sign * std::numeric_limits<double>::infinity();
  return sign * static_cast<double>(F::value(magnitude));
}

inline std::uint16_t nearest_bf16(long double x) { return nearest_16bit<8, 7>(x); }
inline std::uint16_t nearest_f16(long double x) { return nearest_16bit<5, 10>(x); }
inline double bf16_value(std::uint16_t bits) { return value_of_16bit<8, 7>(bits); }
inline double f16_value(std::uint16_t bits) { return value_of_16bit<5, 10>(bits); }

// x rounded to bfloat16 or float16 and read back, as a double.
inline double round_bf16(long double x) { return bf16_value(nearest_bf16(x)); }
inline double round_f16(long double x) { return f16_value(nearest_f16(x)); }

}  // namespace jx::testing
