// A jitted function called under a trace is one jit equation holding its jaxpr (JAX's jit
// primitive): printed as JAX 0.11 prints it, cached by signature, and transformed by every
// transform as a jit of the transformed jaxpr.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include "jx/jx.hpp"
#include "library/numpy_testing.hpp"

namespace jx {
namespace {

using np_testing::check_values;

Array sin_twice(const Array& x) { return np::sin(x) * 2.0f; }

TEST_CASE("nested jit: one jit equation named after the function, its binders named as the call",
          "[jit][nested]") {
  // g = jax.jit(lambda x: jnp.sin(x) * 2.0); make_jaxpr(lambda x: g(x) + 1.0)(jnp.zeros(3))
  auto g = jit(sin_twice, {.name = "g"});
  auto f = [&](const Array& x) { return g(x) + 1.0f; };
  CHECK(make_jaxpr(f)(np::zeros({3})).str() == R"({ lambda ; a:f32[3]. let
    b:f32[3] = jit[
      name=g
      jaxpr={ lambda ; a:f32[3]. let
          c:f32[3] = sin a
          b:f32[3] = mul c 2.0:f32[]
        in (b,) }
    ] a
    d:f32[3] = add b 1.0:f32[]
  in (d,) })");
}

TEST_CASE("nested jit: two calls with one signature share one jaxpr, printed once up front",
          "[jit][nested]") {
  auto g = jit(std::function(sin_twice), {.name = "g"});  // a cache of its own: counted traces
  auto f = [&](const Array& x) {
    Array a = g(x);
    Array b = g(a);
    return a + b;
  };
  CHECK(make_jaxpr(f)(np::zeros({1})).str() ==
        R"(let g = { lambda ; a:f32[1]. let
    b:f32[1] = sin a
    c:f32[1] = mul b 2.0:f32[]
  in (c,) } in
{ lambda ; d:f32[1]. let
    e:f32[1] = jit[name=g jaxpr=g] d
    f:f32[1] = jit[name=g jaxpr=g] e
    h:f32[1] = add e f
  in (h,) })");
  // (the name g is taken by the shared jaxpr, so the outer names skip it, as in JAX)
  CHECK(g.cache_info().traces == 1);
}

TEST_CASE("nested jit: values, grad, vmap and an outer jit agree with the closed form",
          "[jit][nested]") {
  auto g = jit(sin_twice, {.name = "g"});
  auto loss = [&](const Array& x) { return np::sum(g(x) * x); };
  std::vector<float> xs{0.5f, -1.0f, 2.0f};
  Array x = np::array(xs);
  // d/dx sum(2 sin(x) x) = 2 cos(x) x + 2 sin(x)
  std::vector<double> want;
  for (float v : xs) want.push_back(2 * std::cos(v) * v + 2 * std::sin(v));
  check_values(jx::grad(loss)(x), want);
  check_values(jit(jx::grad(loss))(x), want);
  std::string grad_text = make_jaxpr(jx::grad(loss))(x).str();
  CHECK(grad_text.find("jit[") != std::string::npos);
  // vmap of the jitted function over rows.
  Array rows = np::array(std::vector<float>{0.5f, -1.0f, 2.0f, 1.0f}, {2, 2});
  std::vector<double> sines;
  for (float v : {0.5f, -1.0f, 2.0f, 1.0f}) sines.push_back(2 * std::sin(v));
  check_values(vmap([&](const Array& r) { return g(r); })(rows), sines);
  // jvp through the equation.
  auto [y, t] =
      jx::jvp([&](const Array& v) { return g(v); }, std::tuple{x}, std::tuple{np::ones({3})});
  std::vector<double> tangent;
  for (float v : xs) tangent.push_back(2 * std::cos(v));
  check_values(t, tangent);
}

TEST_CASE("nested jit: a closed-over tracer is an operand of the equation", "[jit][nested]") {
  auto outer = [](const Array& x, const Array& y) {
    auto scaled = jit([&y](const Array& v) { return v * y; }, {.name = "scaled"});
    return scaled(x);
  };
  std::string text = make_jaxpr(outer)(np::zeros({2}), np::zeros({2})).str();
  CHECK(text == R"({ lambda ; a:f32[2] b:f32[2]. let
    c:f32[2] = jit[
      name=scaled
      jaxpr={ lambda ; b:f32[2] a:f32[2]. let c:f32[2] = mul a b in (c,) }
    ] b a
  in (c,) })");
  check_values(jit(outer)(np::array({1.f, 2.f}), np::array({3.f, 4.f})), {3, 8});
}

}  // namespace
}  // namespace jx
