// The public autodiff API: transforms composed with each other and with jit, pytrees in and out,
// gradients against closed forms, hand-written backprop and central finite differences, and the
// exact type and message of every bad-input error.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "jaxpr/jaxpr.hpp"
#include "jx/jx.hpp"
#include "support/error_of.hpp"
#include "support/grad_values.hpp"
#include "support/test_pytrees.hpp"

namespace jx {
namespace {

using jx::testing::Dense;
using jx::testing::error_of;
using jx::testing::Mlp;
using jx::testing::grad_values::f64;

std::vector<double> values(const Array& x) { return x.to_vector<double>(); }

void require_close(const Array& got, const std::vector<double>& want, double tol = 1e-9) {
  std::vector<double> g = values(got);
  REQUIRE(g.size() == want.size());
  for (std::size_t i = 0; i < g.size(); ++i)
    CHECK(g[i] == Approx(want[i]).epsilon(tol).margin(tol));
}

void require_same(const Array& a, const Array& b, double tol = 1e-12) {
  REQUIRE(a.shape() == b.shape());
  CHECK(a.dtype() == b.dtype());
  require_close(a, values(b), tol);
}

std::vector<double> random_values(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (double& e : v) e = u(rng);
  return v;
}

Array random_array(const Shape& s, std::mt19937& rng) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return np::array(random_values(static_cast<std::size_t>(n), rng), s);
}

// The equations of a jaxpr none of whose outputs a later equation or the jaxpr's outputs read,
// as "index: primitive".
std::vector<std::string> dead_equations(const Jaxpr& j) {
  std::unordered_set<const VarNode*> read;
  for (const Atom& a : j.outvars)
    if (!a.is_literal()) read.insert(a.var.get());
  std::vector<std::string> dead;
  for (std::size_t i = j.eqns.size(); i-- > 0;) {
    const Eqn& e = j.eqns[i];
    bool live = false;
    for (const Var& v : e.outvars) live = live || read.count(v.get());
    if (!live) dead.insert(dead.begin(), std::to_string(i) + ": " + e.prim->name);
    for (const Atom& a : e.inputs)
      if (!a.is_literal()) read.insert(a.var.get());
  }
  return dead;
}

// Checked on the printed text (parsed back) and on the ClosedJaxpr itself.
void check_printed_jaxpr_is_live(const ClosedJaxpr& cj) {
  std::string text = cj.str();
  INFO(text);
  CHECK(text.find("_:") == std::string::npos);  // the printer marks an unread output `_`
  CHECK(dead_equations(read_jaxpr(text)) == std::vector<std::string>{});
  CHECK(dead_equations(cj.data()->jaxpr) == std::vector<std::string>{});
}

// grad keeps the primal equations as JAX does, its unused value included: the equations of
// value_and_grad, which reads them all, and no more.
void check_grad_keeps_only_the_primal(const ClosedJaxpr& grad, const ClosedJaxpr& value_and_grad) {
  check_printed_jaxpr_is_live(value_and_grad);
  CHECK(grad.data()->jaxpr.eqns.size() == value_and_grad.data()->jaxpr.eqns.size());
  CHECK(!dead_equations(grad.data()->jaxpr).empty());
}

// ---- composition -------------------------------------------------------------------------------

TEST_CASE("grad of grad, and grad of value_and_grad's gradient, equal f''", "[autodiff_api]") {
  // f = x^2 sin x; f'' = 2 sin x + 4x cos x - x^2 sin x.
  auto f = [](const Array& x) { return x * x * np::sin(x); };
  auto d2 = jx::grad(jx::grad(f));
  // The inner grad as a value_and_grad's gradient, differentiated again.
  auto d2_vg = jx::grad([&](const Array& x) { return jx::value_and_grad(f)(x).second; });
  for (double x : {-1.3, 0.2, 2.5}) {
    double want = 2 * std::sin(x) + 4 * x * std::cos(x) - x * x * std::sin(x);
    CHECK(d2(Array(x)).item<double>() == Approx(want));
    CHECK(d2_vg(Array(x)).item<double>() == Approx(want));
  }
}

TEST_CASE("grad of a sum over jacrev and jacfwd", "[autodiff_api]") {
  // g(x) = sin(x) * sum(x): J_ij = cos(x_i) s δ_ij + sin(x_i), so
  // S(x) = sum_ij J_ij = s C + n sum_i sin(x_i) with s = sum x, C = sum cos x, and
  // dS/dx_k = C - s sin(x_k) + n cos(x_k).
  auto g = [](const Array& x) { return np::sin(x) * np::sum(x); };
  std::vector<double> xs = {0.3, -0.8, 1.1};
  double s = 0, c = 0;
  for (double v : xs) {
    s += v;
    c += std::cos(v);
  }
  std::vector<double> want;
  for (double v : xs) want.push_back(c - s * std::sin(v) + 3 * std::cos(v));
  Array x = np::array(xs);
  require_close(jx::grad([&](const Array& y) { return np::sum(jx::jacrev(g)(y)); })(x), want);
  require_close(jx::grad([&](const Array& y) { return np::sum(jx::jacfwd(g)(y)); })(x), want);
}

TEST_CASE("hessian, jacfwd(jacrev) and the other Jacobian compositions equal the closed form",
          "[autodiff_api]") {
  // f = x0 x1 x2 + sum(sin x): H_ij = x_k for {i, j, k} = {0, 1, 2}, H_ii = -sin(x_i).
  auto f = [](const Array& x) { return np::prod(x) + np::sum(np::sin(x)); };
  std::vector<double> xs = {0.5, -1.2, 2.0};
  std::vector<double> want(9);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) want[i * 3 + j] = i == j ? -std::sin(xs[i]) : xs[3 - i - j];
  Array x = np::array(xs);
  for (const Array& h :
       {jx::hessian(f)(x), jx::jacfwd(jx::jacrev(f))(x), jx::jacrev(jx::jacrev(f))(x),
        jx::jacfwd(jx::jacfwd(f))(x), jx::jacrev(jx::jacfwd(f))(x), jx::jacfwd(jx::grad(f))(x),
        jx::jacrev(jx::grad(f))(x)}) {
    REQUIRE(h.shape() == Shape{3, 3});
    require_close(h, want);
  }
}

TEST_CASE("jvp of grad is a Hessian-vector product; vjp of grad too", "[autodiff_api]") {
  // f = sum(x^3) / 3 + x0 x1: H v = 2 x v + (v1, v0, 0).
  auto f = [](const Array& x) {
    Array x0 = lax::slice(x, {0}, {1}), x1 = lax::slice(x, {1}, {2});
    return np::sum(x * x * x) / 3.0 + np::sum(x0 * x1);
  };
  Array x = np::array({0.5, -1.5, 2.0}), v = np::array({1.0, 2.0, -3.0});
  std::vector<double> hv = {2 * 0.5 * 1 + 2, 2 * -1.5 * 2 + 1, 2 * 2.0 * -3};
  auto [g, t] = jx::jvp(jx::grad(f), std::tuple{x}, std::tuple{v});
  require_close(g, {0.25 + -1.5, 2.25 + 0.5, 4.0});
  require_close(t, hv);
  auto [g2, pullback] = jx::vjp(jx::grad(f), x);
  require_close(std::get<0>(pullback(v)), hv);
}

// The gradient of sum(tanh(x @ w + b)^2) by hand: dy = 2 h (1 - h^2), gw = x^T dy, gb = sum dy.
Dense dense_grad_by_hand(const std::vector<double>& x, const std::vector<double>& w,
                         const std::vector<double>& b, std::size_t n, std::size_t k,
                         std::size_t m) {
  std::vector<double> gw(k * m, 0), gb(m, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) {
      double y = b[j];
      for (std::size_t l = 0; l < k; ++l) y += x[i * k + l] * w[l * m + j];
      double h = std::tanh(y), dy = 2 * h * (1 - h * h);
      gb[j] += dy;
      for (std::size_t l = 0; l < k; ++l) gw[l * m + j] += x[i * k + l] * dy;
    }
  auto dim = [](std::size_t d) { return static_cast<std::int64_t>(d); };
  return Dense{np::array(gw, {dim(k), dim(m)}), np::array(gb, {dim(m)})};
}

TEST_CASE("jit(grad(f)), grad(jit(f)) and eager grad(f) agree with backprop by hand",
          "[autodiff_api]") {
  auto f = [](const Dense& p, const Array& x) {
    Array h = np::tanh(np::matmul(x, p.w) + p.b);
    return np::sum(h * h);
  };
  std::mt19937 rng(42);
  std::vector<double> xv = random_values(4 * 3, rng), wv = random_values(3 * 5, rng),
                      bv = random_values(5, rng);
  Dense p{np::array(wv, {3, 5}), np::array(bv, {5})};
  Array x = np::array(xv, {4, 3});
  Dense want = dense_grad_by_hand(xv, wv, bv, 4, 3, 5);

  Dense eager = jx::grad(f)(p, x);
  Dense jit_of_grad = jx::jit(jx::grad(f))(p, x);
  Dense grad_of_jit = jx::grad(jx::jit(f))(p, x);
  for (const Dense* g : {&eager, &jit_of_grad, &grad_of_jit}) {
    require_same(g->w, want.w, 1e-10);
    require_same(g->b, want.b, 1e-10);
    // The three programs agree with each other to rounding.
    require_same(g->w, eager.w, 1e-13);
    require_same(g->b, eager.b, 1e-13);
  }
  // A second call of the jitted gradient hits the cache and gives the same values.
  auto jg = jx::jit(jx::grad(f));
  require_same(jg(p, x).w, want.w, 1e-10);
  require_same(jg(p, x).b, want.b, 1e-10);
  CHECK(jg.cache_info().traces == 1);
}

TEST_CASE("jit(grad(grad(f))) equals the eager second derivative", "[autodiff_api]") {
  auto f = [](const Array& x) { return np::exp(np::sin(x)); };
  // f'' = e^{sin x} (cos^2 x - sin x).
  auto d2 = jx::jit(jx::grad(jx::grad(f)));
  for (double x : {0.0, 0.7, -2.0}) {
    double want = std::exp(std::sin(x)) * (std::cos(x) * std::cos(x) - std::sin(x));
    CHECK(d2(f64(x)).item<double>() == Approx(want).epsilon(1e-12));
    CHECK(jx::grad(jx::grad(f))(f64(x)).item<double>() == Approx(want).epsilon(1e-12));
  }
}

TEST_CASE("make_jaxpr(grad(f)) keeps the primal equations, the unused value as _, as JAX does",
          "[autodiff_api]") {
  // f = sin(x) x: the gradient is sin x + x cos x; the value sin(x) x is staged but unread.
  auto f = [](const Array& x) { return np::sin(x) * x; };
  ClosedJaxpr j = jx::make_jaxpr(jx::grad(f))(Array(1.f));
  CHECK(j.str() == R"({ lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = cos a
    _:f32[] = mul b a
    d:f32[] = mul b 1.0:f32[]
    e:f32[] = mul 1.0:f32[] a
    f:f32[] = mul e c
    g:f32[] = add_any d f
  in (g,) })");
  check_grad_keeps_only_the_primal(j, jx::make_jaxpr(jx::value_and_grad(f))(Array(1.f)));
  std::vector<Array> out = j({Array(0.3f)});
  CHECK(out[0].item<double>() == Approx(std::sin(0.3) + 0.3 * std::cos(0.3)).epsilon(1e-6));
}

TEST_CASE("make_jaxpr of every gradient transform computes the primal and the gradient only",
          "[autodiff_api]") {
  auto mlp = [](const Mlp& p, const Array& x) {
    Array h = np::tanh(np::matmul(x, p.w1) + p.b1);
    Array out = np::matmul(h, p.w2) + p.b2;
    return np::mean(out * out);
  };
  Mlp p{np::zeros({3, 4}), np::zeros({4}), np::zeros({4, 2}), np::zeros({2})};
  Array x = np::zeros({5, 3});
  check_grad_keeps_only_the_primal(jx::make_jaxpr(jx::grad(mlp))(p, x),
                                   jx::make_jaxpr(jx::value_and_grad(mlp))(p, x));
  check_grad_keeps_only_the_primal(jx::make_jaxpr(jx::grad<0, 1>(mlp))(p, x),
                                   jx::make_jaxpr(jx::value_and_grad<0, 1>(mlp))(p, x));
  // An input the function ignores: its gradient is zeros, and nothing reads it.
  auto ignores_y = [](const Array& x, const Array&) { return np::sum(x * x); };
  check_grad_keeps_only_the_primal(
      jx::make_jaxpr(jx::grad<0, 1>(ignores_y))(np::zeros({2}), np::zeros({2})),
      jx::make_jaxpr(jx::value_and_grad<0, 1>(ignores_y))(np::zeros({2}), np::zeros({2})));
}

TEST_CASE("make_jaxpr(grad(f, has_aux)) stages the value it drops, as JAX does", "[autodiff_api]") {
  // grad with has_aux returns (gradient, aux): the value sum(sin x) is staged but unread.
  auto f = [](const Array& x) { return std::pair{np::sum(np::sin(x)), x * 2.f}; };
  check_grad_keeps_only_the_primal(
      jx::make_jaxpr(jx::grad(f, jx::has_aux))(np::zeros({2})),
      jx::make_jaxpr(jx::value_and_grad(f, jx::has_aux))(np::zeros({2})));
}

TEST_CASE("make_jaxpr of jacrev, jacfwd and hessian computes no unused primal output",
          "[autodiff_api]") {
  // The Jacobian of sin is diag(cos x): sin x itself is never needed.
  auto f = [](const Array& x) { return np::sin(x); };
  check_printed_jaxpr_is_live(jx::make_jaxpr(jx::jacrev(f))(np::zeros({2})));
  check_printed_jaxpr_is_live(jx::make_jaxpr(jx::jacfwd(f))(np::zeros({2})));
  auto scalar = [](const Array& x) { return np::sum(np::exp(x) * np::cos(x)); };
  check_printed_jaxpr_is_live(jx::make_jaxpr(jx::hessian(scalar))(np::zeros({3})));
}

// ---- pytrees -----------------------------------------------------------------------------------

TEST_CASE("grad with respect to a JX_PYTREE struct returns the struct", "[autodiff_api]") {
  // L = sum((w x + b)^2): dL/dw = 2 (w x + b) x, dL/db = sum 2 (w x + b).
  auto loss = [](const Dense& p, const Array& x) {
    Array r = p.w * x + p.b;
    return np::sum(r * r);
  };
  Dense p{np::array({1.0, -2.0, 0.5}), Array(0.25)};
  Array x = np::array({2.0, 1.0, -4.0});
  Dense g = jx::grad(loss)(p, x);
  std::vector<double> r = {1 * 2 + 0.25, -2 * 1 + 0.25, 0.5 * -4 + 0.25};
  require_close(g.w, {2 * r[0] * 2, 2 * r[1] * 1, 2 * r[2] * -4});
  require_close(g.b, {2 * (r[0] + r[1] + r[2])});
  CHECK(g.b.shape() == Shape{});
}

TEST_CASE("grad with respect to a std::map and a std::vector keeps keys and sizes",
          "[autodiff_api]") {
  using Params = std::map<std::string, Array>;
  auto f = [](const Params& m) { return np::sum(m.at("a") * m.at("b")) + np::sum(m.at("c")); };
  Params m{{"a", np::array({1.0, 2.0})}, {"b", np::array({3.0, -1.0})}, {"c", np::array({5.0})}};
  Params g = jx::grad(f)(m);
  REQUIRE(g.size() == 3);
  require_close(g.at("a"), {3, -1});
  require_close(g.at("b"), {1, 2});
  require_close(g.at("c"), {1});

  auto h = [](const std::vector<Array>& v) { return np::sum(v[0] * v[0]) + 3.0 * np::sum(v[2]); };
  std::vector<Array> vs{np::array({1.0, -2.0}), np::array({4.0}), np::array({7.0, 8.0, 9.0})};
  std::vector<Array> gv = jx::grad(h)(vs);
  REQUIRE(gv.size() == 3);
  require_close(gv[0], {2, -4});
  require_close(gv[1], {0});
  require_close(gv[2], {3, 3, 3});
}

TEST_CASE("grad<0, 1> returns a tuple; grad<1> only the second argument's", "[autodiff_api]") {
  // f = sum(x y^2): df/dx = y^2, df/dy = 2 x y.
  auto f = [](const Array& x, const Array& y) { return np::sum(x * y * y); };
  Array x = np::array({1.0, 2.0}), y = np::array({3.0, -0.5});
  auto [gx, gy] = jx::grad<0, 1>(f)(x, y);
  require_close(gx, {9, 0.25});
  require_close(gy, {6, -2});
  require_close(jx::grad<1>(f)(x, y), {6, -2});
  auto [v, grads] = jx::value_and_grad<1, 0>(f)(x, y);
  CHECK(v.item<double>() == Approx(9 + 0.5));
  require_close(std::get<0>(grads), {6, -2});
  require_close(std::get<1>(grads), {9, 0.25});
}

TEST_CASE("has_aux: value_and_grad gives ((value, aux), grad); grad gives (grad, aux)",
          "[autodiff_api]") {
  // The aux (a pytree) is returned as computed, not differentiated.
  auto f = [](const Array& x) {
    Array l = np::sum(x * x);
    return std::pair{l, std::map<std::string, Array>{{"max", np::max(x)}, {"twice", 2.0 * x}}};
  };
  Array x = np::array({1.0, -3.0, 2.0});
  auto [value_aux, g] = jx::value_and_grad(f, jx::has_aux)(x);
  auto [value, aux] = value_aux;
  CHECK(value.item<double>() == 14);
  CHECK(aux.at("max").item<double>() == 2);
  require_close(aux.at("twice"), {2, -6, 4});
  require_close(g, {2, -6, 4});
  auto [g2, aux2] = jx::grad(f, jx::has_aux)(x);
  require_close(g2, {2, -6, 4});
  CHECK(aux2.at("max").item<double>() == 2);
}

TEST_CASE("vjp of a function of two arguments returns two cotangents", "[autodiff_api]") {
  // f(x, y) = (x * y, sin x): the pullback of (u, w) is (u y + w cos x, u x).
  auto f = [](const Array& x, const Array& y) { return std::pair{x * y, np::sin(x)}; };
  Array x = np::array({0.5, 1.0}), y = np::array({2.0, -3.0});
  auto [out, pullback] = jx::vjp(f, x, y);
  require_close(out.first, {1, -3});
  auto [cx, cy] = pullback(std::pair{np::array({1.0, 2.0}), np::array({-1.0, 0.5})});
  require_close(cx, {1 * 2 - std::cos(0.5), 2 * -3 + 0.5 * std::cos(1.0)});
  require_close(cy, {0.5, 2});
}

TEST_CASE("vjp gives integer arguments zero cotangents of their own type", "[autodiff_api]") {
  auto f = [](const Array& x, const Array& n) { return x * n.astype(float64); };
  Array n = np::array(std::vector<int>{2, -1, 3});
  auto [out, pullback] = jx::vjp(f, np::array({1.0, 1.5, 2.0}), n);
  require_close(out, {2, -1.5, 6});
  auto [cx, cn] = pullback(np::array({1.0, 1.0, 2.0}));
  require_close(cx, {2, -1, 6});
  CHECK(cn.dtype() == int32);
  CHECK(cn.shape() == Shape{3});
  CHECK(cn.to_vector<int>() == std::vector<int>{0, 0, 0});
}

// ---- closed forms ------------------------------------------------------------------------------

TEST_CASE("d/dx sin is cos, in float32 and float64, scalar and elementwise", "[autodiff_api]") {
  auto dsin = jx::grad([](const Array& x) { return np::sin(x); });
  for (double x : {-3.0, -0.5, 0.0, 1.0, 4.0}) {
    Array g64 = dsin(f64(x));
    CHECK(g64.dtype() == float64);
    CHECK(g64.item<double>() == Approx(std::cos(x)).epsilon(1e-14));
    Array g32 = dsin(np::array(static_cast<float>(x)));
    CHECK(g32.dtype() == float32);
    CHECK(g32.item<double>() == Approx(std::cos(static_cast<float>(x))).epsilon(1e-6));
  }
  // Elementwise: the gradient of sum(sin x) is cos x.
  Array x = np::array({-1.0, 0.25, 2.0});
  require_close(jx::grad([](const Array& y) { return np::sum(np::sin(y)); })(x),
                {std::cos(-1.0), std::cos(0.25), std::cos(2.0)}, 1e-14);
}

TEST_CASE("hessian of sum(x^3) is diag(6x) in float64", "[autodiff_api]") {
  auto f = [](const Array& x) { return np::sum(x * x * x); };
  Array h = jx::hessian(f)(np::array({1.5, -2.0, 0.5, 3.0}));
  REQUIRE(h.shape() == Shape{4, 4});
  std::vector<double> want(16, 0);
  std::vector<double> xs = {1.5, -2.0, 0.5, 3.0};
  for (std::size_t i = 0; i < 4; ++i) want[i * 5] = 6 * xs[i];
  require_close(h, want);
}

TEST_CASE("softmax cross-entropy: the gradient in the logits is (softmax - onehot) / batch",
          "[autodiff_api]") {
  // loss = mean_b (logsumexp(z_b) - z_b[label_b]), logsumexp by the max shift.
  auto loss = [](const Array& logits, const Array& onehot) {
    Array m = np::max(logits, 1, /*keepdims=*/true);
    Array lse = m + np::log(np::sum(np::exp(logits - m), 1, /*keepdims=*/true));
    return np::mean(np::sum(onehot * (lse - logits), 1));
  };
  const std::size_t B = 3, C = 4;
  std::vector<double> z = {1.0, 2.0, 0.5, -1.0, 0.0, 0.0, 3.0, 1.0, -2.0, 5.0, 5.0, 0.0};
  std::vector<std::size_t> labels = {1, 2, 0};
  std::vector<double> onehot(B * C, 0), want(B * C);
  for (std::size_t b = 0; b < B; ++b) onehot[b * C + labels[b]] = 1;
  double want_loss = 0;
  for (std::size_t b = 0; b < B; ++b) {
    double mx = -1e300, s = 0;
    for (std::size_t c = 0; c < C; ++c) mx = std::max(mx, z[b * C + c]);
    for (std::size_t c = 0; c < C; ++c) s += std::exp(z[b * C + c] - mx);
    for (std::size_t c = 0; c < C; ++c)
      want[b * C + c] = (std::exp(z[b * C + c] - mx) / s - onehot[b * C + c]) / B;
    want_loss += (mx + std::log(s) - z[b * C + labels[b]]) / B;
  }
  const Shape shape{static_cast<std::int64_t>(B), static_cast<std::int64_t>(C)};
  auto [v, g] = jx::value_and_grad(loss)(np::array(z, shape), np::array(onehot, shape));
  CHECK(v.item<double>() == Approx(want_loss).epsilon(1e-12));
  REQUIRE(g.shape() == shape);
  require_close(g, want, 1e-12);
  // Huge logits: the shift keeps it finite (the last row has a tie at the max).
  std::vector<double> big = z;
  for (double& e : big) e += 1000;
  require_close(jx::grad(loss)(np::array(big, shape), np::array(onehot, shape)), want, 1e-10);
}

// A two-layer tanh MLP's mean squared error, in float64.
Array mlp_loss(const Mlp& p, const Array& x, const Array& y) {
  Array h = np::tanh(np::matmul(x, p.w1) + p.b1);
  Array d = np::matmul(h, p.w2) + p.b2 - y;
  return np::mean(d * d);
}

TEST_CASE("a two-layer MLP's gradient matches central finite differences in every element",
          "[autodiff_api]") {
  std::mt19937 rng(5);
  Mlp p{random_array({3, 4}, rng), random_array({4}, rng), random_array({4, 2}, rng),
        random_array({2}, rng)};
  Array x = random_array({5, 3}, rng), y = random_array({5, 2}, rng);
  Mlp g = jx::grad(mlp_loss)(p, x, y);
  const double eps = 1e-5;
  // Each parameter in turn: perturb one element both ways and difference the losses.
  auto check_leaf = [&](Array Mlp::*leaf, const char* name) {
    INFO(name);
    std::vector<double> base = values(p.*leaf), grad = values(g.*leaf);
    REQUIRE(grad.size() == base.size());
    CHECK((g.*leaf).shape() == (p.*leaf).shape());
    for (std::size_t i = 0; i < base.size(); ++i) {
      std::vector<double> plus = base, minus = base;
      plus[i] += eps;
      minus[i] -= eps;
      Mlp pp = p, pm = p;
      pp.*leaf = np::array(plus, (p.*leaf).shape());
      pm.*leaf = np::array(minus, (p.*leaf).shape());
      double fd =
          (mlp_loss(pp, x, y).item<double>() - mlp_loss(pm, x, y).item<double>()) / (2 * eps);
      INFO("element " << i);
      CHECK(grad[i] == Approx(fd).epsilon(1e-6).margin(1e-8));
    }
  };
  check_leaf(&Mlp::w1, "w1");
  check_leaf(&Mlp::b1, "b1");
  check_leaf(&Mlp::w2, "w2");
  check_leaf(&Mlp::b2, "b2");
}

TEST_CASE("stop_gradient blocks the gradient: d/dx x * stop_gradient(x) = x", "[autodiff_api]") {
  auto f = [](const Array& x) { return np::sum(x * np::stop_gradient(x)); };
  Array x = np::array({1.5, -2.0, 0.0});
  require_close(jx::grad(f)(x), {1.5, -2.0, 0.0});
  require_close(jx::jit(jx::grad(f))(x), {1.5, -2.0, 0.0});
  // Forward mode too: the tangent of x * sg(x) along t is t * x.
  auto [y, t] = jx::jvp([](const Array& v) { return v * np::stop_gradient(v); }, std::tuple{x},
                        std::tuple{np::array({1.0, 2.0, 3.0})});
  require_close(t, {1.5, -4.0, 0.0});
  // Second order: d2/dv2 of v sg(v) v is 2 sg(v), not the 6v of v^3.
  CHECK(jx::grad(jx::grad([](const Array& v) { return v * np::stop_gradient(v) * v; }))(Array(3.0))
            .item<double>() == Approx(2 * 3.0));
}

// ---- bad input ---------------------------------------------------------------------------------

TEST_CASE("grad of a non-scalar output is a TypeError", "[autodiff_api]") {
  auto f = [](const Array& x) { return x * 2.f; };
  CHECK(error_of<TypeError>([&] { jx::grad(f)(np::zeros({3})); }) ==
        "Gradient only defined for scalar-output functions. Output had shape: (3,).");
}

TEST_CASE("grad with respect to an integer input is a TypeError", "[autodiff_api]") {
  auto f = [](const Array& x) { return np::sum(x.astype(float32)); };
  std::string msg = error_of<TypeError>([&] { jx::grad(f)(np::zeros({3}, int32)); });
  CHECK(msg.rfind("grad requires real- or complex-valued inputs", 0) == 0);
  CHECK(msg ==
        "grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
        "np.inexact), but got int32. If you want to use Boolean- or integer-valued inputs, use "
        "vjp or set allow_int to True.");
  // value_and_grad names itself; an integer argument not differentiated is fine.
  CHECK(error_of<TypeError>([&] {
          jx::value_and_grad(f)(np::zeros({3}, int32));
        }).rfind("value_and_grad requires real- or complex-valued inputs", 0) == 0);
  auto g = [](const Array& x, const Array& n) { return np::sum(x * n.astype(float32)); };
  require_close(jx::grad(g)(np::ones({2}), np::array(std::vector<int>{3, 4})), {3, 4});
}

TEST_CASE("a vjp pullback checks the cotangent's shape and dtype", "[autodiff_api]") {
  auto [y, pullback] = jx::vjp([](const Array& x) { return np::sin(x); }, np::zeros({3}));
  CHECK(error_of<ShapeError>([&] { pullback(np::zeros({2})); }) ==
        "Cotangent input to vjp pullback function: shape (2,) must be the same as the shape of the "
        "corresponding primal (3,).");
  CHECK(error_of<TypeError>([&] { pullback(np::zeros({3}, float64)); }) ==
        "Cotangent input to vjp pullback function: dtype float64 is not the expected tangent dtype "
        "float32 of the corresponding primal.");
}

TEST_CASE("jvp checks the tangents' shapes and tree structure", "[autodiff_api]") {
  auto f = [](const Array& x) { return np::sin(x); };
  CHECK(
      error_of<ShapeError>(
          [&] { jx::jvp(f, std::tuple{np::zeros({3})}, std::tuple{np::zeros({2})}); }) ==
      "jvp tangent of shape (2,) must be the same as the shape of the corresponding primal (3,).");
  CHECK(error_of<TypeError>(
            [&] { jx::jvp(f, std::tuple{np::zeros({3})}, std::tuple{np::zeros({3}, float64)}); }) ==
        "jvp tangent of dtype float64 is not the expected tangent dtype float32 of the "
        "corresponding primal.");
  auto g = [](const std::vector<Array>& xs) { return np::sin(xs[0]); };
  CHECK(error_of<TypeError>([&] {
          jx::jvp(g, std::tuple{std::vector<Array>{np::zeros({3})}},
                  std::tuple{std::vector<Array>{np::zeros({3}), np::zeros({3})}});
        }) ==
        "primal and tangent arguments to jx::jvp must have the same tree structure; primals "
        "have tree structure ([*],) whereas tangents have tree structure ([*, *],).");
}

TEST_CASE("jacfwd and jacrev of an integer input are TypeErrors in JAX's words", "[autodiff_api]") {
  auto f = [](const Array& x) { return x.astype(float32); };
  CHECK(error_of<TypeError>([&] { jx::jacfwd(f)(np::zeros({3}, int32)); }) ==
        "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), "
        "but got int32. For holomorphic differentiation, pass holomorphic=True. For "
        "differentiation of non-holomorphic functions involving complex inputs or integer "
        "inputs, use jx::jvp directly.");
  CHECK(error_of<TypeError>([&] { jx::jacrev(f)(np::zeros({3}, int32)); }) ==
        "jacrev requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
        "np.inexact), but got int32. If you want to use Boolean- or integer-valued inputs, use "
        "vjp or set allow_int to True.");
}

TEST_CASE("forward mode of a custom_vjp function is an Error", "[autodiff_api]") {
  auto clip = jx::custom_vjp([](const Array& x) { return x; },
                             [](const Array& x) {
                               return std::pair{x, x};
                             },
                             [](const Array&, const Array& ct) { return std::tuple{ct}; });
  const std::string msg = "can't apply forward-mode autodiff (jvp) to a custom_vjp function.";
  CHECK(testing::exact_error_of<Error>(
            [&] { jx::jvp(clip, std::tuple{np::ones({3})}, std::tuple{np::ones({3})}); }) == msg);
  CHECK(testing::exact_error_of<Error>([&] { jx::jacfwd(clip)(np::ones({3})); }) == msg);
  // Reverse mode works.
  require_close(jx::jacrev(clip)(np::ones({2})), {1, 0, 0, 1});
}

TEST_CASE("a custom_jvp rule with wrong output types is a TypeError", "[autodiff_api]") {
  auto f = [](const Array& x) { return np::sin(x); };
  auto bad_tangent = jx::custom_jvp(f, [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
    return std::pair{np::sin(std::get<0>(p)), np::sum(std::get<0>(t))};
  });
  CHECK(error_of<TypeError>([&] { bad_tangent(np::ones({3})); }) ==
        "Custom JVP rule must produce primal and tangent outputs with equal shapes and dtypes, but "
        "got primal [f32[3]] and tangent [f32[]].");
  auto bad_primal = jx::custom_jvp(f, [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
    return std::pair{np::sin(std::get<0>(p)).astype(float64), std::get<0>(t)};
  });
  CHECK(error_of<TypeError>([&] { bad_primal(np::ones({3})); }) ==
        "Custom JVP rule must produce primal outputs with the same shapes and dtypes as the primal "
        "function: the function gives [f32[3]] and the rule [f64[3]].");
}

TEST_CASE("a custom_vjp bwd with wrong output types is a TypeError", "[autodiff_api]") {
  auto f = [](const Array& x, const Array& y) { return x * y; };
  auto fwd = [](const Array& x, const Array& y) { return std::pair{x * y, std::pair{x, y}}; };
  auto bad_shape = jx::custom_vjp(f, fwd, [](const std::pair<Array, Array>& r, const Array& ct) {
    return std::tuple{np::sum(ct * r.second), ct * r.first};
  });
  CHECK(
      error_of<TypeError>([&] { bad_shape(np::ones({3}), np::ones({3})); }) ==
      "Custom VJP bwd rule must produce an output with the same shapes and dtypes as the args "
      "tuple of the primal function: the args are [f32[3], f32[3]] and bwd gives [f32[], f32[3]].");
  auto too_few = jx::custom_vjp(f, fwd, [](const std::pair<Array, Array>& r, const Array& ct) {
    return std::tuple{ct * r.second};
  });
  CHECK(error_of<TypeError>([&] { too_few(np::ones({3}), np::ones({3})); }) ==
        "Custom VJP bwd rule must produce an output with the same shapes and dtypes as the args "
        "tuple of the primal function: the args are [f32[3], f32[3]] and bwd gives [f32[3]].");
  auto bad_fwd = jx::custom_vjp(
      f,
      [](const Array& x, const Array& y) {
        return std::pair{np::sum(x * y), x};
      },
      [](const Array& x, const Array& ct) {
        return std::tuple{ct * x, ct * x};
      });
  CHECK(error_of<TypeError>([&] { bad_fwd(np::ones({3}), np::ones({3})); }) ==
        "Custom VJP fwd rule must produce outputs with the same shapes and dtypes as the primal "
        "function: the function gives [f32[3]] and fwd [f32[]].");
}

}  // namespace
}  // namespace jx
