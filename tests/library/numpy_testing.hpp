// Helpers for the jx::np tests: arrays from ranges, value checks, jaxpr text.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>
#include <vector>

#include <jx/jx.hpp>

namespace jx::np_testing {

namespace np = jx::np;

// 0, 1, ..., n-1 as a float array of the given shape (built with np::array, not np::arange).
inline Array iota_f32(const Shape& shape, float start = 0) {
  std::vector<float> v(static_cast<std::size_t>(shape_size(shape)));
  std::iota(v.begin(), v.end(), start);
  return np::array(v, shape);
}

inline Array iota_i32(const Shape& shape, int start = 0) {
  std::vector<int> v(static_cast<std::size_t>(shape_size(shape)));
  std::iota(v.begin(), v.end(), start);
  return np::array(v, shape);
}

// Element-wise closeness of x's values (read as double) to `expected`; NaNs must match.
inline void check_values(const Array& x, const std::vector<double>& expected, double rel = 1e-6) {
  std::vector<double> got = x.to_vector<double>();
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    if (std::isnan(expected[i])) {
      CHECK(std::isnan(got[i]));
    } else if (std::isinf(expected[i])) {
      CHECK(got[i] == expected[i]);
    } else {
      CHECK(got[i] == Approx(expected[i]).epsilon(rel).margin(1e-12));
    }
  }
}

inline void check_aval(const Array& x, const Shape& shape, DType dtype, bool weak = false) {
  CHECK(x.aval() == ShapedArray{shape, dtype, weak});
}

}  // namespace jx::np_testing
