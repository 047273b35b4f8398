// jx::random — counter-based pseudo-random numbers as JAX has them: a key is a u32[2] array
// (jax.random.PRNGKey), hashed with Threefry-2x32 (lax::threefry2x32), in JAX's default
// partitionable mode: element i of a draw hashes the counter (i >> 32, i & 0xffffffff). Every
// function is built from jx primitives, so it traces, jits and vmaps (over a batch of keys).
// Bits, splits, fold_in, uniform, normal, truncated_normal and randint follow JAX's algorithms
// bit for bit.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "jx/array.hpp"
#include "jx/dtype.hpp"
#include "jx/shape.hpp"

namespace jx::random {

// The key of a seed: u32[2] = (seed >> 32, seed & 0xffffffff), as jax.random.PRNGKey.
Array key(std::uint64_t seed);

// `num` new keys from one, u32[num, 2] (row i: the key hashed with counter i).
Array split(const Array& key, int num = 2);
// The same keys as separate u32[2] arrays: auto [key, subkey] = random::split<2>(key).
template <int N>
std::array<Array, N> split(const Array& key);

// A key derived from `key` and a 32-bit value (a step number, an example index).
Array fold_in(const Array& key, std::uint32_t data);

// Random bits of the given shape in an unsigned dtype, as jax.random.bits: uint32 by default
// (uint64 with --enable_x64). 32 bits are the xor of the two hashed words, 8 and 16 bits its low
// byte or half, 64 bits the words themselves (first << 32 | second).
Array bits(const Array& key, const Shape& shape, std::optional<DType> dtype = std::nullopt);

// Uniform in [minval, maxval) in a float dtype (float32 by default, float64 with
// --enable_x64), JAX's bits: the top mantissa bits of a draw as the fraction of a number in
// [1, 2), minus 1, scaled in the dtype as max(minval, u * (maxval - minval) + minval). bfloat16
// draws 8 bits (7 mantissa bits: multiples of 2^-7), float16 16 (10 bits), float32 32 (23),
// float64 64 (52).
Array uniform(const Array& key, const Shape& shape = {}, std::optional<DType> dtype = std::nullopt,
              double minval = 0, double maxval = 1);
// Standard normal: sqrt(2) * erf_inv(u) for u uniform in (-1, 1) in the dtype, as JAX draws it.
Array normal(const Array& key, const Shape& shape = {}, std::optional<DType> dtype = std::nullopt);
// A standard normal truncated to (lower, upper), as jax.random.truncated_normal: the uniform
// between the bounds' cdfs (erf(bound / sqrt(2)), in the dtype) mapped back by sqrt(2) erf_inv,
// then clamped into the open interval (the bounds' neighbouring values in the dtype).
Array truncated_normal(const Array& key, double lower, double upper, const Shape& shape = {},
                       std::optional<DType> dtype = std::nullopt);
// True with probability p: uniform draws of the default float dtype (float32, float64 with
// --enable_x64) below p, as jax.random.bernoulli with a Python float p.
Array bernoulli(const Array& key, double p = 0.5, const Shape& shape = {});
// Integers uniform in [minval, maxval) in any integer dtype (int32 by default, int64 with
// --enable_x64), JAX's algorithm: two draws of the dtype's width reduced modulo the span (8- and
// 16-bit dtypes are drawn as int32 and converted, as JAX does). The bounds are clipped to the
// dtype, and maxval one past its largest value includes that value (0, 256 for uint8).
Array randint(const Array& key, const Shape& shape, std::int64_t minval, std::int64_t maxval,
              std::optional<DType> dtype = std::nullopt);
// A random permutation of 0..n-1 in the default int dtype, as jax.random.permutation(key, n).
Array permutation(const Array& key, std::int64_t n);

// ---- templates ----
Array key_row(const Array& keys, int i);  // row i of u32[n, 2] keys, as u32[2]

template <int N>
std::array<Array, N> split(const Array& key) {
  Array keys = split(key, N);
  std::array<Array, N> out;
  for (int i = 0; i < N; ++i) out[static_cast<std::size_t>(i)] = key_row(keys, i);
  return out;
}

}  // namespace jx::random
