// np creation: asarray, full and the *_like family (dtypes and weak types), arange, linspace,
// eye, and their error messages.
#include <limits>

#include "library/numpy_testing.hpp"

namespace jx {
namespace {

using namespace np_testing;

TEST_CASE("asarray and array: dtype conversion and weak flags", "[numpy]") {
  Array w = Array(2.0f);
  check_aval(np::asarray(w), {}, float32, /*weak=*/true);
  check_aval(np::asarray(w, float64), {}, float64);
  check_aval(np::array(w), {}, float32);
  Array i = np::array({1, 2});
  check_aval(np::asarray(i, float32), {2}, float32);
  check_values(np::asarray(i, float32), {1, 2});
  CHECK(np::asarray(np::array({1.7f, -1.7f}), int32).to_vector<int>() == std::vector<int>{1, -1});
}

TEST_CASE("full converts its fill value and keeps a scalar's weak type", "[numpy]") {
  Array f = np::full({2, 3}, 7);
  check_aval(f, {2, 3}, int32, /*weak=*/true);
  CHECK(f.to_vector<int>() == std::vector<int>(6, 7));
  check_aval(np::full({2}, 1.5f), {2}, float32, /*weak=*/true);
  check_aval(np::full({2}, 1.5, float32), {2}, float32);
  check_aval(np::full({2}, np::array(3.0)), {2}, float32);  // a double: float32 by default
  check_aval(np::full({2}, np::array(std::vector<double>{3.0}, {})), {2}, float64);
  check_aval(np::full({}, 4), {}, int32, /*weak=*/true);
  CHECK(np::full({2}, 2.9, int32).to_vector<int>() == std::vector<int>{2, 2});
  // An array fill broadcasts numpy-style.
  Array row = np::full({2, 3}, np::array({1.f, 2.f, 3.f}));
  check_aval(row, {2, 3}, float32);
  check_values(row, {1, 2, 3, 1, 2, 3});
  check_aval(np::full({2, 3}, np::array({1, 2, 3}), float64), {2, 3}, float64);
  CHECK(np::full({0, 2}, 1.0f).size() == 0);
  CHECK_THROWS_MATCHES(np::full({-1}, 1), ShapeError,
                       Catch::Message("full got a negative dimension in shape (-1,)"));
  CHECK_THROWS_MATCHES(np::zeros({2, -3}), ShapeError,
                       Catch::Message("zeros got a negative dimension in shape (2, -3)"));
}

TEST_CASE("zeros_like, ones_like and full_like follow x unless given a dtype", "[numpy]") {
  Array x = np::array({1.5f, 2.5f});
  check_aval(np::zeros_like(x), {2}, float32);
  check_values(np::zeros_like(x), {0, 0});
  check_aval(np::ones_like(x, int64), {2}, int64);
  check_values(np::ones_like(x, int64), {1, 1});
  check_aval(np::full_like(x, 7), {2}, float32);
  check_values(np::full_like(x, 7), {7, 7});
  check_values(np::full_like(np::array({1, 2}), 2.7), {2, 2});
  check_aval(np::full_like(x, 2.5, float64), {2}, float64);
  check_aval(np::zeros_like(Array(3.0f)), {}, float32, /*weak=*/true);
  Array m = np::full_like(np::zeros({2, 2}, int32), np::array({1.5f, 2.5f}));
  check_aval(m, {2, 2}, int32);
  CHECK(m.to_vector<int>() == std::vector<int>{1, 2, 1, 2});
}

TEST_CASE("arange: int32 for whole numbers, float32 otherwise", "[numpy]") {
  Array a = np::arange(5);
  check_aval(a, {5}, int32);
  CHECK(a.to_vector<int>() == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(np::arange(2, 8, 3).to_vector<int>() == std::vector<int>{2, 5});
  CHECK(np::arange(5, 0, -2).to_vector<int>() == std::vector<int>{5, 3, 1});
  Array f = np::arange(0, 1, 0.25);
  check_aval(f, {4}, float32);
  check_values(f, {0, 0.25, 0.5, 0.75});
  check_values(np::arange(0.5, 3), {0.5, 1.5, 2.5});
  CHECK(np::arange(0.5, 3).dtype() == float32);
  check_aval(np::arange(3, float64), {3}, float64);
  check_aval(np::arange(3, 1), {0}, int32);
  check_aval(np::arange(-2.5), {0}, float32);
  CHECK(np::arange(0, 1, 0.1).size() == 10);  // ceil((1 - 0) / 0.1)
  CHECK_THROWS_MATCHES(np::arange(0, 5, 0), ShapeError,
                       Catch::Message("arange got step 0: division by zero"));
  CHECK_THROWS_MATCHES(np::arange(0, std::numeric_limits<double>::infinity()), ShapeError,
                       Catch::Message("Maximum allowed size exceeded"));
  CHECK_THROWS_MATCHES(np::arange(std::numeric_limits<double>::quiet_NaN()), ShapeError,
                       Catch::Message("arange: cannot compute length"));
}

TEST_CASE("linspace spaces evenly, with or without the endpoint", "[numpy]") {
  Array l = np::linspace(0, 1, 5);
  check_aval(l, {5}, float32);
  check_values(l, {0, 0.25, 0.5, 0.75, 1});
  check_values(np::linspace(0, 1, 5, false), {0, 0.2, 0.4, 0.6, 0.8});
  check_values(np::linspace(2, -2, 3), {2, 0, -2});
  check_values(np::linspace(3, 7, 1), {3});
  check_values(np::linspace(3, 7, 1, false), {3});
  CHECK(np::linspace(0, 1, 0).shape() == Shape{0});
  CHECK(np::linspace(0, 1).size() == 50);
  CHECK(np::linspace(0, 1, 50).to_vector<float>().back() == 1.0f);
  check_values(np::linspace(0, 1, 3, true, float64), {0, 0.5, 1}, 1e-15);
  // Integer dtypes floor (numpy >= 1.20): -1, -0.5, 0, 0.5, 1 → -1, -1, 0, 0, 1.
  CHECK(np::linspace(-1, 1, 5, true, int32).to_vector<int>() == std::vector<int>{-1, -1, 0, 0, 1});
  CHECK_THROWS_MATCHES(np::linspace(0, 1, -1), ShapeError,
                       Catch::Message("Number of samples, -1, must be non-negative"));
}

TEST_CASE("eye puts ones on the k-th diagonal", "[numpy]") {
  Array i3 = np::eye(3);
  check_aval(i3, {3, 3}, float32);
  check_values(i3, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  check_values(np::eye(2, 3, 1), {0, 1, 0, 0, 0, 1});
  check_values(np::eye(3, std::nullopt, -1), {0, 0, 0, 1, 0, 0, 0, 1, 0});
  check_values(np::eye(2, 2, 5), {0, 0, 0, 0});
  check_aval(np::eye(2, std::nullopt, 0, int32), {2, 2}, int32);
  CHECK(np::eye(0).shape() == Shape{0, 0});
  CHECK(np::eye(2, 0).shape() == Shape{2, 0});
  CHECK_THROWS_MATCHES(np::eye(-1), ShapeError,
                       Catch::Message("negative dimensions are not allowed"));
}

}  // namespace
}  // namespace jx
