// grad and value_and_grad with JAX's argnums (an int, negative from the end, or a list giving a
// std::vector of gradients), has_aux and allow_int, given at run time beside the compile-time
// grad<0, 2>(f): values against closed forms, pytree and jx::Static arguments, jit and grad of
// grad, and JAX's errors for bad argnums and integer inputs.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "jx/jx.hpp"
#include "support/error_of.hpp"
#include "support/grad_values.hpp"
#include "support/test_pytrees.hpp"

namespace jx {
namespace {

using jx::testing::Dense;
using jx::testing::error_of;
using jx::testing::grad_values::f64;
using jx::testing::grad_values::require_close;

// f = sum(x y^2 z): df/dx = y^2 z, df/dy = 2 x y z, df/dz = x y^2.
Array f3(const Array& x, const Array& y, const Array& z) { return np::sum(x * y * y * z); }

const std::vector<double> kX{1, 2}, kY{3, -0.5}, kZ{0.5, 4};
std::vector<double> dfdx() { return {kY[0] * kY[0] * kZ[0], kY[1] * kY[1] * kZ[1]}; }
std::vector<double> dfdy() { return {2 * kX[0] * kY[0] * kZ[0], 2 * kX[1] * kY[1] * kZ[1]}; }
std::vector<double> dfdz() { return {kX[0] * kY[0] * kY[0], kX[1] * kY[1] * kY[1]}; }

Array X() { return f64(kX, {2}); }
Array Y() { return f64(kY, {2}); }
Array Z() { return f64(kZ, {2}); }

}  // namespace

TEST_CASE("grad(f, argnum): the gradient of one argument, negative counting from the end",
          "[autodiff_api][argnums]") {
  Array g = jx::grad(f3, 1)(X(), Y(), Z());
  require_close(g, dfdy());
  require_close(jx::grad(f3, -1)(X(), Y(), Z()), dfdz());
  require_close(jx::grad(f3, -3)(X(), Y(), Z()), dfdx());
  require_close(jx::grad(f3, 0)(X(), Y(), Z()), jx::grad(f3)(X(), Y(), Z()).to_vector<double>());
  auto [value, gz] = jx::value_and_grad(f3, 2)(X(), Y(), Z());
  CHECK(value.item<double>() == Approx(1 * 9 * 0.5 + 2 * 0.25 * 4));
  require_close(gz, dfdz());
  // The same through jit, and as the compile-time form gives it.
  require_close(jit(jx::grad(f3, 1))(X(), Y(), Z()), dfdy());
  require_close(jx::grad<1>(f3)(X(), Y(), Z()), dfdy());
}

TEST_CASE("grad(f, {argnums...}): a std::vector of gradients, even for one argnum",
          "[autodiff_api][argnums]") {
  std::vector<Array> g = jx::grad(f3, {2, 0})(X(), Y(), Z());
  REQUIRE(g.size() == 2);
  require_close(g[0], dfdz());
  require_close(g[1], dfdx());
  std::vector<Array> one = jx::grad(f3, {1})(X(), Y(), Z());
  REQUIRE(one.size() == 1);
  require_close(one[0], dfdy());
  std::vector<int> argnums{0, -2};
  std::vector<Array> from_vector = jx::grad(f3, argnums)(X(), Y(), Z());
  require_close(from_vector[1], dfdy());
  auto [value, grads] = jx::value_and_grad(f3, {0, 1, 2})(X(), Y(), Z());
  CHECK(value.item<double>() == Approx(4.5 + 2));
  REQUIRE(grads.size() == 3);
  require_close(grads[2], dfdz());
  std::vector<Array> jitted = jit(jx::grad(f3, {1, 2}))(X(), Y(), Z());
  require_close(jitted[0], dfdy());
  require_close(jitted[1], dfdz());
  // An argnum named twice gets the whole gradient each time.
  std::vector<Array> twice = jx::grad(f3, {1, 1})(X(), Y(), Z());
  require_close(twice[0], dfdy());
  require_close(twice[1], dfdy());
}

TEST_CASE("runtime argnums with has_aux, and grad of grad", "[autodiff_api][argnums]") {
  auto f = [](const Array& x, const Array& y) {
    return std::pair{np::sum(x * y * y), std::map<std::string, Array>{{"y", 2.0 * y}}};
  };
  auto [g, aux] = jx::grad(f, 1, jx::has_aux)(X(), Y());
  require_close(g, {2 * kX[0] * kY[0], 2 * kX[1] * kY[1]});
  require_close(aux.at("y"), {6, -1});
  auto [value_aux, grads] = jx::value_and_grad(f, {0, 1}, jx::has_aux)(X(), Y());
  CHECK(value_aux.first.item<double>() == Approx(9 + 0.5));
  require_close(value_aux.second.at("y"), {6, -1});
  require_close(grads[0], {kY[0] * kY[0], kY[1] * kY[1]});
  // d²/dy² of x y³ is 6 x y, in the argnum given at run time both times.
  auto h = [](const Array& x, const Array& y) { return x * y * y * y; };
  CHECK(jx::grad(jx::grad(h, 1), 1)(f64(2.0), f64(3.0)).item<double>() == Approx(36));
  CHECK(jx::grad(jx::grad(h, -1), 0)(f64(2.0), f64(3.0)).item<double>() == Approx(27));
}

TEST_CASE("runtime argnums over pytree arguments of one type; jx::Static ones aside",
          "[autodiff_api][argnums]") {
  auto loss = [](const Dense& a, const Dense& b) {
    return np::sum(a.w * b.w) + np::sum(a.b * a.b * b.b);
  };
  Dense a{f64({1, 2}, {2}), f64({3}, {1})}, b{f64({5, 7}, {2}), f64({-1}, {1})};
  Dense gb = jx::grad(loss, 1)(a, b);
  require_close(gb.w, {1, 2});
  require_close(gb.b, std::vector<double>{9});
  std::vector<Dense> both = jx::grad(loss, {0, 1})(a, b);
  require_close(both[0].w, {5, 7});
  require_close(both[0].b, std::vector<double>{-6});
  // A jx::Static argument passes through and is not a candidate type.
  auto scaled = [](const Array& x, const Static<int>& k) { return np::sum(x * x) * k.value; };
  require_close(jx::grad(scaled, 0)(X(), Static{3}), {6, 12});
}

TEST_CASE("allow_int: integer arguments get zero gradients of their own dtype",
          "[autodiff_api][argnums]") {
  auto f = [](const Array& x, const Array& n) { return np::sum(x * n.astype(float64)); };
  Array n = np::array(std::vector<int>{3, 4});
  auto [gx, gn] = jx::grad<0, 1>(f, jx::allow_int)(X(), n);
  require_close(gx, {3, 4});
  CHECK(gn.aval() == ShapedArray{{2}, int32, false});
  CHECK(gn.to_vector<int>() == std::vector<int>{0, 0});
  std::vector<Array> g = jx::grad(f, {1, 0}, jx::allow_int)(X(), n);
  CHECK(g[0].dtype() == int32);
  require_close(g[1], {3, 4});
  auto with_aux = [](const Array& x, const Array& k) { return std::pair{np::sum(x * x), k}; };
  auto [value_aux, gk] =
      jx::value_and_grad(with_aux, 1, jx::has_aux | jx::allow_int)(X(), np::array(true));
  CHECK(value_aux.first.item<double>() == Approx(5));
  CHECK(gk.aval() == ShapedArray{{}, bool_, false});
  CHECK(jit(jx::grad(f, 1, jx::allow_int))(X(), n).to_vector<int>() == std::vector<int>{0, 0});
}

// ---- bad input ---------------------------------------------------------------------------------

TEST_CASE("an argnum past the arguments is a TypeError in JAX's words", "[autodiff_api][argnums]") {
  auto f = [](const Array& x, const Array& y) { return np::sum(x * y); };
  CHECK_THROWS_MATCHES(
      jx::grad(f, 3)(X(), Y()), TypeError,
      Catch::Message("differentiating with respect to argnums=3 requires at least 4 positional "
                     "arguments to be passed by the caller, but got only 2 positional "
                     "arguments."));
  CHECK_THROWS_MATCHES(
      jx::grad(f, {3})(X(), Y()), TypeError,
      Catch::Message("differentiating with respect to argnums=(3,) requires at least 4 "
                     "positional arguments to be passed by the caller, but got only 2 "
                     "positional arguments."));
  CHECK_THROWS_MATCHES(
      jx::value_and_grad(f, {0, 2})(X(), Y()), TypeError,
      Catch::Message("differentiating with respect to argnums=(0, 2) requires at least 3 "
                     "positional arguments to be passed by the caller, but got only 2 "
                     "positional arguments."));
}

TEST_CASE("a runtime argnum naming a jx::Static argument is a TypeError",
          "[autodiff_api][argnums]") {
  auto scaled = [](const Array& x, const Static<int>& k) { return np::sum(x * x) * k.value; };
  CHECK_THROWS_MATCHES(jx::grad(scaled, 1)(X(), Static{3}), TypeError,
                       Catch::Message("grad cannot differentiate with respect to a jx::Static "
                                      "argument"));
}

TEST_CASE("an argnum below -len(args) is a ValueError in JAX's words", "[autodiff_api][argnums]") {
  auto f = [](const Array& x, const Array& y) { return np::sum(x * y); };
  CHECK_THROWS_MATCHES(
      jx::grad(f, -3)(X(), Y()), ValueError,
      Catch::Message("Positional argument indices, e.g. for `static_argnums`, must have value "
                     "greater than or equal to -len(args) and less than len(args), but got "
                     "value -3 for len(args) == 2."));
}

TEST_CASE("an integer argument to differentiate is a TypeError in JAX's words",
          "[autodiff_api][argnums]") {
  auto f = [](const Array& x, const Array& n) { return np::sum(x * n.astype(float64)); };
  Array n = np::array(std::vector<int>{3, 4});
  const char* message =
      "grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
      "np.inexact), but got int32. If you want to use Boolean- or integer-valued inputs, use "
      "vjp or set allow_int to True.";
  CHECK_THROWS_MATCHES(jx::grad(f, 1)(X(), n), TypeError, Catch::Message(message));
  CHECK_THROWS_MATCHES(jx::grad(f, {0, 1})(X(), n), TypeError, Catch::Message(message));
  CHECK_THROWS_MATCHES(jx::grad<1>(f)(X(), n), TypeError, Catch::Message(message));
  CHECK(error_of<TypeError>([&] {
          jx::value_and_grad(f, -1)(X(), n);
        }).rfind("value_and_grad requires real- or complex-valued inputs", 0) == 0);
}

}  // namespace jx
