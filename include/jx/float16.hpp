// The element types of the 16-bit float dtypes: BFloat16 (bfloat16: float32's 8 exponent bits, 7
// mantissa bits) and Float16 (float16: IEEE binary16). Each holds its bits; arithmetic computes in
// float and rounds the result, as XLA computes them. Conversions round to nearest even, overflow
// to ±inf and keep NaN (quiet), as XLA's do.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace jx {
namespace detail {

// The bits of x rounded to the nearest value (ties to even) of a binary float with kExp exponent
// bits and kMant stored mantissa bits; subnormals kept, overflow to ±inf, NaN quiet.
template <int kExp, int kMant>
std::uint16_t round_to_bits(double x) {
  constexpr int kBias = (1 << (kExp - 1)) - 1;
  constexpr unsigned kExpMask = (1u << kExp) - 1;
  const auto sign = static_cast<std::uint16_t>(std::signbit(x) ? 1u << (kExp + kMant) : 0u);
  if (std::isnan(x)) return static_cast<std::uint16_t>(sign | kExpMask << kMant | 1u << (kMant - 1));
  double a = std::fabs(x);
  if (std::isinf(a)) return static_cast<std::uint16_t>(sign | kExpMask << kMant);
  // a = 1.m · 2^e, with e no smaller than the least normal exponent: below it the quantum
  // (one unit in the last place) stays fixed, which makes the subnormals.
  int e = 0;
  std::frexp(a, &e);
  e = std::max(e - 1, 1 - kBias);
  double q = std::ldexp(a, kMant - e);  // a in units of the quantum: exact in double
  double whole = std::floor(q), rest = q - whole;
  if (rest > 0.5 || (rest == 0.5 && std::fmod(whole, 2.0) == 1.0)) whole += 1;
  double r = std::ldexp(whole, e - kMant);
  if (r >= std::ldexp(1.0, kBias + 1)) return static_cast<std::uint16_t>(sign | kExpMask << kMant);
  if (r < std::ldexp(1.0, 1 - kBias))  // subnormal (or zero): the exponent field is 0
    return static_cast<std::uint16_t>(sign | static_cast<unsigned>(whole));
  std::frexp(r, &e);
  auto mantissa = static_cast<unsigned>(std::ldexp(r, kMant - (e - 1))) & ((1u << kMant) - 1);
  return static_cast<std::uint16_t>(sign | static_cast<unsigned>(e - 1 + kBias) << kMant |
                                    mantissa);
}

// x as a double to be rounded once more, to 51 bits or fewer: x itself when a double holds it,
// else (a 64-bit integer past 2^53) rounded to odd: truncated to 53 bits, the lowest set when any
// bit was dropped. Rounding that to nearest even gives what rounding x would, where rounding x to
// nearest double first could land on a tie that x is not on.
template <class T>
double to_double_for_rounding(T x) {
  if constexpr (std::is_integral_v<T> && sizeof(T) == 8) {
    using U = std::make_unsigned_t<T>;
    bool negative = false;
    if constexpr (std::is_signed_v<T>) negative = x < 0;
    const U m = negative ? static_cast<U>(U(0) - static_cast<U>(x)) : static_cast<U>(x);
    int shift = 0;
    while ((m >> shift) >= (U(1) << 53)) ++shift;
    U kept = m >> shift;
    if ((m & ((U(1) << shift) - 1)) != 0) kept |= 1;
    const double d = std::ldexp(static_cast<double>(kept), shift);
    return negative ? -d : d;
  } else {
    return static_cast<double>(x);
  }
}

// The value of a binary float's bits, exactly.
template <int kExp, int kMant>
double from_bits(std::uint16_t bits) {
  constexpr int kBias = (1 << (kExp - 1)) - 1;
  constexpr unsigned kExpMask = (1u << kExp) - 1;
  unsigned exponent = (bits >> kMant) & kExpMask, mantissa = bits & ((1u << kMant) - 1);
  double sign = bits >> (kExp + kMant) ? -1.0 : 1.0;
  if (exponent == kExpMask)
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0) return sign * std::ldexp(mantissa, 1 - kBias - kMant);
  return sign * std::ldexp(mantissa | 1u << kMant, static_cast<int>(exponent) - kBias - kMant);
}

// A 16-bit float with kExp exponent bits; Tag keeps BFloat16 and Float16 distinct types.
template <int kExp, int kMant, class Tag>
struct Float16Bits {
  std::uint16_t bits = 0;

  Float16Bits() = default;
  template <class T>
    requires std::is_arithmetic_v<T>
  explicit Float16Bits(T value) : bits(round_to_bits<kExp, kMant>(to_double_for_rounding(value))) {}
  template <int kExp2, int kMant2, class Tag2>
  explicit Float16Bits(Float16Bits<kExp2, kMant2, Tag2> other)
      : bits(round_to_bits<kExp, kMant>(static_cast<double>(other))) {}
  static Float16Bits from_bits(std::uint16_t b) {
    Float16Bits f;
    f.bits = b;
    return f;
  }
  template <class T>
    requires std::is_arithmetic_v<T>
  explicit operator T() const {
    return static_cast<T>(detail::from_bits<kExp, kMant>(bits));
  }
  operator float() const { return static_cast<float>(detail::from_bits<kExp, kMant>(bits)); }

  // Arithmetic in float, rounded once: what an XLA op on this type computes.
  friend Float16Bits operator+(Float16Bits a, Float16Bits b) { return Float16Bits(float(a) + float(b)); }
  friend Float16Bits operator-(Float16Bits a, Float16Bits b) { return Float16Bits(float(a) - float(b)); }
  friend Float16Bits operator*(Float16Bits a, Float16Bits b) { return Float16Bits(float(a) * float(b)); }
  friend Float16Bits operator/(Float16Bits a, Float16Bits b) { return Float16Bits(float(a) / float(b)); }
  friend Float16Bits operator-(Float16Bits a) { return from_bits(a.bits ^ (1u << (kExp + kMant))); }
  Float16Bits& operator+=(Float16Bits o) { return *this = *this + o; }
  Float16Bits& operator*=(Float16Bits o) { return *this = *this * o; }
};

struct BFloat16Tag;
struct Float16Tag;

}  // namespace detail

using BFloat16 = detail::Float16Bits<8, 7, detail::BFloat16Tag>;
using Float16 = detail::Float16Bits<5, 10, detail::Float16Tag>;

// Whether T is a C++ element type of a floating dtype.
template <class T>
inline constexpr bool is_float_element_v =
    std::is_floating_point_v<T> || std::is_same_v<T, BFloat16> || std::is_same_v<T, Float16>;

}  // namespace jx

// The numeric limits of the 16-bit floats, so generic code reads them as it reads float's.
namespace std {
template <int kExp, int kMant, class Tag>
class numeric_limits<jx::detail::Float16Bits<kExp, kMant, Tag>> {
  using F = jx::detail::Float16Bits<kExp, kMant, Tag>;
  static constexpr unsigned kInfBits = ((1u << kExp) - 1) << kMant;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = kMant + 1;
  static F infinity() { return F::from_bits(kInfBits); }
  static F quiet_NaN() { return F::from_bits(kInfBits | 1u << (kMant - 1)); }
  static F max() { return F::from_bits(kInfBits - 1); }
  static F lowest() { return F::from_bits((1u << (kExp + kMant)) | (kInfBits - 1)); }
  static F min() { return F::from_bits(1u << kMant); }  // the smallest normal
  static F denorm_min() { return F::from_bits(1); }
  static F epsilon() { return F(std::ldexp(1.0, -kMant)); }
};
}  // namespace std
