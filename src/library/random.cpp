// jx::random over lax::threefry2x32, following jax._src.prng (threefry, partitionable) and
// jax._src.random: the same counters, the same bit manipulations, in the same order, so that
// the bits match JAX's exactly.
#include "jx/random.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "jx/errors.hpp"
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

// uint32 bits → float32 in [0, 1): the top 23 bits as a mantissa of [1, 2), minus 1 (JAX's
// bitcast), which is exactly (bits >> 9) * 2^-23.
Array unit_float32(const Array& bits) {
  Array mantissa = lax::shift_right_logical(bits, filled(bits.shape(), uint32, 9));
  return lax::mul(lax::convert_element_type(mantissa, float32),
                  filled(bits.shape(), float32, std::ldexp(1.0, -23)));
}

// Two uint32 words (hi, lo) of 64 random bits → float64 in [0, 1): the top 52 bits as a
// mantissa, i.e. hi * 2^-32 + (lo >> 12) * 2^-52, exact in float64.
Array unit_float64(const Array& hi, const Array& lo) {
  const Shape& s = hi.shape();
  Array low = lax::shift_right_logical(lo, filled(s, uint32, 12));
  return lax::add(
      lax::mul(lax::convert_element_type(hi, float64), filled(s, float64, std::ldexp(1.0, -32))),
      lax::mul(lax::convert_element_type(low, float64), filled(s, float64, std::ldexp(1.0, -52))));
}

void check_float(DType dtype, const char* fn) {
  if (dtype != float32 && dtype != float64)
    throw TypeError(std::string("dtype argument to `") + fn + "` must be a float dtype, got " +
                    std::string(dtype_name(dtype)));
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

Array bits(const Array& key, const Shape& shape) {
  auto [y0, y1] = hash_counters(key, shape, "bits");
  return lax::bitwise_xor(y0, y1);
}

Array uniform(const Array& key, const Shape& shape, DType dtype, double minval, double maxval) {
  check_float(dtype, "uniform");
  auto [y0, y1] = hash_counters(key, shape, "uniform");
  // float32 draws 32 bits per element (the xor of the words), float64 draws 64 (both words).
  Array unit = dtype == float32 ? unit_float32(lax::bitwise_xor(y0, y1)) : unit_float64(y0, y1);
  // In the dtype, as JAX: max(lo, unit * (hi - lo) + lo).
  Array lo = filled(shape, dtype, minval), hi = filled(shape, dtype, maxval);
  return lax::max(lo, lax::add(lax::mul(unit, lax::sub(hi, lo)), lo));
}

Array normal(const Array& key, const Shape& shape, DType dtype) {
  check_float(dtype, "normal");
  double lo = dtype == float32 ? double(std::nextafter(-1.0f, 0.0f)) : std::nextafter(-1.0, 0.0);
  Array u = uniform(key, shape, dtype, lo, 1.0);
  return lax::mul(filled(shape, dtype, std::sqrt(2.0)), lax::erf_inv(u));
}

Array bernoulli(const Array& key, double p, const Shape& shape) {
  return lax::lt(uniform(key, shape, float32), filled(shape, float32, p));
}

Array randint(const Array& key, const Shape& shape, std::int64_t minval, std::int64_t maxval,
              DType dtype) {
  if (dtype != int32 && dtype != int64 && dtype != uint32)
    throw TypeError("randint: dtype must be an integer dtype, got " +
                    std::string(dtype_name(dtype)));
  if (dtype == int64)
    throw TypeError("randint: int64 draws 64-bit words, which jx does not support; use int32");
  // JAX: the bounds clipped into the dtype's range; span = maxval - minval in uint32, 1 when
  // empty; the offset (hi * (2^32 mod span) + lo) mod span from two independent draws.
  double lowest = dtype == int32 ? std::numeric_limits<std::int32_t>::min() : 0;
  double highest = dtype == int32 ? std::numeric_limits<std::int32_t>::max()
                                  : std::numeric_limits<std::uint32_t>::max();
  bool maxval_out_of_range = double(maxval) > highest;
  double lo = std::clamp(double(minval), lowest, highest);
  double hi = std::clamp(double(maxval), lowest, highest);
  auto [k1, k2] = split<2>(key);
  Array higher = bits(k1, shape), lower = bits(k2, shape);
  // In uint32, wrapping: a span of 2^32 becomes 0, and x rem 0 = x keeps all 32 bits.
  double span = hi <= lo ? 1 : std::fmod(hi - lo + (maxval_out_of_range ? 1 : 0), 4294967296.0);
  Array s = filled(shape, uint32, span);
  Array multiplier = lax::rem(filled(shape, uint32, 65536), s);
  multiplier = lax::rem(lax::mul(multiplier, multiplier), s);
  Array offset = lax::add(lax::mul(lax::rem(higher, s), multiplier), lax::rem(lower, s));
  offset = lax::rem(offset, s);
  return lax::add(filled(shape, dtype, lo), lax::convert_element_type(offset, dtype));
}

Array permutation(const Array& key, std::int64_t n) {
  if (n < 0)
    throw ShapeError("jx::random::permutation: n must be non-negative, got " + std::to_string(n));
  // JAX's _shuffle: rounds of sorting by fresh random bits (stable, so ties keep the order of
  // the previous round); ceil(3 ln n / ln(2^32 - 1)) rounds make collisions negligible.
  auto rounds = static_cast<int>(
      std::ceil(3 * std::log(double(std::max<std::int64_t>(1, n))) / std::log(4294967295.0)));
  Array x = lax::iota(int32, {n});
  Array k = key;
  for (int r = 0; r < rounds; ++r) {
    auto [next, subkey] = split<2>(k);
    k = next;
    x = lax::sort_key_val(bits(subkey, {n}), x, 0).second;
  }
  return x;
}

}  // namespace jx::random
