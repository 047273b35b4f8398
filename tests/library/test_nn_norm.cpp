// jx::nn's LayerNorm and BatchNorm against loops on doubles written here (two-pass statistics,
// flax's formulas): values, statistics computed in float32 for 16-bit inputs, gradients by
// finite differences and in closed form, BatchNorm's running averages over two steps, jit and
// value_and_grad with has_aux, and every error.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
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

Array f64(const Doubles& v, const Shape& shape) { return np::array(v, shape); }
Array f64(const Doubles& v) { return np::array(v); }
Doubles vals(const Array& x) { return x.astype(float64).to_vector<double>(); }

void check_close(const Array& x, const Doubles& want, double tol = 1e-12) {
  Doubles got = vals(x);
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    CHECK(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i])));
  }
}

// Statistics of each group of a [groups, size] layout: mean and biased variance, two-pass.
struct Stats {
  Doubles mean, var;
};
// Over each row of x viewed as [rows, cols] (layer norm).
Stats row_stats(const Doubles& x, int cols) {
  Stats s;
  for (std::size_t r = 0; r < x.size() / cols; ++r) {
    double m = 0, v = 0;
    for (int c = 0; c < cols; ++c) m += x[r * cols + c] / cols;
    for (int c = 0; c < cols; ++c) v += (x[r * cols + c] - m) * (x[r * cols + c] - m) / cols;
    s.mean.push_back(m), s.var.push_back(v);
  }
  return s;
}
// Over each column of x viewed as [rows, channels] (batch norm).
Stats channel_stats(const Doubles& x, int channels) {
  const std::size_t rows = x.size() / channels;
  Stats s{Doubles(channels, 0), Doubles(channels, 0)};
  for (std::size_t r = 0; r < rows; ++r)
    for (int c = 0; c < channels; ++c) s.mean[c] += x[r * channels + c] / double(rows);
  for (std::size_t r = 0; r < rows; ++r)
    for (int c = 0; c < channels; ++c) {
      double d = x[r * channels + c] - s.mean[c];
      s.var[c] += d * d / double(rows);
    }
  return s;
}
// (x - mean) / sqrt(var + eps) * scale + bias: statistics per row (`per_row`) or per channel,
// scale and bias per channel (the last axis, `channels` wide).
Doubles normalized(const Doubles& x, int channels, const Stats& s, bool per_row,
                   const Doubles& scale, const Doubles& bias, double eps) {
  Doubles y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::size_t c = i % channels, g = per_row ? i / channels : c;
    y[i] = (x[i] - s.mean[g]) / std::sqrt(s.var[g] + eps) * scale[c] + bias[c];
  }
  return y;
}

const Doubles kX{0.5, -1.25, 2.0,  0.0,  3.5,  1.0, -0.75, 0.25, -2.0, 0.125, 1.5,  -0.5,
                 4.0, 2.5,   -3.0, 0.75, -1.0, 6.0, 0.3,   -0.2, 1.1,  2.2,   -4.4, 0.9};
const Doubles kScale{1.5, -0.5, 2.0}, kBias{0.1, -0.3, 1.0};

// ---- LayerNorm -------------------------------------------------------------------------------

TEST_CASE("nn: layer_norm normalises the last axis, then scales and shifts", "[nn]") {
  nn::LayerNorm init = nn::layer_norm_init(3);
  CHECK(init.scale.aval() == ShapedArray{{3}, float32, false});
  CHECK(init.scale.to_vector<float>() == std::vector<float>(3, 1.f));
  CHECK(init.bias.to_vector<float>() == std::vector<float>(3, 0.f));

  Array x = f64(kX, {2, 4, 3});
  nn::LayerNorm ln{f64(kScale), f64(kBias)};
  Stats s = row_stats(kX, 3);
  check_close(nn::layer_norm(ln, x), normalized(kX, 3, s, true, kScale, kBias, 1e-6), 1e-10);
  check_close(nn::layer_norm(ln, x, 0.5), normalized(kX, 3, s, true, kScale, kBias, 0.5), 1e-10);
  CHECK(nn::layer_norm(ln, x).shape() == Shape{2, 4, 3});
  // A constant row has variance 0: the output is the bias.
  check_close(nn::layer_norm(ln, f64({2, 2, 2}, {1, 3})), kBias, 1e-12);

  // float32 params on float32, bfloat16 or integer input give float32 (flax's result type).
  nn::LayerNorm ln32 = nn::layer_norm_init(3);
  CHECK(nn::layer_norm(ln32, np::ones({2, 3})).dtype() == float32);
  CHECK(nn::layer_norm(ln32, np::ones({2, 3}, bfloat16)).dtype() == float32);
  Array ints = np::array(std::vector<int>{1, 2, 6}, {1, 3});
  CHECK(ints.dtype() == int32);
  check_close(nn::layer_norm(ln32, ints),
              normalized({1, 2, 6}, 3, row_stats({1, 2, 6}, 3), true, {1, 1, 1}, {0, 0, 0}, 1e-6),
              1e-6);
}

TEST_CASE("nn: layer_norm of bfloat16 computes its statistics in float32", "[nn]") {
  // 256 + {0, 2, 4, 6}: exact in bfloat16, but their squares (65536...) are 512 apart there, so
  // mean(x^2) - mean(x)^2 in bfloat16 would lose the variance (5) entirely.
  Doubles x{256, 258, 260, 262};
  nn::LayerNorm ln{np::ones({4}, bfloat16), np::zeros({4}, bfloat16)};
  Array y = nn::layer_norm(ln, np::array(x).astype(bfloat16));
  CHECK(y.dtype() == bfloat16);
  Doubles want = normalized(x, 4, row_stats(x, 4), true, {1, 1, 1, 1}, {0, 0, 0, 0}, 1e-6);
  check_close(y, want, 1.0 / 128);  // bfloat16's rounding of the result
}

TEST_CASE("nn: layer_norm's gradients and jit", "[nn]") {
  Array x = f64(kX, {8, 3});
  testing::check_grads(
      [](const std::vector<Array>& a) {
        return nn::layer_norm(nn::LayerNorm{a[1], a[2]}, a[0]);
      },
      {x, f64(kScale), f64(kBias)}, 2);
  // d/d bias of sum(y * w) is w summed over rows; d/d scale is (w * x_hat) summed.
  Array w = f64(Doubles(kX.rbegin(), kX.rend()), {8, 3});
  auto loss = [&](const nn::LayerNorm& p) { return np::sum(nn::layer_norm(p, x) * w); };
  nn::LayerNorm g = grad(loss)(nn::LayerNorm{f64(kScale), f64(kBias)});
  Doubles x_hat = normalized(kX, 3, row_stats(kX, 3), true, {1, 1, 1}, {0, 0, 0}, 1e-6);
  Doubles wv = vals(w), g_scale(3, 0), g_bias(3, 0);
  for (std::size_t i = 0; i < wv.size(); ++i)
    g_scale[i % 3] += wv[i] * x_hat[i], g_bias[i % 3] += wv[i];
  check_close(g.scale, g_scale, 1e-10);
  check_close(g.bias, g_bias, 1e-12);

  Array x32 = x.astype(float32);
  nn::LayerNorm p32{f64(kScale).astype(float32), f64(kBias).astype(float32)};
  auto f = jit([](const nn::LayerNorm& p, const Array& a) { return nn::layer_norm(p, a); });
  check_close(f(p32, x32), vals(nn::layer_norm(p32, x32)), 1e-6);
}

// ---- BatchNorm -------------------------------------------------------------------------------

TEST_CASE("nn: batch_norm in training uses the batch's statistics and moves the running ones",
          "[nn]") {
  nn::BatchNorm bn = nn::batch_norm_init(3);
  nn::BatchStats stats = nn::batch_stats_init(3);
  CHECK(bn.scale.to_vector<float>() == std::vector<float>(3, 1.f));
  CHECK(bn.bias.to_vector<float>() == std::vector<float>(3, 0.f));
  CHECK(stats.mean.aval() == ShapedArray{{3}, float32, false});
  CHECK(stats.mean.to_vector<float>() == std::vector<float>(3, 0.f));
  CHECK(stats.var.to_vector<float>() == std::vector<float>(3, 1.f));

  // x: (batch 4, width 2, features 3): statistics over the 8 positions of each feature.
  Array x = f64(kX, {4, 2, 3});
  nn::BatchNorm p{f64(kScale), f64(kBias)};
  nn::BatchStats running{f64({0, 0, 0}), f64({1, 1, 1})};
  auto [y, updated] = nn::batch_norm(p, running, x, /*training=*/true);
  Stats s = channel_stats(kX, 3);
  check_close(y, normalized(kX, 3, s, false, kScale, kBias, 1e-5), 1e-10);
  Doubles mean1(3), var1(3);
  for (int c = 0; c < 3; ++c) {
    mean1[c] = 0.99 * 0 + 0.01 * s.mean[c];
    var1[c] = 0.99 * 1 + 0.01 * s.var[c];
  }
  check_close(updated.mean, mean1);
  check_close(updated.var, var1);

  // A second step on another batch, momentum 0.9, epsilon 1e-3: the averages move again.
  Doubles x2(kX.rbegin(), kX.rend());
  for (double& v : x2) v = 2 * v + 1;
  auto [y2, updated2] = nn::batch_norm(p, updated, f64(x2, {8, 3}), true, 0.9, 1e-3);
  Stats s2 = channel_stats(x2, 3);
  check_close(y2, normalized(x2, 3, s2, false, kScale, kBias, 1e-3), 1e-10);
  Doubles mean2(3), var2(3);
  for (int c = 0; c < 3; ++c) {
    mean2[c] = 0.9 * mean1[c] + 0.1 * s2.mean[c];
    var2[c] = 0.9 * var1[c] + 0.1 * s2.var[c];
  }
  check_close(updated2.mean, mean2);
  check_close(updated2.var, var2);

  // Evaluation normalises by the running statistics and returns them unchanged.
  auto [y_eval, same] = nn::batch_norm(p, updated2, x, /*training=*/false);
  check_close(y_eval, normalized(kX, 3, {mean2, var2}, false, kScale, kBias, 1e-5), 1e-10);
  CHECK(vals(same.mean) == vals(updated2.mean));
  CHECK(vals(same.var) == vals(updated2.var));
}

TEST_CASE("nn: batch_norm keeps the running statistics' dtype; 2-D and 1-D inputs", "[nn]") {
  nn::BatchNorm p = nn::batch_norm_init(3);
  nn::BatchStats s = nn::batch_stats_init(3);
  auto [y, s2] = nn::batch_norm(p, s, f64(kX, {8, 3}), true);
  CHECK(y.dtype() == float64);
  CHECK(s2.mean.dtype() == float32);
  CHECK(s2.var.dtype() == float32);
  auto [y16, s16] = nn::batch_norm(p, s, f64(kX, {8, 3}).astype(bfloat16), true);
  CHECK(y16.dtype() == float32);
  CHECK(s16.mean.dtype() == float32);
  // A 1-D input is one example's features: its own statistics, so the output is the bias.
  auto [y1, s1] = nn::batch_norm(nn::BatchNorm{f64(kScale), f64(kBias)}, s, f64({1, 2, 3}), true);
  check_close(y1, kBias, 1e-12);
  check_close(s1.mean, {0.01, 0.02, 0.03}, 1e-7);
}

TEST_CASE("nn: batch_norm's gradients, in training and evaluation", "[nn]") {
  Array x = f64(kX, {4, 2, 3});
  nn::BatchStats running{f64({0.5, -1, 0.25}), f64({2, 0.5, 1.5})};
  for (bool training : {true, false}) {
    INFO("training " << training);
    testing::check_grads(
        [&](const std::vector<Array>& a) {
          return nn::batch_norm(nn::BatchNorm{a[1], a[2]}, running, a[0], training).first;
        },
        {x, f64(kScale), f64(kBias)}, 2);
  }
}

TEST_CASE("nn: batch_norm under jit of value_and_grad with has_aux returns the new statistics",
          "[nn]") {
  Array x = f64(kX, {8, 3}).astype(float32);
  Array w = f64(Doubles(kX.rbegin(), kX.rend()), {8, 3}).astype(float32);
  // The loss returns the updated statistics as its aux, as a training step carries them.
  auto loss = [](const nn::BatchNorm& p, const nn::BatchStats& s, const Array& a, const Array& wt) {
    auto [y, updated] = nn::batch_norm(p, s, a, /*training=*/true);
    return std::pair{np::sum(y * wt), updated};
  };
  auto step = jit([&](const nn::BatchNorm& p, const nn::BatchStats& s, const Array& a,
                      const Array& wt) { return value_and_grad(loss, has_aux)(p, s, a, wt); });
  nn::BatchNorm p{f64(kScale).astype(float32), f64(kBias).astype(float32)};
  nn::BatchStats s = nn::batch_stats_init(3);
  auto [value_aux, g] = step(p, s, x, w);
  auto [value, stats] = value_aux;

  Stats bs = channel_stats(kX, 3);
  Doubles x_hat = normalized(kX, 3, bs, false, {1, 1, 1}, {0, 0, 0}, 1e-5), y(24);
  Doubles wv = vals(w), g_scale(3, 0), g_bias(3, 0);
  double want_value = 0;
  for (std::size_t i = 0; i < 24; ++i) {
    std::size_t c = i % 3;
    want_value += wv[i] * (x_hat[i] * kScale[c] + kBias[c]);
    g_scale[c] += wv[i] * x_hat[i];
    g_bias[c] += wv[i];
  }
  CHECK(value.item<float>() == Approx(want_value).epsilon(1e-5));
  check_close(g.scale, g_scale, 1e-5);
  check_close(g.bias, g_bias, 1e-5);
  Doubles mean1(3), var1(3);
  for (int c = 0; c < 3; ++c) mean1[c] = 0.01 * bs.mean[c], var1[c] = 0.99 + 0.01 * bs.var[c];
  check_close(stats.mean, mean1, 1e-6);
  check_close(stats.var, var1, 1e-6);

  // Eager value_and_grad agrees; a second jitted call on the new statistics is a cache hit.
  auto [eager_aux, eager_g] = value_and_grad(loss, has_aux)(p, s, x, w);
  check_close(g.scale, vals(eager_g.scale), 1e-5);
  check_close(stats.var, vals(eager_aux.second.var), 1e-6);
  step(p, stats, x, w);
  CHECK(step.cache_info().hits == 1);
}

TEST_CASE("nn: layer_norm and batch_norm errors", "[nn][errors]") {
  nn::LayerNorm ln = nn::layer_norm_init(3);
  CHECK(error_of<ShapeError>([&] {
          nn::layer_norm(ln, np::ones({2, 4}));
        }) ==
        "layer_norm: scale and bias must have shape (4,) (the features of x, of shape (2, 4)), "
        "got (3,)");
  CHECK(error_of<ShapeError>([&] { nn::layer_norm(ln, np::array(1.f)); }) ==
        "layer_norm: x must have a feature axis (its last), got shape ()");
  CHECK(error_of<ShapeError>([&] {
          nn::layer_norm(nn::LayerNorm{np::ones({3}), np::zeros({1, 3})}, np::ones({2, 3}));
        }) ==
        "layer_norm: scale and bias must have shape (3,) (the features of x, of shape (2, 3)), "
        "got (1, 3)");

  nn::BatchNorm bn = nn::batch_norm_init(3);
  nn::BatchStats st = nn::batch_stats_init(3);
  const char* bad =
      "batch_norm: scale, bias and the running mean and var must have shape (2,) "
      "(the features of x, of shape (5, 2)), got (3,)";
  CHECK(error_of<ShapeError>([&] { nn::batch_norm(bn, st, np::ones({5, 2}), true); }) == bad);
  CHECK(error_of<ShapeError>([&] {
          nn::batch_norm(nn::batch_norm_init(2), st, np::ones({5, 2}), false);
        }) == bad);
  CHECK(error_of<ShapeError>([&] {
          nn::batch_norm(bn, nn::BatchStats{np::zeros({3}), np::ones({4})}, np::ones({5, 3}), true);
        }) ==
        "batch_norm: scale, bias and the running mean and var must have shape (3,) (the features "
        "of x, of shape (5, 3)), got (4,)");
  CHECK(error_of<ShapeError>([&] { nn::batch_norm(bn, st, np::array(1.f), true); }) ==
        "batch_norm: x must have a feature axis (its last), got shape ()");
}

}  // namespace
}  // namespace jx
