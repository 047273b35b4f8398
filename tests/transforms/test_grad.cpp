// grad, value_and_grad, vjp, jvp and the Jacobians against closed forms.
#include <catch2/catch.hpp>
#include <cmath>

#include <jx/jx.hpp>

#include "core/primitive.hpp"
#include "support/error_of.hpp"

namespace np = jx::np;
using Catch::Matchers::Contains;
using jx::Array;

namespace {

std::vector<double> values(const Array& x) { return x.to_vector<double>(); }

void require_close(const Array& got, const std::vector<double>& want, double tol = 1e-6) {
  std::vector<double> g = values(got);
  REQUIRE(g.size() == want.size());
  for (std::size_t i = 0; i < g.size(); ++i) REQUIRE(g[i] == Approx(want[i]).margin(tol));
}

}  // namespace

TEST_CASE("grad of sin is cos", "[autodiff]") {
  auto dsin = jx::grad([](const Array& x) { return np::sin(x); });
  for (double x : {-2.0, 0.0, 0.5, 3.0})
    REQUIRE(dsin(Array(x)).item<double>() == Approx(std::cos(x)));
}

TEST_CASE("grad of sum of squares is 2x, the unused value staged as JAX stages it", "[autodiff]") {
  auto f = [](const Array& x) { return np::sum(x * x); };
  Array x = np::array({1.f, -2.f, 3.f});
  require_close(jx::grad(f)(x), {2, -4, 6});
  auto [v, g] = jx::value_and_grad(f)(x);
  REQUIRE(v.item<float>() == 14.f);
  require_close(g, {2, -4, 6});
  std::string text = jx::make_jaxpr(jx::grad(f))(x).str();
  INFO(text);
  // The value is staged but unread, as in JAX: printed `_`.
  REQUIRE(text.find("_:f32[] = reduce_sum") != std::string::npos);
}

TEST_CASE("grad of grad of x^3 is 6x", "[autodiff]") {
  auto f = [](const Array& x) { return x * x * x; };
  auto d2 = jx::grad(jx::grad(f));
  REQUIRE(d2(Array(2.0)).item<double>() == Approx(12.0));
  auto d3 = jx::grad(jx::grad(jx::grad(f)));
  REQUIRE(d3(Array(2.0)).item<double>() == Approx(6.0));
}

TEST_CASE("jvp and vjp of tanh", "[autodiff]") {
  auto f = [](const Array& x) { return np::tanh(x); };
  Array x = np::array({0.5, -1.0});
  auto [y, t] = jx::jvp(f, std::tuple{x}, std::tuple{np::array({1.0, 2.0})});
  require_close(y, {std::tanh(0.5), std::tanh(-1.0)});
  double d0 = 1 - std::pow(std::tanh(0.5), 2), d1 = 1 - std::pow(std::tanh(-1.0), 2);
  require_close(t, {d0, 2 * d1});
  auto [out, pullback] = jx::vjp(f, x);
  auto [ct] = pullback(np::array({3.0, 1.0}));
  require_close(ct, {3 * d0, d1});
}

TEST_CASE("hessian of sum(x^3) is diag(6x)", "[autodiff]") {
  auto f = [](const Array& x) { return np::sum(x * x * x); };
  Array x = np::array({1.0, 2.0, -1.0});
  Array h = jx::hessian(f)(x);
  REQUIRE(h.shape() == jx::Shape{3, 3});
  require_close(h, {6, 0, 0, 0, 12, 0, 0, 0, -6});
}

// So "Differentiation rule for '...' not implemented" cannot reach a user.
TEST_CASE("every primitive has a jvp rule", "[autodiff]") {
  for (const jx::Primitive* p : jx::all_primitives()) {
    INFO(p->name);
    CHECK(static_cast<bool>(p->jvp));
  }
}

TEST_CASE("reverse mode through a custom_jvp rule that is not linear in its tangent",
          "[autodiff]") {
  // sin(t) is not linear: forward mode runs the rule, reverse mode cannot transpose it.
  auto f = jx::custom_jvp([](const Array& x) { return x; },
                          [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                            return std::pair{std::get<0>(p), np::sin(std::get<0>(t))};
                          });
  auto [y, dy] = jx::jvp(f, std::tuple{Array(0.5)}, std::tuple{Array(0.25)});
  CHECK(dy.item<double>() == Approx(std::sin(0.25)));
  CHECK(jx::testing::error_of<jx::Error>([&] { jx::grad(f)(Array(0.5)); }) ==
        "Transpose rule (for reverse-mode differentiation) for 'sin' not implemented");
}

TEST_CASE("grad of an integer output is a TypeError", "[autodiff]") {
  auto f = [](const Array& x) { return np::sum(x > 0.0f); };  // int32: a count
  CHECK(jx::testing::error_of<jx::TypeError>([&] { jx::grad(f)(np::ones({3})); }) ==
        "grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but "
        "got int32. For differentiation of functions with integer outputs, use jx::vjp directly.");
}
