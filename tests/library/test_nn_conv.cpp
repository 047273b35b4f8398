// jx::nn's Conv layer against a convolution written here as loops on doubles (NHWC input, HWIO
// kernel, zero padding), in 1, 2 and 3 spatial dims, with "SAME", "VALID" and explicit padding
// and strides; gradients by finite differences; jit; dtype promotion; the errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <utility>
#include <vector>

#include "jx/jit.hpp"
#include "jx/nn.hpp"
#include "jx/numpy.hpp"
#include "jx/random.hpp"
#include "support/check_grads.hpp"
#include "support/error_of.hpp"

namespace jx {
namespace {

namespace nn = jx::nn;
using Doubles = std::vector<double>;
using Dims = std::vector<std::int64_t>;
using Pads = std::vector<std::pair<std::int64_t, std::int64_t>>;
using jx::testing::error_of;

Doubles vals(const Array& x) { return x.astype(float64).to_vector<double>(); }

Doubles ramp(std::int64_t n, double step, double offset) {
  Doubles v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(std::sin(step * double(i) + offset));
  return v;
}

std::int64_t count(const Dims& d) {
  std::int64_t n = 1;
  for (std::int64_t v : d) n *= v;
  return n;
}

// Row-major position of `index` in `dims`.
std::int64_t flat(const Dims& index, const Dims& dims) {
  std::int64_t p = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) p = p * dims[i] + index[i];
  return p;
}

// Increments `index` within `dims` (odometer); false after the last.
bool next(Dims& index, const Dims& dims) {
  for (std::size_t i = dims.size(); i-- > 0;) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

// TensorFlow's SAME padding: ceil(in / stride) outputs, the padding split with the odd one high.
Pads same_pads(const Dims& in, const Dims& window, const Dims& strides) {
  Pads p;
  for (std::size_t i = 0; i < in.size(); ++i) {
    std::int64_t out = (in[i] + strides[i] - 1) / strides[i];
    std::int64_t total = std::max<std::int64_t>((out - 1) * strides[i] + window[i] - in[i], 0);
    p.emplace_back(total / 2, total - total / 2);
  }
  return p;
}

struct Conv {
  Dims shape;  // the output's: batch, spatial..., features
  Doubles y;
};

// y[n, o, f] = b[f] + sum over taps k and input features c of x[n, o * s + k - pad_lo, c] *
// w[k, c, f], with x zero outside its bounds; o, k, s, pad one per spatial dim.
Conv conv_loop(const Doubles& x, const Dims& xs, const Doubles& w, const Dims& ws, const Doubles& b,
               const Dims& strides, const Pads& pads) {
  const std::size_t n_sp = ws.size() - 2;
  const std::int64_t batch = xs[0], in_f = xs.back(), out_f = ws.back();
  Dims in_sp(xs.begin() + 1, xs.end() - 1), k_sp(ws.begin(), ws.begin() + n_sp), out_sp;
  for (std::size_t i = 0; i < n_sp; ++i)
    out_sp.push_back((in_sp[i] + pads[i].first + pads[i].second - k_sp[i]) / strides[i] + 1);
  Conv r;
  r.shape = {batch};
  r.shape.insert(r.shape.end(), out_sp.begin(), out_sp.end());
  r.shape.push_back(out_f);
  r.y.assign(static_cast<std::size_t>(count(r.shape)), 0);
  for (std::int64_t n = 0; n < batch; ++n) {
    Dims o(n_sp, 0);
    do {
      for (std::int64_t f = 0; f < out_f; ++f) {
        double acc = b[static_cast<std::size_t>(f)];
        Dims k(n_sp, 0);
        do {
          Dims xi{n};
          bool inside = true;
          for (std::size_t i = 0; i < n_sp; ++i) {
            std::int64_t pos = o[i] * strides[i] + k[i] - pads[i].first;
            inside &= pos >= 0 && pos < in_sp[i];
            xi.push_back(pos);
          }
          if (!inside) continue;
          for (std::int64_t c = 0; c < in_f; ++c) {
            Dims xc = xi, wi = k;
            xc.push_back(c);
            wi.push_back(c), wi.push_back(f);
            acc += x[static_cast<std::size_t>(flat(xc, xs))] *
                   w[static_cast<std::size_t>(flat(wi, ws))];
          }
        } while (next(k, k_sp));
        Dims yi{n};
        yi.insert(yi.end(), o.begin(), o.end());
        yi.push_back(f);
        r.y[static_cast<std::size_t>(flat(yi, r.shape))] = acc;
      }
    } while (next(o, out_sp));
  }
  return r;
}

void check_close(const Array& got, const Conv& want, double tol) {
  REQUIRE(got.shape() == Shape(want.shape));
  Doubles g = vals(got);
  double worst = 0;
  for (std::size_t i = 0; i < g.size(); ++i)
    worst = std::max(worst, std::abs(g[i] - want.y[i]) / (1 + std::abs(want.y[i])));
  CHECK(worst <= tol);
}

struct Case {
  const char* name;
  Dims x_shape, kernel;
  int in, out;
  Dims strides;  // empty: 1s
  Padding padding;
  Pads pads;  // the oracle's; empty: SAME's
};

TEST_CASE("nn: conv is the NHWC / HWIO convolution plus the bias, in 1 to 3 spatial dims",
          "[nn][conv]") {
  const std::vector<Case> cases = {
      {"2-D SAME", {2, 5, 6, 3}, {3, 3}, 3, 4, {}, "SAME", {}},
      {"2-D SAME stride 2", {2, 5, 6, 3}, {3, 3}, 3, 4, {2, 2}, "SAME", {}},
      {"2-D VALID strides (1, 2)", {2, 5, 6, 3}, {3, 2}, 3, 4, {1, 2}, "VALID", {{0, 0}, {0, 0}}},
      {"2-D explicit", {1, 4, 5, 2}, {2, 3}, 2, 3, {}, Pads{{1, 0}, {2, 1}}, {{1, 0}, {2, 1}}},
      {"1-D SAME even kernel", {2, 7, 2}, {4}, 2, 5, {}, "SAME", {}},
      {"3-D SAME", {1, 3, 4, 5, 2}, {2, 2, 3}, 2, 3, {1, 2, 1}, "SAME", {}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    nn::Conv layer = nn::conv_init(random::key(1), c.in, c.out, c.kernel);
    Dims ws = c.kernel;
    ws.push_back(c.in), ws.push_back(c.out);
    Doubles w = ramp(count(ws), 0.37, 0.1), b = ramp(c.out, 1.3, 0.5);
    Doubles x = ramp(count(c.x_shape), 0.21, -0.4);
    layer = nn::Conv{np::array(w, ws), np::array(b)};
    Dims strides = c.strides.empty() ? Dims(c.kernel.size(), 1) : c.strides;
    Pads pads = c.pads;
    if (pads.empty())
      pads = same_pads(Dims(c.x_shape.begin() + 1, c.x_shape.end() - 1), c.kernel, strides);
    Conv want = conv_loop(x, c.x_shape, w, ws, b, strides, pads);
    Array xa = np::array(x, c.x_shape);
    check_close(nn::conv(layer, xa, c.strides, c.padding), want, 1e-12);
    // float32 under jit.
    nn::Conv layer32{layer.w.astype(float32), layer.b.astype(float32)};
    auto f = jit(
        [&](const nn::Conv& p, const Array& a) { return nn::conv(p, a, c.strides, c.padding); });
    check_close(f(layer32, xa.astype(float32)), want, 1e-5);
  }
}

TEST_CASE("nn: conv's gradients with respect to input, kernel and bias", "[nn][conv]") {
  Dims xs{2, 4, 5, 3}, ws{3, 2, 3, 2};
  Array x = np::array(ramp(count(xs), 0.3, 0.2), xs);
  Array w = np::array(ramp(count(ws), 0.7, -0.3), ws), b = np::array(Doubles{0.5, -1});
  for (Dims strides : {Dims{1, 1}, Dims{2, 1}})
    testing::check_grads(
        [strides](const std::vector<Array>& a) {
          return nn::conv(nn::Conv{a[1], a[2]}, a[0], strides, "SAME");
        },
        {x, w, b}, 1);
}

TEST_CASE("nn: conv promotes uint8 pixels to the kernel's float32", "[nn][conv]") {
  Dims xs{1, 3, 3, 1};
  std::vector<std::uint8_t> pixels{0, 10, 20, 30, 40, 50, 60, 70, 255};
  Array x = np::array(pixels, xs);
  nn::Conv layer{np::ones({2, 2, 1, 1}), np::array(std::vector<float>{1.f})};
  Array y = nn::conv(layer, x, {}, "VALID");
  CHECK(y.dtype() == float32);
  CHECK(y.to_vector<float>() == std::vector<float>{1 + 80, 1 + 120, 1 + 200, 1 + 415});
}

TEST_CASE("nn: conv errors", "[nn][conv][errors]") {
  nn::Conv layer = nn::conv_init(random::key(0), 3, 4, {3, 3});
  CHECK(error_of<ShapeError>([&] {
          nn::conv(layer, np::ones({5, 5, 3}));
        }) ==
        "conv: input of shape (5, 5, 3) does not fit kernel of shape (3, 3, 3, 4): expected "
        "(batch, 2 spatial dims, 3 features)");
  CHECK(error_of<ShapeError>([&] {
          nn::conv(layer, np::ones({1, 5, 5, 2}));
        }) ==
        "conv: input of shape (1, 5, 5, 2) does not fit kernel of shape (3, 3, 3, 4): expected "
        "(batch, 2 spatial dims, 3 features)");
  CHECK(error_of<ShapeError>([&] {
          nn::conv(nn::Conv{layer.w, np::zeros({3})}, np::ones({1, 5, 5, 3}));
        }) == "conv: bias of shape (3,) does not match the kernel's 4 output features");
  CHECK(error_of<ShapeError>([&] {
          nn::conv(nn::Conv{np::ones({3, 4}), np::zeros({4})}, np::ones({2, 3}));
        }) == "conv: the kernel must be (spatial..., in_features, out_features), got shape (3, 4)");
}

}  // namespace
}  // namespace jx
