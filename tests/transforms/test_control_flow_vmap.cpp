// vmap of structured control flow (lax::cond, switch_, while_loop, fori_loop, scan): batched and
// unbatched preds, indices, carries, consts and xs, in_axes other than 0, jit(vmap), vmap(grad)
// and grad(vmap). Every result is checked against a loop of eager per-example calls (examples cut
// and stacked on the host) and, where easy, plain C++ arithmetic.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include <jx/jx.hpp>

#include "support/grad_values.hpp"
#include "support/host_batches.hpp"

namespace jx {
namespace {

using testing::Arrays;
using testing::host_array;
using testing::Ints;
using testing::require_close;
using testing::stack_at;
using testing::take_at;
using testing::values;
using testing::grad_values::f64;
Array i32(std::int32_t v) { return np::array(Array(v)).astype(int32); }

Array random_array(const Shape& shape, std::mt19937& rng, double scale = 1.0) {
  std::uniform_real_distribution<double> u(-scale, scale);
  std::vector<double> v(static_cast<std::size_t>(shape_size(shape)));
  for (double& e : v) e = u(rng);
  return host_array(v, shape);
}

void require_close(const Array& got, const std::vector<double>& want, double tol = 1e-12) {
  std::vector<double> g = values(got);
  REQUIRE(g.size() == want.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    CHECK(g[i] == Approx(want[i]).epsilon(tol).margin(tol));
  }
}

// ---- the functions under test ----------------------------------------------------------------

Array cond_on(const Array& pred, const Array& x) {
  return lax::cond(
      pred, [](const Array& a) { return np::sin(a) * 2.0; },
      [](const Array& a) { return a * a - 1.0; }, x);
}

// The pred from the data; `c` captured by both branches.
Array cond_by_sign(const Array& x, const Array& c) {
  return lax::cond(
      np::sum(x) > 0.0, [&](const Array& a) { return np::sin(a) + c; },
      [&](const Array& a) { return a * c; }, x);
}

Array switch3(const Array& index, const Array& x) {
  return lax::switch_(
      index,
      std::tuple{[](const Array& a) { return a + 1.0; }, [](const Array& a) { return a * 2.0; },
                 [](const Array& a) { return np::sin(a); }},
      x);
}
double switch3_host(int index, double x) {
  switch (std::clamp(index, 0, 2)) {
    case 0:
      return x + 1;
    case 1:
      return x * 2;
    default:
      return std::sin(x);
  }
}

// Multiply by 1.5 and add 0.1 until x >= threshold: returns (steps, x). 0.1 is a float64, as on
// the host (the weak literal 0.1 is the float32 nearest 0.1).
std::tuple<Array, Array> grow_until(const Array& x, const Array& threshold) {
  return lax::while_loop(
      [&](const std::tuple<Array, Array>& s) { return std::get<1>(s) < threshold; },
      [](const std::tuple<Array, Array>& s) {
        return std::tuple<Array, Array>{std::get<0>(s) + 1, std::get<1>(s) * 1.5 + f64(0.1)};
      },
      std::tuple<Array, Array>{i32(0), x});
}
std::pair<int, double> grow_until_host(double x, double threshold) {
  int n = 0;
  while (x < threshold) ++n, x = x * 1.5 + 0.1;
  return {n, x};
}

// The Collatz sequence from n down to 1: returns (1, the number of steps).
std::tuple<Array, Array> collatz(const Array& n) {
  return lax::while_loop([](const std::tuple<Array, Array>& s) { return std::get<0>(s) != 1; },
                         [](const std::tuple<Array, Array>& s) {
                           const Array& m = std::get<0>(s);
                           Array next =
                               np::where(m % 2 == 0, np::floor_divide(m, Array(2)), m * 3 + 1);
                           return std::tuple<Array, Array>{next, std::get<1>(s) + 1};
                         },
                         std::tuple<Array, Array>{n, i32(0)});
}
int collatz_host(int n) {
  int steps = 0;
  while (n != 1) n = n % 2 == 0 ? n / 2 : 3 * n + 1, ++steps;
  return steps;
}

// x = x - 0.1 sin(x) y, 10 times; 0.1 a float64 as on the host.
Array fori_relax(const Array& x, const Array& y) {
  return lax::fori_loop(
      0, 10, [&](const Array&, const Array& c) { return c - f64(0.1) * np::sin(c) * y; }, x);
}
double fori_relax_host(double x, double y) {
  for (int k = 0; k < 10; ++k) x = x - 0.1 * std::sin(x) * y;
  return x;
}

// A scan over the rows of xs (f64[T, 3]) with a carry of f64[3] and a const w (f64[3]):
// c = tanh(c * w + x); ys are sum(c) per step.
std::pair<Array, Array> scan_rows(const Array& c0, const Array& xs, const Array& w) {
  return lax::scan(
      [&](const Array& c, const Array& x) {
        Array next = np::tanh(c * w + x);
        return std::pair{next, np::sum(next)};
      },
      c0, xs);
}
std::pair<std::vector<double>, std::vector<double>> scan_rows_host(std::vector<double> c,
                                                                   const std::vector<double>& xs,
                                                                   const std::vector<double>& w) {
  std::vector<double> ys;
  for (std::size_t t = 0; t < xs.size() / 3; ++t) {
    double s = 0;
    for (std::size_t i = 0; i < 3; ++i) s += c[i] = std::tanh(c[i] * w[i] + xs[t * 3 + i]);
    ys.push_back(s);
  }
  return {c, ys};
}

Array scan_loss(const Array& w, const Array& c0, const Array& xs) {
  auto [c, ys] = scan_rows(c0, xs, w);
  return np::sum(ys * ys) + np::sum(c);
}

}  // namespace

// ---- cond and switch -------------------------------------------------------------------------

TEST_CASE("control flow vmap: cond with an unbatched pred and batched operands",
          "[control_flow_vmap]") {
  std::mt19937 rng(1);
  Array xs = random_array({5, 3}, rng);
  for (bool pred : {true, false}) {
    INFO("pred " << pred);
    Array p(pred);
    Arrays loop;
    for (int k = 0; k < 5; ++k) loop.push_back(cond_on(p, take_at(xs, 0, k)));
    Array want = stack_at(loop);
    std::vector<double> host;
    for (double x : values(xs)) host.push_back(pred ? std::sin(x) * 2 : x * x - 1);
    Array got = vmap(cond_on, {none, 0})(p, xs);
    require_close(got, want);
    require_close(got, host);
    require_close(jit(vmap(cond_on, {none, 0}))(p, xs), want);
    // Batched along axis 1, out along axis 1.
    Array xt = np::transpose(xs);
    require_close(vmap(cond_on, {none, 1}, 1)(p, xt), np::transpose(want));
  }
}

TEST_CASE("control flow vmap: cond with a batched pred picks a branch per example",
          "[control_flow_vmap]") {
  std::vector<double> xv = {0.5, 1.0, -2.0, 0.1, -0.3, -0.4, 0.2, 0.2, 0.2, -1.0, 0.0, 0.5};
  Array xs = host_array(xv, {4, 3});
  Array c = host_array({0.3, -0.7, 1.1}, {3});
  Arrays loop;
  for (int k = 0; k < 4; ++k) loop.push_back(cond_by_sign(take_at(xs, 0, k), c));
  Array want = stack_at(loop);
  // Rows 0 and 2 have a positive sum, rows 1 and 3 do not.
  std::vector<double> cv = values(c), host;
  for (int k = 0; k < 4; ++k) {
    double s = xv[k * 3] + xv[k * 3 + 1] + xv[k * 3 + 2];
    for (int i = 0; i < 3; ++i)
      host.push_back(s > 0 ? std::sin(xv[k * 3 + i]) + cv[i] : xv[k * 3 + i] * cv[i]);
  }
  Array got = vmap(cond_by_sign, {0, none})(xs, c);
  require_close(got, want);
  require_close(got, host);
  require_close(jit(vmap(cond_by_sign, {0, none}))(xs, c), want);
  // The captured c batched too.
  Array cs = host_array({0.3, -0.7, 1.1, 2.0, 0.5, -0.1, 0.0, 1.0, 3.0, -2.0, 0.4, 0.9}, {4, 3});
  loop.clear();
  for (int k = 0; k < 4; ++k) loop.push_back(cond_by_sign(take_at(xs, 0, k), take_at(cs, 0, k)));
  require_close(vmap(cond_by_sign)(xs, cs), stack_at(loop));
  require_close(jit(vmap(cond_by_sign))(xs, cs), stack_at(loop));
  // Only the pred batched: the operand is shared, the result still differs per example.
  Array preds = np::array({true, false, false, true});
  Array x = host_array({0.4, -1.5, 2.0}, {3});
  loop.clear();
  for (bool p : {true, false, false, true}) loop.push_back(cond_on(Array(p), x));
  Array only_pred = vmap(cond_on, {0, none})(preds, x);
  REQUIRE(only_pred.shape() == Shape{4, 3});
  require_close(only_pred, stack_at(loop));
  require_close(jit(vmap(cond_on, {0, none}))(preds, x), stack_at(loop));
}

TEST_CASE("control flow vmap: switch_ with a batched index, out-of-range indices clamped",
          "[control_flow_vmap]") {
  std::vector<std::int32_t> iv = {-5, 0, 1, 2, 3, 100, 1, -1};
  std::vector<double> xv = {0.5, -1.0, 2.0, 0.3, 1.7, -0.4, 0.9, 1.2};
  Array index = np::array(iv), xs = host_array(xv, {8});
  REQUIRE(index.dtype() == int32);
  Arrays loop;
  std::vector<double> host;
  for (int k = 0; k < 8; ++k) {
    loop.push_back(switch3(i32(iv[k]), f64(xv[k])));
    host.push_back(switch3_host(iv[k], xv[k]));
  }
  Array got = vmap(switch3)(index, xs);
  require_close(got, stack_at(loop));
  require_close(got, host);
  require_close(jit(vmap(switch3))(index, xs), host);
  // The index batched, the operand not.
  Array shared = vmap(switch3, {0, none})(index, f64(0.7));
  std::vector<double> host_shared;
  for (int k = 0; k < 8; ++k) host_shared.push_back(switch3_host(iv[k], 0.7));
  require_close(shared, host_shared);
  require_close(jit(vmap(switch3, {0, none}))(index, f64(0.7)), host_shared);
  // The index unbatched, the operand batched.
  for (std::int32_t i : {-1, 1, 9}) {
    std::vector<double> h;
    for (double x : xv) h.push_back(switch3_host(i, x));
    require_close(vmap(switch3, {none, 0})(i32(i), xs), h);
  }
}

// ---- while_loop ------------------------------------------------------------------------------

TEST_CASE("control flow vmap: while_loop with a batched pred runs each lane its own trip count",
          "[control_flow_vmap]") {
  std::vector<double> xv = {0.1, 5.0, 12.0, 1.0, 3.3, 0.01};
  Array xs = host_array(xv, {6});
  Array threshold = Array(10.0);
  auto steps = [](const Array& x, const Array& t) { return std::get<0>(grow_until(x, t)); };
  auto final_x = [](const Array& x, const Array& t) { return std::get<1>(grow_until(x, t)); };
  std::vector<double> want_n, want_x;
  Arrays loop_n, loop_x;
  for (double x : xv) {
    auto [n, c] = grow_until_host(x, 10.0);
    want_n.push_back(n), want_x.push_back(c);
    auto [ln, lx] = grow_until(f64(x), threshold);
    loop_n.push_back(ln), loop_x.push_back(lx);
  }
  // The trip counts differ (one lane does not run at all): finished lanes keep their carry.
  CHECK(want_n[2] == 0);
  CHECK(want_n[0] != want_n[1]);
  Array n = vmap(steps, {0, none})(xs, threshold);
  Array x = vmap(final_x, {0, none})(xs, threshold);
  CHECK(n.dtype() == int32);
  require_close(n, stack_at(loop_n));
  require_close(n, want_n);
  require_close(x, stack_at(loop_x));
  require_close(x, want_x);
  auto both = [](const Array& a, const Array& t) { return grow_until(a, t); };
  auto [jn, jxx] = jit(vmap(both, {0, none}))(xs, threshold);
  require_close(jn, want_n);
  require_close(jxx, want_x);

  // The threshold (a const of the cond) batched, the init shared.
  std::vector<double> tv = {1.0, 4.0, 0.5, 50.0};
  Array ts = host_array(tv, {4});
  std::vector<double> want_n2, want_x2;
  for (double t : tv) {
    auto [nn, c] = grow_until_host(0.3, t);
    want_n2.push_back(nn), want_x2.push_back(c);
  }
  auto [n2, x2] = vmap(both, {none, 0})(f64(0.3), ts);
  require_close(n2, want_n2);
  require_close(x2, want_x2);
  auto [jn2, jx2] = jit(vmap(both, {none, 0}))(f64(0.3), ts);
  require_close(jn2, want_n2);
  require_close(jx2, want_x2);
  // Both batched.
  auto [n3, x3] = vmap(both)(host_array({0.1, 5.0, 12.0, 1.0}, {4}), ts);
  std::vector<double> want_n3, want_x3;
  for (int k = 0; k < 4; ++k) {
    auto [nn, c] = grow_until_host(std::vector<double>{0.1, 5.0, 12.0, 1.0}[k], tv[k]);
    want_n3.push_back(nn), want_x3.push_back(c);
  }
  require_close(n3, want_n3);
  require_close(x3, want_x3);
}

TEST_CASE("control flow vmap: Collatz step counts per example", "[control_flow_vmap]") {
  std::vector<std::int32_t> nv = {1, 2, 3, 6, 7, 27, 97, 16};
  Array ns = np::array(nv);
  auto steps = [](const Array& n) { return std::get<1>(collatz(n)); };
  Arrays loop;
  std::vector<double> host;
  for (std::int32_t n : nv) {
    loop.push_back(steps(i32(n)));
    host.push_back(collatz_host(n));
  }
  CHECK(host[5] == 111);  // 27 takes 111 steps
  Array got = vmap(steps)(ns);
  CHECK(got.dtype() == int32);
  require_close(got, stack_at(loop));
  require_close(got, host);
  require_close(jit(vmap(steps))(ns), host);
  // Every lane ends at 1.
  auto end = [](const Array& n) { return std::get<0>(collatz(n)); };
  require_close(vmap(end)(ns), std::vector<double>(nv.size(), 1.0));
  // Nested: a 2-d batch of starting values.
  Array grid = np::reshape(ns, {2, 4});
  require_close(vmap(vmap(steps))(grid), host);
}

TEST_CASE("control flow vmap: fori_loop with a batched Array bound", "[control_flow_vmap]") {
  // c *= x for i in [0, n): x^n, with n per example.
  auto power = [](const Array& x, const Array& n) {
    return lax::fori_loop(
        i32(0), n, [&](const Array&, const Array& c) { return c * x; }, np::ones_like(x));
  };
  std::vector<std::int32_t> nv = {0, 3, 1, 5};
  std::vector<double> xv = {1.5, -2.0, 0.7, 1.1}, host;
  Arrays loop;
  for (int k = 0; k < 4; ++k) {
    host.push_back(std::pow(xv[k], nv[k]));
    loop.push_back(power(f64(xv[k]), i32(nv[k])));
  }
  Array xs = host_array(xv, {4}), ns = np::array(nv);
  require_close(vmap(power)(xs, ns), host);
  require_close(vmap(power)(xs, ns), stack_at(loop));
  require_close(jit(vmap(power))(xs, ns), host);
  std::vector<double> shared;
  for (std::int32_t n : nv) shared.push_back(std::pow(1.2, n));
  require_close(vmap(power, {none, 0})(f64(1.2), ns), shared);
}

// ---- fori_loop and scan ----------------------------------------------------------------------

TEST_CASE("control flow vmap: fori_loop with static bounds", "[control_flow_vmap]") {
  std::mt19937 rng(4);
  Array xs = random_array({5, 2}, rng, 2.0), ys = random_array({5, 2}, rng);
  Arrays loop;
  for (int k = 0; k < 5; ++k) loop.push_back(fori_relax(take_at(xs, 0, k), take_at(ys, 0, k)));
  std::vector<double> xv = values(xs), yv = values(ys), host;
  for (std::size_t i = 0; i < xv.size(); ++i) host.push_back(fori_relax_host(xv[i], yv[i]));
  require_close(vmap(fori_relax)(xs, ys), stack_at(loop));
  require_close(vmap(fori_relax)(xs, ys), host);
  require_close(jit(vmap(fori_relax))(xs, ys), host);
  // y shared; x batched along axis 1.
  Array y = host_array({0.5, 1.5}, {2});
  Array xt = np::transpose(xs);  // f64[2, 5]: example k is column k
  loop.clear();
  host.clear();
  for (int k = 0; k < 5; ++k) {
    loop.push_back(fori_relax(take_at(xt, 1, k), y));
    for (int i = 0; i < 2; ++i) host.push_back(fori_relax_host(xv[k * 2 + i], i == 0 ? 0.5 : 1.5));
  }
  require_close(vmap(fori_relax, {1, none})(xt, y), stack_at(loop));
  require_close(vmap(fori_relax, {1, none})(xt, y), host);
  require_close(jit(vmap(fori_relax, {1, none}))(xt, y), host);
}

TEST_CASE("control flow vmap: scan with batched xs, init and consts, in any combination",
          "[control_flow_vmap]") {
  std::mt19937 rng(5);
  const int b = 4, steps = 6;
  Array c0s = random_array({b, 3}, rng), xss = random_array({b, steps, 3}, rng),
        ws = random_array({b, 3}, rng);
  Array c0 = take_at(c0s, 0, 0), xs = take_at(xss, 0, 0), w = take_at(ws, 0, 0);
  auto carry = [](const Array& c, const Array& x, const Array& w_) {
    return scan_rows(c, x, w_).first;
  };
  auto ys = [](const Array& c, const Array& x, const Array& w_) {
    return scan_rows(c, x, w_).second;
  };
  struct Case {
    const char* name;
    bool bc, bx, bw;
  };
  for (Case cs : {Case{"xs", false, true, false}, Case{"init", true, false, false},
                  Case{"consts", false, false, true}, Case{"init and consts", true, false, true},
                  Case{"all", true, true, true}}) {
    INFO(cs.name);
    Arrays loop_c, loop_y;
    std::vector<double> host_c, host_y;
    for (int k = 0; k < b; ++k) {
      Array ck = cs.bc ? take_at(c0s, 0, k) : c0, xk = cs.bx ? take_at(xss, 0, k) : xs,
            wk = cs.bw ? take_at(ws, 0, k) : w;
      auto [lc, ly] = scan_rows(ck, xk, wk);
      loop_c.push_back(lc), loop_y.push_back(ly);
      auto [hc, hy] = scan_rows_host(values(ck), values(xk), values(wk));
      host_c.insert(host_c.end(), hc.begin(), hc.end());
      host_y.insert(host_y.end(), hy.begin(), hy.end());
    }
    InAxes axes{cs.bc ? Axis(0) : Axis(none), cs.bx ? Axis(0) : Axis(none),
                cs.bw ? Axis(0) : Axis(none)};
    Array ac = cs.bc ? c0s : c0, ax = cs.bx ? xss : xs, aw = cs.bw ? ws : w;
    Array got_c = vmap(carry, axes)(ac, ax, aw), got_y = vmap(ys, axes)(ac, ax, aw);
    require_close(got_c, stack_at(loop_c));
    require_close(got_c, host_c);
    require_close(got_y, stack_at(loop_y));
    require_close(got_y, host_y);
    auto both = [](const Array& c, const Array& x, const Array& w_) { return scan_rows(c, x, w_); };
    auto [jc, jy] = jit(vmap(both, axes))(ac, ax, aw);
    require_close(jc, host_c);
    require_close(jy, host_y);
  }
}

TEST_CASE("control flow vmap: scan with xs batched along axis 1 and 2, ys out along axis 1",
          "[control_flow_vmap]") {
  std::mt19937 rng(6);
  const int b = 3, steps = 5;
  Array xss = random_array({b, steps, 3}, rng), c0 = random_array({3}, rng),
        w = random_array({3}, rng);
  Arrays loop_y;
  std::vector<double> host_c;
  Arrays loop_c;
  for (int k = 0; k < b; ++k) {
    auto [lc, ly] = scan_rows(c0, take_at(xss, 0, k), w);
    loop_c.push_back(lc), loop_y.push_back(ly);
  }
  auto both = [](const Array& c, const Array& x, const Array& w_) { return scan_rows(c, x, w_); };
  // xs as f64[steps, b, 3]: the batch on axis 1, the scanned axis first.
  Array x1 = np::transpose(xss, std::vector<int>{1, 0, 2});
  auto [c1, y1] = vmap(both, {none, 1, none})(c0, x1, w);
  require_close(c1, stack_at(loop_c));
  require_close(y1, stack_at(loop_y));
  // xs as f64[steps, 3, b].
  Array x2 = np::transpose(xss, std::vector<int>{1, 2, 0});
  auto [c2, y2] = vmap(both, {none, 2, none})(c0, x2, w);
  require_close(c2, stack_at(loop_c));
  require_close(y2, stack_at(loop_y));
  auto [jc2, jy2] = jit(vmap(both, {none, 2, none}))(c0, x2, w);
  require_close(jc2, stack_at(loop_c));
  require_close(jy2, stack_at(loop_y));
  // ys out along axis 1: f64[steps, b].
  auto [c3, y3] = vmap(both, {none, 1, none}, {0, 1})(c0, x1, w);
  require_close(c3, stack_at(loop_c));
  require_close(y3, stack_at(loop_y, 1));
  // A reverse scan, batched along axis 1.
  auto rev = [](const Array& c, const Array& x) {
    return lax::scan(
        [](const Array& cc, const Array& xx) {
          Array next = cc * 0.5 + xx;
          return std::pair{next, next};
        },
        c, x, {.reverse = true});
  };
  Arrays loop_r;
  for (int k = 0; k < b; ++k) loop_r.push_back(rev(c0, take_at(xss, 0, k)).second);
  auto [rc, ry] = vmap(rev, {none, 1})(c0, x1);
  require_close(ry, stack_at(loop_r));
  std::vector<double> xv = values(take_at(xss, 0, 1)), cv = values(c0), host;
  std::vector<double> hy(static_cast<std::size_t>(steps * 3));
  for (int i = 0; i < 3; ++i) {
    double c = cv[i];
    for (int t = steps - 1; t >= 0; --t) hy[t * 3 + i] = c = c * 0.5 + xv[t * 3 + i];
  }
  require_close(take_at(ry, 0, 1), hy);
}

TEST_CASE("control flow vmap: a scan whose body has a cond with a batched pred",
          "[control_flow_vmap]") {
  // c = c * x if x > 0 else c - x: the pred depends on the batched xs.
  auto f = [](const Array& c0, const Array& xs) {
    return lax::scan(
               [](const Array& c, const Array& x) {
                 Array next = lax::cond(
                     x > 0.0, [](const Array& a, const Array& b) { return a * b; },
                     [](const Array& a, const Array& b) { return a - b; }, c, x);
                 return std::pair{next, next};
               },
               c0, xs)
        .second;
  };
  std::vector<double> xv = {0.5, -1.0, 2.0, 1.5, 0.3, -0.2, -0.7, 1.1, -1.3, 0.9, 0.8, -0.5};
  Array xss = host_array(xv, {3, 4});
  std::vector<double> host;
  Arrays loop;
  for (int k = 0; k < 3; ++k) {
    double c = 1.5;
    for (int t = 0; t < 4; ++t) {
      double x = xv[k * 4 + t];
      host.push_back(c = x > 0 ? c * x : c - x);
    }
    loop.push_back(f(Array(1.5), take_at(xss, 0, k)));
  }
  require_close(vmap(f, {none, 0})(Array(1.5), xss), host);
  require_close(vmap(f, {none, 0})(Array(1.5), xss), stack_at(loop));
  require_close(jit(vmap(f, {none, 0}))(Array(1.5), xss), host);
}

TEST_CASE("control flow vmap: while_loop whose body has a cond, both batched",
          "[control_flow_vmap]") {
  // Halve or add 3 (by parity of floor(x)) until x < 1 or 20 steps: per-example paths and counts.
  auto f = [](const Array& x0) {
    return lax::while_loop(
        [](const std::tuple<Array, Array>& s) {
          return (std::get<1>(s) >= 1.0) & (std::get<0>(s) < 20);
        },
        [](const std::tuple<Array, Array>& s) {
          const Array& x = std::get<1>(s);
          Array next = lax::cond(
              np::floor(x) % 2.0 == 0.0, [](const Array& a) { return a * 0.5; },
              [](const Array& a) { return a / 3.0; }, x);
          return std::tuple<Array, Array>{std::get<0>(s) + 1, next};
        },
        std::tuple<Array, Array>{i32(0), x0});
  };
  std::vector<double> xv = {0.5, 2.5, 7.0, 100.0, 3.9};
  std::vector<double> host_n, host_x;
  for (double x : xv) {
    int n = 0;
    while (x >= 1.0 && n < 20) {
      x = std::fmod(std::floor(x), 2.0) == 0 ? x * 0.5 : x / 3.0;
      ++n;
    }
    host_n.push_back(n), host_x.push_back(x);
  }
  auto [n, x] = vmap(f)(host_array(xv, {5}));
  require_close(n, host_n);
  require_close(x, host_x);
  auto [jn, jxx] = jit(vmap(f))(host_array(xv, {5}));
  require_close(jn, host_n);
  require_close(jxx, host_x);
}

// ---- with autodiff ---------------------------------------------------------------------------

TEST_CASE("control flow vmap: vmap(grad) of a scan gives per-example gradients",
          "[control_flow_vmap]") {
  std::mt19937 rng(8);
  const int b = 4;
  Array w = random_array({3}, rng), c0 = random_array({3}, rng), xss = random_array({b, 5, 3}, rng);
  Arrays loop_w, loop_x;
  for (int k = 0; k < b; ++k) {
    auto [gw, gx] = grad<0, 2>(scan_loss)(w, c0, take_at(xss, 0, k));
    loop_w.push_back(gw), loop_x.push_back(gx);
  }
  CHECK(values(loop_w[0]) != values(loop_w[1]));
  auto [gw, gx] = vmap(grad<0, 2>(scan_loss), {none, none, 0})(w, c0, xss);
  require_close(gw, stack_at(loop_w), 1e-10);
  require_close(gx, stack_at(loop_x), 1e-10);
  auto [jgw, jgx] = jit(vmap(grad<0, 2>(scan_loss), {none, none, 0}))(w, c0, xss);
  require_close(jgw, stack_at(loop_w), 1e-10);
  require_close(jgx, stack_at(loop_x), 1e-10);

  // grad of vmap: d/dw sum_k loss_k is the sum of the per-example gradients.
  auto total = [](const Array& w_, const Array& c, const Array& xs) {
    return np::sum(vmap(scan_loss, {none, none, 0})(w_, c, xs));
  };
  std::vector<double> want(3, 0.0);
  for (const Array& g : loop_w)
    for (int i = 0; i < 3; ++i) want[i] += values(g)[i];
  require_close(grad(total)(w, c0, xss), want, 1e-10);
  require_close(jit(grad(total))(w, c0, xss), want, 1e-10);
  require_close(grad<2>(total)(w, c0, xss), stack_at(loop_x), 1e-10);
}

TEST_CASE("control flow vmap: vmap(grad) through cond with a batched pred and static fori_loop",
          "[control_flow_vmap]") {
  // d/dx cond(x > 0, x^3, sin x) per example.
  auto f = [](const Array& x) {
    return lax::cond(
        x > 0.0, [](const Array& a) { return a * a * a; },
        [](const Array& a) { return np::sin(a); }, x);
  };
  std::vector<double> xv = {1.5, -0.5, 0.2, -2.0}, host, host2;
  for (double x : xv) {
    host.push_back(x > 0 ? 3 * x * x : std::cos(x));
    host2.push_back(x > 0 ? 6 * x : -std::sin(x));
  }
  Array xs = host_array(xv, {4});
  require_close(vmap(grad(f))(xs), host);
  require_close(jit(vmap(grad(f)))(xs), host);
  require_close(vmap(grad(grad(f)))(xs), host2);
  // grad of the sum of vmap(f) is the same elementwise derivative.
  require_close(grad([&](const Array& x) { return np::sum(vmap(f)(x)); })(xs), host);
  // fori_loop: per-example d/dx of the 10-step relaxation against a loop of grads.
  auto g = [](const Array& x, const Array& y) { return fori_relax(x, y); };
  Array ys = host_array({0.3, 1.2, -0.4, 0.9}, {4});
  Arrays loop;
  for (int k = 0; k < 4; ++k) loop.push_back(grad(g)(f64(xv[k]), f64(values(ys)[k])));
  require_close(vmap(grad(g))(xs, ys), stack_at(loop), 1e-10);
  require_close(jit(vmap(grad(g)))(xs, ys), stack_at(loop), 1e-10);
}

TEST_CASE("control flow vmap: vmap of a jvp through a batched while_loop", "[control_flow_vmap]") {
  // x -> x * 1.5 + 0.1 until x >= 10: dx_final/dx0 = 1.5^n with n per example.
  auto tangent = [](const Array& x) {
    return jvp([](const Array& a) { return std::get<1>(grow_until(a, Array(10.0))); },
               std::tuple{x}, std::tuple{np::ones_like(x)})
        .second;
  };
  std::vector<double> xv = {0.1, 5.0, 12.0, 1.0}, host;
  for (double x : xv) host.push_back(std::pow(1.5, grow_until_host(x, 10.0).first));
  require_close(vmap(tangent)(host_array(xv, {4})), host);
  require_close(jit(vmap(tangent))(host_array(xv, {4})), host);
}

// ---- batching that spreads, or does not ----------------------------------------------------

TEST_CASE("control flow vmap: a while_loop whose unbatched carry element becomes batched",
          "[control_flow_vmap]") {
  // Carry (i, a, b): a starts shared, b per example; a += b makes a batched too. The pred reads
  // only the unbatched counter.
  auto f = [](const Array& a0, const Array& b) {
    return lax::while_loop(
        [](const std::tuple<Array, Array, Array>& s) { return std::get<0>(s) < 4; },
        [](const std::tuple<Array, Array, Array>& s) {
          const auto& [i, a, bb] = s;
          return std::tuple<Array, Array, Array>{i + 1, a * 0.5 + bb, bb};
        },
        std::tuple<Array, Array, Array>{i32(0), a0, b});
  };
  std::vector<double> bv = {1.0, -2.0, 0.25};
  std::vector<double> host;
  for (double b : bv) {
    double a = 3.0;
    for (int k = 0; k < 4; ++k) a = a * 0.5 + b;
    host.push_back(a);
  }
  auto [i, a, b] = vmap(f, {none, 0})(Array(3.0), host_array(bv, {3}));
  REQUIRE(a.shape() == Shape{3});
  require_close(a, host);
  require_close(b, bv);
  CHECK(values(i) == std::vector<double>{4, 4, 4});
  auto [ji, ja, jb] = jit(vmap(f, {none, 0}))(Array(3.0), host_array(bv, {3}));
  require_close(ja, host);
  // fori_loop with unbatched Array bounds and a batched carry: the pred is not batched.
  auto g = [](const Array& x) {
    return lax::fori_loop(
        i32(1), i32(4), [](const Array& k, const Array& c) { return c * k.astype(float64) + 1.0; },
        x);
  };
  std::vector<double> xv = {0.5, -1.0}, want;
  for (double x : xv) want.push_back(((x * 1 + 1) * 2 + 1) * 3 + 1);
  require_close(vmap(g)(host_array(xv, {2})), want);
  require_close(jit(vmap(g))(host_array(xv, {2})), want);
}

TEST_CASE("control flow vmap: a scan whose carry becomes batched only through xs, unbatched ys",
          "[control_flow_vmap]") {
  // Carry (s, t): s accumulates the batched xs, t only a shared counter. ys: (s, a constant).
  auto f = [](const Array& xs) {
    using C = std::tuple<Array, Array>;
    return lax::scan(
        [](const C& c, const Array& x) {
          const auto& [s, t] = c;
          // 0.9 a float64, as on the host.
          return std::pair{C{s * f64(0.9) + x, t + 1.0}, std::tuple<Array, Array>{s, Array(2.0)}};
        },
        C{Array(0.0), Array(0.0)}, xs);
  };
  std::vector<double> xv = {1, 2, 3, 4, 5, 6, 7, 8};  // 2 examples of 4 steps
  auto [c, ys] = vmap(f)(host_array(xv, {2, 4}));
  std::vector<double> s_host, ys_host;
  for (int k = 0; k < 2; ++k) {
    double s = 0;
    for (int t = 0; t < 4; ++t) {
      ys_host.push_back(s);
      s = s * 0.9 + xv[k * 4 + t];
    }
    s_host.push_back(s);
  }
  require_close(std::get<0>(c), s_host);
  require_close(std::get<1>(c), {4.0, 4.0});
  require_close(std::get<0>(ys), ys_host);
  require_close(std::get<1>(ys), std::vector<double>(8, 2.0));
  REQUIRE(std::get<1>(ys).shape() == Shape{2, 4});
  auto [jc, jys] = jit(vmap(f))(host_array(xv, {2, 4}));
  require_close(std::get<0>(jc), s_host);
  require_close(std::get<0>(jys), ys_host);
}

TEST_CASE("control flow vmap: cond with a batched pred whose branches return shared values",
          "[control_flow_vmap]") {
  // Neither branch reads a batched value, yet the result is per example; a tuple result.
  // (The operand c is unbatched.)
  auto f = [](const Array& p, const Array& c) {
    return lax::cond(
        p,
        [](const Array& a) {
          return std::tuple<Array, Array>{a * 2.0, Array(1.0)};
        },
        [](const Array& a) {
          return std::tuple<Array, Array>{a - 1.0, Array(-1.0)};
        },
        c);
  };
  Array preds = np::array({false, true, true});
  auto [u, v] = vmap(f, {0, none})(preds, Array(5.0));
  require_close(u, {4.0, 10.0, 10.0});
  require_close(v, {-1.0, 1.0, 1.0});
  auto [ju, jv] = jit(vmap(f, {0, none}))(preds, Array(5.0));
  require_close(ju, {4.0, 10.0, 10.0});
  require_close(jv, {-1.0, 1.0, 1.0});
  // switch_ with a batched index and branches that ignore their (unbatched) operand.
  auto g = [](const Array& i) {
    return lax::switch_(i,
                        std::tuple{[](const Array&) { return Array(10.0); },
                                   [](const Array&) { return Array(20.0); },
                                   [](const Array&) { return Array(30.0); }},
                        Array(0.0));
  };
  Array idx = np::array(std::vector<std::int32_t>{2, -7, 1, 0, 3});
  require_close(vmap(g)(idx), {30.0, 10.0, 20.0, 10.0, 30.0});
  require_close(jit(vmap(g))(idx), {30.0, 10.0, 20.0, 10.0, 30.0});
}

TEST_CASE("control flow vmap: a while_loop nested in a while_loop, and a scan in a while_loop",
          "[control_flow_vmap]") {
  // c = 3 * (double c until c >= 10) until c >= 100: inner and outer trip counts per example.
  auto nested = [](const Array& x) {
    return lax::while_loop([](const Array& c) { return c < 100.0; },
                           [](const Array& c) {
                             return lax::while_loop([](const Array& d) { return d < 10.0; },
                                                    [](const Array& d) { return d * 2.0; }, c) *
                                    3.0;
                           },
                           x);
  };
  std::vector<double> xv = {1.5, 0.1, 40.0, 150.0, 9.0}, host;
  for (double x : xv) {
    double c = x;
    while (c < 100) {
      while (c < 10) c *= 2;
      c *= 3;
    }
    host.push_back(c);
  }
  Array xs = host_array(xv, {5});
  require_close(vmap(nested)(xs), host);
  require_close(jit(vmap(nested))(xs), host);
  Arrays loop;
  for (double x : xv) loop.push_back(nested(f64(x)));
  require_close(vmap(nested)(xs), stack_at(loop));
  // The body runs a 3-step scan (c -> c * w + 1) and the loop stops once c > 50; w per example.
  auto scanned = [](const Array& w) {
    return lax::while_loop([](const Array& c) { return c <= 50.0; },
                           [&](const Array& c) {
                             return lax::scan(
                                        [&](const Array& d, std::tuple<>) {
                                          return std::pair{d * w + 1.0, std::tuple<>{}};
                                        },
                                        c, std::tuple<>{}, {.length = 3})
                                 .first;
                           },
                           Array(1.0));
  };
  std::vector<double> wv = {1.1, 2.0, 1.3, 3.5};
  host.clear();
  for (double w : wv) {
    double c = 1.0;
    while (c <= 50)
      for (int k = 0; k < 3; ++k) c = c * w + 1;
    host.push_back(c);
  }
  require_close(vmap(scanned)(host_array(wv, {4})), host, 1e-10);
  require_close(jit(vmap(scanned))(host_array(wv, {4})), host, 1e-10);
}

}  // namespace jx
