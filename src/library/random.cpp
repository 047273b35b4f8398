// jx::random over lax::threefry2x32, following jax._src.prng (threefry, partitionable) and
// jax._src.random: the same counters, the same bit manipulations, in the same order, so that
// the bits match JAX's exactly.
#include "jx/random.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "jx/config.hpp"
#include "jx/errors.hpp"
#include "jx/float16.hpp"
#include "jx/lax.hpp"
#include "jx/numpy.hpp"
#include "support/format.hpp"

namespace jx::random {
namespace {

Array u32(std::uint32_t v) { return lax::convert_element_type(np::array(double(v)), uint32); }
Array filled(const Shape& shape, DType dtype, double v) {
  return lax::broadcast_in_dim(lax::convert_element_type(np::array(v), dtype), shape, {});
}

// The key's two words as 0-d arrays; a key is u32[2].
std::pair<Array, Array> words(const Array& key, const char* fn) {
  if (key.dtype() != uint32 || key.shape() != Shape{2})
    throw TypeError(std::string("jx::random::") + fn +
                    " expects a key: a uint32 array of shape (2,) as jx::random::key makes, got " +
                    key.aval().str());
  return {lax::reshape(lax::slice(key, {0}, {1}), {}), lax::reshape(lax::slice(key, {1}, {2}), {})};
}

// The hash of counter i = (i >> 32, i & 0xffffffff) for every element i of `shape`, row-major:
// JAX's iota_2x32_shape. Arrays of 2^32 elements or more are not supported.
std::pair<Array, Array> hash_counters(const Array& key, const Shape& shape, const char* fn) {
  std::int64_t n = shape_size(shape);
  if (n >= (std::int64_t{1} << 32))
    throw ShapeError(std::string("jx::random::") + fn + ": " + std::to_string(n) +
                     " elements; at most 2^32 - 1 are supported");
  auto [k0, k1] = words(key, fn);
  Array lo = lax::reshape(lax::iota(uint32, {n}), shape);
  return lax::threefry2x32(k0, k1, filled(shape, uint32, 0), lo);
}

// A 0-d constant of `dtype` holding v exactly (64-bit integers too), broadcast to `shape`.
template <class T>
Array constant(const Shape& shape, DType dtype, T v) {
  Array x = lax::convert_element_type(np::array(std::vector<T>{v}, {}), dtype);
  return lax::broadcast_in_dim(x, shape, {});
}

// JAX's _random_bits, partitionable threefry: the xor of the two words (32 bits), its low 8 or
// 16 bits, or the two words as hi and lo of 64 bits.
Array random_bits(const Array& key, int nbits, const Shape& shape, const char* fn) {
  auto [y0, y1] = hash_counters(key, shape, fn);
  if (nbits == 64)
    return lax::bitwise_or(
        lax::shift_left(lax::convert_element_type(y0, uint64), filled(shape, uint64, 32)),
        lax::convert_element_type(y1, uint64));
  Array x = lax::bitwise_xor(y0, y1);
  return nbits == 32 ? x : lax::convert_element_type(x, nbits == 16 ? uint16 : uint8);
}

// The mantissa bits and their number for each float dtype (JAX's nmant), and how many random
// bits a draw takes: the dtype's width, but 8 for bfloat16 (JAX draws at least 8 bits, and
// bfloat16's 7 fit in one byte).
struct FloatDraw {
  int nmant, rng_bits;
};
FloatDraw float_draw(DType dtype) {
  switch (dtype) {
    case bfloat16:
      return {7, 8};
    case float16:
      return {10, 16};
    case float32:
      return {23, 32};
    default:
      return {52, 64};
  }
}

// JAX's uniform in [0, 1): the top nmant of the drawn bits as the mantissa m of 1.m, minus 1.
// That is m * 2^-nmant, exact in the dtype, computed so (jx has no bitcast primitive). The
// 8- and 16-bit draws are the low bits of the 32-bit xor, so they are taken from it by a mask;
// float64 takes both words: hi * 2^-32 + (lo >> 12) * 2^-52.
Array unit_uniform(const Array& key, const Shape& shape, DType dtype, const char* fn) {
  FloatDraw d = float_draw(dtype);
  if (d.rng_bits == 64) {
    auto [hi, lo] = hash_counters(key, shape, fn);
    Array low = lax::shift_right_logical(lo, filled(shape, uint32, 12));
    return lax::add(lax::mul(lax::convert_element_type(hi, float64),
                             filled(shape, float64, std::ldexp(1.0, -32))),
                    lax::mul(lax::convert_element_type(low, float64),
                             filled(shape, float64, std::ldexp(1.0, -52))));
  }
  Array bits = random_bits(key, 32, shape, fn);
  if (d.rng_bits < 32)
    bits = lax::bitwise_and(bits, constant(shape, uint32, (std::uint32_t{1} << d.rng_bits) - 1));
  Array mantissa = lax::shift_right_logical(bits, filled(shape, uint32, d.rng_bits - d.nmant));
  return lax::mul(lax::convert_element_type(mantissa, dtype),
                  filled(shape, dtype, std::ldexp(1.0, -d.nmant)));
}

// Uniform in [lo, hi), bounds 0-d arrays of the dtype, computed in the dtype as JAX does:
// max(lo, unit * (hi - lo) + lo).
Array uniform_between(const Array& key, const Shape& shape, DType dtype, const Array& minval,
                      const Array& maxval, const char* fn) {
  Array unit = unit_uniform(key, shape, dtype, fn);
  Array lo = lax::broadcast_in_dim(minval, shape, {});
  Array hi = lax::broadcast_in_dim(maxval, shape, {});
  return lax::max(lo, lax::add(lax::mul(unit, lax::sub(hi, lo)), lo));
}

Array uniform_in(const Array& key, const Shape& shape, DType dtype, double minval, double maxval,
                 const char* fn) {
  return uniform_between(key, shape, dtype, filled({}, dtype, minval), filled({}, dtype, maxval),
                         fn);
}

// lax.nextafter(v, toward) for v rounded to a 16-bit float type F: a step of its bits.
template <class F>
double next_after_16(double v, double toward) {
  const double x = static_cast<double>(F(v));
  if (x == toward || std::isnan(x)) return x;
  std::uint16_t bits = F(v).bits;
  if ((bits & 0x7fff) == 0)  // ±0: the least subnormal on the side of `toward`
    bits = toward > 0 ? 1 : 0x8001;
  else if ((x < toward) == (x > 0))  // away from zero: the magnitude grows
    ++bits;
  else
    --bits;
  return static_cast<double>(F::from_bits(bits));
}

// The value of `dtype` next to v (v rounded to the dtype) in the direction of `toward`.
double next_after(double v, double toward, DType dtype) {
  switch (dtype) {
    case bfloat16:
      return next_after_16<BFloat16>(v, toward);
    case float16:
      return next_after_16<Float16>(v, toward);
    case float32:
      return std::nextafter(static_cast<float>(v), static_cast<float>(toward));
    default:
      return std::nextafter(v, toward);
  }
}

void check_float(DType dtype, const char* fn) {
  if (!is_floating(dtype))
    throw ValueError(std::string("dtype argument to `") + fn + "` must be a float dtype, got " +
                     std::string(dtype_name(dtype)));
}

// The least and greatest values of an integer dtype of up to 32 bits, and of the 64-bit ones
// as far as an int64 bound can reach them.
std::pair<std::int64_t, std::int64_t> int_range(DType dtype) {
  switch (dtype) {
    case int8:
      return {INT8_MIN, INT8_MAX};
    case int16:
      return {INT16_MIN, INT16_MAX};
    case int32:
      return {INT32_MIN, INT32_MAX};
    case uint8:
      return {0, UINT8_MAX};
    case uint16:
      return {0, UINT16_MAX};
    case uint32:
      return {0, UINT32_MAX};
    case uint64:
      return {0, INT64_MAX};
    default:
      return {INT64_MIN, INT64_MAX};
  }
}

// JAX's _randint for a 32- or 64-bit dtype: the bounds clipped into the dtype; span =
// maxval - minval in the unsigned dtype of that width (1 when empty, one more when maxval was
// past the dtype's largest value, wrapping to 0 for the whole range); the offset
// (hi * (2^nbits mod span) + lo) mod span from two draws, in the unsigned dtype, where
// 2^nbits mod span is computed as JAX does, ((2^(nbits/2) mod span)^2 wrapped) mod span.
Array randint_wide(const Array& key, const Shape& shape, std::int64_t minval, std::int64_t maxval,
                   DType dtype) {
  const int nbits = static_cast<int>(itemsize(dtype)) * 8;
  const DType unsigned_dtype = nbits == 64 ? uint64 : uint32;
  const std::uint64_t mask = nbits == 64 ? ~std::uint64_t{0} : 0xffffffffu;
  auto [lowest, highest] = int_range(dtype);
  bool maxval_out_of_range = maxval > highest;
  std::int64_t lo = std::clamp(minval, lowest, highest);
  std::int64_t hi = std::clamp(maxval, lowest, highest);
  std::uint64_t span = (static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo)) & mask;
  if (hi <= lo)
    span = 1;
  else if (maxval_out_of_range)
    span = (span + 1) & mask;
  // XLA's unsigned remainder by 0 is the dividend.
  auto rem = [](std::uint64_t x, std::uint64_t n) { return n ? x % n : x; };
  std::uint64_t multiplier = rem(std::uint64_t{1} << (nbits / 2), span);
  multiplier = rem((multiplier * multiplier) & mask, span);

  auto [k1, k2] = split<2>(key);
  Array higher = random_bits(k1, nbits, shape, "randint");
  Array lower = random_bits(k2, nbits, shape, "randint");
  Array s = constant(shape, unsigned_dtype, span);
  Array m = constant(shape, unsigned_dtype, multiplier);
  Array offset = lax::add(lax::mul(lax::rem(higher, s), m), lax::rem(lower, s));
  offset = lax::rem(offset, s);
  return lax::add(constant(shape, dtype, lo), lax::convert_element_type(offset, dtype));
}

}  // namespace

Array key(std::uint64_t seed) {
  return lax::convert_element_type(
      np::array(std::vector<double>{double(seed >> 32), double(seed & 0xffffffffu)}), uint32);
}

Array key_row(const Array& keys, int i) {
  return lax::reshape(lax::slice(keys, {i, 0}, {i + 1, 2}), {2});
}

Array split(const Array& key, int num) {
  if (num < 0)
    throw ShapeError("jx::random::split: num must be non-negative, got " + std::to_string(num));
  auto [y0, y1] = hash_counters(key, {num}, "split");
  return lax::concatenate({lax::reshape(y0, {num, 1}), lax::reshape(y1, {num, 1})}, 1);
}

Array fold_in(const Array& key, std::uint32_t data) {
  auto [k0, k1] = words(key, "fold_in");
  auto [y0, y1] = lax::threefry2x32(k0, k1, u32(0), u32(data));
  return lax::concatenate({lax::reshape(y0, {1}), lax::reshape(y1, {1})}, 0);
}

Array bits(const Array& key, const Shape& shape, std::optional<DType> dtype) {
  DType d = dtype.value_or(config().enable_x64 ? uint64 : uint32);
  if (!is_unsigned(d))
    throw ValueError("dtype argument to `bits` must be an unsigned int dtype, got " +
                     std::string(dtype_name(d)));
  return random_bits(key, static_cast<int>(itemsize(d)) * 8, shape, "bits");
}

Array uniform(const Array& key, const Shape& shape, std::optional<DType> dtype, double minval,
              double maxval) {
  DType d = dtype.value_or(default_float_dtype());
  check_float(d, "uniform");
  return uniform_in(key, shape, d, minval, maxval, "uniform");
}

Array normal(const Array& key, const Shape& shape, std::optional<DType> dtype) {
  DType d = dtype.value_or(default_float_dtype());
  check_float(d, "normal");
  // The dtype's next value above -1 (np.nextafter(-1, 0)): -1 + 2^-(nmant + 1).
  double lo = -1 + std::ldexp(1.0, -(float_draw(d).nmant + 1));
  Array u = uniform_in(key, shape, d, lo, 1.0, "normal");
  return lax::mul(filled(shape, d, std::sqrt(2.0)), lax::erf_inv(u));
}

Array truncated_normal(const Array& key, double lower, double upper, const Shape& shape,
                       std::optional<DType> dtype) {
  DType d = dtype.value_or(default_float_dtype());
  check_float(d, "truncated_normal");
  // JAX's _truncated_normal: the bounds through the normal's cdf, 2 Φ(x) - 1 = erf(x / sqrt(2)),
  // in the dtype; a uniform draw between them mapped back by the inverse; then a clamp into the
  // open interval, against rounding (and a draw of exactly erf(lower / sqrt(2))).
  Array sqrt2 = filled({}, d, std::sqrt(2.0));
  Array a = lax::erf(lax::div(filled({}, d, lower), sqrt2));
  Array b = lax::erf(lax::div(filled({}, d, upper), sqrt2));
  Array u = uniform_between(key, shape, d, a, b, "truncated_normal");
  Array out = lax::mul(lax::broadcast_in_dim(sqrt2, shape, {}), lax::erf_inv(u));
  const double inf = std::numeric_limits<double>::infinity();
  return lax::min(lax::max(out, filled(shape, d, next_after(lower, inf, d))),
                  filled(shape, d, next_after(upper, -inf, d)));
}

Array bernoulli(const Array& key, double p, const Shape& shape) {
  DType d = default_float_dtype();
  return lax::lt(uniform_in(key, shape, d, 0, 1, "bernoulli"), filled(shape, d, p));
}

Array randint(const Array& key, const Shape& shape, std::int64_t minval, std::int64_t maxval,
              std::optional<DType> dtype) {
  DType d = dtype.value_or(default_int_dtype());
  if (!is_integral(d))
    throw TypeError("randint only accepts integer dtypes, got " + std::string(dtype_name(d)));
  if (itemsize(d) >= 4) return randint_wide(key, shape, minval, maxval, d);
  // JAX draws 8- and 16-bit integers as int32 (less biased), with minval clipped into the
  // dtype and maxval up to one past its largest value, and converts the result.
  auto [lowest, highest] = int_range(d);
  return lax::convert_element_type(randint_wide(key, shape, std::clamp(minval, lowest, highest),
                                                std::clamp(maxval, lowest, highest + 1), int32),
                                   d);
}

Array permutation(const Array& key, std::int64_t n) {
  if (n < 0)
    throw ShapeError("jx::random::permutation: n must be non-negative, got " + std::to_string(n));
  // JAX's _shuffle: rounds of sorting by fresh random bits (stable, so ties keep the order of
  // the previous round); ceil(3 ln n / ln(2^32 - 1)) rounds make collisions negligible.
  auto rounds = static_cast<int>(
      std::ceil(3 * std::log(double(std::max<std::int64_t>(1, n))) / std::log(4294967295.0)));
  Array x = lax::iota(default_int_dtype(), {n});
  Array k = key;
  for (int r = 0; r < rounds; ++r) {
    auto [next, subkey] = split<2>(k);
    k = next;
    x = lax::sort_key_val(random_bits(subkey, 32, {n}, "permutation"), x, 0).second;
  }
  return x;
}

}  // namespace jx::random
