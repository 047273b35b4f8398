// np reductions: axes (all, int, list, negative), keepdims, accumulation dtypes, mean/var/std,
// argmax/argmin, and the axis and empty-array errors.
#include <cmath>
#include <functional>

#include "library/numpy_testing.hpp"

namespace jx {
namespace {

using namespace np_testing;

// The oracle: reduce a (2, 3, 4) row-major array of values v over the axes marked in `reduce`,
// with an explicit loop. Output is row-major over the kept axes.
std::vector<double> reduce_loop(const std::vector<double>& v, std::array<bool, 3> reduce,
                                double init, const std::function<double(double, double)>& f) {
  const int dims[3] = {2, 3, 4};
  int out_dims[3];
  for (int k = 0; k < 3; ++k) out_dims[k] = reduce[k] ? 1 : dims[k];
  std::vector<double> out(static_cast<std::size_t>(out_dims[0] * out_dims[1] * out_dims[2]), init);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        int oi = reduce[0] ? 0 : i, oj = reduce[1] ? 0 : j, ok = reduce[2] ? 0 : k;
        auto& o = out[static_cast<std::size_t>((oi * out_dims[1] + oj) * out_dims[2] + ok)];
        o = f(o, v[static_cast<std::size_t>((i * 3 + j) * 4 + k)]);
      }
  return out;
}

std::vector<double> values_of(const Array& x) { return x.to_vector<double>(); }

const auto kAdd = [](double a, double b) { return a + b; };

TEST_CASE("sum over all, one, several and negative axes, with keepdims", "[numpy]") {
  Array x = iota_f32({2, 3, 4});
  std::vector<double> v = values_of(x);
  check_aval(np::sum(x), {}, float32);
  CHECK(np::sum(x).item<float>() == 276);  // 0 + ... + 23
  check_values(np::sum(x, 0), reduce_loop(v, {true, false, false}, 0, kAdd));
  CHECK(np::sum(x, 0).shape() == Shape{3, 4});
  check_values(np::sum(x, -1), reduce_loop(v, {false, false, true}, 0, kAdd));
  CHECK(np::sum(x, -1).shape() == Shape{2, 3});
  check_values(np::sum(x, {0, 2}), reduce_loop(v, {true, false, true}, 0, kAdd));
  CHECK(np::sum(x, {2, 0}).shape() == Shape{3});
  check_values(np::sum(x, std::vector<int>{-1, 1}), reduce_loop(v, {false, true, true}, 0, kAdd));
  CHECK(np::sum(x, 1, true).shape() == Shape{2, 1, 4});
  check_values(np::sum(x, 1, true), reduce_loop(v, {false, true, false}, 0, kAdd));
  CHECK(np::sum(x, {0, 2}, true).shape() == Shape{1, 3, 1});
  CHECK(np::sum(x, {}, true).shape() == Shape{1, 1, 1});
  CHECK(np::sum(x, std::vector<int>{}).shape() == Shape{2, 3, 4});  // an empty list: no axes
  CHECK(np::sum(np::array(5.f)).item<float>() == 5);
  CHECK(np::sum(np::zeros({0, 3}), 0).to_vector<float>() == std::vector<float>{0, 0, 0});
}

TEST_CASE("sums accumulate bools as int32 and keep other dtypes", "[numpy]") {
  Array b = np::array({true, true, false, true});
  check_aval(np::sum(b), {}, int32);
  CHECK(np::sum(b).item<int>() == 3);
  check_aval(np::sum(np::array({1, 2, 3})), {}, int32);
  check_aval(np::sum(np::array({1u, 2u})), {}, uint32);
  check_aval(np::sum(np::array({1.0, 2.0})), {}, float64);
  check_aval(np::prod(b), {}, int32);
  CHECK(np::prod(b).item<int>() == 0);
  CHECK(np::prod(np::array({1, 2, 3, 4})).item<int>() == 24);
  Array x = iota_f32({2, 3, 4}, 1);
  check_values(np::prod(x, 1), reduce_loop(values_of(x), {false, true, false}, 1,
                                           [](double a, double c) { return a * c; }));
}

TEST_CASE("max and min with axes, and their empty-array error", "[numpy]") {
  std::vector<float> data = {3, -1, 7,  2,  9, -4, 0,  5, 1,  8, -2, 6,
                             4, 11, -9, 10, 2, 3,  -5, 0, 12, 1, 1,  1};
  Array x = np::array(data, {2, 3, 4});
  std::vector<double> v = values_of(x);
  auto mx = [](double a, double b) { return std::max(a, b); };
  auto mn = [](double a, double b) { return std::min(a, b); };
  CHECK(np::max(x).item<float>() == 12);
  CHECK(np::min(x).item<float>() == -9);
  check_values(np::max(x, 2), reduce_loop(v, {false, false, true}, -1e9, mx));
  check_values(np::min(x, {0, 1}), reduce_loop(v, {true, true, false}, 1e9, mn));
  CHECK(np::max(x, -2, true).shape() == Shape{2, 1, 4});
  CHECK(np::max(np::array({3, 8, -1})).item<int>() == 8);
  CHECK(np::max(np::array({3, 8, -1})).dtype() == int32);
  // Reducing non-empty axes of an array that is empty elsewhere is fine.
  CHECK(np::max(np::zeros({0, 3}), 1).shape() == Shape{0});
  CHECK_THROWS_MATCHES(
      np::max(np::zeros({0, 3})), ShapeError,
      Catch::Message("zero-size array to reduction operation max which has no identity"));
  CHECK_THROWS_MATCHES(
      np::min(np::zeros({0, 3}), 0), ShapeError,
      Catch::Message("zero-size array to reduction operation min which has no identity"));
}

TEST_CASE("all and any reduce truthiness", "[numpy]") {
  Array b = np::array(std::vector<bool>{true, false, true, true, true, true}, {2, 3});
  check_aval(np::all(b), {}, bool_);
  CHECK_FALSE(np::all(b).item<bool>());
  CHECK(np::any(b).item<bool>());
  CHECK(np::all(b, 0).to_vector<bool>() == std::vector<bool>{true, false, true});
  CHECK(np::all(b, 1).to_vector<bool>() == std::vector<bool>{false, true});
  CHECK(np::any(np::array({0.f, 0.f})).item<bool>() == false);
  CHECK(np::any(np::array({0.f, 0.5f})).item<bool>() == true);
  CHECK(np::all(np::array({1, 2, 0}), 0, true).shape() == Shape{1});
  CHECK(np::all(np::zeros({0})).item<bool>());
  CHECK_FALSE(np::any(np::zeros({0})).item<bool>());
}

TEST_CASE("mean, var and std", "[numpy]") {
  std::vector<float> data = {1, 4, 2, 8, 5, 7};
  Array x = np::array(data, {2, 3});
  check_aval(np::mean(x), {}, float32);
  CHECK(np::mean(x).item<float>() == Approx(27.0 / 6));
  check_values(np::mean(x, 0), {4.5, 4.5, 4.5});
  check_values(np::mean(x, 1), {7.0 / 3, 20.0 / 3});
  CHECK(np::mean(x, 1, true).shape() == Shape{2, 1});
  // Integers average in float32.
  Array i = np::array({1, 2, 3, 4});
  check_aval(np::mean(i), {}, float32);
  CHECK(np::mean(i).item<float>() == 2.5f);
  check_aval(np::mean(np::array({std::int64_t{1}})), {}, float64);

  // Population variance, oracle by explicit loops.
  auto var_of = [](const std::vector<double>& v) {
    double m = 0, s = 0;
    for (double a : v) m += a;
    m /= static_cast<double>(v.size());
    for (double a : v) s += (a - m) * (a - m);
    return s / static_cast<double>(v.size());
  };
  CHECK(np::var(x).item<float>() == Approx(var_of({1, 4, 2, 8, 5, 7})));
  check_values(np::var(x, 0), {var_of({1, 8}), var_of({4, 5}), var_of({2, 7})});
  check_values(np::var(x, -1), {var_of({1, 4, 2}), var_of({8, 5, 7})});
  check_values(np::std(x, 1), {std::sqrt(var_of({1, 4, 2})), std::sqrt(var_of({8, 5, 7}))});
  CHECK(np::std(x, 1, true).shape() == Shape{2, 1});
  check_aval(np::var(i), {}, float32);
  CHECK(np::var(i).item<float>() == 1.25f);
  CHECK(np::std(i).item<float>() == Approx(std::sqrt(1.25)));
  CHECK(std::isnan(np::mean(np::zeros({0})).item<float>()));
}

TEST_CASE("argmax and argmin, flattened or along an axis", "[numpy]") {
  std::vector<float> data = {3, 9, 2, 9, 1, 0, -5, 4, 4, 7, 8, -5};
  Array x = np::array(data, {3, 4});
  check_aval(np::argmax(x), {}, int32);
  CHECK(np::argmax(x).item<int>() == 1);  // the first of the two 9s
  CHECK(np::argmin(x).item<int>() == 6);  // the first of the two -5s
  CHECK(np::argmax(x, 0).to_vector<int>() == std::vector<int>{2, 0, 2, 0});
  CHECK(np::argmax(x, 1).to_vector<int>() == std::vector<int>{1, 3, 2});
  CHECK(np::argmin(x, -1).to_vector<int>() == std::vector<int>{2, 2, 3});
  CHECK(np::argmax(x, 1, true).shape() == Shape{3, 1});
  CHECK(np::argmax(x, std::nullopt, true).shape() == Shape{1, 1});
  CHECK(np::argmax(np::array(4.f)).item<int>() == 0);
  CHECK(np::argmax(np::zeros({0, 3}), 1).shape() == Shape{0});
  CHECK_THROWS_MATCHES(np::argmax(np::zeros({0})), ShapeError,
                       Catch::Message("attempt to get argmax of an empty sequence"));
  CHECK_THROWS_MATCHES(np::argmin(np::zeros({2, 0}), 1), ShapeError,
                       Catch::Message("attempt to get argmin of an empty sequence"));
  CHECK_THROWS_MATCHES(np::argmax(x, 2), ShapeError,
                       Catch::Message("axis 2 is out of bounds for array of dimension 2"));
}

TEST_CASE("bad reduction axes throw ShapeError", "[numpy]") {
  Array x = np::zeros({2, 3});
  CHECK_THROWS_MATCHES(np::sum(x, 2), ShapeError,
                       Catch::Message("axis 2 is out of bounds for array of dimension 2"));
  CHECK_THROWS_MATCHES(np::mean(x, -3), ShapeError,
                       Catch::Message("axis -3 is out of bounds for array of dimension 2"));
  CHECK_THROWS_MATCHES(np::max(x, {0, 5}), ShapeError,
                       Catch::Message("axis 5 is out of bounds for array of dimension 2"));
  CHECK_THROWS_MATCHES(np::sum(x, {0, 0}), ShapeError,
                       Catch::Message("duplicate value in 'axis': (0, 0)"));
  CHECK_THROWS_MATCHES(np::var(x, {1, -1}), ShapeError,
                       Catch::Message("duplicate value in 'axis': (1, -1)"));
  CHECK_THROWS_MATCHES(np::any(np::array(true), 0), ShapeError,
                       Catch::Message("axis 0 is out of bounds for array of dimension 0"));
}

}  // namespace
}  // namespace jx
