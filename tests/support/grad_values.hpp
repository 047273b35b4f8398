// Helpers of the autodiff tests: f64 and int32 arrays from host values, and
// elementwise comparison against closed forms with a relative-and-absolute tolerance.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "jx/jx.hpp"

namespace jx::testing::grad_values {

inline std::vector<double> values(const Array& x) { return x.to_vector<double>(); }

// A strong float64 scalar holding v exactly: a C++ double alone is a weak float32 in JAX's
// default mode, and Array(v).astype(float64) would round v to float32 first.
inline Array f64(double v) { return np::array(std::vector<double>{v}, Shape{}); }
inline Array f64(const std::vector<double>& v, const Shape& shape) {
  return np::array(v, shape).astype(float64);
}
inline Array i32(std::int32_t v) { return np::array(Array(v)).astype(int32); }

inline std::vector<double> random_values(std::size_t n, std::mt19937& rng, double scale = 1.0) {
  std::uniform_real_distribution<double> u(-scale, scale);
  std::vector<double> v(n);
  for (double& e : v) e = u(rng);
  return v;
}

inline void require_close(const Array& got, const std::vector<double>& want, double tol = 1e-9) {
  std::vector<double> g = values(got);
  REQUIRE(g.size() == want.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    CHECK(g[i] == Approx(want[i]).epsilon(tol).margin(tol));
  }
}
inline void require_close(const Array& got, const Array& want, double tol = 1e-9) {
  REQUIRE(got.shape() == want.shape());
  CHECK(got.dtype() == want.dtype());
  require_close(got, values(want), tol);
}

}  // namespace jx::testing::grad_values
