// Reproducible benchmark inputs without a generator's state.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include <jx/jx.hpp>

namespace bench {

// A uniform float in [lo, hi) that depends only on (seed, i): splitmix64 of the index, so
// arrays fill in parallel and every run sees the same values.
inline float random_float(std::uint64_t seed, std::uint64_t i, float lo, float hi) {
  std::uint64_t z = seed * 0xD1B54A32D192ED03ull + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return lo + (hi - lo) * static_cast<float>(z >> 40) * 0x1p-24f;
}

// An array of normal floats of standard deviation `scale`, the same for a seed on every run.
inline jx::Array normal_array(const jx::Shape& shape, unsigned seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(static_cast<std::size_t>(jx::shape_size(shape)));
  for (float& x : v) x = dist(rng);
  return jx::np::array(v, shape);
}

}  // namespace bench
