// custom_jvp and custom_vjp: the user's rule, not the function's own derivative, is what every
// transform uses (grad, jvp, vjp, the Jacobians, jit of them, grad of grad), checked against
// closed forms that only the rule gives; pytree residuals; closures over concrete arrays.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "jx/jx.hpp"
#include "support/error_of.hpp"
#include "support/grad_values.hpp"

namespace jx_custom_test {

struct Residuals {
  jx::Array cos_x;
  std::vector<jx::Array> ys;
};
JX_PYTREE(Residuals, cos_x, ys)

}  // namespace jx_custom_test

namespace jx {
namespace {

using jx_custom_test::Residuals;
using testing::grad_values::f64;

double logistic(double x) { return 1 / (1 + std::exp(-x)); }

void require_close(const Array& got, const std::vector<double>& want, double tol = 1e-9) {
  std::vector<double> g = got.to_vector<double>();
  REQUIRE(g.size() == want.size());
  for (std::size_t i = 0; i < g.size(); ++i)
    CHECK(g[i] == Approx(want[i]).epsilon(tol).margin(tol));
}

Array naive_log1pexp(const Array& x) { return np::log(1.0 + np::exp(x)); }

// log(1 + e^x) with the stable derivative t * logistic(x): e^x / (1 + e^x) is inf / inf = NaN
// once e^x overflows.
auto log1pexp = custom_jvp(
    naive_log1pexp, [](const std::tuple<Array>& primals, const std::tuple<Array>& tangents) {
      const Array& x = std::get<0>(primals);
      return std::pair{naive_log1pexp(x), std::get<0>(tangents) * lax::logistic(x)};
    });

// ---- custom_jvp --------------------------------------------------------------------------------

TEST_CASE("custom_jvp: log1pexp has a finite gradient at 1000 where the naive one is NaN",
          "[autodiff_api]") {
  CHECK(std::isnan(jx::grad(naive_log1pexp)(f64(1000.0)).item<double>()));
  CHECK(jx::grad(log1pexp)(f64(1000.0)).item<double>() == 1.0);
  for (double x : {-20.0, -1.0, 0.0, 2.5})
    CHECK(jx::grad(log1pexp)(f64(x)).item<double>() == Approx(logistic(x)).epsilon(1e-14));
  // The primal is the function's own: log(1 + e^x).
  CHECK(log1pexp(f64(0.5)).item<double>() == Approx(std::log1p(std::exp(0.5))).epsilon(1e-14));
  // The same in float32, where e^x overflows sooner (at 89): a weak float32 argument.
  CHECK(std::isnan(jx::grad(naive_log1pexp)(Array(100.0)).item<double>()));
  CHECK(jx::grad(log1pexp)(Array(100.0)).item<double>() == 1.0);
  CHECK(jx::grad(log1pexp)(Array(100.0)).dtype() == float32);
}

TEST_CASE("custom_jvp: the rule is used under jvp, vjp, jit(grad) and the Jacobians",
          "[autodiff_api]") {
  Array x = np::array({1000.0, 0.0, -2.0});
  std::vector<double> s = {1.0, 0.5, logistic(-2.0)};
  auto [y, t] = jx::jvp(log1pexp, std::tuple{x}, std::tuple{np::array({2.0, 2.0, -1.0})});
  require_close(t, {2 * s[0], 2 * s[1], -s[2]});
  auto [out, pullback] = jx::vjp(log1pexp, x);
  require_close(std::get<0>(pullback(np::array({1.0, 3.0, 1.0}))), {s[0], 3 * s[1], s[2]});
  auto sum_f = [](const Array& v) { return np::sum(log1pexp(v)); };
  require_close(jx::jit(jx::grad(sum_f))(x), s);
  require_close(jx::grad(jx::jit(sum_f))(x), s);
  require_close(jx::jacfwd(log1pexp)(x), {s[0], 0, 0, 0, s[1], 0, 0, 0, s[2]});
  require_close(jx::jacrev(log1pexp)(x), {s[0], 0, 0, 0, s[1], 0, 0, 0, s[2]});
}

TEST_CASE("custom_jvp: grad of grad differentiates the rule: logistic'(x) = s (1 - s)",
          "[autodiff_api]") {
  auto d2 = jx::grad(jx::grad(log1pexp));
  for (double x : {-3.0, 0.0, 0.5, 4.0}) {
    double s = logistic(x);
    CHECK(d2(f64(x)).item<double>() == Approx(s * (1 - s)).epsilon(1e-12));
    CHECK(jx::jit(d2)(f64(x)).item<double>() == Approx(s * (1 - s)).epsilon(1e-12));
  }
  CHECK(d2(f64(1000.0)).item<double>() == 0.0);
}

TEST_CASE("custom_jvp: a rule that is not the true derivative is still the one used",
          "[autodiff_api]") {
  // The rule claims d sin = 3 cos: every transform must report 3 cos, never cos.
  auto f = custom_jvp([](const Array& x) { return np::sin(x); },
                      [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                        const Array& x = std::get<0>(p);
                        return std::pair{np::sin(x), std::get<0>(t) * (3.0 * np::cos(x))};
                      });
  double x = 0.7, want = 3 * std::cos(x);
  CHECK(jx::grad(f)(Array(x)).item<double>() == Approx(want));
  CHECK(jx::jit(jx::grad(f))(Array(x)).item<double>() == Approx(want));
  CHECK(jx::jvp(f, std::tuple{Array(x)}, std::tuple{Array(1.0)}).second.item<double>() ==
        Approx(want));
  // Second order differentiates the rule's tangent: d/dx 3 cos x = -3 sin x.
  CHECK(jx::grad(jx::grad(f))(Array(x)).item<double>() == Approx(-3 * std::sin(x)));
  // Composed with other ops: d/dx f(x^2) = 3 cos(x^2) 2x.
  CHECK(jx::grad([&](const Array& v) { return f(v * v); })(Array(x)).item<double>() ==
        Approx(3 * std::cos(x * x) * 2 * x));
}

TEST_CASE("custom_jvp: make_jaxpr shows custom_jvp_call; under grad the rule's equations remain",
          "[autodiff_api]") {
  // The argument 1.0 is a weak float32, as in JAX's make_jaxpr(f)(1.0).
  CHECK(jx::make_jaxpr(log1pexp)(Array(1.0)).str() == R"({ lambda ; a:f32[]. let
    b:f32[] = custom_jvp_call[
      call_jaxpr={ lambda ; c:f32[]. let
          d:f32[] = exp c
          e:f32[] = add 1.0:f32[] d
          f:f32[] = log e
        in (f,) }
      jvp_jaxpr={ lambda ; g:f32[] h:f32[]. let
          i:f32[] = exp g
          j:f32[] = add 1.0:f32[] i
          k:f32[] = log j
          l:f32[] = logistic g
          m:f32[] = mul h l
        in (k, m) }
      num_consts=0
      num_rule_consts=0
    ] a
  in (b,) })");
  // Under grad the rule's equations remain, its primal value unread (printed _, as JAX keeps it).
  CHECK(jx::make_jaxpr(jx::grad(log1pexp))(Array(1.0)).str() == R"({ lambda ; a:f32[]. let
    b:f32[] = exp a
    c:f32[] = add 1.0:f32[] b
    _:f32[] = log c
    d:f32[] = logistic a
    e:f32[] = mul 1.0:f32[] d
  in (e,) })");
}

TEST_CASE("custom_jvp: several arguments, and a rule closing over a concrete array",
          "[autodiff_api]") {
  // f(x, y) = x y with the product rule written out.
  auto mul = custom_jvp([](const Array& x, const Array& y) { return x * y; },
                        [](const std::tuple<Array, Array>& p, const std::tuple<Array, Array>& t) {
                          auto [x, y] = p;
                          auto [tx, ty] = t;
                          return std::pair{x * y, tx * y + x * ty};
                        });
  auto [gx, gy] = jx::grad<0, 1>([&](const Array& x, const Array& y) {
    return np::sum(mul(x, y));
  })(np::array({1.0, 2.0}), np::array({3.0, -4.0}));
  require_close(gx, {3, -4});
  require_close(gy, {1, 2});

  Array c = np::array({2.0, -1.0, 0.5});
  auto scale = custom_jvp([c](const Array& x) { return x * c; },
                          [c](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                            return std::pair{std::get<0>(p) * c, std::get<0>(t) * c};
                          });
  auto loss = [&](const Array& x) { return np::sum(scale(x)); };
  require_close(jx::grad(loss)(np::ones({3}, float64)), {2, -1, 0.5});
  require_close(jx::jit(jx::grad(loss))(np::ones({3}, float64)), {2, -1, 0.5});
}

TEST_CASE("custom_jvp: differentiating with respect to a closed-over tracer is an Error",
          "[autodiff_api]") {
  auto outer = [](const Array& y) {
    auto f = custom_jvp([y](const Array& x) { return x * y; },
                        [y](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                          return std::pair{std::get<0>(p) * y, std::get<0>(t) * y};
                        });
    return f(Array(2.0));
  };
  CHECK(testing::exact_error_of<Error>([&] { jx::grad(outer)(Array(3.0)); }) ==
        "Detected differentiation of a custom_jvp function with respect to a closed-over value. "
        "That isn't supported because the custom rule only specifies how to differentiate the "
        "custom_jvp function with respect to explicit input parameters. Pass the value as an "
        "argument instead.");
}

// ---- custom_vjp --------------------------------------------------------------------------------

// The identity, whose backward pass clips the cotangent to [-1, 1].
auto clip_gradient = custom_vjp([](const Array& x) { return x; },
                                [](const Array& x) {
                                  return std::pair{x, std::tuple<>{}};
                                },
                                [](const std::tuple<>&, const Array& ct) {
                                  return std::tuple{np::clip(ct, Array(-1.0), Array(1.0))};
                                });

TEST_CASE("custom_vjp: clip_gradient is the identity forward and clips the cotangent",
          "[autodiff_api]") {
  Array x = np::array({0.3, -2.0, 5.0});
  require_close(clip_gradient(x), {0.3, -2.0, 5.0});
  require_close(jx::jit(clip_gradient)(x), {0.3, -2.0, 5.0});
  // d/dx sum(k * cg(x)) = clip(k).
  Array k = np::array({0.5, 3.0, -7.0});
  auto f = [&](const Array& v) { return np::sum(k * clip_gradient(v)); };
  require_close(jx::grad(f)(x), {0.5, 1.0, -1.0});
  require_close(jx::jit(jx::grad(f))(x), {0.5, 1.0, -1.0});
  auto [out, pullback] = jx::vjp(clip_gradient, x);
  require_close(std::get<0>(pullback(np::array({-0.25, 4.0, -9.0}))), {-0.25, 1.0, -1.0});
}

TEST_CASE("custom_vjp: the clipped cotangent flows on through the chain rule", "[autodiff_api]") {
  // g = sum(5 sin(cg(3x))): dg/dx = 3 clip(5 cos(3x), -1, 1).
  auto g = [](const Array& x) { return np::sum(5.0 * np::sin(clip_gradient(3.0 * x))); };
  std::vector<double> xs = {0.1, 0.52, 1.0}, want;
  for (double v : xs) want.push_back(3 * std::clamp(5 * std::cos(3 * v), -1.0, 1.0));
  require_close(jx::grad(g)(np::array(xs)), want);
  require_close(jx::jit(jx::grad(g))(np::array(xs)), want);
  require_close(jx::grad(jx::jit(g))(np::array(xs)), want);
}

TEST_CASE("custom_vjp: residuals may be any pytree", "[autodiff_api]") {
  // f(x, y) = sin(x) y, with residuals {cos x, [y]} and sin x in a map: the true gradient.
  auto f =
      custom_vjp([](const Array& x, const Array& y) { return np::sin(x) * y; },
                 [](const Array& x, const Array& y) {
                   return std::pair{np::sin(x) * y,
                                    std::pair{Residuals{np::cos(x), {y}},
                                              std::map<std::string, Array>{{"sin", np::sin(x)}}}};
                 },
                 [](const std::pair<Residuals, std::map<std::string, Array>>& r, const Array& ct) {
                   const Residuals& res = r.first;
                   return std::tuple{ct * res.ys[0] * res.cos_x, ct * r.second.at("sin")};
                 });
  std::vector<double> xs = {0.4, -1.1}, ys = {2.0, 0.5};
  auto loss = [&](const Array& x, const Array& y) { return np::sum(f(x, y)); };
  auto [gx, gy] = jx::grad<0, 1>(loss)(np::array(xs), np::array(ys));
  require_close(gx, {ys[0] * std::cos(xs[0]), ys[1] * std::cos(xs[1])});
  require_close(gy, {std::sin(xs[0]), std::sin(xs[1])});
  auto [jgx, jgy] = jx::jit(jx::grad<0, 1>(loss))(np::array(xs), np::array(ys));
  require_close(jgx, {ys[0] * std::cos(xs[0]), ys[1] * std::cos(xs[1])});
  require_close(jgy, {std::sin(xs[0]), std::sin(xs[1])});
}

TEST_CASE("custom_vjp: a function closing over a concrete array", "[autodiff_api]") {
  Array c = np::array({2.0, -1.0, 0.5});
  // f(x) = c x; the backward pass also reads c.
  auto f = custom_vjp([c](const Array& x) { return c * x; },
                      [c](const Array& x) {
                        return std::pair{c * x, x};
                      },
                      [c](const Array&, const Array& ct) { return std::tuple{ct * c}; });
  auto loss = [&](const Array& x) { return np::sum(f(x) * f(x)); };
  // d/dx sum((c x)^2) = 2 c^2 x.
  Array x = np::array({1.0, 3.0, -2.0});
  require_close(f(x), {2, -3, -1});
  require_close(jx::grad(loss)(x), {8, 6, -1});
  require_close(jx::jit(jx::grad(loss))(x), {8, 6, -1});
}

TEST_CASE("custom_vjp: grad of grad differentiates through the backward pass", "[autodiff_api]") {
  // cube(x) = x^3 with bwd ct * 3 x^2: the second derivative is d/dx 3x^2 = 6x.
  auto cube =
      custom_vjp([](const Array& x) { return x * x * x; },
                 [](const Array& x) {
                   return std::pair{x * x * x, x};
                 },
                 [](const Array& x, const Array& ct) { return std::tuple{ct * 3.0 * x * x}; });
  CHECK(jx::grad(cube)(Array(2.0)).item<double>() == Approx(12));
  CHECK(jx::grad(jx::grad(cube))(Array(2.0)).item<double>() == Approx(12));
  CHECK(jx::grad(jx::grad(cube))(Array(-0.5)).item<double>() == Approx(-3));
}

TEST_CASE("custom_vjp: differentiating with respect to a closed-over tracer is an Error",
          "[autodiff_api]") {
  auto outer = [](const Array& y) {
    auto f = custom_vjp([y](const Array& x) { return x * y; },
                        [y](const Array& x) {
                          return std::pair{x * y, x};
                        },
                        [y](const Array&, const Array& ct) { return std::tuple{ct * y}; });
    return f(Array(2.0));
  };
  CHECK(testing::exact_error_of<Error>([&] { jx::grad(outer)(Array(3.0)); }) ==
        "Detected differentiation of a custom_vjp function with respect to a closed-over value. "
        "That isn't supported because the custom rule only specifies how to differentiate the "
        "custom_vjp function with respect to explicit input parameters. Pass the value as an "
        "argument instead.");
}

}  // namespace
}  // namespace jx
