// jacfwd, jacrev and hessian as JAX's: argnums (compile time, an int, a list), has_aux, allow_int
// (jacrev), pytrees in and out (the tree product of output and input), JAX's dtypes and errors.
// Values against closed forms and central finite differences, eager and under jit; each
// Jacobian is one batched program (vmap over the standard basis), not one per basis vector.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <tuple>
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
using jx::testing::grad_values::random_values;
using jx::testing::grad_values::require_close;

using Fn = std::function<Array(const Array&)>;

// The Jacobian of f at x (f64) by central differences, row-major: out.size() rows of x.size().
std::vector<double> finite_difference_jacobian(const Fn& f, const std::vector<double>& x,
                                               const Shape& shape) {
  const double h = 1e-5;
  std::size_t m = static_cast<std::size_t>(f(f64(x, shape)).size()), n = x.size();
  std::vector<double> jac(m * n);
  for (std::size_t j = 0; j < n; ++j) {
    std::vector<double> up = x, down = x;
    up[j] += h;
    down[j] -= h;
    std::vector<double> fu = f(f64(up, shape)).to_vector<double>();
    std::vector<double> fd = f(f64(down, shape)).to_vector<double>();
    for (std::size_t i = 0; i < m; ++i) jac[i * n + j] = (fu[i] - fd[i]) / (2 * h);
  }
  return jac;
}

// How many equations bind primitive `name` in a jaxpr's text (its sub-jaxprs included).
std::size_t count_eqns(const std::string& text, const std::string& name) {
  std::regex eqn("= " + name + "[\\[ ]");
  return static_cast<std::size_t>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), eqn), std::sregex_iterator()));
}

Shape concat(Shape a, const Shape& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("jacfwd and jacrev of elementwise, matmul and reduction functions: closed forms",
          "[jacobian]") {
  std::mt19937 rng(7);
  SECTION("elementwise: diag(x cos x + sin x)") {
    std::vector<double> xs = random_values(4, rng);
    Fn f = [](const Array& x) { return np::sin(x) * x; };
    std::vector<double> want(16, 0.0);
    for (std::size_t i = 0; i < 4; ++i) want[i * 5] = xs[i] * std::cos(xs[i]) + std::sin(xs[i]);
    for (const Array& j : {jx::jacfwd(f)(f64(xs, {4})), jx::jacrev(f)(f64(xs, {4})),
                           jit(jx::jacfwd(f))(f64(xs, {4})), jit(jx::jacrev(f))(f64(xs, {4}))}) {
      REQUIRE(j.shape() == Shape{4, 4});
      CHECK(j.dtype() == float64);
      require_close(j, want, 1e-12);
    }
  }
  SECTION("tanh(W x + b): diag(1 - y^2) W") {
    std::vector<double> w = random_values(12, rng), b = random_values(3, rng),
                        xs = random_values(4, rng);
    Array W = f64(w, {3, 4}), B = f64(b, {3});
    Fn f = [&](const Array& x) { return np::tanh(np::matmul(W, x) + B); };
    std::vector<double> want(12);
    for (std::size_t i = 0; i < 3; ++i) {
      double z = b[i];
      for (std::size_t j = 0; j < 4; ++j) z += w[i * 4 + j] * xs[j];
      double y = std::tanh(z);
      for (std::size_t j = 0; j < 4; ++j) want[i * 4 + j] = (1 - y * y) * w[i * 4 + j];
    }
    for (const Array& j : {jx::jacfwd(f)(f64(xs, {4})), jx::jacrev(f)(f64(xs, {4})),
                           jit(jx::jacfwd(f))(f64(xs, {4})), jit(jx::jacrev(f))(f64(xs, {4}))}) {
      REQUIRE(j.shape() == Shape{3, 4});
      require_close(j, want, 1e-12);
    }
  }
  SECTION("row sums of squares: out.shape + in.shape = (2, 2, 3)") {
    std::vector<double> xs = random_values(6, rng);
    Fn f = [](const Array& x) { return np::sum(x * x, 1); };
    std::vector<double> want(12, 0.0);  // J[i, k, l] = 2 x[k, l] if i == k
    for (std::size_t k = 0; k < 2; ++k)
      for (std::size_t l = 0; l < 3; ++l) want[k * 6 + k * 3 + l] = 2 * xs[k * 3 + l];
    for (const Array& j : {jx::jacfwd(f)(f64(xs, {2, 3})), jx::jacrev(f)(f64(xs, {2, 3})),
                           jit(jx::jacrev(f))(f64(xs, {2, 3}))}) {
      REQUIRE(j.shape() == Shape{2, 2, 3});
      require_close(j, want, 1e-12);
    }
  }
}

TEST_CASE("jacfwd and jacrev agree with central finite differences", "[jacobian]") {
  std::mt19937 rng(11);
  std::vector<std::pair<std::string, Fn>> fns = {
      {"softmax", [](const Array& x) { return np::exp(x) / np::sum(np::exp(x)); }},
      {"x x^T", [](const Array& x) { return np::matmul(x, np::transpose(x)); }},
      {"cumulative product", [](const Array& x) { return np::cumprod(np::reshape(x, {-1})); }},
      {"log-sum-exp of rows",
       [](const Array& x) { return np::log(np::sum(np::exp(np::sin(x) * 2.0), 1)); }},
      {"max and where", [](const Array& x) { return np::where(x > 0.0, x * x, np::max(x) * x); }},
  };
  Shape shape{2, 3};
  std::vector<double> xs = random_values(6, rng);
  for (const auto& [name, f] : fns) {
    INFO(name);
    std::vector<double> want = finite_difference_jacobian(f, xs, shape);
    Array fwd = jx::jacfwd(f)(f64(xs, shape)), rev = jx::jacrev(f)(f64(xs, shape));
    CHECK(fwd.shape() == concat(f(f64(xs, shape)).shape(), shape));
    CHECK(rev.shape() == fwd.shape());
    require_close(fwd, want, 1e-7);
    require_close(rev, want, 1e-7);
    require_close(jit(jx::jacrev(f))(f64(xs, shape)), want, 1e-7);
  }
}

TEST_CASE("pytree input and output: the tree product, leaves of shape out + in", "[jacobian]") {
  // f(p, x) = {"y": p.w * x, "s": sum(p.b) * sum(x)}; p.w, x f64[3], p.b f64[2].
  auto f = [](const Dense& p, const Array& x) {
    return std::map<std::string, Array>{{"s", np::sum(p.b) * np::sum(x)}, {"y", p.w * x}};
  };
  Dense p{f64({1, 2, 3}, {3}), f64({0.5, -1}, {2})};
  Array x = f64({4, 5, 6}, {3});
  for (const auto& jac : {jx::jacfwd(f)(p, x), jx::jacrev(f)(p, x), jit(jx::jacrev(f))(p, x)}) {
    REQUIRE(jac.size() == 2);
    const Dense& dy = jac.at("y");
    const Dense& ds = jac.at("s");
    CHECK(dy.w.shape() == Shape{3, 3});
    CHECK(dy.b.shape() == Shape{3, 2});
    CHECK(ds.w.shape() == Shape{3});
    CHECK(ds.b.shape() == Shape{2});
    require_close(dy.w, {4, 0, 0, 0, 5, 0, 0, 0, 6});
    require_close(dy.b, std::vector<double>(6, 0.0));
    require_close(ds.w, {0, 0, 0});
    require_close(ds.b, {15, 15});
  }
  // Both arguments: each output leaf holds a std::tuple of the two arguments' Jacobians.
  auto both = jx::jacfwd<0, 1>(f)(p, x);
  const auto& [dyp, dyx] = both.at("y");
  require_close(dyp.w, {4, 0, 0, 0, 5, 0, 0, 0, 6});
  require_close(dyx, {1, 0, 0, 0, 2, 0, 0, 0, 3});
  require_close(std::get<1>(jx::jacrev<0, 1>(f)(p, x).at("s")), {-0.5, -0.5, -0.5});
  // A std::pair out of a std::vector in.
  auto g = [](const std::vector<Array>& v) { return std::pair{v[0] * v[1], np::sum(v[0])}; };
  std::vector<Array> v{f64({1, 2}, {2}), f64({3, 4}, {2})};
  auto [d_prod, d_sum] = jx::jacrev(g)(v);
  REQUIRE(d_prod.size() == 2);
  require_close(d_prod[0], {3, 0, 0, 4});
  require_close(d_prod[1], {1, 0, 0, 2});
  require_close(d_sum[0], {1, 1});
  require_close(d_sum[1], {0, 0});
  require_close(jx::jacfwd(g)(v).first[1], {1, 0, 0, 2});
}

TEST_CASE("argnums as grad's: compile time, an int (negative from the end), a list",
          "[jacobian][argnums]") {
  // f(x, y) = x * y^2 (elementwise): d/dx = diag(y^2), d/dy = diag(2 x y).
  auto f = [](const Array& x, const Array& y) { return x * y * y; };
  Array x = f64({1, 2}, {2}), y = f64({3, -1}, {2});
  std::vector<double> dx{9, 0, 0, 1}, dy{6, 0, 0, -4};
  require_close(jx::jacfwd(f)(x, y), dx);
  require_close(jx::jacfwd(f, 1)(x, y), dy);
  require_close(jx::jacrev(f, -1)(x, y), dy);
  require_close(jx::jacrev<1>(f)(x, y), dy);
  auto [fx, fy] = jx::jacfwd<0, 1>(f)(x, y);
  require_close(fx, dx);
  require_close(fy, dy);
  std::vector<Array> rev = jx::jacrev(f, {1, 0})(x, y);
  REQUIRE(rev.size() == 2);
  require_close(rev[0], dy);
  require_close(rev[1], dx);
  std::vector<int> argnums{0};
  std::vector<Array> one = jx::jacfwd(f, argnums)(x, y);
  REQUIRE(one.size() == 1);
  require_close(one[0], dx);
  std::vector<Array> jitted = jit(jx::jacfwd(f, {0, 1}))(x, y);
  require_close(jitted[1], dy);
  CHECK_THROWS_MATCHES(
      jx::jacrev(f, 2)(x, y), TypeError,
      Catch::Message("differentiating with respect to argnums=2 requires at least 3 positional "
                     "arguments to be passed by the caller, but got only 2 positional "
                     "arguments."));
  auto scaled = [](const Array& a, const Static<int>& k) { return a * k.value; };
  CHECK_THROWS_MATCHES(jx::jacfwd(scaled, 1)(x, Static{3}), TypeError,
                       Catch::Message("jacfwd cannot differentiate with respect to a jx::Static "
                                      "argument"));
  require_close(jx::jacfwd(scaled, 0)(x, Static{3}), {3, 0, 0, 3});
}

TEST_CASE("has_aux: std::pair{jacobian, aux}, aux not differentiated", "[jacobian]") {
  auto f = [](const Array& x) {
    return std::pair{np::sin(x), std::map<std::string, Array>{{"norm", np::sum(x * x)}}};
  };
  Array x = f64({0.5, -1.5}, {2});
  for (const auto& [jac, aux] : {jx::jacfwd(f, jx::has_aux)(x), jx::jacrev(f, jx::has_aux)(x),
                                 jit(jx::jacrev(f, jx::has_aux))(x)}) {
    require_close(jac, {std::cos(0.5), 0, 0, std::cos(-1.5)});
    require_close(aux.at("norm"), std::vector<double>{2.5});
  }
  // With argnums at run time, and allow_int for an integer argument (jacrev only): zeros of
  // its own dtype, shaped out + in.
  auto g = [](const Array& a, const Array& n) { return std::pair{a * n.astype(float64), n * 2}; };
  Array n = np::array(std::vector<int>{3, 4});
  auto [jacs, aux] = jx::jacrev(g, {0, 1}, jx::has_aux | jx::allow_int)(x, n);
  require_close(jacs[0], {3, 0, 0, 4});
  CHECK(jacs[1].aval() == ShapedArray{{2, 2}, int32, false});
  CHECK(jacs[1].to_vector<int>() == std::vector<int>{0, 0, 0, 0});
  CHECK(aux.to_vector<int>() == std::vector<int>{6, 8});
}

TEST_CASE("hessian = jacfwd(jacrev): argnums blocks and has_aux", "[jacobian]") {
  // f(x, y) = sum(x^2 y) + sum(y^3): H_xx = diag(2y), H_xy = diag(2x), H_yy = diag(6y).
  auto f = [](const Array& x, const Array& y) { return np::sum(x * x * y) + np::sum(y * y * y); };
  Array x = f64({1, 2}, {2}), y = f64({3, -1}, {2});
  require_close(jx::hessian(f)(x, y), {6, 0, 0, -2});
  require_close(jx::hessian(f, 1)(x, y), {18, 0, 0, -6});
  require_close(jx::jacfwd(jx::jacrev(f))(x, y), {6, 0, 0, -2});
  auto blocks = jx::hessian<0, 1>(f)(x, y);
  require_close(std::get<0>(std::get<0>(blocks)), {6, 0, 0, -2});
  require_close(std::get<1>(std::get<0>(blocks)), {2, 0, 0, 4});
  require_close(std::get<0>(std::get<1>(blocks)), {2, 0, 0, 4});
  require_close(std::get<1>(std::get<1>(blocks)), {18, 0, 0, -6});
  std::vector<std::vector<Array>> listed = jx::hessian(f, {1, 0})(x, y);
  require_close(listed[0][0], {18, 0, 0, -6});
  require_close(listed[0][1], {2, 0, 0, 4});
  require_close(jit(jx::hessian(f))(x, y), {6, 0, 0, -2});
  auto with_aux = [&](const Array& a, const Array& b) { return std::pair{f(a, b), a * 2.0}; };
  auto [h, aux] = jx::hessian(with_aux, jx::has_aux)(x, y);
  REQUIRE(h.shape() == Shape{2, 2});
  require_close(h, {6, 0, 0, -2});
  require_close(aux, {2, 4});
}

TEST_CASE("Jacobians compose with jit and vmap, and are one batched program", "[jacobian]") {
  // tanh(W x + b) with 5 inputs and outputs, W an argument (so that nothing is folded at trace
  // time): one dot of W with the whole basis, not five.
  std::mt19937 rng(3);
  Array W = f64(random_values(25, rng), {5, 5}), b = f64(random_values(5, rng), {5});
  auto f = [&](const Array& x, const Array& w) { return np::tanh(np::matmul(w, x) + b); };
  Array x = f64(random_values(5, rng), {5});
  for (const std::string& text :
       {jx::make_jaxpr(jx::jacfwd(f))(x, W).str(), jx::make_jaxpr(jx::jacrev(f))(x, W).str()}) {
    INFO(text);
    CHECK(count_eqns(text, "dot_general") == 2);  // f's own, and the batched one
    CHECK(count_eqns(text, "tanh") == 1);
  }
  auto jf = jit(jx::jacfwd(f));
  auto jr = jit(jx::jacrev(f));
  Array want = jx::jacfwd(f)(x, W);
  require_close(jf(x, W), want.to_vector<double>(), 1e-12);
  require_close(jr(x, W), want.to_vector<double>(), 1e-12);
  CHECK(jf.cache_info().compiles == 1);
  // Per-example Jacobians: vmap of jacrev over a batch of 3 inputs.
  Array xs = f64(random_values(15, rng), {3, 5});
  Array per_example = jx::vmap(jx::jacrev(f), {0, jx::none})(xs, W);
  REQUIRE(per_example.shape() == Shape{3, 5, 5});
  for (std::int64_t i = 0; i < 3; ++i)
    require_close(per_example[i], jx::jacfwd(f)(xs[i], W).to_vector<double>(), 1e-12);
}

TEST_CASE("Jacobian dtypes as JAX's: jacfwd the output's, jacrev the input's; empty inputs",
          "[jacobian]") {
  auto widen = [](const Array& x) { return x.astype(float64) * 2.0; };
  Array x = np::array({1.f, 2.f});
  CHECK(jx::jacfwd(widen)(x).aval() == ShapedArray{{2, 2}, float64, false});
  CHECK(jx::jacrev(widen)(x).aval() == ShapedArray{{2, 2}, float32, false});
  require_close(jx::jacrev(widen)(x), {2, 0, 0, 2});
  // A weak input (a C++ double) gives jacrev a weak Jacobian, as a Python float does in JAX.
  CHECK(jx::jacrev([](const Array& s) { return s * 3.0; })(Array(1.0)).aval() ==
        ShapedArray{{}, float32, true});
  // An integer output: jacfwd gives zeros of its dtype; jacrev refuses it.
  auto rounds = [](const Array& a) { return a.astype(int32); };
  CHECK(jx::jacfwd(rounds)(x).aval() == ShapedArray{{2, 2}, int32, false});
  CHECK(error_of<TypeError>([&] { jx::jacrev(rounds)(x); }) ==
        "jacrev requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
        "but got int32. For differentiation of functions with integer outputs, use jx::vjp "
        "directly.");
  // Size-0 inputs and outputs.
  auto sq = [](const Array& a) { return a * a; };
  CHECK(jx::jacfwd(sq)(np::zeros({0})).shape() == Shape{0, 0});
  CHECK(jx::jacrev(sq)(np::zeros({0, 2})).shape() == Shape{0, 2, 0, 2});
  auto total = [](const Array& a) { return np::sum(a); };
  CHECK(jx::jacrev(total)(np::zeros({0})).shape() == Shape{0});
}

}  // namespace jx
