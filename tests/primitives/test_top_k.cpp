// Focused tests of lax::top_k (its op-table rows are in test_sorting.cpp): NaN, -0.0 and ties in
// every float dtype, integer extremes, 0-sized dims, eager against jit, vmap against a loop, the
// derivative in closed form and by finite differences, the jaxpr and HLO text, and each error.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/primitive.hpp"
#include "jaxpr/jaxpr.hpp"
#include "support/check_grads.hpp"
#include "support/op_table.hpp"

namespace jx::testing {
namespace {

using Arrays = std::vector<Array>;

std::vector<double> values(const Array& x) { return x.to_vector<double>(); }
std::vector<std::int32_t> ints(const Array& x) { return x.to_vector<std::int32_t>(); }

Array f64(const std::vector<double>& v, const Shape& shape) { return np::array(v, shape); }

auto top_k_jit(int k) {
  return jit([k](const Array& x) {
    auto [v, i] = lax::top_k(x, k);
    return std::pair{v, i};
  });
}

}  // namespace

TEST_CASE("top_k: the k largest, largest first, with their indices", "[top_k]") {
  // JAX's docstring example.
  Array x = np::array({9.f, 3.f, 6.f, 4.f, 10.f});
  auto [v, i] = lax::top_k(x, 3);
  CHECK(v.aval() == ShapedArray{{3}, float32, false});
  CHECK(i.aval() == ShapedArray{{3}, int32, false});
  CHECK(values(v) == std::vector<double>{10, 9, 6});
  CHECK(ints(i) == std::vector<std::int32_t>{4, 0, 2});
  auto [jv, ji] = top_k_jit(3)(x);
  CHECK(values(jv) == std::vector<double>{10, 9, 6});
  CHECK(ints(ji) == std::vector<std::int32_t>{4, 0, 2});
  // Along the last axis of each row.
  Array m = f64({1, 5, 3, 7, 2, 2}, {2, 3});
  auto [mv, mi] = lax::top_k(m, 2);
  CHECK(mv.shape() == Shape{2, 2});
  CHECK(values(mv) == std::vector<double>{5, 3, 7, 2});
  CHECK(ints(mi) == std::vector<std::int32_t>{1, 2, 0, 1});
}

TEST_CASE("top_k orders NaN above +inf, -0.0 equal to 0.0, ties by index, in every float dtype",
          "[top_k]") {
  const double nan = std::nan(""), inf = INFINITY;
  std::vector<double> in{1, nan, 3, 3, -inf, nan, -0.0, 0.0, inf};
  // Descending: both NaNs (index order), inf, the two 3s, 1, -0.0 then 0.0 (equal: index
  // order), -inf.
  std::vector<std::int32_t> want{1, 5, 8, 2, 3, 0, 6, 7, 4};
  for (DType d : {bfloat16, float16, float32, float64}) {
    INFO(dtype_name(d));
    Array x = np::array(in).astype(d);
    for (bool use_jit : {false, true}) {
      INFO("jit " << use_jit);
      auto [v, i] = use_jit ? top_k_jit(9)(x) : lax::top_k(x, 9);
      CHECK(ints(i) == want);
      std::vector<double> got = values(v);
      CHECK(std::isnan(got[0]));
      CHECK(std::isnan(got[1]));
      CHECK(got[2] == inf);
      CHECK(std::signbit(got[6]));  // -0.0 first, as it comes first
      CHECK(!std::signbit(got[7]));
      CHECK(got[8] == -inf);
    }
  }
}

TEST_CASE("top_k of integers keeps their extremes; bools put true first", "[top_k]") {
  const std::int32_t lo = std::numeric_limits<std::int32_t>::min();
  const std::int32_t hi = std::numeric_limits<std::int32_t>::max();
  Array i32 = np::array(std::vector<std::int32_t>{lo, hi, 0, -1, lo});
  auto [v, i] = lax::top_k(i32, 5);
  CHECK(v.to_vector<std::int32_t>() == std::vector<std::int32_t>{hi, 0, -1, lo, lo});
  CHECK(ints(i) == std::vector<std::int32_t>{1, 2, 3, 0, 4});
  auto [jv, ji] = top_k_jit(5)(i32);
  CHECK(jv.to_vector<std::int32_t>() == std::vector<std::int32_t>{hi, 0, -1, lo, lo});
  CHECK(ints(ji) == std::vector<std::int32_t>{1, 2, 3, 0, 4});

  Array u32 = np::array(std::vector<std::uint32_t>{7, 4294967295u, 0, 7});
  CHECK(lax::top_k(u32, 3).first.to_vector<std::uint32_t>() ==
        std::vector<std::uint32_t>{4294967295u, 7, 7});
  CHECK(ints(top_k_jit(3)(u32).second) == std::vector<std::int32_t>{1, 0, 3});

  Array b = np::array({false, true, false, true});
  for (bool use_jit : {false, true}) {
    auto [bv, bi] = use_jit ? top_k_jit(3)(b) : lax::top_k(b, 3);
    CHECK(bv.to_vector<bool>() == std::vector<bool>{true, true, false});
    CHECK(ints(bi) == std::vector<std::int32_t>{1, 3, 0});
  }
}

TEST_CASE("top_k of 0-sized dims and k = 0, eager and jit", "[top_k]") {
  for (auto [shape, k] :
       std::vector<std::pair<Shape, int>>{{{0, 4}, 2}, {{3, 0}, 0}, {{3, 5}, 0}, {{0}, 0}}) {
    Shape out = shape;
    out.back() = k;
    Array x = np::zeros(shape);
    auto [v, i] = lax::top_k(x, k);
    CHECK(v.shape() == out);
    CHECK(i.shape() == out);
    auto [jv, ji] = top_k_jit(k)(x);
    CHECK(jv.shape() == out);
    CHECK(ji.dtype() == int32);
  }
}

TEST_CASE("top_k keeps a weak type; its indices are strong int32", "[top_k]") {
  Array weak = lax::broadcast_in_dim(Array(2.0), {3}, {});
  REQUIRE(weak.weak_type());
  auto [v, i] = lax::top_k(weak, 2);
  CHECK(v.aval() == ShapedArray{{2}, float32, true});
  CHECK(i.aval() == ShapedArray{{2}, int32, false});
}

TEST_CASE("vmap of top_k matches a loop, with the batch axis first, middle or last",
          "[top_k][vmap]") {
  std::mt19937 rng(5);
  std::vector<Array> examples;
  for (int b = 0; b < 4; ++b) {
    std::vector<double> e(15);
    for (double& x : e) x = std::round(uniform(rng, -3, 3));  // ties: stability matters
    examples.push_back(f64(e, {3, 5}));
  }
  auto f = [](const Array& x) {
    auto [v, i] = lax::top_k(x, 2);
    return v * i.astype(float64);
  };
  std::vector<Array> want;
  for (const Array& e : examples) want.push_back(f(e));
  std::vector<double> expected = values(np::stack(want, 0));
  for (int axis : {0, 1, 2}) {
    INFO("batch axis " << axis);
    Array stacked = np::stack(examples, axis);
    CHECK(values(vmap(f, axis, 0)(stacked)) == expected);
    CHECK(values(jit(vmap(f, axis, 0))(stacked)) == expected);
  }
}

TEST_CASE("the derivative of top_k is the tangent at the selected indices", "[top_k][autodiff]") {
  Array x = f64({0.3, -1.2, 2.5, 0.1, -0.7}, {5});
  Array t = f64({10, 20, 30, 40, 50}, {5});
  auto values_of = [](const Array& a) { return lax::top_k(a, 3).first; };
  auto [out, tangent] = jvp(values_of, std::tuple{x}, std::tuple{t});
  CHECK(values(out) == std::vector<double>{2.5, 0.3, 0.1});
  CHECK(values(tangent) == std::vector<double>{30, 10, 40});
  // Reverse mode sends each weight back to the element it selected; the others get 0.
  Array w = f64({1, 2, 3}, {3});
  auto loss = [&w](const Array& a) { return np::sum(lax::top_k(a, 3).first * w); };
  std::vector<double> want{2, 0, 1, 3, 0};
  CHECK(values(grad(loss)(x)) == want);
  CHECK(values(jit(grad(loss))(x)) == want);
  // Along the last axis of a matrix, through vmap of grad.
  Array m = f64({1, 4, 2, 9, 7, 8}, {2, 3});
  auto row_loss = [](const Array& a) { return np::sum(lax::top_k(a, 2).first * f64({5, 1}, {2})); };
  CHECK(values(vmap(grad(row_loss))(m)) == std::vector<double>{0, 5, 1, 5, 0, 1});
}

TEST_CASE("top_k derivatives match finite differences", "[top_k][autodiff]") {
  std::mt19937 rng(13);
  auto random = [&](const Shape& s) {
    std::vector<double> v(static_cast<std::size_t>(shape_size(s)));
    for (double& e : v) e = uniform(rng, -3, 3);
    return f64(v, s);
  };
  check_grads([](const Arrays& a) { return lax::top_k(a[0], 3).first; }, {random({2, 3, 6})}, 2);
  check_grads([](const Arrays& a) { return np::sin(lax::top_k(a[0] * a[0], 2).first); },
              {random({4, 5})}, 2);
  check_grads([](const Arrays& a) { return lax::top_k(a[0], 0).first; }, {random({3, 4})}, 1);
}

TEST_CASE(
    "top_k prints in the jaxpr as JAX does; its grad parses back; its jvp stages no constants",
    "[top_k][jaxpr]") {
  Array x = np::zeros({4});
  CHECK(make_jaxpr([](const Array& a) {
          auto [v, i] = lax::top_k(a, 3);
          return std::pair{v, i};
        })(x)
            .str() == "{ lambda ; a:f32[4]. let b:f32[3] c:i32[3] = top_k[k=3] a in (b, c) }");
  std::string text = make_jaxpr(grad(
      [](const Array& a) { return np::sum(lax::top_k(a, 2).first); }))(np::zeros({2, 5}))
                         .str();
  INFO(text);
  // Only the gradient is kept: the jvp's gather, transposed to a scatter-add.
  CHECK_THAT(text, Catch::Contains("scatter-add["));
  Jaxpr parsed = read_jaxpr(text);
  CHECK(to_string(parsed) == text);
  typecheck(parsed);
  // The jvp stages no constants: the tangent is gathered at the primal's indices.
  auto tangent = [](const Array& a, const Array& t) {
    return jvp([](const Array& v) { return lax::top_k(v, 2).first; }, std::tuple{a}, std::tuple{t})
        .second;
  };
  std::string jvp_text = make_jaxpr(tangent)(np::zeros({3, 5}), np::zeros({3, 5})).str();
  INFO(jvp_text);
  CHECK(jvp_text.rfind("{ lambda ; ", 0) == 0);
  CHECK_THAT(jvp_text, Catch::Contains("= top_k[k=2] a"));
  CHECK_THAT(jvp_text, Catch::Contains("gather["));
  Jaxpr jvp_parsed = read_jaxpr(jvp_text);
  CHECK(to_string(jvp_parsed) == jvp_text);
  typecheck(jvp_parsed);
}

TEST_CASE("top_k lowers to one HLO sort by reversed keys and the index, then slices",
          "[top_k][jit]") {
  auto f = jit([](const Array& x) { return lax::top_k(x, 2).first; });
  std::string hlo = f.lower(np::zeros({3, 5})).hlo_text();
  INFO(hlo);
  CHECK_THAT(hlo, Catch::Contains("(pred[3,5]{1,0}, f32[3,5]{1,0}, s32[3,5]{1,0}, "
                                  "f32[3,5]{1,0}) sort("));
  CHECK_THAT(hlo, Catch::Contains("dimensions={1}, is_stable=true, num_keys=3"));
  CHECK_THAT(hlo, Catch::Contains("slice={[0:3], [0:2]}"));
  auto g = jit([](const Array& x) { return lax::top_k(x, 1).second; });
  CHECK_THAT(g.lower(np::zeros({4}, int32)).hlo_text(), Catch::Contains("num_keys=2"));
}

// ---- bad input ---------------------------------------------------------------------------------

TEST_CASE("top_k with a negative k is a ValueError", "[top_k][errors]") {
  CHECK_THROWS_MATCHES(lax::top_k(np::zeros({3}), -1), ValueError,
                       Catch::Message("k argument to top_k must be nonnegative, got -1"));
  const Primitive& p = *find_primitive("top_k");
  ShapedArray x{{3}, float32, false};
  CHECK_THROWS_MATCHES(p.abstract_eval({&x, 1}, {{"k", Param::integer(-2)}}), ValueError,
                       Catch::Message("k argument to top_k must be nonnegative, got -2"));
}

TEST_CASE("top_k of a 0-d operand is a TypeError", "[top_k][errors]") {
  CHECK_THROWS_MATCHES(lax::top_k(np::array(1.0f), 1), TypeError,
                       Catch::Message("top_k operand must have >= 1 dimension, got ()"));
}

TEST_CASE("top_k with k above the last dimension is a ValueError", "[top_k][errors]") {
  CHECK_THROWS_MATCHES(
      lax::top_k(np::zeros({2, 3}), 4), ValueError,
      Catch::Message("k argument to top_k must be no larger than minor dimension; 4 vs [2, 3]"));
  CHECK_THROWS_MATCHES(
      jit([](const Array& x) { return lax::top_k(x, 1).first; })(np::zeros({0})), ValueError,
      Catch::Message("k argument to top_k must be no larger than minor dimension; 1 vs [0]"));
}

TEST_CASE("top_k of a last dimension past int32 indices is a ValueError", "[top_k][errors]") {
  const Primitive& p = *find_primitive("top_k");
  ShapedArray x{{2147483649}, bool_, false};
  CHECK_THROWS_MATCHES(
      p.abstract_eval({&x, 1}, {{"k", Param::integer(1)}}), ValueError,
      Catch::Message(
          "top_k returns int32 indices, which will overflow for array dimensions "
          "larger than the maximum int32 (2147483647). Got operand.shape=(2147483649,)"));
}

}  // namespace jx::testing
