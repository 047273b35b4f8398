// Autodiff through while_loop (forward mode against closed forms; reverse mode's error), and
// through control flow with more structure: tuple operands, carries and outputs; control flow
// nested in bodies; Jacobians and Hessians. Checked against finite differences (check_grads) and
// closed forms.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include <jx/jx.hpp>

#include "support/check_grads.hpp"
#include "support/error_of.hpp"
#include "support/grad_values.hpp"

namespace jx {
namespace {

using jx::testing::check_grads;
using jx::testing::error_of;
using Arrays = std::vector<Array>;
using namespace testing::grad_values;  // NOLINT: the helpers of these tests

const char* const kWhileReverseError =
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic "
    "start/stop values. Try using lax.scan, or using fori_loop with static start/stop.";

// x -> x * x, k times, in a while_loop with an int32 counter in the carry.
std::tuple<Array, Array> square_k_times(const Array& x, std::int32_t k) {
  return lax::while_loop(
      [k](const std::tuple<Array, Array>& s) { return std::get<0>(s) < k; },
      [](const std::tuple<Array, Array>& s) {
        return std::tuple<Array, Array>{std::get<0>(s) + 1, std::get<1>(s) * std::get<1>(s)};
      },
      std::tuple<Array, Array>{i32(0), x});
}

// ---- while_loop ------------------------------------------------------------------------------

TEST_CASE("control flow AD: jvp through a while_loop squaring k times is 2^k x^(2^k - 1)",
          "[control_flow_ad]") {
  for (std::int32_t k : {0, 1, 3, 4}) {
    INFO("k = " << k);
    for (double x : {0.9, -1.05, 1.1}) {
      INFO("x = " << x);
      auto f = [k](const Array& a) { return std::get<1>(square_k_times(a, k)); };
      double p = std::pow(2.0, k);
      auto [y, t] = jvp(f, std::tuple{f64(x)}, std::tuple{f64(1.0)});
      CHECK(y.item<double>() == Approx(std::pow(x, p)).epsilon(1e-12));
      CHECK(t.item<double>() == Approx(p * std::pow(x, p - 1)).epsilon(1e-12));
      auto [jy, jt] = jit([&](const Array& a, const Array& da) {
        return jvp(f, std::tuple{a}, std::tuple{da});
      })(f64(x), f64(2.0));
      CHECK(jy.item<double>() == Approx(std::pow(x, p)).epsilon(1e-12));
      CHECK(jt.item<double>() == Approx(2 * p * std::pow(x, p - 1)).epsilon(1e-12));
    }
  }
}

TEST_CASE("control flow AD: jvp of a while_loop with an integer counter in its carry",
          "[control_flow_ad]") {
  // Multiply by 1.5 until x exceeds 10: the trip count depends on x; the counter is an output.
  auto f = [](const Array& x, const Array& y) {
    return lax::while_loop(
        [](const std::tuple<Array, Array, Array>& s) { return std::get<1>(s) < 10.0; },
        [](const std::tuple<Array, Array, Array>& s) {
          const auto& [n, c, acc] = s;
          return std::tuple<Array, Array, Array>{n + 1, c * 1.5, acc + np::sin(c)};
        },
        std::tuple<Array, Array, Array>{i32(0), x, y});
  };
  for (double x : {0.3, 2.0, 11.0}) {
    INFO("x = " << x);
    int n = 0;
    double c = x, acc = 0.2, dacc = 0;
    while (c < 10) {
      ++n;
      dacc += std::cos(c) * std::pow(1.5, n - 1);  // d sin(c_j)/dx, c_j = 1.5^j x
      acc += std::sin(c);
      c *= 1.5;
    }
    auto [out, tangent] = jvp(f, std::tuple{f64(x), f64(0.2)}, std::tuple{f64(1.0), f64(0.5)});
    CHECK(std::get<0>(out).item<int>() == n);
    CHECK(std::get<0>(out).dtype() == int32);
    CHECK(std::get<1>(out).item<double>() == Approx(c).epsilon(1e-12));
    CHECK(std::get<2>(out).item<double>() == Approx(acc).epsilon(1e-12));
    CHECK(std::get<1>(tangent).item<double>() == Approx(std::pow(1.5, n)).epsilon(1e-12));
    CHECK(std::get<2>(tangent).item<double>() == Approx(dacc + 0.5).epsilon(1e-12));
    // Forward mode against a central difference (the trip count is locally constant here).
    auto sum = [&](double a, double b) {
      auto r = f(f64(a), f64(b));
      return std::get<1>(r).item<double>() + std::get<2>(r).item<double>();
    };
    const double eps = 1e-6;
    double fd = (sum(x + eps, 0.2 + 0.5 * eps) - sum(x - eps, 0.2 - 0.5 * eps)) / (2 * eps);
    CHECK((std::get<1>(tangent) + std::get<2>(tangent)).item<double>() == Approx(fd).epsilon(1e-7));
  }
}

TEST_CASE("control flow AD: jvp through Newton iterations for sqrt", "[control_flow_ad]") {
  // x <- (x + a / x) / 2 until |x^2 - a| is tiny: the tangent converges to 1 / (2 sqrt(a)).
  auto newton = [](const Array& a) {
    return lax::while_loop([&](const Array& x) { return np::abs(x * x - a) > 1e-13; },
                           [&](const Array& x) { return 0.5 * (x + a / x); }, np::ones_like(a));
  };
  for (double a : {2.0, 9.0, 0.3}) {
    INFO("a = " << a);
    auto [y, t] = jvp(newton, std::tuple{f64(a)}, std::tuple{f64(1.0)});
    CHECK(y.item<double>() == Approx(std::sqrt(a)).epsilon(1e-12));
    CHECK(t.item<double>() == Approx(0.5 / std::sqrt(a)).epsilon(1e-8));
  }
}

TEST_CASE("control flow AD: jacfwd through a while_loop is the closed form", "[control_flow_ad]") {
  // x <- M x, k times (k from a counter in the carry): the Jacobian is M^k.
  std::vector<double> mv = {0.9, 0.2, -0.1, 0.3, 0.8, 0.4, -0.5, 0.1, 0.7};
  Array m = f64(mv, {3, 3});
  const int k = 4;
  auto f = [&](const Array& x) {
    return std::get<1>(lax::while_loop(
        [](const std::tuple<Array, Array>& s) { return std::get<0>(s) < k; },
        [&](const std::tuple<Array, Array>& s) {
          return std::tuple<Array, Array>{std::get<0>(s) + 1, np::matmul(m, std::get<1>(s))};
        },
        std::tuple<Array, Array>{i32(0), x}));
  };
  std::vector<double> power = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  for (int step = 0; step < k; ++step) {
    std::vector<double> next(9, 0);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        for (int l = 0; l < 3; ++l) next[i * 3 + j] += mv[i * 3 + l] * power[l * 3 + j];
    power = next;
  }
  Array x = f64({0.5, -1.0, 2.0}, {3});
  Array jac = jacfwd(f)(x);
  REQUIRE(jac.shape() == Shape{3, 3});
  require_close(jac, power, 1e-12);
  require_close(jit(jacfwd(f))(x), power, 1e-12);
  // Elementwise: x -> x^2, 3 times: the Jacobian is diag(8 x^7).
  auto sq = [](const Array& a) { return std::get<1>(square_k_times(a, 3)); };
  Array xs = f64({0.9, -1.1}, {2});
  require_close(jacfwd(sq)(xs), {8 * std::pow(0.9, 7), 0, 0, 8 * std::pow(-1.1, 7)}, 1e-12);
}

TEST_CASE(
    "control flow AD: reverse mode through while_loop and fori_loop with Array bounds "
    "is a ValueError",
    "[control_flow_ad]") {
  auto w = [](const Array& x) { return std::get<1>(square_k_times(x, 3)); };
  CHECK(error_of<ValueError>([&] { grad(w)(Array(1.5)); }) == kWhileReverseError);
  CHECK(error_of<ValueError>([&] { jit(grad(w))(Array(1.5)); }) == kWhileReverseError);
  CHECK(error_of<ValueError>([&] { vjp(w, Array(1.5)); }) == kWhileReverseError);
  auto fori = [](const Array& x) {
    return lax::fori_loop(
        i32(0), i32(4), [&](const Array&, const Array& c) { return c * x; }, Array(1.0));
  };
  CHECK(fori(Array(2.0)).item<double>() == 16.0);
  CHECK(error_of<ValueError>([&] { grad(fori)(Array(1.5)); }) == kWhileReverseError);
  CHECK(error_of<ValueError>([&] { jacrev(fori)(Array(1.5)); }) == kWhileReverseError);
  // Forward mode through the same loop works: d/dx x^4 = 4 x^3.
  auto [y, t] = jvp(fori, std::tuple{Array(1.5)}, std::tuple{Array(1.0)});
  CHECK(y.item<double>() == Approx(std::pow(1.5, 4)));
  CHECK(t.item<double>() == Approx(4 * std::pow(1.5, 3)));
  // The static-bounds fori_loop is a scan: reverse mode works.
  auto fori_static = [](const Array& x) {
    return lax::fori_loop(
        0, 4, [&](const Array&, const Array& c) { return c * x; }, Array(1.0));
  };
  CHECK(grad(fori_static)(Array(1.5)).item<double>() == Approx(4 * std::pow(1.5, 3)));
}

// ---- more structure: pytrees, nesting, Jacobians ----------------------------------------------

TEST_CASE("control flow AD: cond and scan with tuple operands, carries and outputs",
          "[control_flow_ad]") {
  // cond over (a, b) returning (a * b, a - b) or (sin a, b * b).
  auto branchy = [](const Array& a, const Array& b) {
    using P = std::tuple<Array, Array>;
    return lax::cond(
        np::sum(a) > np::sum(b),
        [](const P& p) {
          return P{std::get<0>(p) * std::get<1>(p), std::get<0>(p) - std::get<1>(p)};
        },
        [](const P& p) {
          return P{np::sin(std::get<0>(p)), std::get<1>(p) * std::get<1>(p)};
        },
        P{a, b});
  };
  auto f = [&](const Arrays& x) {
    auto [u, v] = branchy(x[0], x[1]);
    return u * 2.0 + v * v;
  };
  check_grads(f, {f64({1.0, 2.0}, {2}), f64({0.5, -0.5}, {2})}, 2);
  check_grads(f, {f64({-1.0, 0.2}, {2}), f64({0.5, 0.5}, {2})}, 2);
  // Closed form, true branch: d/da sum(2ab + (a - b)^2) = 2b + 2(a - b).
  auto loss = [&](const Array& a, const Array& b) { return np::sum(f({a, b})); };
  require_close(grad(loss)(f64({1.0, 2.0}, {2}), f64({0.5, -0.5}, {2})),
                {2 * 0.5 + 2 * 0.5, 2 * -0.5 + 2 * 2.5});
  // False branch: d/db sum(2 sin a + b^4) = 4 b^3.
  require_close(grad<1>(loss)(f64({-1.0, 0.2}, {2}), f64({0.5, 0.5}, {2})), {0.5, 0.5});

  // A scan with a (position, velocity) carry and two stacked outputs: a damped oscillator
  // driven by xs; check every input.
  auto osc = [](const Arrays& a) {
    using C = std::tuple<Array, Array>;
    auto [c, ys] = lax::scan(
        [&](const C& s, const Array& force) {
          const auto& [p, v] = s;
          Array nv = v + 0.1 * (force - a[2] * p - 0.3 * v);
          Array np_ = p + 0.1 * nv;
          return std::pair{C{np_, nv}, std::tuple<Array, Array>{np_ * np_, nv}};
        },
        C{a[0], a[1]}, a[3]);
    return np::sum(std::get<0>(ys)) + np::sum(std::get<1>(ys)) * std::get<0>(c);
  };
  check_grads(osc, {f64(0.5), f64(-0.2), f64(2.0), f64({1.0, 0.0, -1.0, 0.5, 0.25}, {5})}, 2);
}

TEST_CASE("control flow AD: a scan nested in a scan", "[control_flow_ad]") {
  // The outer scan runs over rows; the inner one over each row's elements: c = c * w + x.
  auto f = [](const Array& w, const Array& xss) {
    return lax::scan(
               [&](const Array& c, const Array& row) {
                 Array inner = lax::scan(
                                   [&](const Array& d, const Array& x) {
                                     return std::pair{np::sin(d * w + x), std::tuple<>{}};
                                   },
                                   c, row)
                                   .first;
                 return std::pair{inner, inner * inner};
               },
               f64(0.1), xss)
        .second;
  };
  std::vector<double> xv = {0.3, -0.5, 0.9, 0.2, 0.7, -0.1, 0.4, 0.6, -0.8};
  Array xss = f64(xv, {3, 3});
  // Host values and d/dw of sum(ys).
  double c = 0.1, dc = 0, dsum = 0;
  std::vector<double> host;
  for (int r = 0; r < 3; ++r) {
    for (int k = 0; k < 3; ++k) {
      double a = c * 0.7 + xv[r * 3 + k];
      dc = std::cos(a) * (dc * 0.7 + c);
      c = std::sin(a);
    }
    host.push_back(c * c);
    dsum += 2 * c * dc;
  }
  require_close(f(f64(0.7), xss), host, 1e-12);
  auto loss = [&](const Array& w, const Array& x) { return np::sum(f(w, x)); };
  CHECK(grad(loss)(f64(0.7), xss).item<double>() == Approx(dsum).epsilon(1e-12));
  CHECK(jit(grad(loss))(f64(0.7), xss).item<double>() == Approx(dsum).epsilon(1e-12));
  check_grads([&](const Arrays& a) { return f(a[0], a[1]); }, {f64(0.7), xss}, 2);
}

TEST_CASE("control flow AD: jacfwd, jacrev and hessian through scan and cond",
          "[control_flow_ad]") {
  // ys_t = cumulative products of x: ys_t = prod_{s<=t} x_s; the Jacobian is lower triangular.
  auto cumprod = [](const Array& x) {
    return lax::scan(
               [](const Array& c, const Array& xi) {
                 Array next = c * xi;
                 return std::pair{next, next};
               },
               Array(1.0), x)
        .second;
  };
  std::vector<double> xv = {0.5, 2.0, -1.5, 0.8};
  Array x = f64(xv, {4});
  std::vector<double> want;
  for (int t = 0; t < 4; ++t)
    for (int s = 0; s < 4; ++s) {
      double v = 0;
      if (s <= t) {
        v = 1;
        for (int r = 0; r <= t; ++r)
          if (r != s) v *= xv[r];
      }
      want.push_back(v);
    }
  Array jf = jacfwd(cumprod)(x), jr = jacrev(cumprod)(x);
  REQUIRE(jf.shape() == Shape{4, 4});
  require_close(jf, want, 1e-12);
  require_close(jr, want, 1e-12);
  require_close(jit(jacfwd(cumprod))(x), want, 1e-12);
  // The Hessian of sum(x^3 if sum(x) > 0 else cos(x)) is diagonal.
  auto h = [](const Array& a) {
    return np::sum(lax::cond(
        np::sum(a) > 0.0, [](const Array& b) { return b * b * b; },
        [](const Array& b) { return np::cos(b); }, a));
  };
  Array pos = f64({0.5, 1.0, -0.2}, {3}), neg = f64({-0.5, 0.1, -0.2}, {3});
  require_close(hessian(h)(pos), {3.0, 0, 0, 0, 6.0, 0, 0, 0, -1.2}, 1e-12);
  require_close(hessian(h)(neg),
                {-std::cos(-0.5), 0, 0, 0, -std::cos(0.1), 0, 0, 0, -std::cos(-0.2)}, 1e-12);
  require_close(jacfwd(grad(h))(pos), {3.0, 0, 0, 0, 6.0, 0, 0, 0, -1.2}, 1e-12);
}

TEST_CASE("control flow AD: forward mode through a while_loop whose body has a cond or a while",
          "[control_flow_ad]") {
  // Three steps of c = c / 2 if c > 1 else 3 c: from 0.5, 1.5 -> 0.75 -> 2.25; dc/dx = 4.5.
  auto with_cond = [](const Array& x) {
    return std::get<1>(
        lax::while_loop([](const std::tuple<Array, Array>& s) { return std::get<0>(s) < 3; },
                        [](const std::tuple<Array, Array>& s) {
                          Array c = lax::cond(
                              std::get<1>(s) > 1.0, [](const Array& a) { return a * 0.5; },
                              [](const Array& a) { return a * 3.0; }, std::get<1>(s));
                          return std::tuple<Array, Array>{std::get<0>(s) + 1, c};
                        },
                        std::tuple<Array, Array>{i32(0), x}));
  };
  // c = 3 * (double c until c >= 10) until c >= 100: from 1.5, 1.5 -> 12 -> 36 -> 36 -> 108:
  // the result is 72 x.
  auto nested = [](const Array& x) {
    return lax::while_loop([](const Array& c) { return c < 100.0; },
                           [](const Array& c) {
                             return lax::while_loop([](const Array& d) { return d < 10.0; },
                                                    [](const Array& d) { return d * 2.0; }, c) *
                                    3.0;
                           },
                           x);
  };
  SECTION("jvp") {
    auto [y, t] = jvp(with_cond, std::tuple{Array(0.5)}, std::tuple{Array(1.0)});
    CHECK(y.item<double>() == Approx(2.25));
    CHECK(t.item<double>() == Approx(4.5));
    auto [y2, t2] = jvp(nested, std::tuple{Array(1.5)}, std::tuple{Array(1.0)});
    CHECK(y2.item<double>() == Approx(108.0));
    CHECK(t2.item<double>() == Approx(72.0));
  }
  SECTION("jacfwd (linearize) with a cond in the body") {
    CHECK(jacfwd(with_cond)(Array(0.5)).item<double>() == Approx(4.5));
  }
  SECTION("jacfwd (linearize) with a while in the body") {
    CHECK(jacfwd(nested)(Array(1.5)).item<double>() == Approx(72.0));
  }
}

}  // namespace
}  // namespace jx
