// np elementwise functions and Array operators: promotion, broadcasting, Python's division
// and remainder conventions, where/clip, and their error messages.
#include <cmath>
#include <limits>
#include <numbers>
#include <tuple>

#include "library/numpy_testing.hpp"

namespace jx {
namespace {

using namespace np_testing;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
const double kPi = std::numbers::pi;

TEST_CASE("operators promote with JAX's lattice and weak scalars", "[numpy]") {
  Array i = np::array({1, 2, 3});
  Array f = np::array({1.f, 2.f, 3.f});
  // A weak int scalar takes the array's dtype.
  check_aval(i + 2, {3}, int32);
  CHECK((i + 2).to_vector<int>() == std::vector<int>{3, 4, 5});
  // int32 array + C++ double: the join is the weak float, which keeps the scalar's width (a
  // double is a weak float32 in JAX's default mode).
  CHECK(promote_types({int32, false}, {float64, true}) == TypeInfo{float64, true});
  check_aval(i + 2.5, {3}, float32, /*weak=*/true);
  check_values(i + 2.5, {3.5, 4.5, 5.5});
  check_aval(i + 2.5f, {3}, float32, /*weak=*/true);
  // A float32 array meets a weak double: float32, strong.
  check_aval(f + 2.0, {3}, float32);
  check_aval(f * 3.0f, {3}, float32);
  check_aval(f + np::array({1.0, 2.0, 3.0}), {3}, float64);
  check_aval(i + np::array({1u, 2u, 3u}), {3}, int64);
  check_aval(i + f, {3}, float32);
  Array b = np::array({true, false, true});
  check_aval(b + 1, {3}, int32, /*weak=*/true);
  check_values(b + 1, {2, 1, 2});
  check_aval(np::array({std::int64_t{1}}) + 1.5f, {1}, float32, /*weak=*/true);
  // Two weak scalars stay weak.
  check_aval(Array(2) * Array(3.0f), {}, float32, /*weak=*/true);
}

TEST_CASE("binary ops broadcast numpy-style", "[numpy]") {
  Array a = iota_f32({3, 1});      // 0 1 2 down
  Array b = iota_f32({1, 4}, 10);  // 10 11 12 13 across
  Array s = a + b;
  CHECK(s.shape() == Shape{3, 4});
  std::vector<double> expected;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) expected.push_back(r + 10 + c);
  check_values(s, expected);
  // Rank promotion: (2, 3) with (3,).
  Array m = iota_f32({2, 3});
  Array v = np::array({1.f, 10.f, 100.f});
  check_values(m * v, {0, 10, 200, 3, 40, 500});
  // Size-0 dims broadcast against size-1 dims.
  CHECK((np::zeros({0, 3}) + np::zeros({1, 3})).shape() == Shape{0, 3});
}

TEST_CASE("scalars work on either side of an operator", "[numpy]") {
  Array x = np::array({1.f, 2.f, 4.f});
  check_values(2 * x, {2, 4, 8});
  check_values(x * 2, {2, 4, 8});
  check_values(10.0f - x, {9, 8, 6});
  check_values(x - 10.0f, {-9, -8, -6});
  check_values(1.0f / x, {1, 0.5, 0.25});
  check_values(-x, {-1, -2, -4});
  CHECK((2 * x).dtype() == float32);
}

TEST_CASE("true division turns integers into floats", "[numpy]") {
  Array a = np::array({1, 2, 3, -7});
  Array b = np::array({2, 2, 2, 2});
  Array q = a / b;
  check_aval(q, {4}, float32);
  check_values(q, {0.5, 1, 1.5, -3.5});
  check_aval(np::divide(np::array({std::int64_t{3}}), np::array({2})), {1}, float64);
  check_aval(np::true_divide(np::array({true}), np::array({true})), {1}, float32);
  check_aval(np::array({1, 2}) / 2, {2}, float32);
  check_values(np::array({1, 2}) / 2, {0.5, 1});
}

TEST_CASE("floor_divide and remainder follow Python's sign conventions", "[numpy]") {
  Array a = np::array({-7, 7, -7, 7, 6, -6});
  Array b = np::array({2, 2, -2, -2, 3, 3});
  // Python: -7 // 2 = -4, 7 // -2 = -4, -7 % 2 = 1, 7 % -2 = -1.
  CHECK(np::floor_divide(a, b).to_vector<int>() == std::vector<int>{-4, 3, 3, -4, 2, -2});
  CHECK(np::floor_divide(a, b).dtype() == int32);
  CHECK((a % b).to_vector<int>() == std::vector<int>{1, 1, -1, -1, 0, 0});
  CHECK(np::mod(a, b).to_vector<int>() == std::vector<int>{1, 1, -1, -1, 0, 0});
  // An integer remainder by zero is 0 (the divisor is replaced by 1), never a crash.
  CHECK(np::remainder(np::array({5, -5}), 0).to_vector<int>() == std::vector<int>{0, 0});

  Array fa = np::array({-7.5, 7.5, -7.5, 7.5, 1.0});
  Array fb = np::array({2.0, 2.0, -2.0, -2.0, 0.1});
  // Python: -7.5 // 2 = -4.0, 7.5 % -2 = -0.5, 1.0 // 0.1 = 9.0, 1.0 % 0.1 = 0.09999999999999995
  check_values(np::floor_divide(fa, fb), {-4, 3, 3, -4, 9});
  check_values(fa % fb, {0.5, 1.5, -1.5, -0.5, 0.09999999999999995}, 1e-12);
  check_values(np::floor_divide(np::array({7.f}), 2), {3});
  // Scalars on either side.
  CHECK(np::floor_divide(-7, np::array({2, -2})).to_vector<int>() == std::vector<int>{-4, 3});
  CHECK((np::array({-7, 7}) % 3).to_vector<int>() == std::vector<int>{2, 1});
  CHECK(np::floor_divide(np::array({7u, 8u}), 2u).to_vector<int>() == std::vector<int>{3, 4});
}

TEST_CASE("power: integer exponents exactly, floats through pow", "[numpy]") {
  Array i = np::array({1, -2, 3});
  check_aval(np::power(i, 2), {3}, int32);
  CHECK(np::power(i, 3).to_vector<int>() == std::vector<int>{1, -8, 27});
  // A non-scalar integer exponent: binary exponentiation, still int32.
  Array e = np::array({0, 3, 2});
  check_aval(np::power(i, e), {3}, int32);
  CHECK(np::power(i, e).to_vector<int>() == std::vector<int>{1, -8, 9});
  CHECK(np::power(np::array({0, 0, 2}), np::array({0, 5, 10})).to_vector<int>() ==
        std::vector<int>{1, 0, 1024});
  // A negative exponent is its six low bits, all ones: x^63, wrapping (3^63 mod 2^32 =
  // 2111105451), as JAX's _pow_int_int; x^-2 is x^62.
  Array neg = np::array({-1, -1, -1, -2});
  for (const Array& p : {np::power(np::array({2, 3, -1, 2}), neg),
                         jit([](const Array&a, const Array&b) { return np::power(a, b); })(
                             np::array({2, 3, -1, 2}), neg)})
    CHECK(p.to_vector<int>() == std::vector<int>{0, 2111105451, -1, 0});
  Array f = np::array({1.f, 4.f, 9.f});
  check_values(np::power(f, 0.5f), {1, 2, 3});
  check_values(np::power(f, 2), {1, 16, 81});
  check_values(np::power(f, np::array({2, 0, 1})), {1, 1, 9});
  check_values(np::power(2.0f, np::array({1.f, 3.f})), {2, 8});
  check_values(np::power(i, 0.5), {1, kNaN, std::sqrt(3.0)});
  CHECK(np::power(i, 0.5).dtype() == float32);
}

TEST_CASE("maximum, minimum, arctan2 and logaddexp", "[numpy]") {
  Array a = np::array({1.0, kNaN, -3.0, 5.0});
  Array b = np::array({2.0, 1.0, kNaN, 4.0});
  check_values(np::maximum(a, b), {2, kNaN, kNaN, 5});
  check_values(np::minimum(a, b), {1, kNaN, kNaN, 4});
  CHECK(np::maximum(np::array({1, 5}), 3).to_vector<int>() == std::vector<int>{3, 5});
  check_values(np::arctan2(np::array({1, -1}), np::array({1, 1})),
               {std::atan2(1.0, 1.0), std::atan2(-1.0, 1.0)});
  check_aval(np::arctan2(np::array({1}), np::array({1})), {1}, float32);

  Array x = np::array({0.0, 1000.0, -kInf, kInf, kInf, 2.0, kNaN});
  Array y = np::array({0.0, 1000.0, -kInf, kInf, -kInf, -3.0, 0.0});
  check_values(np::logaddexp(x, y),
               {std::log(2.0), 1000 + std::log(2.0), -kInf, kInf, kInf,
                std::log(std::exp(2.0) + std::exp(-3.0)), kNaN},
               1e-12);
  check_aval(np::logaddexp(np::array({1}), np::array({2})), {1}, float32);
}

TEST_CASE("unary functions", "[numpy]") {
  Array i = np::array({-2, 0, 3});
  check_aval(np::sin(i), {3}, float32);
  check_values(np::sin(i), {std::sin(-2.0), 0, std::sin(3.0)});
  check_values(np::exp(np::array({0.0, 1.0})), {1, std::exp(1.0)}, 1e-12);
  check_values(np::log(np::array({1.f, 4.f})), {0, std::log(4.0)});
  check_values(np::log1p(np::array({0.f})), {0});
  check_values(np::expm1(np::array({0.f})), {0});
  check_values(np::cos(np::array({0.f})), {1});
  check_values(np::tan(np::array({0.f})), {0});
  check_values(np::tanh(np::array({0.f, 1.f})), {0, std::tanh(1.0)});
  check_values(np::sqrt(np::array({4, 9})), {2, 3});
  CHECK(np::abs(i).to_vector<int>() == std::vector<int>{2, 0, 3});
  CHECK(np::abs(np::array({true})).dtype() == bool_);
  CHECK(np::sign(i).to_vector<int>() == std::vector<int>{-1, 0, 1});
  check_aval(np::square(i), {3}, int32);
  CHECK(np::square(i).to_vector<int>() == std::vector<int>{4, 0, 9});
  check_aval(np::reciprocal(np::array({2, 4})), {2}, float32);
  check_values(np::reciprocal(np::array({2, 4})), {0.5, 0.25});
  // Round half to even; floor/ceil leave integers alone.
  check_values(np::round(np::array({0.5, 1.5, 2.5, -0.5, -1.5, 2.6})), {0, 2, 2, -0.0, -2, 3});
  check_values(np::floor(np::array({-1.5f, 1.5f})), {-2, 1});
  check_values(np::ceil(np::array({-1.5f, 1.5f})), {-1, 2});
  check_aval(np::floor(i), {3}, int32);
  CHECK(np::round(i).to_vector<int>() == std::vector<int>{-2, 0, 3});
  CHECK(np::negative(i).to_vector<int>() == std::vector<int>{2, 0, -3});
  CHECK(np::positive(i).to_vector<int>() == std::vector<int>{-2, 0, 3});
}

// Oracles: <cmath> in double; integer inputs compute in float32, as jnp's do.
TEST_CASE("inverse trigonometric and hyperbolic functions, exp2, cbrt, log2, log10", "[numpy]") {
  check_aval(np::arcsin(np::array({0, 1})), {2}, float32);
  check_values(np::arcsin(np::array({-1.0, 0.5, 1.0})), {-kPi / 2, kPi / 6, kPi / 2}, 1e-15);
  check_values(np::arccos(np::array({-1.f, 0.5f, 1.f})), {kPi, kPi / 3, 0});
  check_values(np::arctan(np::array({-kInf, 1.0, kInf})), {-kPi / 2, kPi / 4, kPi / 2}, 1e-15);
  check_values(np::sinh(np::array({-1.0, 0.0, 2.0})), {std::sinh(-1.0), 0, std::sinh(2.0)}, 1e-15);
  check_values(np::cosh(np::array({-1.f, 0.f, 2.f})), {std::cosh(-1.0), 1, std::cosh(2.0)});
  check_values(np::arcsinh(np::array({-3.0, 0.0, 1e300})), {std::asinh(-3.0), 0, std::asinh(1e300)},
               1e-15);
  check_values(np::arccosh(np::array({1.f, 2.f, 0.5f})), {0, std::acosh(2.0), kNaN});
  check_values(np::arctanh(np::array({-1.0, 0.5, 2.0})), {-kInf, std::atanh(0.5), kNaN}, 1e-15);
  check_aval(np::cbrt(np::array({-8, 27})), {2}, float32);
  check_values(np::cbrt(np::array({-8, 27})), {-2, 3});
  check_values(np::exp2(np::array({-1, 0, 10})), {0.5, 1, 1024});
  check_values(np::log2(np::array({1, 8, 1024})), {0, 3, 10});
  check_values(np::log10(np::array({1e-3, 1.0, 1e5})), {-3, 0, 5}, 1e-15);
}

// jnp's rules: integers and bools are always finite, never inf or NaN; the result is bool.
TEST_CASE("isfinite, isinf and isnan", "[numpy]") {
  Array f = np::array({1.0f, float(kInf), float(-kInf), float(kNaN), 0.0f});
  check_aval(np::isfinite(f), {5}, bool_);
  CHECK(np::isfinite(f).to_vector<bool>() == std::vector<bool>{true, false, false, false, true});
  CHECK(np::isinf(f).to_vector<bool>() == std::vector<bool>{false, true, true, false, false});
  CHECK(np::isnan(f).to_vector<bool>() == std::vector<bool>{false, false, false, true, false});
  Array i = np::array({std::int64_t{-7}, std::int64_t{0}});
  for (auto fn : {np::isfinite, np::isinf, np::isnan}) check_aval(fn(i), {2}, bool_);
  CHECK(np::isfinite(i).to_vector<bool>() == std::vector<bool>{true, true});
  CHECK(np::isinf(np::array({true})).to_vector<bool>() == std::vector<bool>{false});
  CHECK(np::isnan(i).to_vector<bool>() == std::vector<bool>{false, false});
  // The same under jit, where isfinite is the is-finite opcode.
  auto all = jit([](const Array& x) {
    return std::tuple{np::isfinite(x), np::isinf(x), np::isnan(x)};
  });
  auto [fin, inf, nan] = all(f.astype(float64));
  CHECK(fin.to_vector<bool>() == std::vector<bool>{true, false, false, false, true});
  CHECK(inf.to_vector<bool>() == std::vector<bool>{false, true, true, false, false});
  CHECK(nan.to_vector<bool>() == std::vector<bool>{false, false, false, true, false});
  CHECK_THROWS_MATCHES(lax::is_finite(i), TypeError,
                       Catch::Message("is_finite does not accept dtype int64. Accepted dtypes are "
                                      "subtypes of floating."));
}

TEST_CASE("comparisons, logic and bitwise operators", "[numpy]") {
  Array x = np::array({1.f, 2.f, 3.f});
  check_aval(x < 2, {3}, bool_);
  CHECK((x < 2).to_vector<bool>() == std::vector<bool>{true, false, false});
  CHECK((x <= 2).to_vector<bool>() == std::vector<bool>{true, true, false});
  CHECK((x > 2).to_vector<bool>() == std::vector<bool>{false, false, true});
  CHECK((x >= 2).to_vector<bool>() == std::vector<bool>{false, true, true});
  CHECK((x == 2).to_vector<bool>() == std::vector<bool>{false, true, false});
  CHECK((x != 1).to_vector<bool>() == std::vector<bool>{false, true, true});
  CHECK((2.5f > x).to_vector<bool>() == std::vector<bool>{true, true, false});

  Array i = np::array({0, 1, 6});
  Array j = np::array({3, 0, 5});
  CHECK(np::logical_and(i, j).to_vector<bool>() == std::vector<bool>{false, false, true});
  CHECK(np::logical_or(i, j).to_vector<bool>() == std::vector<bool>{true, true, true});
  CHECK(np::logical_not(i).to_vector<bool>() == std::vector<bool>{true, false, false});
  CHECK((i & j).to_vector<int>() == std::vector<int>{0, 0, 4});
  CHECK((i | j).to_vector<int>() == std::vector<int>{3, 1, 7});
  CHECK((~i).to_vector<int>() == std::vector<int>{-1, -2, -7});
  Array p = np::array({true, false});
  CHECK((~p).to_vector<bool>() == std::vector<bool>{false, true});
  CHECK((p & true).to_vector<bool>() == std::vector<bool>{true, false});
  CHECK((p | false).to_vector<bool>() == std::vector<bool>{true, false});
  // On bools, + is or and * is and.
  Array q = np::array({true, true});
  check_aval(p + q, {2}, bool_);
  CHECK((p + q).to_vector<bool>() == std::vector<bool>{true, true});
  CHECK((p * q).to_vector<bool>() == std::vector<bool>{true, false});
}

TEST_CASE("where promotes x and y and broadcasts all three", "[numpy]") {
  Array x = np::array({-1.f, 2.f, -3.f});
  check_values(np::where(x > 0, x, 0.0f), {0, 2, 0});
  // A non-bool condition means condition != 0.
  check_values(np::where(np::array({0, 2, 0}), 1.0f, x), {-1, 1, -3});
  // Mixed dtypes: int32 with a weak float is a weak float32.
  Array w = np::where(np::array({true, false}), np::array({1, 2}), 0.5f);
  check_aval(w, {2}, float32, /*weak=*/true);
  check_values(w, {1, 0.5});
  // (3, 1) condition, (1, 4) x, scalar y.
  Array c = np::array(std::vector<bool>{true, false, true}, {3, 1});
  Array r = np::where(c, iota_f32({1, 4}), -1.0f);
  CHECK(r.shape() == Shape{3, 4});
  check_values(r, {0, 1, 2, 3, -1, -1, -1, -1, 0, 1, 2, 3});
  check_aval(np::where(true, 1, 2), {}, int32, /*weak=*/true);
  CHECK(np::where(true, 1, 2).item<int>() == 1);
}

TEST_CASE("clip bounds from below, above or both", "[numpy]") {
  Array x = np::array({-2.f, 0.5f, 3.f});
  check_values(np::clip(x, Array(0.0f), Array(1.0f)), {0, 0.5, 1});
  check_values(np::clip(x, std::nullopt, Array(1.0f)), {-2, 0.5, 1});
  check_values(np::clip(x, Array(0.0f), std::nullopt), {0, 0.5, 3});
  Array i = np::array({-5, 5, 50});
  CHECK(np::clip(i, Array(0), Array(10)).to_vector<int>() == std::vector<int>{0, 5, 10});
  check_values(np::clip(x, np::array({-1.f, 1.f, 0.f}), Array(2.0f)), {-1, 1, 2});
}

TEST_CASE("incompatible shapes throw ShapeError naming the lax op", "[numpy]") {
  Array a = np::zeros({3});
  Array b = np::zeros({4});
  CHECK_THROWS_MATCHES(a + b, ShapeError,
                       Catch::Message("add got incompatible shapes for broadcasting: (3,), (4,)"));
  CHECK_THROWS_MATCHES(
      np::zeros({2, 3}) * b, ShapeError,
      Catch::Message("mul got incompatible shapes for broadcasting: (2, 3), (4,)"));
  CHECK_THROWS_MATCHES(a - b, ShapeError,
                       Catch::Message("sub got incompatible shapes for broadcasting: (3,), (4,)"));
  CHECK_THROWS_MATCHES(a < b, ShapeError,
                       Catch::Message("lt got incompatible shapes for broadcasting: (3,), (4,)"));
  CHECK_THROWS_MATCHES(
      np::where(a > 0, a, b), ShapeError,
      Catch::Message("select_n got incompatible shapes for broadcasting: (3,), (3,), (4,)"));
  CHECK_THROWS_MATCHES(
      np::zeros({2, 1}) + np::zeros({3, 5}), ShapeError,
      Catch::Message("add got incompatible shapes for broadcasting: (2, 1), (3, 5)"));
}

}  // namespace
}  // namespace jx
