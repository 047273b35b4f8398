// Op-table rows and edge cases for comparisons, select_n and clamp; oracles are closed forms.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/primitive.hpp"
#include "support/op_table.hpp"
#include "trace/tracer.hpp"

namespace jx::testing {
namespace {

using Binary = Array (*)(const Array&, const Array&);

const std::vector<DType>& kAll = kAllTypes;
const std::vector<DType>& kNum = kNumericTypes;

// Every elementwise shape for all n operands, plus the given combinations with 0-d operands.
std::vector<std::vector<Shape>> shape_sets(int n, std::vector<std::vector<Shape>> extra) {
  std::vector<std::vector<Shape>> sets;
  for (const Shape& s : kElementwiseShapes) sets.push_back(same_shapes(s, n));
  for (auto& e : extra) sets.push_back(std::move(e));
  return sets;
}

// Values on a coarse grid, so that equal operands occur often enough to test eq/le/ge.
double grid_sample(std::mt19937& rng, DType d) {
  if (d == bool_) return uniform(rng, -1, 1) > 0;
  if (is_unsigned(d)) return std::round(uniform(rng, 0, 4));
  if (is_integral(d)) return std::round(uniform(rng, -2, 2));
  return std::round(uniform(rng, -2, 2) * 2) / 2;
}

OpRow compare_row(std::string name, Binary op, std::function<bool(double, double)> f) {
  OpRow r;
  r.name = r.primitive = std::move(name);
  r.dtypes = kAll;
  r.shape_sets = shape_sets(2, {{{}, {2, 3}}, {{2, 3}, {}}});
  r.sample = grid_sample;
  r.apply = [op](const std::vector<Array>& a) { return op(a[0], a[1]); };
  r.oracle = [f](const std::vector<HostArray>& in, DType) {
    return map_oracle(in, [&](const std::vector<double>& x) { return double(f(x[0], x[1])); });
  };
  return r;
}

// select_n with a bool `which` = p < q, choosing between a and b.
OpRow select_n_bool_row() {
  OpRow r;
  r.name = "select_n/bool";
  r.primitive = "select_n";
  r.dtypes = kAll;
  r.shape_sets = shape_sets(4, {{{}, {}, {2, 3}, {2, 3}}});
  r.apply = [](const std::vector<Array>& a) {
    return lax::select_n(lax::lt(a[0], a[1]), {a[2], a[3]});
  };
  r.oracle = [](const std::vector<HostArray>& in, DType) {
    return map_oracle(in, [](const std::vector<double>& x) { return x[0] < x[1] ? x[3] : x[2]; });
  };
  return r;
}

// select_n with an int32 `which` in [-1, 3] over three cases: out-of-range values clamp.
OpRow select_n_int32_row() {
  OpRow r;
  r.name = "select_n/int32";
  r.primitive = "select_n";
  r.dtypes = kAll;
  r.shape_sets = shape_sets(4, {{{}, {2, 3}, {2, 3}, {2, 3}}});
  r.sample = [](std::mt19937& rng, DType d) {
    if (d == bool_) return double(uniform(rng, -1, 1) > 0);
    double v = uniform(rng, is_unsigned(d) ? 0 : -1.5, 3.5);
    return is_floating(d) ? v : std::round(v);
  };
  r.apply = [](const std::vector<Array>& a) {
    return lax::select_n(lax::convert_element_type(a[0], int32), {a[1], a[2], a[3]});
  };
  r.oracle = [](const std::vector<HostArray>& in, DType) {
    return map_oracle(in, [](const std::vector<double>& x) {
      return x[1 + static_cast<int>(std::clamp(std::trunc(x[0]), 0.0, 2.0))];
    });
  };
  return r;
}

OpRow clamp_row() {
  OpRow r;
  r.name = r.primitive = "clamp";
  r.dtypes = kNum;
  r.shape_sets = shape_sets(3, {{{}, {2, 3}, {}}, {{}, {2, 3}, {2, 3}}, {{2, 3}, {2, 3}, {}}});
  r.apply = [](const std::vector<Array>& a) { return lax::clamp(a[0], a[1], a[2]); };
  r.oracle = [](const std::vector<HostArray>& in, DType) {
    return map_oracle(in, [](const std::vector<double>& x) {
      return std::min(std::max(x[1], x[0]), x[2]);  // lo > hi gives hi, as XLA
    });
  };
  return r;
}

const bool kRows = add_rows({
    compare_row("eq", lax::eq, [](double x, double y) { return x == y; }),
    compare_row("ne", lax::ne, [](double x, double y) { return x != y; }),
    compare_row("lt", lax::lt, [](double x, double y) { return x < y; }),
    compare_row("le", lax::le, [](double x, double y) { return x <= y; }),
    compare_row("gt", lax::gt, [](double x, double y) { return x > y; }),
    compare_row("ge", lax::ge, [](double x, double y) { return x >= y; }),
    select_n_bool_row(),
    select_n_int32_row(),
    clamp_row(),
});

Array scalar_f32(float v) { return np::array(std::vector<float>{v}, Shape{}); }  // strong 0-d

}  // namespace

TEST_CASE("comparisons: bool out, never weak; NaN is unordered and unequal", "[compare_select]") {
  const float nan = std::nanf("");
  Array x = np::array({nan, nan, 1.f});
  Array y = np::array({nan, 1.f, 1.f});
  CHECK(lax::eq(x, y).to_vector<bool>() == std::vector<bool>{false, false, true});
  CHECK(lax::ne(x, y).to_vector<bool>() == std::vector<bool>{true, true, false});
  CHECK(lax::lt(x, y).to_vector<bool>() == std::vector<bool>{false, false, false});
  CHECK(lax::le(x, y).to_vector<bool>() == std::vector<bool>{false, false, true});
  CHECK(lax::gt(x, y).to_vector<bool>() == std::vector<bool>{false, false, false});
  CHECK(lax::ge(x, y).to_vector<bool>() == std::vector<bool>{false, false, true});
  Array w = lax::lt(Array(1.0f), Array(2.0f));
  CHECK(w.dtype() == bool_);
  CHECK(!w.weak_type());
  CHECK(w.item<bool>());
  // Unsigned and bool order as their own types do.
  CHECK(!lax::lt(np::array({std::numeric_limits<std::uint32_t>::max()}), np::array({0u}))
             .item<bool>());
  CHECK(lax::lt(np::array({false}), np::array({true})).item<bool>());
  CHECK(lax::ge(np::array({1, 2, 3}), Array(2)).to_vector<bool>() ==
        std::vector<bool>{false, true, true});
}

TEST_CASE("select_n: int32 `which` over three cases clamps out-of-range values",
          "[compare_select]") {
  Array which = np::array({0, 1, 2, -1, 7});
  Array a = np::array({10.f, 11.f, 12.f, 13.f, 14.f});
  Array b = np::array({20.f, 21.f, 22.f, 23.f, 24.f});
  Array c = np::array({30.f, 31.f, 32.f, 33.f, 34.f});
  CHECK(lax::select_n(which, {a, b, c}).to_vector<float>() ==
        std::vector<float>{10, 21, 32, 13, 34});
  CHECK(lax::select_n(Array(2), {a, b, c}).to_vector<float>() == c.to_vector<float>());
  CHECK(lax::select_n(np::array({5, 0}), {np::array({1, 2})}).to_vector<std::int32_t>() ==
        std::vector<std::int32_t>{1, 2});
}

TEST_CASE("select_n: bool `which` picks case 1 where true; weak only if all cases are",
          "[compare_select]") {
  Array which = np::array({true, false, true});
  Array r = lax::select_n(which, {np::array({1, 2, 3}), np::array({4, 5, 6})});
  CHECK(r.to_vector<std::int32_t>() == std::vector<std::int32_t>{4, 2, 6});
  CHECK(lax::select_n(Array(false), {np::array({1.0, 2.0})}).to_vector<double>() ==
        std::vector<double>{1.0, 2.0});
  CHECK(lax::select_n(Array(true), {Array(1.0f), Array(2.0f)}).weak_type());
  CHECK(!lax::select_n(Array(true), {Array(1.0f), scalar_f32(2.0f)}).weak_type());
  CHECK(lax::select_n(Array(true), {Array(1.0f), scalar_f32(2.0f)}).item<float>() == 2.0f);
}

TEST_CASE("clamp: 0-d bounds broadcast, lo > hi gives hi, NaN propagates", "[compare_select]") {
  Array x = np::array({-2.f, 0.5f, 3.f});
  CHECK(lax::clamp(Array(0.0f), x, Array(1.0f)).to_vector<float>() ==
        std::vector<float>{0.f, 0.5f, 1.f});
  CHECK(lax::clamp(np::array({-3.f, 1.f, 0.f}), x, Array(2.0f)).to_vector<float>() ==
        std::vector<float>{-2.f, 1.f, 2.f});
  CHECK(lax::clamp(Array(5), np::array({1, 9}), Array(3)).to_vector<std::int32_t>() ==
        std::vector<std::int32_t>{3, 3});
  CHECK(lax::clamp(np::array({1u}), np::array({0u}), np::array({4u})).item<std::uint32_t>() == 1u);
  std::vector<double> n =
      lax::clamp(Array(0.0).astype(float64), np::array({std::nan(""), 2.0}),
                 np::array({1.0, std::nan("")}))
          .to_vector<double>();
  CHECK(std::isnan(n[0]));
  CHECK(std::isnan(n[1]));
  Array s = lax::clamp(Array(0.0f), Array(3.0f), Array(1.0f));
  CHECK(s.weak_type());
  CHECK(s.item<float>() == 1.0f);
}

TEST_CASE("comparisons reject mismatched dtypes and shapes", "[compare_select][errors]") {
  CHECK_THROWS_MATCHES(lax::lt(np::array({1, 2}), np::array({1.f, 2.f})), TypeError,
                       Catch::Message("lt requires arguments to have the same dtypes, got int32, "
                                      "float32 (jx::np promotes types automatically)."));
  CHECK_THROWS_MATCHES(lax::eq(np::array({1, 2}), np::array({1, 2, 3})), ShapeError,
                       Catch::Message("eq got incompatible shapes for broadcasting: (2,), (3,)"));
}

TEST_CASE("select_n rejects bad cases and `which`, in JAX's words", "[compare_select][errors]") {
  Array f2 = np::array({1.f, 2.f}), f3 = np::array({1.f, 2.f, 3.f}), b2 = np::array({true, false});
  CHECK_THROWS_MATCHES(lax::select_n(b2, {}), TypeError,
                       Catch::Message("select_n must have at least one case"));
  CHECK_THROWS_MATCHES(
      lax::select_n(Array(true), {f2, f3}), ShapeError,
      Catch::Message("select_n cases must have the same shapes, got [(2,), (3,)]."));
  CHECK_THROWS_MATCHES(lax::select_n(Array(true), {f2, Array(1.0f)}), ShapeError,
                       Catch::Message("select_n cases must have the same shapes, got [(2,), ()]."));
  CHECK_THROWS_MATCHES(lax::select_n(np::array({true, false, true}), {f2, f2}), ShapeError,
                       Catch::Message("select_n `which` must be scalar or have the same shape as "
                                      "cases, got `which` shape (3,) but case shape (2,)."));
  CHECK_THROWS_MATCHES(lax::select_n(b2, {f2, np::array({1, 2})}), TypeError,
                       Catch::Message("select_n requires arguments to have the same dtypes, got "
                                      "float32, int32 (jx::np promotes types automatically)."));
  CHECK_THROWS_MATCHES(lax::select_n(f2, {f2, f2}), TypeError,
                       Catch::Message("select_n `which` must be boolean or int32 type, got "
                                      "float32."));
  CHECK_THROWS_MATCHES(
      lax::select_n(np::array({std::int64_t{0}, std::int64_t{1}}), {f2, f2}), TypeError,
      Catch::Message("select_n `which` must be boolean or int32 type, got int64."));
  CHECK_THROWS_MATCHES(lax::select_n(b2, {f2, f2, f2}), TypeError,
                       Catch::Message("select_n with boolean `which` cannot have > 2 cases."));
}

TEST_CASE("clamp rejects bad bound shapes and dtypes, in JAX's words", "[compare_select][errors]") {
  Array x = np::array({1.f, 2.f, 3.f}), lo2 = np::array({0.f, 0.f});
  CHECK_THROWS_MATCHES(
      lax::clamp(lo2, x, Array(1.0f)), ShapeError,
      Catch::Message("clamp requires min.shape == operand.shape or min.shape == (), "
                     "got (2,) and (3,)."));
  CHECK_THROWS_MATCHES(
      lax::clamp(Array(0.0f), x, lo2), ShapeError,
      Catch::Message("clamp requires max.shape == operand.shape or max.shape == (), "
                     "got (2,) and (3,)."));
  CHECK_THROWS_MATCHES(
      lax::clamp(lo2, Array(1.0f), Array(1.0f)), ShapeError,
      Catch::Message("clamp requires min.shape == operand.shape or min.shape == (), "
                     "got (2,) and ()."));
  CHECK_THROWS_MATCHES(
      lax::clamp(Array(0), x, Array(1.0f)), TypeError,
      Catch::Message("clamp requires arguments to have the same dtypes, got int32, "
                     "float32, float32 (jx::np promotes types automatically)."));
  Array b = np::array({true});
  CHECK_THROWS_MATCHES(lax::clamp(b, b, b), TypeError,
                       Catch::Message("clamp does not accept dtype bool. Accepted dtypes are "
                                      "subtypes of integer, floating."));
}

TEST_CASE("compare_select ops reject a wrong operand count (as a parsed jaxpr may give)",
          "[compare_select][errors]") {
  Array x = np::array({1.f, 2.f});
  CHECK_THROWS_MATCHES(trace::bind1(*find_primitive("lt"), {x}), TypeError,
                       Catch::Message("lt takes 2 operands, got 1"));
  CHECK_THROWS_MATCHES(trace::bind1(*find_primitive("clamp"), {x, x}), TypeError,
                       Catch::Message("clamp takes 3 operands, got 2"));
  CHECK_THROWS_MATCHES(trace::bind1(*find_primitive("select_n"), {}), TypeError,
                       Catch::Message("select_n must have at least one case"));
}

}  // namespace jx::testing
