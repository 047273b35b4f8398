// Op-table rows and edge cases for the binary family: oracles are closed forms in double, with
// XLA's integer semantics (wrapping, division toward zero, x / 0 = -1) written out explicitly.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/primitive.hpp"
#include "support/op_table.hpp"
#include "trace/tracer.hpp"

namespace jx::testing {
namespace {

using Binary = Array (*)(const Array&, const Array&);
using Oracle2 = std::function<double(double, double, DType)>;

const std::vector<DType>& kNum = kNumericTypes;
const std::vector<DType>& kF = kFloatingTypes;

// Every elementwise shape for both operands, plus a 0-d operand on either side.
std::vector<std::vector<Shape>> binary_shape_sets() {
  std::vector<std::vector<Shape>> sets;
  for (const Shape& s : kElementwiseShapes) sets.push_back(same_shapes(s, 2));
  sets.push_back({{}, {2, 3}});
  sets.push_back({{2, 3}, {}});
  return sets;
}

// Integer divisors must avoid 0 (its result is an edge case, tested below).
double nonzero_sample(std::mt19937& rng, DType d) {
  if (is_floating(d)) return uniform(rng, -3, 3);
  double v = 0;
  while (v == 0) v = std::round(uniform(rng, is_unsigned(d) ? 1 : -3, is_unsigned(d) ? 6 : 3));
  return v;
}

// Shift operands: small non-negative integers (they fit in int8), so that amounts both in and
// past the bit width of the 8-, 16- and 32-bit dtypes occur and 64-bit results stay exact in
// double.
double shift_sample(std::mt19937& rng, DType) { return std::round(uniform(rng, 0, 40)); }

// XLA's shifts written out in double: by the bit width or more, everything shifts out.
double shift_oracle(double x, double y, DType d, bool left) {
  const double bits = 8.0 * static_cast<double>(itemsize(d));
  if (y >= bits) return 0;
  return left ? wrap(x * std::pow(2.0, y), d) : std::floor(x / std::pow(2.0, y));
}

OpRow binary_row(std::string name, std::vector<DType> dtypes, Binary op, Oracle2 f,
                 std::function<double(std::mt19937&, DType)> sample = nullptr) {
  OpRow r;
  r.name = r.primitive = std::move(name);
  r.dtypes = std::move(dtypes);
  r.shape_sets = binary_shape_sets();
  r.sample = std::move(sample);
  r.apply = [op](const std::vector<Array>& a) { return op(a[0], a[1]); };
  r.oracle = [f](const std::vector<HostArray>& in, DType d) {
    return map_oracle(in, [&](const std::vector<double>& x) { return f(x[0], x[1], d); });
  };
  return r;
}

std::int64_t to_int(double v) { return static_cast<std::int64_t>(v); }

const bool kRows = add_rows({
    binary_row("add", kNum, lax::add, [](double x, double y, DType d) { return wrap(x + y, d); }),
    // autodiff's sum of tangents: an add by another name.
    binary_row(
        "add_any", kNum,
        [](const Array& x, const Array& y) {
          return trace::bind1(*find_primitive("add_any"), {x, y});
        },
        [](double x, double y, DType d) { return wrap(x + y, d); }),
    binary_row("sub", kNum, lax::sub, [](double x, double y, DType d) { return wrap(x - y, d); }),
    binary_row("mul", kNum, lax::mul, [](double x, double y, DType d) { return wrap(x * y, d); }),
    // C semantics: integer quotients truncate toward zero, remainders take the dividend's sign.
    binary_row(
        "div", kNum, lax::div,
        [](double x, double y, DType d) {
          return is_floating(d) ? x / y : double(to_int(x) / to_int(y));
        },
        nonzero_sample),
    binary_row(
        "rem", kNum, lax::rem,
        [](double x, double y, DType d) {
          return is_floating(d) ? std::fmod(x, y) : double(to_int(x) % to_int(y));
        },
        nonzero_sample),
    binary_row("pow", kF, lax::pow, [](double x, double y, DType) { return std::pow(x, y); }),
    binary_row("max", kAllTypes, lax::max, [](double x, double y, DType) { return x > y ? x : y; }),
    binary_row("min", kAllTypes, lax::min, [](double x, double y, DType) { return x < y ? x : y; }),
    binary_row("atan2", kF, lax::atan2, [](double x, double y, DType) { return std::atan2(x, y); }),
    binary_row("and", kIntegerOrBoolTypes, lax::bitwise_and,
               [](double x, double y, DType) { return double(to_int(x) & to_int(y)); }),
    binary_row("or", kIntegerOrBoolTypes, lax::bitwise_or,
               [](double x, double y, DType) { return double(to_int(x) | to_int(y)); }),
    binary_row("xor", kIntegerOrBoolTypes, lax::bitwise_xor,
               [](double x, double y, DType) { return double(to_int(x) ^ to_int(y)); }),
    binary_row(
        "shift_left", kIntegerTypes, lax::shift_left,
        [](double x, double y, DType d) { return shift_oracle(x, y, d, true); }, shift_sample),
    binary_row(
        "shift_right_logical", kIntegerTypes, lax::shift_right_logical,
        [](double x, double y, DType d) { return shift_oracle(x, y, d, false); }, shift_sample),
    binary_row(
        "shift_right_arithmetic", kIntegerTypes, lax::shift_right_arithmetic,
        [](double x, double y, DType d) { return shift_oracle(x, y, d, false); }, shift_sample),
});

constexpr std::int32_t kI32Min = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kI32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::uint32_t kU32Max = std::numeric_limits<std::uint32_t>::max();

}  // namespace

TEST_CASE("div: integers round toward zero, x / 0 = -1, INT_MIN / -1 = INT_MIN", "[binary]") {
  Array x = np::array({7, -7, 7, -7, 5, -5, 0, kI32Min, kI32Min});
  Array y = np::array({2, 2, -2, -2, 0, 0, 0, -1, 1});
  CHECK(lax::div(x, y).to_vector<std::int32_t>() ==
        std::vector<std::int32_t>{3, -3, -3, 3, -1, -1, -1, kI32Min, kI32Min});
  Array x64 = np::array({kI64Min, std::int64_t{9}, std::int64_t{-9}});
  Array y64 = np::array({std::int64_t{-1}, std::int64_t{0}, std::int64_t{4}});
  CHECK(lax::div(x64, y64).to_vector<std::int64_t>() == std::vector<std::int64_t>{kI64Min, -1, -2});
  // Unsigned: all bits set.
  CHECK(
      lax::div(np::array({7u, 0u, kU32Max}), np::array({0u, 0u, 2u})).to_vector<std::uint32_t>() ==
      std::vector<std::uint32_t>{kU32Max, kU32Max, kU32Max / 2});
  // Floats follow IEEE.
  std::vector<float> f =
      lax::div(np::array({1.f, -1.f, 0.f}), np::array({0.f, 0.f, 0.f})).to_vector<float>();
  CHECK(f[0] == std::numeric_limits<float>::infinity());
  CHECK(f[1] == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(f[2]));
}

TEST_CASE("rem: sign of the dividend, x % 0 = x, INT_MIN % -1 = 0", "[binary]") {
  Array x = np::array({7, -7, 7, -7, 5, -5, kI32Min, kI32Min});
  Array y = np::array({3, 3, -3, -3, 0, 0, -1, 3});
  CHECK(lax::rem(x, y).to_vector<std::int32_t>() ==
        std::vector<std::int32_t>{1, -1, 1, -1, 5, -5, 0, -2});
  CHECK(lax::rem(np::array({kI64Min, std::int64_t{4}}),
                 np::array({std::int64_t{-1}, std::int64_t{0}}))
            .to_vector<std::int64_t>() == std::vector<std::int64_t>{0, 4});
  CHECK(lax::rem(np::array({9u, 9u}), np::array({0u, 4u})).to_vector<std::uint32_t>() ==
        std::vector<std::uint32_t>{9, 1});
  CHECK(lax::rem(np::array({-7.5, 7.5}), np::array({2.0, -2.0})).to_vector<double>() ==
        std::vector<double>{-1.5, 1.5});
  CHECK(std::isnan(lax::rem(np::array({1.0}), np::array({0.0})).item<double>()));
}

TEST_CASE("add, sub, mul: integer overflow wraps", "[binary]") {
  CHECK(lax::add(np::array({kI32Max, kI32Min}), np::array({1, -1})).to_vector<std::int32_t>() ==
        std::vector<std::int32_t>{kI32Min, kI32Max});
  CHECK(lax::sub(np::array({kI32Min}), np::array({1})).item<std::int32_t>() == kI32Max);
  CHECK(lax::mul(np::array({kI32Max, kI32Min}), np::array({2, -1})).to_vector<std::int32_t>() ==
        std::vector<std::int32_t>{-2, kI32Min});
  CHECK(lax::add(np::array({kI64Max}), np::array({std::int64_t{1}})).item<std::int64_t>() ==
        kI64Min);
  CHECK(lax::mul(np::array({kI64Min}), np::array({std::int64_t{-1}})).item<std::int64_t>() ==
        kI64Min);
  CHECK(lax::sub(np::array({0u}), np::array({1u})).item<std::uint32_t>() == kU32Max);
  CHECK(lax::mul(np::array({kU32Max}), np::array({kU32Max})).item<std::uint32_t>() == 1u);
}

TEST_CASE("max, min: NaN propagates from either side; bool is or/and", "[binary]") {
  const double nan = std::nan("");
  Array x = np::array({nan, 1.0, nan, 2.0});
  Array y = np::array({1.0, nan, nan, -3.0});
  std::vector<double> mx = lax::max(x, y).to_vector<double>();
  std::vector<double> mn = lax::min(x, y).to_vector<double>();
  for (int i = 0; i < 3; ++i) {
    CHECK(std::isnan(mx[i]));
    CHECK(std::isnan(mn[i]));
  }
  CHECK(mx[3] == 2.0);
  CHECK(mn[3] == -3.0);
  CHECK(std::isnan(lax::max(np::array({std::nanf("")}), np::array({1.f})).item<float>()));
  Array a = np::array({false, false, true, true}), b = np::array({false, true, false, true});
  CHECK(lax::max(a, b).to_vector<bool>() == std::vector<bool>{false, true, true, true});
  CHECK(lax::min(a, b).to_vector<bool>() == std::vector<bool>{false, false, false, true});
}

TEST_CASE("and, or: logical on bool, bitwise on integers", "[binary]") {
  Array a = np::array({false, false, true, true}), b = np::array({false, true, false, true});
  CHECK(lax::bitwise_and(a, b).to_vector<bool>() == std::vector<bool>{false, false, false, true});
  CHECK(lax::bitwise_or(a, b).to_vector<bool>() == std::vector<bool>{false, true, true, true});
  CHECK(lax::bitwise_and(np::array({12, -1}), np::array({10, 6})).to_vector<std::int32_t>() ==
        std::vector<std::int32_t>{8, 6});
  CHECK(lax::bitwise_or(np::array({12u}), np::array({3u})).item<std::uint32_t>() == 15u);
}

TEST_CASE("pow, atan2: floating closed forms, atan2(x, y) = atan(x / y) by quadrant", "[binary]") {
  CHECK(lax::pow(np::array({2.0, 4.0, -2.0}), np::array({-1.0, 0.5, 3.0})).to_vector<double>() ==
        std::vector<double>{0.5, 2.0, -8.0});
  CHECK(std::isnan(lax::pow(np::array({-2.0}), np::array({0.5})).item<double>()));
  std::vector<double> t =
      lax::atan2(np::array({1.0, 1.0}), np::array({1.0, -1.0})).to_vector<double>();
  CHECK(t[0] == Approx(M_PI / 4));
  CHECK(t[1] == Approx(3 * M_PI / 4));
}

TEST_CASE("shifts: negative values, amounts past the width, eager and jitted", "[binary]") {
  // Amounts are unsigned: -1 is past the width. Logical shifts fill with zeros, arithmetic ones
  // with the sign bit (also of a uint32, whose top bit XLA reads as the sign).
  Array x = np::array({-8, -8, -8, 1, kI32Min, -1});
  Array y = np::array({1, 31, 32, 31, 31, -1});
  Array xu = np::array(std::vector<std::uint32_t>{0x80000010u, 0x80000010u, 5, 5});
  Array yu = np::array(std::vector<std::uint32_t>{4, 32, 31, 0xFFFFFFFFu});
  auto check = [&](auto run) {
    CHECK(run(lax::shift_left, x, y).template to_vector<std::int32_t>() ==
          std::vector<std::int32_t>{-16, 0, 0, kI32Min, 0, 0});
    CHECK(run(lax::shift_right_logical, x, y).template to_vector<std::int32_t>() ==
          std::vector<std::int32_t>{2147483644, 1, 0, 0, 1, 0});
    CHECK(run(lax::shift_right_arithmetic, x, y).template to_vector<std::int32_t>() ==
          std::vector<std::int32_t>{-4, -1, -1, 0, -1, -1});
    CHECK(run(lax::shift_right_arithmetic, xu, yu).template to_vector<std::uint32_t>() ==
          std::vector<std::uint32_t>{0xF8000001u, 0xFFFFFFFFu, 0, 0});
    CHECK(run(lax::shift_right_logical, xu, yu).template to_vector<std::uint32_t>() ==
          std::vector<std::uint32_t>{0x08000001u, 0, 0, 0});
    CHECK(run(lax::bitwise_xor, xu, yu).template to_vector<std::uint32_t>() ==
          std::vector<std::uint32_t>{0x80000014u, 0x80000030u, 26, 0xFFFFFFFAu});
  };
  check([](Binary op, const Array& a, const Array& b) { return op(a, b); });
  check([](Binary op, const Array& a, const Array& b) { return jit(op)(a, b); });
}

TEST_CASE("binary ops: a 0-d operand broadcasts; weak only if both are weak", "[binary]") {
  Array x = np::array({1.f, 2.f, 3.f});
  Array r = lax::add(x, Array(1.0f));
  CHECK(r.shape() == Shape{3});
  CHECK(!r.weak_type());
  CHECK(r.to_vector<float>() == std::vector<float>{2, 3, 4});
  CHECK(lax::sub(Array(10), np::array({1, 2})).to_vector<std::int32_t>() ==
        std::vector<std::int32_t>{9, 8});
  Array w = lax::mul(Array(2.0f), Array(3.0f));
  CHECK(w.weak_type());
  CHECK(w.shape() == Shape{});
  CHECK(w.item<float>() == 6.0f);
}

TEST_CASE("binary ops broadcast size-1 dims at equal rank, as JAX 0.11's lax", "[binary]") {
  // (2, 1) - (1, 3): out[i][j] = x[i] - y[j], eagerly, under jit, and differentiated (each
  // operand's cotangent summed over the dims it was broadcast along).
  Array x = np::array(std::vector<float>{1, 2}, {2, 1});
  Array y = np::array(std::vector<float>{10, 20, 30}, {1, 3});
  std::vector<double> want{-9, -19, -29, -8, -18, -28};
  CHECK(lax::sub(x, y).shape() == Shape{2, 3});
  CHECK(lax::sub(x, y).to_vector<double>() == want);
  CHECK(jit(lax::sub)(x, y).to_vector<double>() == want);
  auto loss = [](const Array& a, const Array& b) { return np::sum(lax::mul(a, b)); };
  // d/da sum_ij a_i b_j = sum_j b_j = 60; d/db = sum_i a_i = 3.
  auto [ga, gb] = jx::grad<0, 1>(loss)(x, y);
  CHECK(ga.shape() == Shape{2, 1});
  CHECK(ga.to_vector<double>() == std::vector<double>{60, 60});
  CHECK(gb.to_vector<double>() == std::vector<double>{3, 3, 3});
  auto [ja, jb] = jit(jx::grad<0, 1>(loss))(x, y);
  CHECK(ja.to_vector<double>() == std::vector<double>{60, 60});
  CHECK(jb.to_vector<double>() == std::vector<double>{3, 3, 3});
  // vmap over rows of a (2, 1, 3) batch against an unbatched (2, 1).
  Array xs = np::array(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 1, 3});
  Array v = vmap([&](const Array& r) { return lax::add(r, x); })(xs);
  CHECK(v.shape() == Shape{2, 2, 3});
  CHECK(v.to_vector<double>() == std::vector<double>{2, 3, 4, 3, 4, 5, 5, 6, 7, 6, 7, 8});
}

TEST_CASE("binary ops reject bad dtypes and shapes, in JAX's words", "[binary][errors]") {
  Array i = np::array({1, 2}), f = np::array({1.f, 2.f}), b = np::array({true, false});
  CHECK_THROWS_MATCHES(lax::add(i, f), TypeError,
                       Catch::Message("add requires arguments to have the same dtypes, got int32, "
                                      "float32 (jx::np promotes types automatically)."));
  CHECK_THROWS_MATCHES(lax::add(np::array({1.f, 2.f, 3.f}), np::array({1.f, 2.f, 3.f, 4.f})),
                       ShapeError,
                       Catch::Message("add got incompatible shapes for broadcasting: (3,), (4,)"));
  CHECK_THROWS_MATCHES(
      lax::max(np::array({1.f, 2.f}), np::array(std::vector<float>(6, 1.f), {2, 3})), ShapeError,
      Catch::Message("max: arrays must have same number of dimensions, got (2,), (2, 3)"));
  CHECK_THROWS_MATCHES(
      lax::mul(np::array(std::vector<float>(6, 1.f), {3, 2}),
               np::array(std::vector<float>(6, 1.f), {2, 3})),
      ShapeError, Catch::Message("mul got incompatible shapes for broadcasting: (3, 2), (2, 3)"));

  const std::string numeric = "Accepted dtypes are subtypes of integer, floating.";
  const std::string floating = "Accepted dtypes are subtypes of floating.";
  const std::string bitwise = "Accepted dtypes are subtypes of bool, integer.";
  struct Bad {
    Binary op;
    Array arg;
    std::string message;
  };
  for (const Bad& bad : std::vector<Bad>{
           {lax::add, b, "add does not accept dtype bool. " + numeric},
           {lax::sub, b, "sub does not accept dtype bool. " + numeric},
           {lax::mul, b, "mul does not accept dtype bool. " + numeric},
           {lax::div, b, "div does not accept dtype bool. " + numeric},
           {lax::rem, b, "rem does not accept dtype bool. " + numeric},
           {lax::pow, i, "pow does not accept dtype int32. " + floating},
           {lax::atan2, np::array({1u}), "atan2 does not accept dtype uint32. " + floating},
           {lax::bitwise_and, f, "and does not accept dtype float32. " + bitwise},
           {lax::bitwise_or, np::array({1.0}), "or does not accept dtype float64. " + bitwise},
           {lax::bitwise_xor, f, "xor does not accept dtype float32. " + bitwise},
           {lax::shift_left, b,
            "shift_left does not accept dtype bool. Accepted dtypes are subtypes of integer."},
           {lax::shift_right_logical, f,
            "shift_right_logical does not accept dtype float32. Accepted dtypes are subtypes of "
            "integer."},
       }) {
    CHECK_THROWS_MATCHES(bad.op(bad.arg, bad.arg), TypeError, Catch::Message(bad.message));
  }
}

TEST_CASE("binary ops reject a wrong operand count (as a parsed jaxpr may give)",
          "[binary][errors]") {
  Array x = np::array({1.f, 2.f});
  CHECK_THROWS_MATCHES(trace::bind1(*find_primitive("add"), {x}), TypeError,
                       Catch::Message("add takes 2 operands, got 1"));
  CHECK_THROWS_MATCHES(trace::bind1(*find_primitive("or"), {x, x, x}), TypeError,
                       Catch::Message("or takes 2 operands, got 3"));
}

}  // namespace jx::testing
