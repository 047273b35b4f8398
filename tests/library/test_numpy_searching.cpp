// np::searchsorted against counting loops written here, through both of its methods (counting
// comparisons for small inputs, ranks from sorts for large ones): both sides, ties, NaNs,
// integers, promotion, 0-d and 0-sized queries and arrays, jit, vmap, and its errors.
#include <random>

#include "library/numpy_testing.hpp"

namespace jx {
namespace {

using namespace np_testing;

// How many elements of a (sorted, NaNs last) come before v: a[i] < v ("left") or a[i] <= v.
bool total_less(double x, double y) {
  if (std::isnan(x)) return false;
  return std::isnan(y) || x < y;
}
std::vector<double> search_loop(const std::vector<double>& a, const std::vector<double>& v,
                                bool left) {
  std::vector<double> out;
  for (double q : v) {
    int n = 0;
    for (double x : a) n += left ? total_less(x, q) : !total_less(q, x);
    out.push_back(n);
  }
  return out;
}

std::vector<double> sorted_values(std::mt19937& rng, int n, int distinct) {
  std::uniform_int_distribution<int> u(0, distinct - 1);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = 0.5 * u(rng);
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("searchsorted finds insertion points left and right of ties", "[numpy][searchsorted]") {
  Array a = np::array({1.f, 2.f, 2.f, 3.f, 5.f});
  Array v = np::array({0.f, 2.f, 4.f, 5.f, 6.f});
  Array left = np::searchsorted(a, v);
  CHECK(left.dtype() == int32);
  CHECK(left.to_vector<int>() == std::vector<int>{0, 1, 4, 4, 5});
  CHECK(np::searchsorted(a, v, "right").to_vector<int>() == std::vector<int>{0, 3, 4, 5, 5});
  // A 0-d query gives a 0-d index; queries keep their shape.
  CHECK(np::searchsorted(a, np::array(2.5f)).aval() == ShapedArray{{}, int32, false});
  CHECK(np::searchsorted(a, np::array(2.5f)).item<int>() == 3);
  Array grid = np::searchsorted(a, np::reshape(v, {5, 1}), "right");
  CHECK(grid.shape() == Shape{5, 1});
  // Integers, and an int array searched for floats (promoted to float).
  Array ai = np::array({-3, 0, 0, 7});
  CHECK(np::searchsorted(ai, np::array({0, 8, -4})).to_vector<int>() == std::vector<int>{1, 4, 0});
  CHECK(np::searchsorted(ai, np::array({0.5f, -0.5f}), "right").to_vector<int>() ==
        std::vector<int>{3, 1});
}

TEST_CASE("searchsorted orders NaN last, as sort does", "[numpy][searchsorted]") {
  const double nan = std::nan(""), inf = INFINITY;
  std::vector<double> a{-inf, 1, 2, inf, nan, nan}, v{nan, 2, 3, -inf, inf, -0.0};
  for (DType d : {float32, float64, bfloat16}) {
    INFO(dtype_name(d));
    Array av = np::array(a).astype(d), vv = np::array(v).astype(d);
    CHECK(np::searchsorted(av, vv).to_vector<double>() == search_loop(a, v, true));
    CHECK(np::searchsorted(av, vv, "right").to_vector<double>() == search_loop(a, v, false));
  }
}

TEST_CASE("searchsorted matches the loop by both methods, eager and jit", "[numpy][searchsorted]") {
  std::mt19937 rng(3);
  // (n, m) up to 2^24 comparisons counts them; past that, ranks from sorts.
  for (auto [n, m] : std::vector<std::pair<int, int>>{{7, 5}, {50, 40}, {300, 400}, {4100, 4100}}) {
    INFO("n " << n << " m " << m);
    std::vector<double> a = sorted_values(rng, n, 40), v = sorted_values(rng, m, 45);
    std::shuffle(v.begin(), v.end(), rng);
    Array av = np::array(a), vv = np::reshape(np::array(v), {m / 5, 5});
    for (bool left : {true, false}) {
      const char* side = left ? "left" : "right";
      std::vector<double> want = search_loop(a, v, left);
      Array got = np::searchsorted(av, vv, side);
      CHECK(got.shape() == Shape{m / 5, 5});
      CHECK(got.to_vector<double>() == want);
      auto f = jit([side](const Array& x, const Array& y) { return np::searchsorted(x, y, side); });
      CHECK(f(av, vv).to_vector<double>() == want);
    }
  }
}

TEST_CASE("searchsorted of 0-sized arrays and queries; vmap over queries",
          "[numpy][searchsorted]") {
  CHECK(np::searchsorted(np::zeros({0}), np::ones({3})).to_vector<int>() ==
        std::vector<int>{0, 0, 0});
  CHECK(np::searchsorted(np::ones({4}), np::zeros({0, 2})).shape() == Shape{0, 2});
  CHECK(np::searchsorted(np::zeros({0}), np::array(1.f)).item<int>() == 0);
  Array a = np::array({0.f, 1.f, 2.f, 3.f});
  Array qs = np::array(std::vector<float>{-1, 0.5, 3, 9, 1, 1}, {3, 2});
  Array batched = vmap([&a](const Array& q) { return np::searchsorted(a, q, "right"); })(qs);
  CHECK(batched.to_vector<int>() == std::vector<int>{0, 1, 4, 4, 2, 2});
}

TEST_CASE("searchsorted of an array that is not 1-d is a ValueError", "[numpy][searchsorted]") {
  CHECK_THROWS_MATCHES(np::searchsorted(np::zeros({2, 2}), np::zeros({3})), ValueError,
                       Catch::Message("a should be 1-dimensional"));
  CHECK_THROWS_MATCHES(np::searchsorted(np::array(1.f), np::zeros({3})), ValueError,
                       Catch::Message("a should be 1-dimensional"));
}

TEST_CASE("searchsorted with a side other than left or right is a ValueError",
          "[numpy][searchsorted]") {
  CHECK_THROWS_MATCHES(np::searchsorted(np::zeros({2}), np::zeros({3}), "middle"), ValueError,
                       Catch::Message("invalid argument side='middle', expected 'left' or "
                                      "'right'"));
}

TEST_CASE("argsort keeps working beside searchsorted: searching its sorted values",
          "[numpy][searchsorted]") {
  Array x = np::array({3.f, 1.f, 2.f, 1.f});
  Array order = np::argsort(x);
  CHECK(order.to_vector<int>() == std::vector<int>{1, 3, 2, 0});
  CHECK(np::searchsorted(np::sort(x), x).to_vector<int>() == std::vector<int>{3, 0, 2, 0});
}

}  // namespace jx
