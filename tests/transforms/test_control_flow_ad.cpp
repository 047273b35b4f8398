// Autodiff through structured control flow (lax::cond, switch_, while_loop, fori_loop, scan):
// forward and reverse mode against finite differences (check_grads), closed forms and
// hand-written backpropagation on the host; jit(grad) against eager grad; higher order; the
// reverse-mode error of while_loop. Pytrees, nesting and Jacobians:
// test_control_flow_ad_nested.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include <jx/jx.hpp>

#include "support/check_grads.hpp"
#include "support/grad_values.hpp"

namespace jx {
namespace {

using jx::testing::check_grads;
using Arrays = std::vector<Array>;
using namespace testing::grad_values;  // NOLINT: the helpers of these tests

// ---- the functions under test ----------------------------------------------------------------

// cond with the pred computed from the data; `y` enters the branches by capture, not as an
// operand.
Array cond_fn(const Array& x, const Array& y) {
  return lax::cond(
      np::sum(x) > 0.0, [&](const Array& a) { return np::sin(a) * y + a * a; },
      [&](const Array& a) { return np::exp(a) * y * y - a; }, x);
}

// switch_ over three branches taking two operands; `w` captured.
Array switch_fn(const Array& index, const Array& x, const Array& y, const Array& w) {
  return lax::switch_(
      index,
      std::tuple{[&](const Array& a, const Array& b) { return a * b + w; },
                 [&](const Array& a, const Array& b) { return np::sin(a) - b * w; },
                 [&](const Array& a, const Array& b) { return np::tanh(a * b) * w * w; }},
      x, y);
}

// An RNN over the rows of xs: h = tanh(W h + U x_t + b); loss = the sum of every h_t.
Array rnn_loss(const Array& w, const Array& u, const Array& b, const Array& xs, const Array& h0) {
  auto [h, hs] = lax::scan(
      [&](const Array& h_, const Array& x) {
        Array next = np::tanh(np::matmul(w, h_) + np::matmul(u, x) + b);
        return std::pair{next, next};
      },
      h0, xs);
  return np::sum(hs);
}

// The same RNN and its gradients (W, U, b) by hand: forward, then backpropagation through time.
struct RnnHost {
  double loss = 0;
  std::vector<double> dw, du, db;
};
RnnHost rnn_host(const std::vector<double>& w, const std::vector<double>& u,
                 const std::vector<double>& b, const std::vector<double>& xs,
                 const std::vector<double>& h0, int steps, int n) {
  auto at = [n](int i, int j) { return static_cast<std::size_t>(i * n + j); };
  std::vector<std::vector<double>> hs{h0};
  RnnHost out;
  for (int t = 0; t < steps; ++t) {
    std::vector<double> next(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      double a = b[static_cast<std::size_t>(i)];
      for (int j = 0; j < n; ++j)
        a += w[at(i, j)] * hs.back()[static_cast<std::size_t>(j)] + u[at(i, j)] * xs[at(t, j)];
      next[static_cast<std::size_t>(i)] = std::tanh(a);
      out.loss += next[static_cast<std::size_t>(i)];
    }
    hs.push_back(next);
  }
  out.dw.assign(static_cast<std::size_t>(n * n), 0);
  out.du.assign(static_cast<std::size_t>(n * n), 0);
  out.db.assign(static_cast<std::size_t>(n), 0);
  std::vector<double> da_next(static_cast<std::size_t>(n), 0);  // dL/da_{t+1}
  for (int t = steps; t >= 1; --t) {
    const std::vector<double>& h = hs[static_cast<std::size_t>(t)];
    const std::vector<double>& prev = hs[static_cast<std::size_t>(t - 1)];
    std::vector<double> da(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      double dh = 1;  // from the loss directly
      for (int k = 0; k < n; ++k) dh += w[at(k, i)] * da_next[static_cast<std::size_t>(k)];
      da[static_cast<std::size_t>(i)] =
          dh * (1 - h[static_cast<std::size_t>(i)] * h[static_cast<std::size_t>(i)]);
    }
    for (int i = 0; i < n; ++i) {
      double d = da[static_cast<std::size_t>(i)];
      out.db[static_cast<std::size_t>(i)] += d;
      for (int j = 0; j < n; ++j) {
        out.dw[at(i, j)] += d * prev[static_cast<std::size_t>(j)];
        out.du[at(i, j)] += d * xs[at(t - 1, j)];
      }
    }
    da_next = da;
  }
  return out;
}

// A scan run from the last row of xs to the first: c = c * sin(x) + x * y; ys are the carries.
std::pair<Array, Array> reverse_scan(const Array& c0, const Array& xs, const Array& y) {
  return lax::scan(
      [&](const Array& c, const Array& x) {
        Array next = c * np::sin(x) + x * y;
        return std::pair{next, next * next};
      },
      c0, xs, {.reverse = true});
}

// 10 steps of x = x - 0.1 sin(x) y, with static bounds. The step is a float64 0.1, as the host
// loop computes it: the weak literal 0.1 would be the float32 nearest 0.1.
Array fori_relax(const Array& x, const Array& y) {
  return lax::fori_loop(
      0, 10, [&](const Array&, const Array& c) { return c - f64(0.1) * np::sin(c) * y; }, x);
}

// A scan whose body branches on the sign of its x: c * x, or c + x * x * w.
std::pair<Array, Array> scan_with_cond(const Array& c0, const Array& xs, const Array& w) {
  return lax::scan(
      [&](const Array& c, const Array& x) {
        Array next = lax::cond(
            x > 0.0, [&](const Array& cc, const Array& xx) { return cc * xx + np::sin(w); },
            [&](const Array& cc, const Array& xx) { return cc + xx * xx * w; }, c, x);
        return std::pair{next, np::cos(next)};
      },
      c0, xs);
}

}  // namespace

// ---- cond and switch -------------------------------------------------------------------------

TEST_CASE("control flow AD: cond with a data-dependent pred, both branches, vs finite differences",
          "[control_flow_ad]") {
  auto f = [](const Arrays& a) { return cond_fn(a[0], a[1]); };
  Array y = f64({0.7, -1.3, 0.4}, {3});
  // grad and jit(grad) of sum(f) at (x, y) against the closed forms gx, gy.
  auto grads_match = [&](const Array& x, const std::vector<double>& gx,
                         const std::vector<double>& gy) {
    auto loss = [](const Array& a, const Array& b) { return np::sum(cond_fn(a, b)); };
    auto [dx, dy] = grad<0, 1>(loss)(x, y);
    require_close(dx, gx);
    require_close(dy, gy);
    auto [jdx, jdy] = jit(grad<0, 1>(loss))(x, y);
    require_close(jdx, dx, 1e-12);
    require_close(jdy, dy, 1e-12);
  };
  SECTION("true branch") {
    Array x = f64({0.5, 1.2, -0.3}, {3});
    REQUIRE(np::sum(x).item<double>() > 0);
    check_grads(f, {x, y}, 2);
    // Closed form: d/dx sum(sin(x) y + x^2) = cos(x) y + 2x; d/dy = sin(x).
    std::vector<double> xv = values(x), yv = values(y), gx, gy;
    for (int i = 0; i < 3; ++i) {
      gx.push_back(std::cos(xv[i]) * yv[i] + 2 * xv[i]);
      gy.push_back(std::sin(xv[i]));
    }
    grads_match(x, gx, gy);
  }
  SECTION("false branch") {
    Array x = f64({-0.5, 0.2, -0.9}, {3});
    REQUIRE(np::sum(x).item<double>() < 0);
    check_grads(f, {x, y}, 2);
    // d/dx sum(exp(x) y^2 - x) = exp(x) y^2 - 1; d/dy = 2 exp(x) y.
    std::vector<double> xv = values(x), yv = values(y), gx, gy;
    for (int i = 0; i < 3; ++i) {
      gx.push_back(std::exp(xv[i]) * yv[i] * yv[i] - 1);
      gy.push_back(2 * std::exp(xv[i]) * yv[i]);
    }
    grads_match(x, gx, gy);
  }
}

TEST_CASE("control flow AD: cond capturing a concrete outside array and a traced one",
          "[control_flow_ad]") {
  Array outside = f64({2.0, -1.0}, {2});  // a constant: contributes to values, not gradients
  auto f = [&](const Arrays& a) {
    const Array& s = a[1];  // traced, captured by the true branch only
    return lax::cond(
        np::min(a[0]) > 0.0, [&](const Array& x) { return x * outside * s; },
        [&](const Array& x) { return x * x * outside; }, a[0]);
  };
  check_grads(f, {f64({0.3, 0.8}, {2}), f64({1.5, 0.5}, {2})}, 2);
  check_grads(f, {f64({-0.3, 0.8}, {2}), f64({1.5, 0.5}, {2})}, 2);
  auto loss = [&](const Array& x, const Array& s) { return np::sum(f({x, s})); };
  auto [dx, ds] = grad<0, 1>(loss)(f64({0.3, 0.8}, {2}), f64({1.5, 0.5}, {2}));
  require_close(dx, {2.0 * 1.5, -1.0 * 0.5});
  require_close(ds, {0.3 * 2.0, 0.8 * -1.0});
  auto [ex, es] = grad<0, 1>(loss)(f64({-0.3, 0.8}, {2}), f64({1.5, 0.5}, {2}));
  require_close(ex, {2 * -0.3 * 2.0, 2 * 0.8 * -1.0});
  require_close(es, {0.0, 0.0});  // the false branch does not read s
}

TEST_CASE("control flow AD: switch_ over three branches, an integer index, clamped",
          "[control_flow_ad]") {
  Array x = f64({0.4, -0.7}, {2}), y = f64({1.1, 0.6}, {2}), w = f64({0.9, -0.2}, {2});
  std::vector<double> xv = values(x), yv = values(y), wv = values(w);
  for (std::int32_t index : {-3, 0, 1, 2, 7}) {
    INFO("index " << index);
    auto f = [index](const Arrays& a) { return switch_fn(i32(index), a[0], a[1], a[2]); };
    check_grads(f, {x, y, w}, 2);
    // The index passed as an argument too: check_grads leaves integers alone.
    auto g = [](const Arrays& a) { return switch_fn(a[0], a[1], a[2], a[3]); };
    check_grads(g, {i32(index), x, y, w}, 1);
    auto loss = [](const Array& i, const Array& a, const Array& b, const Array& c) {
      return np::sum(switch_fn(i, a, b, c));
    };
    auto [dx, dy, dw] = grad<1, 2, 3>(loss)(i32(index), x, y, w);
    std::vector<double> gx, gy, gw;
    int branch = std::clamp(index, 0, 2);
    for (int i = 0; i < 2; ++i) {
      double a = xv[i], b = yv[i], c = wv[i];
      if (branch == 0) {
        gx.push_back(b), gy.push_back(a), gw.push_back(1);
      } else if (branch == 1) {
        gx.push_back(std::cos(a)), gy.push_back(-c), gw.push_back(-b);
      } else {
        double s = 1 - std::tanh(a * b) * std::tanh(a * b);
        gx.push_back(s * b * c * c), gy.push_back(s * a * c * c);
        gw.push_back(2 * std::tanh(a * b) * c);
      }
    }
    require_close(dx, gx);
    require_close(dy, gy);
    require_close(dw, gw);
    auto [jx_, jy, jw] = jit(grad<1, 2, 3>(loss))(i32(index), x, y, w);
    require_close(jx_, dx, 1e-12);
    require_close(jy, dy, 1e-12);
    require_close(jw, dw, 1e-12);
  }
}

TEST_CASE("control flow AD: grad(grad) through cond matches the closed form", "[control_flow_ad]") {
  // f(x) = x^3 if x > 0 else sin(x): f'' = 6x, or -sin(x).
  auto f = [](const Array& x) {
    return lax::cond(
        x > 0.0, [](const Array& a) { return a * a * a; },
        [](const Array& a) { return np::sin(a); }, x);
  };
  auto d2 = grad(grad(f));
  for (double x : {1.5, 0.25, -0.5, -2.0}) {
    INFO("x = " << x);
    double want = x > 0 ? 6 * x : -std::sin(x);
    CHECK(d2(f64(x)).item<double>() == Approx(want).epsilon(1e-12));
    CHECK(jit(d2)(f64(x)).item<double>() == Approx(want).epsilon(1e-12));
    CHECK(grad(grad(grad(f)))(f64(x)).item<double>() ==
          Approx(x > 0 ? 6.0 : -std::cos(x)).epsilon(1e-12));
  }
}

// ---- scan ------------------------------------------------------------------------------------

TEST_CASE("control flow AD: an RNN as a scan over 20 steps, vs finite differences and BPTT",
          "[control_flow_ad]") {
  std::mt19937 rng(7);
  const int n = 4, steps = 20;
  std::vector<double> wv = random_values(16, rng, 0.5), uv = random_values(16, rng, 0.5),
                      bv = random_values(4, rng, 0.3), xv = random_values(80, rng),
                      hv = random_values(4, rng, 0.5);
  Array w = f64(wv, {4, 4}), u = f64(uv, {4, 4}), b = f64(bv, {4}), xs = f64(xv, {20, 4}),
        h0 = f64(hv, {4});
  RnnHost want = rnn_host(wv, uv, bv, xv, hv, steps, n);
  CHECK(rnn_loss(w, u, b, xs, h0).item<double>() == Approx(want.loss).epsilon(1e-12));

  auto [gw, gu, gb] = grad<0, 1, 2>(rnn_loss)(w, u, b, xs, h0);
  require_close(gw, want.dw);
  require_close(gu, want.du);
  require_close(gb, want.db);

  auto [jw, ju, jb] = jit(grad<0, 1, 2>(rnn_loss))(w, u, b, xs, h0);
  require_close(jw, gw, 1e-12);
  require_close(ju, gu, 1e-12);
  require_close(jb, gb, 1e-12);

  auto [value, vg] = value_and_grad<0, 1, 2>(rnn_loss)(w, u, b, xs, h0);
  CHECK(value.item<double>() == Approx(want.loss).epsilon(1e-12));
  require_close(std::get<0>(vg), want.dw);

  // Every argument (xs and h0 too), forward and reverse mode.
  check_grads([](const Arrays& a) { return rnn_loss(a[0], a[1], a[2], a[3], a[4]); },
              {w, u, b, xs, h0}, 1);
  // The hidden states themselves, not just their sum.
  check_grads(
      [](const Arrays& a) {
        return lax::scan(
                   [&](const Array& h, const Array& x) {
                     Array next = np::tanh(np::matmul(a[0], h) + np::matmul(a[1], x) + a[2]);
                     return std::pair{next, next};
                   },
                   a[4], a[3])
            .second;
      },
      {w, u, b, f64(random_values(24, rng), {6, 4}), h0}, 2);
}

TEST_CASE("control flow AD: a reverse scan, vs a backward host loop and finite differences",
          "[control_flow_ad]") {
  std::vector<double> xv = {0.3, -0.8, 1.1, 0.5, -0.2, 0.9};
  Array c0 = f64(0.7), xs = f64(xv, {6}), y = f64(-0.4);
  auto [c, ys] = reverse_scan(c0, xs, y);
  std::vector<double> want_ys(6);
  double cv = 0.7;
  for (int t = 5; t >= 0; --t) {
    cv = cv * std::sin(xv[t]) + xv[t] * -0.4;
    want_ys[t] = cv * cv;
  }
  CHECK(c.item<double>() == Approx(cv).epsilon(1e-12));
  require_close(ys, want_ys, 1e-12);

  auto both = [](const Arrays& a) {
    auto [cc, yy] = reverse_scan(a[0], a[1], a[2]);
    return cc + np::sum(yy);
  };
  check_grads(both, {f64(0.7), xs, f64(-0.4)}, 2);
  check_grads([](const Arrays& a) { return reverse_scan(a[0], a[1], a[2]).second; },
              {f64(0.7), xs, f64(-0.4)}, 2);

  // d c_final / d c0 = prod_t sin(x_t).
  auto final_c = [](const Array& a, const Array& b, const Array& d) {
    return reverse_scan(a, b, d).first;
  };
  double prod = 1;
  for (double x : xv) prod *= std::sin(x);
  CHECK(grad(final_c)(f64(0.7), xs, f64(-0.4)).item<double>() == Approx(prod).epsilon(1e-12));
  auto loss = [](const Array& a, const Array& b, const Array& d) {
    auto [cc, yy] = reverse_scan(a, b, d);
    return cc + np::sum(yy);
  };
  auto [g0, g1, g2] = grad<0, 1, 2>(loss)(f64(0.7), xs, f64(-0.4));
  auto [j0, j1, j2] = jit(grad<0, 1, 2>(loss))(f64(0.7), xs, f64(-0.4));
  require_close(j0, g0, 1e-12);
  require_close(j1, g1, 1e-12);
  require_close(j2, g2, 1e-12);
}

TEST_CASE("control flow AD: grad of a cumulative-sum scan is a reversed cumulative sum",
          "[control_flow_ad]") {
  // ys_t = sum_{s<=t} x_s; loss = sum_t w_t ys_t, so d/dx_s = sum_{t>=s} w_t.
  std::vector<double> wv = {0.5, -1.0, 2.0, 0.25, 3.0};
  Array w = f64(wv, {5});
  auto loss = [&](const Array& xs) {
    auto [total, ys] = lax::scan(
        [](const Array& c, const Array& x) {
          Array next = c + x;
          return std::pair{next, next};
        },
        Array(0.0), xs);
    return np::sum(ys * w) + total;
  };
  std::vector<double> want(5);
  double acc = 0;
  for (int s = 4; s >= 0; --s) want[s] = (acc += wv[s]) + 1;  // + 1 from `total`
  Array xs = f64({1, 2, 3, 4, 5}, {5});
  require_close(grad(loss)(xs), want, 1e-12);
  require_close(jit(grad(loss))(xs), want, 1e-12);
  // The same with reverse=true: ys_t = sum_{s>=t} x_s, so d/dx_s = sum_{t<=s} w_t.
  auto rloss = [&](const Array& x) {
    auto [total, ys] = lax::scan(
        [](const Array& c, const Array& xi) {
          Array next = c + xi;
          return std::pair{next, next};
        },
        Array(0.0), x, {.reverse = true});
    return np::sum(ys * w) + total;
  };
  acc = 0;
  for (int s = 0; s < 5; ++s) want[s] = (acc += wv[s]) + 1;
  require_close(grad(rloss)(xs), want, 1e-12);
  require_close(jit(grad(rloss))(xs), want, 1e-12);
}

TEST_CASE("control flow AD: a weak init carry is promoted to the dtype its body gives it",
          "[control_flow_ad]") {
  // A C++ double init is a weak float32; summing float64 (or bfloat16) values makes it the
  // promotion of the two, in scan, while_loop and fori_loop, and gradients keep that dtype.
  Array xs = f64({0.1, 0.2, 0.7}, {3});
  auto total = [](const Array& x) {
    return lax::scan(
        [](const Array& c, const Array& xi) {
          return std::pair{c + xi, c};
        },
        Array(0.0), x);
  };
  auto [c, ys] = total(xs);
  CHECK(c.dtype() == float64);
  CHECK(!c.weak_type());
  CHECK(ys.dtype() == float64);
  CHECK(c.item<double>() == (0.1 + 0.2) + 0.7);
  CHECK(total(xs.astype(bfloat16)).first.dtype() == bfloat16);
  Array g = grad([&](const Array& x) { return total(x).first; })(xs);
  CHECK(g.dtype() == float64);
  require_close(g, {1.0, 1.0, 1.0}, 0);
  auto counted = lax::while_loop(
      [](const std::tuple<Array, Array>& s) { return std::get<0>(s) < 3; },
      [&](const std::tuple<Array, Array>& s) {
        const auto& [i, acc] = s;
        return std::tuple<Array, Array>{i + 1, acc + np::sum(lax::dynamic_slice(xs, {i}, {1}))};
      },
      std::tuple<Array, Array>{i32(0), Array(0.0)});
  CHECK(std::get<1>(counted).dtype() == float64);
  CHECK(std::get<1>(counted).item<double>() == (0.1 + 0.2) + 0.7);
  CHECK(lax::fori_loop(
            0, 2, [&](const Array&, const Array& acc) { return acc * f64(0.1); }, Array(1.0))
            .dtype() == float64);
  // A strong float32 init is not promoted: the carry types differ.
  CHECK_THROWS_AS(lax::scan(
                      [](const Array& cc, const Array& xi) {
                        return std::pair{cc + xi, cc};
                      },
                      np::zeros({}, float32), xs),
                  TypeError);
}

TEST_CASE("control flow AD: a scan whose body contains a cond", "[control_flow_ad]") {
  std::vector<double> xv = {0.5, -0.3, 1.2, -1.1, 0.8, -0.6, 0.2};
  Array xs = f64(xv, {7}), w = f64(0.6), c0 = f64(0.4);
  // Values and d c_final / d(c0, w) by the chain rule, on the host.
  double cv = 0.4, dc0 = 1, dw = 0;
  std::vector<double> want_ys;
  for (double x : xv) {
    if (x > 0) {
      cv = cv * x + std::sin(0.6), dc0 *= x, dw = dw * x + std::cos(0.6);
    } else {
      cv = cv + x * x * 0.6, dw += x * x;
    }
    want_ys.push_back(std::cos(cv));
  }
  auto final_c = [](const Array& a, const Array& b, const Array& d) {
    return scan_with_cond(a, b, d).first;
  };
  auto loss = [](const Array& a, const Array& b, const Array& d) {
    auto [cc, yy] = scan_with_cond(a, b, d);
    return np::sum(yy) * cc;
  };
  SECTION("values and forward mode") {
    auto [c, ys] = scan_with_cond(c0, xs, w);
    CHECK(c.item<double>() == Approx(cv).epsilon(1e-12));
    require_close(ys, want_ys, 1e-12);
    auto [y, t] =
        jvp(final_c, std::tuple{c0, xs, w}, std::tuple{f64(1.0), np::zeros_like(xs), f64(0.0)});
    CHECK(t.item<double>() == Approx(dc0).epsilon(1e-12));
    auto [y2, t2] =
        jvp(final_c, std::tuple{c0, xs, w}, std::tuple{f64(0.0), np::zeros_like(xs), f64(1.0)});
    CHECK(t2.item<double>() == Approx(dw).epsilon(1e-12));
  }
  SECTION("reverse mode: d c_final / d c0 and d w") {
    auto [g0, g2] = grad<0, 2>(final_c)(c0, xs, w);
    CHECK(g0.item<double>() == Approx(dc0).epsilon(1e-12));
    CHECK(g2.item<double>() == Approx(dw).epsilon(1e-12));
  }
  SECTION("reverse mode vs finite differences, and jit(grad) vs grad") {
    check_grads([&](const Arrays& a) { return loss(a[0], a[1], a[2]); }, {c0, xs, w}, 2);
    auto [g0, g1, g2] = grad<0, 1, 2>(loss)(c0, xs, w);
    auto [j0, j1, j2] = jit(grad<0, 1, 2>(loss))(c0, xs, w);
    require_close(j0, g0, 1e-12);
    require_close(j1, g1, 1e-12);
    require_close(j2, g2, 1e-12);
  }
  SECTION("the same through a static fori_loop") {
    // c = cond(c > 1, c / 2, c * x) five times (0.8 -> 1.2 -> 0.6 -> 0.9 -> 1.35 -> 0.675), the
    // derivatives by the chain rule on the host.
    auto f = [](const Array& c, const Array& x) {
      return lax::fori_loop(
          0, 5,
          [&](const Array&, const Array& cc) {
            return lax::cond(
                cc > 1.0, [](const Array& a) { return a / 2.0; },
                [&](const Array& a) { return a * x; }, cc);
          },
          c);
    };
    double c = 0.8, dc = 1, dx = 0;
    for (int k = 0; k < 5; ++k) {
      if (c > 1) {
        c /= 2, dc /= 2, dx /= 2;
      } else {
        dx = dx * 1.5 + c, dc *= 1.5, c *= 1.5;
      }
    }
    auto [gc, gx] = grad<0, 1>(f)(f64(0.8), f64(1.5));
    CHECK(gc.item<double>() == Approx(dc).epsilon(1e-12));
    CHECK(gx.item<double>() == Approx(dx).epsilon(1e-12));
  }
}

TEST_CASE("control flow AD: grad(grad) through a scan matches the closed form",
          "[control_flow_ad]") {
  // c_{t+1} = c_t * x over 5 steps from 1: x^5; and a sum of sin over the steps of xs.
  auto pow5 = [](const Array& x) {
    return lax::scan(
               [&](const Array& c, std::tuple<>) {
                 return std::pair{c * x, std::tuple<>{}};
               },
               Array(1.0), std::tuple<>{}, {.length = 5})
        .first;
  };
  for (double x : {0.7, -1.3, 2.0}) {
    INFO("x = " << x);
    CHECK(pow5(f64(x)).item<double>() == Approx(std::pow(x, 5)).epsilon(1e-12));
    CHECK(grad(pow5)(f64(x)).item<double>() == Approx(5 * std::pow(x, 4)).epsilon(1e-12));
    CHECK(grad(grad(pow5))(f64(x)).item<double>() == Approx(20 * std::pow(x, 3)).epsilon(1e-12));
    CHECK(jit(grad(grad(pow5)))(f64(x)).item<double>() ==
          Approx(20 * std::pow(x, 3)).epsilon(1e-12));
    CHECK(grad(grad(grad(pow5)))(f64(x)).item<double>() ==
          Approx(60 * std::pow(x, 2)).epsilon(1e-12));
  }
  // The Hessian of sum_t sin(a x_t) c... : h(a) = sum_t sin(a * x_t), h'' = -sum x_t^2 sin(a x_t).
  std::vector<double> xv = {0.3, -1.2, 0.8};
  Array xs = f64(xv, {3});
  auto h = [&](const Array& a) {
    return lax::scan(
               [&](const Array& c, const Array& x) {
                 return std::pair{c + np::sin(a * x), Array(0.0)};
               },
               Array(0.0), xs)
        .first;
  };
  double want = 0;
  for (double x : xv) want -= x * x * std::sin(1.5 * x);
  CHECK(grad(grad(h))(f64(1.5)).item<double>() == Approx(want).epsilon(1e-12));
  check_grads([&](const Arrays& a) { return h(a[0]); }, {f64(1.5)}, 2);
}

// ---- fori_loop -------------------------------------------------------------------------------

TEST_CASE("control flow AD: fori_loop with static bounds, vs finite differences and jit",
          "[control_flow_ad]") {
  std::vector<double> xv = {0.5, 2.0, -1.0}, yv = {1.2, 0.3, 0.8};
  Array x = f64(xv, {3}), y = f64(yv, {3});
  // Values and the exact derivative by the chain rule, on the host.
  std::vector<double> want, dx, dy;
  for (int i = 0; i < 3; ++i) {
    double c = xv[i], dc_dx = 1, dc_dy = 0;
    for (int k = 0; k < 10; ++k) {
      double s = std::sin(c), co = std::cos(c);
      double ndx = dc_dx * (1 - 0.1 * co * yv[i]);
      double ndy = dc_dy * (1 - 0.1 * co * yv[i]) - 0.1 * s;
      c = c - 0.1 * s * yv[i];
      dc_dx = ndx, dc_dy = ndy;
    }
    want.push_back(c), dx.push_back(dc_dx), dy.push_back(dc_dy);
  }
  require_close(fori_relax(x, y), want, 1e-12);
  check_grads([](const Arrays& a) { return fori_relax(a[0], a[1]); }, {x, y}, 2);
  auto loss = [](const Array& a, const Array& b) { return np::sum(fori_relax(a, b)); };
  auto [gx, gy] = grad<0, 1>(loss)(x, y);
  require_close(gx, dx, 1e-10);
  require_close(gy, dy, 1e-10);
  auto [jgx, jgy] = jit(grad<0, 1>(loss))(x, y);
  require_close(jgx, gx, 1e-12);
  require_close(jgy, gy, 1e-12);
}

TEST_CASE("control flow AD: d/dx of fori_loop(0, n, x *= a) is a^n", "[control_flow_ad]") {
  auto f = [](std::int64_t n) {
    return [n](const Array& x, const Array& a) {
      return lax::fori_loop(
          0, n, [&](const Array&, const Array& c) { return c * a; }, x);
    };
  };
  {
    std::int64_t n = GENERATE(0, 1, 3, 7);
    INFO("n = " << n);
    auto [gx, ga] = grad<0, 1>(f(n))(f64(0.8), f64(1.3));
    CHECK(gx.item<double>() == Approx(std::pow(1.3, n)).epsilon(1e-12));
    // d/da = n a^(n-1) x.
    CHECK(ga.item<double>() ==
          Approx(n == 0 ? 0.0 : n * std::pow(1.3, n - 1) * 0.8).epsilon(1e-12).margin(1e-15));
    auto [jgx, jga] = jit(grad<0, 1>(f(n)))(f64(0.8), f64(1.3));
    CHECK(jgx.item<double>() == Approx(std::pow(1.3, n)).epsilon(1e-12));
    CHECK(jga.item<double>() == Approx(ga.item<double>()).epsilon(1e-12).margin(1e-15));
  }
  // The loop index used in the body: c += i * x over [2, 6): dc/dx = 2 + 3 + 4 + 5.
  auto g = [](const Array& x) {
    return lax::fori_loop(
        2, 6, [&](const Array& i, const Array& c) { return c + i.astype(float64) * x; },
        Array(0.0));
  };
  CHECK(grad(g)(f64(0.5)).item<double>() == Approx(14.0));
}

}  // namespace jx
