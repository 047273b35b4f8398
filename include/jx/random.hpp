// jx::random — counter-based pseudo-random numbers as JAX has them: a key is a u32[2] array
// (jax.random.PRNGKey), hashed with Threefry-2x32 (lax::threefry2x32), in JAX's default
// partitionable mode: element i of a draw hashes the counter (i >> 32, i & 0xffffffff). Every
// function is built from jx primitives, so it traces, jits and vmaps (over a batch of keys).
// Bits, splits, fold_in and float32 uniform are bit-identical to JAX.
#pragma once

#include <array>
#include <cstdint>

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

// uint32 random bits of the given shape.
Array bits(const Array& key, const Shape& shape);

// Uniform in [minval, maxval) (float32 or float64).
Array uniform(const Array& key, const Shape& shape = {}, DType dtype = float32, double minval = 0,
              double maxval = 1);
// Standard normal: sqrt(2) * erf_inv(u) for u uniform in (-1, 1), as JAX draws it.
Array normal(const Array& key, const Shape& shape = {}, DType dtype = float32);
// True with probability p.
Array bernoulli(const Array& key, double p = 0.5, const Shape& shape = {});
// Integers uniform in [minval, maxval) (int32 or int64 dtype; uint32 too), JAX's algorithm.
Array randint(const Array& key, const Shape& shape, std::int64_t minval, std::int64_t maxval,
              DType dtype = int32);
// A random permutation of 0..n-1 (int32), as jax.random.permutation(key, n).
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
