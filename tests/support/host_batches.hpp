// Host-side helpers for checking batched results: examples stacked along an axis and cut out of
// one, built element by element on the host (never with jx), and elementwise comparison.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "jx/jx.hpp"

namespace jx::testing {

using Arrays = std::vector<Array>;
using Ints = std::vector<std::int64_t>;

inline std::vector<double> values(const Array& x) { return x.to_vector<double>(); }

inline Array host_array(const std::vector<double>& v, const Shape& shape, DType dtype = float64) {
  return np::array(v, shape).astype(dtype);
}

inline Ints index_of(std::int64_t flat, const Shape& shape) {
  Ints index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}
inline std::int64_t flat_of(const Ints& index, const Shape& shape) {
  std::int64_t flat = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

// The examples (same shape and dtype) stacked along a new axis at `axis`, on the host.
inline Array stack_at(const Arrays& xs, int axis = 0) {
  REQUIRE(!xs.empty());
  Shape example = xs[0].shape();
  Shape shape = example;
  shape.insert(shape.begin() + axis, static_cast<std::int64_t>(xs.size()));
  std::vector<std::vector<double>> vs;
  for (const Array& x : xs) vs.push_back(values(x));
  std::vector<double> out;
  for (std::int64_t f = 0; f < shape_size(shape); ++f) {
    Ints index = index_of(f, shape);
    std::int64_t k = index[static_cast<std::size_t>(axis)];
    index.erase(index.begin() + axis);
    out.push_back(
        vs[static_cast<std::size_t>(k)][static_cast<std::size_t>(flat_of(index, example))]);
  }
  return host_array(out, shape, xs[0].dtype());
}

// Example k of x along `axis`, on the host.
inline Array take_at(const Array& x, int axis, std::int64_t k) {
  Shape shape = x.shape();
  Shape example = shape;
  example.erase(example.begin() + axis);
  std::vector<double> v = values(x), out;
  for (std::int64_t f = 0; f < shape_size(example); ++f) {
    Ints index = index_of(f, example);
    index.insert(index.begin() + axis, k);
    out.push_back(v[static_cast<std::size_t>(flat_of(index, shape))]);
  }
  return host_array(out, example, x.dtype());
}

inline void require_close(const Array& got, const Array& want, double tol = 1e-12) {
  REQUIRE(got.shape() == want.shape());
  CHECK(got.dtype() == want.dtype());
  std::vector<double> g = values(got), w = values(want);
  REQUIRE(g.size() == w.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    CHECK(g[i] == Approx(w[i]).epsilon(tol).margin(tol));
  }
}

}  // namespace jx::testing
