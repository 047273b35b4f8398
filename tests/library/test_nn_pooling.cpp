// nn::max_pool and nn::avg_pool (flax.linen's pools) against explicit loops over NHWC inputs:
// values, gradients, padding, unbatched inputs, and jit of max_pool's value_and_grad.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "jx/jx.hpp"

namespace jx {
namespace {

using Ints = std::vector<std::int64_t>;

std::vector<double> values(const Array& a) { return a.to_vector<double>(); }

// Reproducible values in [-3, 3), as the floats the arrays hold.
std::vector<float> uniform(std::int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-3, 3);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = dist(gen);
  return v;
}

}  // namespace

namespace {

// flax's pools by explicit loops over an NHWC input: each window's max or mean over the
// positions inside the input, padded positions counting toward the mean unless excluded.
struct PoolCase {
  std::string padding;
  Ints window, strides;
};

std::vector<double> pool_oracle(const std::vector<float>& x, const Shape& s, const PoolCase& c,
                                bool is_max, bool count_include_pad, Shape& out_shape) {
  std::int64_t n = s[0], h = s[1], w = s[2], f = s[3];
  std::int64_t pad_h = 0, pad_w = 0, oh, ow;
  auto same = [](std::int64_t in, std::int64_t k, std::int64_t st, std::int64_t& lo) {
    std::int64_t out = (in + st - 1) / st;
    std::int64_t total = std::max<std::int64_t>(0, (out - 1) * st + k - in);
    lo = total / 2;
    return out;
  };
  if (c.padding == "SAME") {
    oh = same(h, c.window[0], c.strides[0], pad_h);
    ow = same(w, c.window[1], c.strides[1], pad_w);
  } else {
    oh = (h - c.window[0]) / c.strides[0] + 1;
    ow = (w - c.window[1]) / c.strides[1] + 1;
  }
  out_shape = {n, oh, ow, f};
  std::vector<double> out;
  for (std::int64_t b = 0; b < n; ++b)
    for (std::int64_t i = 0; i < oh; ++i)
      for (std::int64_t j = 0; j < ow; ++j)
        for (std::int64_t k = 0; k < f; ++k) {
          double acc = is_max ? -INFINITY : 0;
          std::int64_t count = 0;
          for (std::int64_t di = 0; di < c.window[0]; ++di)
            for (std::int64_t dj = 0; dj < c.window[1]; ++dj) {
              std::int64_t r = i * c.strides[0] + di - pad_h, q = j * c.strides[1] + dj - pad_w;
              if (r < 0 || r >= h || q < 0 || q >= w) continue;
              double v = x[static_cast<std::size_t>(((b * h + r) * w + q) * f + k)];
              acc = is_max ? std::max(acc, v) : acc + v;
              ++count;
            }
          if (!is_max) acc /= count_include_pad ? double(c.window[0] * c.window[1]) : double(count);
          out.push_back(acc);
        }
  return out;
}

// d sum(pool(x) * weights) / dx by explicit loops: each window's weight to its first maximum
// (max) or spread over its elements (mean).
std::vector<double> pool_grad_oracle(const std::vector<float>& x, const Shape& s, const PoolCase& c,
                                     bool is_max, const std::vector<double>& weights) {
  std::int64_t n = s[0], h = s[1], w = s[2], f = s[3];
  std::int64_t pad_h = 0, pad_w = 0;
  Shape out_shape;
  pool_oracle(x, s, c, is_max, true, out_shape);
  if (c.padding == "SAME") {
    pad_h = std::max<std::int64_t>(0, (out_shape[1] - 1) * c.strides[0] + c.window[0] - h) / 2;
    pad_w = std::max<std::int64_t>(0, (out_shape[2] - 1) * c.strides[1] + c.window[1] - w) / 2;
  }
  std::vector<double> g(x.size(), 0.0);
  std::size_t o = 0;
  for (std::int64_t b = 0; b < n; ++b)
    for (std::int64_t i = 0; i < out_shape[1]; ++i)
      for (std::int64_t j = 0; j < out_shape[2]; ++j)
        for (std::int64_t k = 0; k < f; ++k, ++o) {
          std::int64_t best = -1;
          for (std::int64_t di = 0; di < c.window[0]; ++di)
            for (std::int64_t dj = 0; dj < c.window[1]; ++dj) {
              std::int64_t r = i * c.strides[0] + di - pad_h, q = j * c.strides[1] + dj - pad_w;
              if (r < 0 || r >= h || q < 0 || q >= w) continue;
              auto at = static_cast<std::int64_t>(((b * h + r) * w + q) * f + k);
              if (!is_max)
                g[static_cast<std::size_t>(at)] += weights[o] / double(c.window[0] * c.window[1]);
              else if (best < 0 ||
                       x[static_cast<std::size_t>(at)] > x[static_cast<std::size_t>(best)])
                best = at;
            }
          if (is_max && best >= 0) g[static_cast<std::size_t>(best)] += weights[o];
        }
  return g;
}

void check_close(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    CHECK(got[i] == Approx(want[i]).epsilon(1e-5).margin(1e-6));
  }
}

const std::vector<PoolCase> kPoolCases = {
    {"VALID", {2, 2}, {1, 1}}, {"VALID", {2, 2}, {2, 2}}, {"SAME", {3, 3}, {1, 1}},
    {"SAME", {3, 3}, {2, 2}},  {"VALID", {3, 3}, {2, 2}}, {"SAME", {2, 3}, {2, 1}},
};

}  // namespace

TEST_CASE("nn::max_pool and avg_pool match loops, forward and gradient", "[windowed][nn]") {
  Shape s = {2, 7, 6, 3};
  std::vector<float> xv = uniform(shape_size(s), 7);
  Array x = np::array(xv, s);
  for (const PoolCase& c : kPoolCases) {
    INFO(c.padding << " window " << c.window[0] << "x" << c.window[1] << " stride " << c.strides[0]
                   << "x" << c.strides[1]);
    for (bool is_max : {true, false}) {
      INFO((is_max ? "max_pool" : "avg_pool"));
      auto pool = [c, is_max](const Array& a) {
        return is_max ? nn::max_pool(a, c.window, c.strides, Padding(c.padding))
                      : nn::avg_pool(a, c.window, c.strides, Padding(c.padding));
      };
      Shape out_shape;
      std::vector<double> want = pool_oracle(xv, s, c, is_max, true, out_shape);
      Array y = pool(x);
      CHECK(y.shape() == out_shape);
      check_close(values(y), want);
      std::vector<double> weights;
      for (std::size_t i = 0; i < want.size(); ++i) weights.push_back(double(i % 5) - 2);
      Array wts = np::array(std::vector<float>(weights.begin(), weights.end()), out_shape);
      auto loss = [&](const Array& a) { return np::sum(pool(a) * wts); };
      std::vector<double> gwant = pool_grad_oracle(xv, s, c, is_max, weights);
      check_close(values(jx::grad(loss)(x)), gwant);
    }
    if (c.padding == "SAME") {
      Shape out_shape;
      std::vector<double> want = pool_oracle(xv, s, c, false, false, out_shape);
      check_close(values(nn::avg_pool(x, c.window, c.strides, Padding(c.padding), false)), want);
    }
  }
}

TEST_CASE("nn pools: an unbatched input, explicit padding, and the errors", "[windowed][nn]") {
  // (spatial, features) = (4, 1): windows of 2 at stride 2.
  Array x = np::array(std::vector<float>{1, 4, 2, 3}, {4, 1});
  CHECK(nn::max_pool(x, {2}, {2}).shape() == Shape{2, 1});
  CHECK(values(nn::max_pool(x, {2}, {2})) == std::vector<double>{4, 3});
  CHECK(values(nn::avg_pool(x, {2}, {2})) == std::vector<double>{2.5, 2.5});
  // Explicit (1, 0): [pad, 1], [4, 2]; the mean counts the pad unless told not to.
  CHECK(values(nn::avg_pool(x, {2}, {2}, PadPairs{{1, 0}})) == std::vector<double>{0.5, 3});
  CHECK(values(nn::avg_pool(x, {2}, {2}, PadPairs{{1, 0}}, false)) == std::vector<double>{1, 3});
  CHECK_THROWS_AS(nn::max_pool(np::zeros({4}), {2, 2}), ValueError);
}

TEST_CASE("jit of max_pool's value_and_grad matches loops", "[windowed][nn]") {
  Shape s = {2, 9, 8, 4};
  std::vector<float> xv = uniform(shape_size(s), 3);
  Array x = np::array(xv, s);
  const PoolCase c{"SAME", {3, 3}, {2, 2}};  // overlapping windows
  auto loss = [&c](const Array& a) {
    Array y = nn::max_pool(a, c.window, c.strides, Padding(c.padding));
    return np::sum(y * y);
  };
  Shape out_shape;
  std::vector<double> y = pool_oracle(xv, s, c, true, true, out_shape), twice_y;
  double want = 0;
  for (double v : y) want += v * v, twice_y.push_back(2 * v);
  auto [value, grad] = jx::jit(jx::value_and_grad(loss))(x);
  CHECK(value.item<double>() == Approx(want).epsilon(1e-5));
  check_close(values(grad), pool_grad_oracle(xv, s, c, true, twice_y));
}

}  // namespace jx
