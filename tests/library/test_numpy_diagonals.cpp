// np tril, triu, diagonal and trace against loops over indices written here: offsets of both
// signs, stacked matrices, chosen and negative axes, 0-sized dims, dtypes, jit, derivatives by
// finite differences, and every error message.
#include "library/numpy_testing.hpp"
#include "support/check_grads.hpp"

namespace jx {
namespace {

using namespace np_testing;
using Arrays = std::vector<Array>;

// Deterministic float64 values with no repeats.
Array values_of(const Shape& shape) {
  std::vector<double> v(static_cast<std::size_t>(shape_size(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::cos(0.7 + 1.3 * static_cast<double>(i));
  return np::array(v, shape);
}

// x's (b, i, j) values, with x of shape (B, N, M) flattened row-major.
double at3(const std::vector<double>& x, const Shape& s, std::int64_t b, std::int64_t i,
           std::int64_t j) {
  return x[static_cast<std::size_t>((b * s[1] + i) * s[2] + j)];
}

// tril (lower) or triu of stacked matrices by a loop: keep where j - i ≤ k (or ≥ k).
std::vector<double> triangle_loop(const Array& x, int k, bool lower) {
  std::vector<double> v = x.to_vector<double>(), out;
  Shape s = x.shape();
  for (std::int64_t b = 0; b < s[0]; ++b)
    for (std::int64_t i = 0; i < s[1]; ++i)
      for (std::int64_t j = 0; j < s[2]; ++j) {
        bool keep = lower ? j - i <= k : j - i >= k;
        out.push_back(keep ? at3(v, s, b, i, j) : 0.0);
      }
  return out;
}

// The diagonal at `offset` of each (N, M) matrix of a (B, N, M) array, by a loop.
std::vector<double> diagonal_loop(const Array& x, int offset) {
  std::vector<double> v = x.to_vector<double>(), out;
  Shape s = x.shape();
  for (std::int64_t b = 0; b < s[0]; ++b)
    for (std::int64_t i = 0; i < s[1]; ++i)
      if (i + offset >= 0 && i + offset < s[2]) out.push_back(at3(v, s, b, i, i + offset));
  return out;
}

}  // namespace

// ---- tril and triu ---------------------------------------------------------------------------

TEST_CASE("tril and triu keep a triangle from diagonal k", "[numpy][tril]") {
  Array m = iota_i32({3, 4}, 1);
  CHECK(np::tril(m).to_vector<int>() == std::vector<int>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0});
  CHECK(np::triu(m).to_vector<int>() == std::vector<int>{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12});
  CHECK(np::tril(m, 1).to_vector<int>() == std::vector<int>{1, 2, 0, 0, 5, 6, 7, 0, 9, 10, 11, 12});
  CHECK(np::triu(m, -1).to_vector<int>() ==
        std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12});
  CHECK(np::tril(m).dtype() == int32);
  CHECK(np::tril(m, -5).to_vector<int>() == std::vector<int>(12, 0));
  CHECK(np::triu(np::ones({2, 2}, bool_), 1).to_vector<bool>() ==
        std::vector<bool>{false, true, false, false});
}

TEST_CASE("tril and triu of stacked matrices match a loop, eager and jit", "[numpy][tril]") {
  Array x = values_of({2, 4, 3});
  for (int k : {-2, -1, 0, 1, 3}) {
    INFO("k " << k);
    CHECK(np::tril(x, k).to_vector<double>() == triangle_loop(x, k, true));
    CHECK(np::triu(x, k).to_vector<double>() == triangle_loop(x, k, false));
    CHECK(jit([k](const Array& a) { return np::tril(a, k); })(x).to_vector<double>() ==
          triangle_loop(x, k, true));
    CHECK(jit([k](const Array& a) { return np::triu(a, k); })(x).to_vector<double>() ==
          triangle_loop(x, k, false));
  }
  CHECK(np::tril(np::zeros({0, 3})).shape() == Shape{0, 3});
  CHECK(np::triu(np::zeros({2, 3, 0})).shape() == Shape{2, 3, 0});
  // A weak-typed matrix stays weak.
  Array weak = lax::broadcast_in_dim(Array(2.0), {2, 2}, {});
  CHECK(np::tril(weak).aval() == ShapedArray{{2, 2}, float32, true});
}

TEST_CASE("tril and triu derivatives match finite differences", "[numpy][tril][autodiff]") {
  testing::check_grads([](const Arrays& a) { return np::tril(a[0], -1) + np::triu(a[0], 2); },
                       {values_of({2, 3, 4})}, 2);
}

TEST_CASE("tril and triu of fewer than two dimensions are ValueErrors", "[numpy][tril]") {
  CHECK_THROWS_MATCHES(np::tril(values_of({3})), ValueError,
                       Catch::Message("Argument to jax.numpy.tril must be at least 2D"));
  CHECK_THROWS_MATCHES(np::triu(np::array(1.0f)), ValueError,
                       Catch::Message("Argument to jax.numpy.triu must be at least 2D"));
}

// ---- diagonal --------------------------------------------------------------------------------

TEST_CASE("diagonal takes the (offset) diagonal of a matrix", "[numpy][diagonal]") {
  Array m = iota_i32({3, 4});
  CHECK(np::diagonal(m).to_vector<int>() == std::vector<int>{0, 5, 10});
  CHECK(np::diagonal(m, 1).to_vector<int>() == std::vector<int>{1, 6, 11});
  CHECK(np::diagonal(m, 3).to_vector<int>() == std::vector<int>{3});
  CHECK(np::diagonal(m, -1).to_vector<int>() == std::vector<int>{4, 9});
  CHECK(np::diagonal(m, 4).shape() == Shape{0});
  CHECK(np::diagonal(m, -3).shape() == Shape{0});
  CHECK(np::diagonal(m, 1, 1, 0).to_vector<int>() == std::vector<int>{4, 9});  // of m.T
}

TEST_CASE("diagonal of stacked matrices and of chosen axes matches a loop", "[numpy][diagonal]") {
  Array x = values_of({2, 3, 5});
  for (int offset : {-3, -2, -1, 0, 1, 2, 4, 5}) {
    INFO("offset " << offset);
    // Axes 1 and 2 (as negative axes): one diagonal per batch entry, as the last axis.
    Array d = np::diagonal(x, offset, -2, -1);
    std::vector<double> want = diagonal_loop(x, offset);
    CHECK(d.shape() == Shape{2, static_cast<std::int64_t>(want.size()) / 2});
    CHECK(d.to_vector<double>() == want);
    CHECK(jit([offset](const Array& a) { return np::diagonal(a, offset, 1, 2); })(x)
              .to_vector<double>() == want);
  }
  // Axes 0 and 2 of (2, 3, 5): the diagonal runs over (0, 0), (1, 1); axis 1 leads.
  Array d = np::diagonal(x, 0, 0, 2);
  CHECK(d.shape() == Shape{3, 2});
  std::vector<double> v = x.to_vector<double>(), want;
  for (std::int64_t j = 0; j < 3; ++j)
    for (std::int64_t i = 0; i < 2; ++i)
      want.push_back(v[static_cast<std::size_t>((i * 3 + j) * 5 + i)]);
  CHECK(d.to_vector<double>() == want);
  CHECK(np::diagonal(np::zeros({0, 4})).shape() == Shape{0});
  CHECK(np::diagonal(np::zeros({2, 0, 3}), 0, 1, 2).shape() == Shape{2, 0});
}

TEST_CASE("diagonal derivatives match finite differences", "[numpy][diagonal][autodiff]") {
  testing::check_grads([](const Arrays& a) { return np::diagonal(a[0], -1, 2, 0); },
                       {values_of({4, 2, 3})}, 2);
}

TEST_CASE("diagonal of fewer than two dimensions is a ValueError", "[numpy][diagonal]") {
  CHECK_THROWS_MATCHES(np::diagonal(values_of({3})), ValueError,
                       Catch::Message("diagonal requires an array of at least two dimensions."));
}

TEST_CASE("diagonal of one axis twice is a ValueError", "[numpy][diagonal]") {
  CHECK_THROWS_MATCHES(np::diagonal(values_of({3, 3}), 0, 1, -1), ValueError,
                       Catch::Message("axis1 and axis2 cannot be the same"));
}

TEST_CASE("diagonal of an axis out of range is a ShapeError", "[numpy][diagonal]") {
  CHECK_THROWS_MATCHES(np::diagonal(values_of({3, 3}), 0, 0, 2), ShapeError,
                       Catch::Message("axis 2 is out of bounds for array of dimension 2"));
}

// ---- trace -----------------------------------------------------------------------------------

TEST_CASE("trace sums a diagonal; integers sum in the default int", "[numpy][trace]") {
  // JAX's docstring: x = arange(1, 9).reshape(2, 2, 2).
  Array x = iota_i32({2, 2, 2}, 1);
  CHECK(np::trace(x).to_vector<int>() == std::vector<int>{8, 10});
  CHECK(np::trace(x, 1).to_vector<int>() == std::vector<int>{3, 4});
  CHECK(np::trace(x, 0, 1, 2).to_vector<int>() == std::vector<int>{5, 13});
  CHECK(np::trace(x, 1, 1, 2).to_vector<int>() == std::vector<int>{2, 6});
  CHECK(np::trace(x.astype(int8)).dtype() == int32);
  CHECK(np::trace(np::ones({3, 3}, bool_)).item<int>() == 3);
  CHECK(np::trace(np::zeros({0, 0})).item<float>() == 0.f);
  Array m = values_of({4, 3});
  double want = 0;
  std::vector<double> v = m.to_vector<double>();
  for (int i = 0; i < 3; ++i) want += v[static_cast<std::size_t>(i * 3 + i)];
  CHECK(np::trace(m).item<double>() == Approx(want));
  CHECK(jit([](const Array& a) { return np::trace(a, -1); })(m).item<double>() ==
        Approx(v[3] + v[7] + v[11]));
}

TEST_CASE("trace derivatives match finite differences", "[numpy][trace][autodiff]") {
  testing::check_grads([](const Arrays& a) { return np::trace(a[0], 1, -1, 0); },
                       {values_of({3, 2, 4})}, 2);
}

TEST_CASE("trace over one axis twice is a ValueError", "[numpy][trace]") {
  CHECK_THROWS_MATCHES(np::trace(values_of({3, 3}), 0, 1, -1), ValueError,
                       Catch::Message("axis1 and axis2 can not be same. axis1=1 and axis2=-1"));
}

}  // namespace jx
