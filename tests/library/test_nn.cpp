// jx::nn against closed forms and loops on doubles: activations, softmax and friends (with
// their stability at large and infinite inputs), one_hot, the losses, jit and gradients.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "jx/jit.hpp"
#include "jx/nn.hpp"
#include "jx/numpy.hpp"
#include "jx/transforms.hpp"
#include "support/check_grads.hpp"
#include "support/error_of.hpp"

namespace jx {
namespace {

namespace nn = jx::nn;
using Doubles = std::vector<double>;
using jx::testing::error_of;

constexpr double kInf = std::numeric_limits<double>::infinity();

Array f64(const Doubles& v, const Shape& shape) { return np::array(v, shape); }
Array f64(const Doubles& v) { return np::array(v); }
Doubles vals(const Array& x) { return x.to_vector<double>(); }

void check_close(const Array& x, const Doubles& want, double rel = 1e-12, double abs = 1e-12) {
  Doubles got = vals(x);
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    if (std::isnan(want[i]))
      CHECK(std::isnan(got[i]));
    else if (std::isinf(want[i]))
      CHECK(got[i] == want[i]);
    else
      CHECK(std::abs(got[i] - want[i]) <= abs + rel * std::abs(want[i]));
  }
}

// Row-wise softmax / logsumexp of a [rows, cols] matrix, in double.
Doubles softmax_rows(const Doubles& x, int cols) {
  Doubles out(x.size());
  for (std::size_t r = 0; r < x.size() / cols; ++r) {
    double m = -kInf, s = 0;
    for (int c = 0; c < cols; ++c) m = std::max(m, x[r * cols + c]);
    for (int c = 0; c < cols; ++c) s += std::exp(x[r * cols + c] - m);
    for (int c = 0; c < cols; ++c) out[r * cols + c] = std::exp(x[r * cols + c] - m) / s;
  }
  return out;
}
Doubles logsumexp_rows(const Doubles& x, int cols) {
  Doubles out;
  for (std::size_t r = 0; r < x.size() / cols; ++r) {
    double m = -kInf, s = 0;
    for (int c = 0; c < cols; ++c) m = std::max(m, x[r * cols + c]);
    for (int c = 0; c < cols; ++c) s += std::exp(x[r * cols + c] - m);
    out.push_back(m + std::log(s));
  }
  return out;
}

const Doubles kLogits{0.5,   -1.25, 2.0,  0.0,   3.5, 1.0,
                      -0.75, 0.25,  -2.0, 0.125, 1.5, -0.5};  // 3 x 4

using Fn = std::function<Array(const std::vector<Array>&)>;

TEST_CASE("nn: relu, its derivative at 0, and NaN", "[nn]") {
  check_close(nn::relu(f64({-2, 0, 3, std::nan("")})), {0, 0, 3, std::nan("")});
  CHECK(nn::relu(np::array({-1, 4})).dtype() == int32);
  // JAX's relu has derivative 0 at 0 (maximum's would be 1/2).
  Array g = grad([](const Array& x) { return np::sum(nn::relu(x)); })(f64({-1, 0, 2}));
  check_close(g, {0, 0, 1});
}

TEST_CASE("nn: gelu, tanh and erf forms, against their closed forms", "[nn]") {
  Doubles x{-3, -1, -0.5, 0, 0.25, 1, 2.5};
  Doubles tanh_form, erf_form, erf_slope;
  for (double v : x) {
    tanh_form.push_back(
        0.5 * v * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (v + 0.044715 * v * v * v))));
    erf_form.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
    // d/dx x Φ(x) = Φ(x) + x φ(x).
    erf_slope.push_back(0.5 * (1 + std::erf(v / std::sqrt(2.0))) +
                        v * std::exp(-v * v / 2) / std::sqrt(2 * std::numbers::pi));
  }
  check_close(nn::gelu(f64(x)), tanh_form);
  check_close(nn::gelu(f64(x), /*approximate=*/false), erf_form);
  check_close(grad([](const Array& a) { return np::sum(nn::gelu(a, false)); })(f64(x)), erf_slope,
              1e-10);
  testing::check_grads([](const std::vector<Array>& a) { return nn::gelu(a[0]); }, {f64(x)}, 2);
  // float32 stays float32; integers compute in float32.
  CHECK(nn::gelu(np::array({1.f})).dtype() == float32);
  CHECK(nn::gelu(np::array({1})).dtype() == float32);
}

TEST_CASE("nn: sigmoid and its derivative s (1 - s)", "[nn]") {
  Doubles x{-40, -2, 0, 0.5, 3}, s, ds;
  for (double v : x) {
    s.push_back(1 / (1 + std::exp(-v)));
    ds.push_back(s.back() * (1 - s.back()));
  }
  check_close(nn::sigmoid(f64(x)), s);
  check_close(grad([](const Array& a) { return np::sum(nn::sigmoid(a)); })(f64(x)), ds, 1e-10);
}

TEST_CASE("nn: softmax and log_softmax against loops, on any axis", "[nn]") {
  Array x = f64(kLogits, {3, 4});
  Doubles want = softmax_rows(kLogits, 4);
  check_close(nn::softmax(x), want);
  Doubles log_want;
  for (double v : want) log_want.push_back(std::log(v));
  check_close(nn::log_softmax(x), log_want);

  // Over axis 0: the softmax of the transpose, transposed back.
  Doubles xt(12);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) xt[c * 3 + r] = kLogits[r * 4 + c];
  Doubles col = softmax_rows(xt, 3), want0(12);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) want0[r * 4 + c] = col[c * 3 + r];
  check_close(nn::softmax(x, 0), want0);
  check_close(nn::log_softmax(x, 0), [&] {
    Doubles l;
    for (double v : want0) l.push_back(std::log(v));
    return l;
  }());

  // Gradients: <softmax, w> has gradient s * (w - <s, w>) per row.
  Doubles w{1, -2, 0.5, 3, 0, 1, 1, -1, 2, 2, -3, 0.25}, g(12);
  for (int r = 0; r < 3; ++r) {
    double sw = 0;
    for (int c = 0; c < 4; ++c) sw += want[r * 4 + c] * w[r * 4 + c];
    for (int c = 0; c < 4; ++c) g[r * 4 + c] = want[r * 4 + c] * (w[r * 4 + c] - sw);
  }
  Array wa = f64(w, {3, 4});
  check_close(grad([&](const Array& a) { return np::sum(nn::softmax(a) * wa); })(x), g, 1e-10);
  for (auto fn : {Fn([](const std::vector<Array>& a) { return nn::softmax(a[0]); }),
                  Fn([](const std::vector<Array>& a) { return nn::log_softmax(a[0], 0); })})
    testing::check_grads(fn, {x}, 2);
}

TEST_CASE("nn: softmax, log_softmax and logsumexp are stable at large and infinite inputs",
          "[nn]") {
  check_close(nn::softmax(f64({1000, 0})), {1, 0});
  check_close(nn::log_softmax(f64({1000, 0})), {0, -1000});
  check_close(nn::logsumexp(f64({1000, 0})), {1000});
  check_close(nn::logsumexp(f64({-1000, -1000})), {-1000 + std::log(2.0)});
  check_close(nn::softmax(np::array({1000.f, 0.f})), {1, 0});  // float32 too

  // -inf entries take no weight; a row of only -inf has logsumexp -inf, not NaN.
  Array rows = f64({-kInf, -kInf, 0, -kInf, 2, 1}, {3, 2});
  check_close(nn::logsumexp(rows), {-kInf, 0, 2 + std::log1p(std::exp(-1.0))});
  check_close(nn::log_softmax(f64({0, -kInf})), {0, -kInf});
  check_close(nn::softmax(f64({0, -kInf})), {1, 0});
  check_close(nn::logsumexp(f64({kInf, 0})), {kInf});
  // The gradient of logsumexp is the softmax, -inf entries included.
  check_close(grad([](const Array& a) { return nn::logsumexp(a); })(f64({0, -kInf, std::log(3.0)})),
              {0.25, 0, 0.75});
}

TEST_CASE("nn: softmax, log_softmax and logsumexp over an empty axis, as JAX's", "[nn]") {
  // Their max starts from -inf (jax.nn's initial=-inf): no error, and log(0) = -inf.
  Array x = np::zeros({2, 0}, float32);
  CHECK(nn::softmax(x).shape() == Shape{2, 0});
  CHECK(nn::log_softmax(x).shape() == Shape{2, 0});
  Array lse = nn::logsumexp(x);
  CHECK(lse.shape() == Shape{2});
  for (float v : lse.to_vector<float>()) CHECK(v == -std::numeric_limits<float>::infinity());
  CHECK(jit([](const Array& a) { return nn::logsumexp(a); })(x).to_vector<float>() ==
        lse.to_vector<float>());
}

TEST_CASE("nn: logsumexp over axes, keepdims, and its gradient", "[nn]") {
  Array x = f64(kLogits, {3, 4});
  Array r = nn::logsumexp(x);
  CHECK(r.shape() == Shape{3});
  check_close(r, logsumexp_rows(kLogits, 4));
  Array k = nn::logsumexp(x, -1, /*keepdims=*/true);
  CHECK(k.shape() == Shape{3, 1});
  check_close(k, logsumexp_rows(kLogits, 4));
  Array all = nn::logsumexp(x, np::Axes{});
  CHECK(all.shape() == Shape{});
  check_close(all, logsumexp_rows(kLogits, 12));
  CHECK(nn::logsumexp(x, np::Axes{}, true).shape() == Shape{1, 1});
  check_close(grad([](const Array& a) { return np::sum(nn::logsumexp(a)); })(x),
              softmax_rows(kLogits, 4), 1e-10);
  testing::check_grads([](const std::vector<Array>& a) { return nn::logsumexp(a[0], 0); }, {x}, 2);
}

TEST_CASE("nn: one_hot, with out-of-range labels as zero rows", "[nn]") {
  Array oh = nn::one_hot(np::array({0, 2, -1, 3, 1}), 3);
  CHECK(oh.aval() == ShapedArray{{5, 3}, float32, false});
  CHECK(oh.to_vector<float>() == std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0});
  Array oh2 = nn::one_hot(np::array(std::vector<int>{1, 0, 0, 1}, {2, 2}), 2, int32);
  CHECK(oh2.aval() == ShapedArray{{2, 2, 2}, int32, false});
  CHECK(oh2.to_vector<int>() == std::vector<int>{0, 1, 1, 0, 1, 0, 0, 1});
}

TEST_CASE("nn: softmax_cross_entropy against a loop; its gradient is softmax - one_hot", "[nn]") {
  Array logits = f64(kLogits, {3, 4});
  std::vector<int> labels{2, 0, 3};
  Array y = np::array(labels);
  Doubles lse = logsumexp_rows(kLogits, 4), want;
  for (int r = 0; r < 3; ++r) want.push_back(lse[r] - kLogits[r * 4 + labels[r]]);
  Array loss = nn::softmax_cross_entropy(logits, y);
  CHECK(loss.shape() == Shape{3});
  check_close(loss, want);

  Doubles g = softmax_rows(kLogits, 4);
  for (int r = 0; r < 3; ++r) g[r * 4 + labels[r]] -= 1;
  check_close(
      grad([&](const Array& l) { return np::sum(nn::softmax_cross_entropy(l, y)); })(logits), g,
      1e-10);
  testing::check_grads(
      [&](const std::vector<Array>& a) { return nn::softmax_cross_entropy(a[0], y); }, {logits}, 2);

  // A -inf logit elsewhere costs nothing and gives no NaN.
  check_close(nn::softmax_cross_entropy(f64({0, -kInf}, {1, 2}), np::array({0})), {0});

  CHECK(error_of<TypeError>([&] {
          nn::softmax_cross_entropy(logits, f64({0, 1, 2}));
        }) == "softmax_cross_entropy: labels must be integers, got float64");
  CHECK(error_of<ShapeError>([&] {
          nn::softmax_cross_entropy(logits, np::array({0, 1}));
        }) ==
        "softmax_cross_entropy: labels of shape (2,) do not match logits of shape (3, 4) (labels "
        "take the logits' shape without its last axis)");
}

TEST_CASE("nn: mse is the mean squared difference", "[nn]") {
  Array p = f64({1, 2, 3, 4}, {2, 2}), t = f64({0, 2, 5, 3}, {2, 2});
  Array m = nn::mse(p, t);
  CHECK(m.shape() == Shape{});
  CHECK(m.item<double>() == Approx((1 + 0 + 4 + 1) / 4.0));
  // d/dp = 2 (p - t) / n.
  check_close(grad([&](const Array& a) { return nn::mse(a, t); })(p), {0.5, 0, -1, 0.5});
}

TEST_CASE("nn: every function gives the same values under jit", "[nn]") {
  Array x = np::array(std::vector<float>{0.5f, -1.25f, 2.f, 0.f, 3.5f, 1.f, -0.75f, 0.25f}, {2, 4});
  Array y = np::array({3, 1});
  auto all = [](const Array& a, const Array& labels) {
    return std::vector<Array>{nn::relu(a),
                              nn::gelu(a),
                              nn::gelu(a, false),
                              nn::sigmoid(a),
                              nn::softmax(a),
                              nn::log_softmax(a, 0),
                              nn::logsumexp(a, -1, true),
                              nn::one_hot(labels, 4),
                              nn::softmax_cross_entropy(a, labels),
                              nn::mse(a, 0.5f * a)};
  };
  std::vector<Array> eager = all(x, y), jitted = jit(all)(x, y);
  REQUIRE(jitted.size() == eager.size());
  for (std::size_t i = 0; i < eager.size(); ++i) {
    INFO("function " << i);
    CHECK(jitted[i].aval() == eager[i].aval());
    check_close(jitted[i], vals(eager[i]), 1e-6, 1e-6);
  }
  // And under jit of grad.
  auto g = jit(grad([](const Array& a, const Array& labels) {
    return np::mean(nn::softmax_cross_entropy(a, labels)) + nn::mse(nn::gelu(a), nn::relu(a));
  }));
  auto ge = grad([](const Array& a, const Array& labels) {
    return np::mean(nn::softmax_cross_entropy(a, labels)) + nn::mse(nn::gelu(a), nn::relu(a));
  })(x, y);
  check_close(g(x, y), vals(ge), 1e-5, 1e-6);
}

}  // namespace
}  // namespace jx
