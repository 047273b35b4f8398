// jx::lax control flow from the public API: cond, switch_, while_loop, fori_loop and scan, eagerly
// and under jit, against plain C++ loops; pytree operands and carries, captured constants and
// captured tracers, nested control flow. Golden texts and the jit cache:
// test_control_flow_text.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "library/numpy_testing.hpp"
#include "jaxpr/jaxpr.hpp"
#include "jx/jx.hpp"

namespace jx_control_flow_test {

struct State {
  jx::Array count, x;
};
JX_PYTREE(State, count, x)

}  // namespace jx_control_flow_test

namespace jx {
namespace {

using jx_control_flow_test::State;
using np_testing::check_values;

// A strong-typed int32 scalar (Array(v) alone is weak-typed).
Array i32(std::int32_t v) { return np::array(Array(v)); }

std::vector<double> doubles(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// Runs check on f(args...) computed eagerly, then on jit(f)(args...).
template <class F, class Check, class... Args>
void eager_and_jit(const F& f, const Check& check, const Args&... args) {
  {
    INFO("eager");
    check(f(args...));
  }
  {
    INFO("jit");
    check(jit(f)(args...));
  }
}

// The oracle for Collatz trip counts: steps until n reaches 1.
int collatz_steps(int n) {
  int steps = 0;
  while (n != 1) {
    n = n % 2 == 0 ? n / 2 : 3 * n + 1;
    ++steps;
  }
  return steps;
}

// The same in jx: a while_loop over a (n, steps) pair carry.
std::pair<Array, Array> collatz(const Array& n0) {
  return lax::while_loop([](const std::pair<Array, Array>& s) { return s.first != 1; },
                         [](const std::pair<Array, Array>& s) {
                           const auto& [n, k] = s;
                           Array next =
                               np::where(n % 2 == 0, np::floor_divide(n, Array(2)), n * 3 + 1);
                           return std::pair{next, k + 1};
                         },
                         std::pair{n0, i32(0)});
}

// ---- cond ---------------------------------------------------------------------------------------

TEST_CASE("cond: a bool pred runs true_fn or false_fn, eagerly and under jit", "[control_flow]") {
  std::vector<float> xv{1.5f, -2.f, 0.25f};
  Array x = np::array(xv);
  auto f = [](const Array& p, const Array& v) {
    return lax::cond(
        p, [](const Array& a) { return a * 2.0f; }, [](const Array& a) { return a + 1.0f; }, v);
  };
  for (bool p : {true, false}) {
    INFO("pred " << p);
    std::vector<double> want;
    for (float e : xv) want.push_back(p ? e * 2.0 : e + 1.0);
    eager_and_jit(
        f,
        [&](const Array& y) {
          CHECK(y.aval() == ShapedArray{{3}, float32});
          check_values(y, want);
        },
        Array(p), x);
  }
}

TEST_CASE("cond: a number pred is true when nonzero (NaN included)", "[control_flow]") {
  Array x = np::array({3.f, -4.f});
  auto f = [](const Array& p, const Array& v) {
    return lax::cond(
        p, [](const Array& a) { return a * a; }, [](const Array& a) { return -a; }, v);
  };
  struct Case {
    const char* name;
    Array pred;
    bool truth;
  };
  std::vector<Case> cases{{"2.5f", Array(2.5f), true},
                          {"0.0f", Array(0.0f), false},
                          {"-0.0f", np::array(Array(-0.0f)), false},
                          {"NaN", np::array(Array(std::numeric_limits<float>::quiet_NaN())), true},
                          {"int32 -3", i32(-3), true},
                          {"int32 0", i32(0), false},
                          {"uint32 7", Array(7u), true},
                          {"uint32 0", Array(0u), false}};
  for (const Case& c : cases) {
    INFO("pred " << c.name);
    std::vector<double> want = c.truth ? std::vector<double>{9, 16} : std::vector<double>{-3, 4};
    eager_and_jit(
        f, [&](const Array& y) { check_values(y, want); }, c.pred, x);
  }
}

TEST_CASE("cond: pytree operands (pair, tuple with vector and scalar, struct) and results",
          "[control_flow]") {
  Array a = np::array({1.f, 2.f}), b = np::array({10.f, -5.f});
  SECTION("std::pair operand and result") {
    auto f = [](const Array& p, const std::pair<Array, Array>& ab) {
      return lax::cond(
          p,
          [](const std::pair<Array, Array>& t) {
            return std::pair{t.first + t.second, t.first * t.second};
          },
          [](const std::pair<Array, Array>& t) {
            return std::pair{t.second, t.first};
          },
          ab);
    };
    for (bool p : {true, false}) {
      INFO("pred " << p);
      eager_and_jit(
          f,
          [&](const std::pair<Array, Array>& r) {
            check_values(r.first, p ? std::vector<double>{11, -3} : std::vector<double>{10, -5});
            check_values(r.second, p ? std::vector<double>{10, -10} : std::vector<double>{1, 2});
          },
          Array(p), std::pair{a, b});
    }
  }
  SECTION("std::tuple of an array, a std::vector and a C++ scalar; two operands") {
    // Under jit the float leaf arrives as an Array, so f takes the tuple generically.
    auto f = [](const Array& p, const auto& t, const Array& z) {
      return lax::cond(
          p,
          [](const auto& tt, const Array& zz) {
            const auto& [u, vs, s] = tt;
            return u * s + vs[0] + vs[1] - zz;
          },
          [](const auto& tt, const Array& zz) { return std::get<0>(tt) - std::get<1>(tt)[1] * zz; },
          t, z);
    };
    Array z = np::array({0.5f, 0.25f});
    std::tuple<Array, std::vector<Array>, float> t{a, std::vector<Array>{b, a * 3.0f}, 4.0f};
    for (bool p : {true, false}) {
      INFO("pred " << p);
      std::vector<double> want;
      for (int k = 0; k < 2; ++k) {
        double av = k ? 2 : 1, bv = k ? -5 : 10, zv = k ? 0.25 : 0.5;
        want.push_back(p ? av * 4 + bv + 3 * av - zv : av - 3 * av * zv);
      }
      eager_and_jit(
          f, [&](const Array& y) { check_values(y, want); }, Array(p), t, z);
    }
  }
  SECTION("a JX_PYTREE struct") {
    auto f = [](const Array& p, const State& s) {
      return lax::cond(
          p,
          [](const State& t) {
            return State{t.count + 1, t.x * 2.0f};
          },
          [](const State& t) {
            return State{t.count - 1, -t.x};
          },
          s);
    };
    for (bool p : {true, false}) {
      INFO("pred " << p);
      eager_and_jit(
          f,
          [&](const State& r) {
            CHECK(r.count.dtype() == int32);
            CHECK(r.count.item<int>() == (p ? 6 : 4));
            check_values(r.x, p ? std::vector<double>{2, 4} : std::vector<double>{-1, -2});
          },
          Array(p), State{i32(5), a});
    }
  }
}

TEST_CASE("cond: branches close over an outside array and over a traced value under jit",
          "[control_flow]") {
  std::vector<float> cv{10.f, 20.f, 30.f}, xv{1.f, -2.f, 3.f}, yv{0.5f, 4.f, -1.f};
  Array c = np::array(cv), x = np::array(xv), y = np::array(yv);
  SECTION("a captured constant") {
    auto f = [&](const Array& p, const Array& v) {
      return lax::cond(
          p, [&](const Array& u) { return u + c; }, [&](const Array& u) { return u * c; }, v);
    };
    for (bool p : {true, false}) {
      INFO("pred " << p);
      std::vector<double> want;
      for (int k = 0; k < 3; ++k) want.push_back(p ? xv[k] + cv[k] : xv[k] * cv[k]);
      eager_and_jit(
          f, [&](const Array& r) { check_values(r, want); }, Array(p), x);
    }
  }
  SECTION("a captured argument of the jitted function (a tracer under jit)") {
    auto f = [](const Array& p, const Array& v, const Array& w) {
      Array w2 = w * 2.0f;  // an intermediate tracer, not just an argument
      return lax::cond(
          p, [&](const Array& u) { return u * w2; }, [&](const Array& u) { return u - w; }, v);
    };
    for (bool p : {true, false}) {
      INFO("pred " << p);
      std::vector<double> want;
      for (int k = 0; k < 3; ++k) want.push_back(p ? xv[k] * 2 * yv[k] : xv[k] - yv[k]);
      eager_and_jit(
          f, [&](const Array& r) { check_values(r, want); }, Array(p), x, y);
    }
  }
}

TEST_CASE("cond: branches that take no operands, only what they capture", "[control_flow]") {
  std::vector<float> cv{1.f, -2.f, 4.f};
  Array c = np::array(cv);
  auto f = [&](const Array& p) {
    return lax::cond(
        p, [&] { return c * 2.0f; }, [&] { return c - 1.0f; });
  };
  for (bool p : {true, false}) {
    INFO("pred " << p);
    std::vector<double> want;
    for (float v : cv) want.push_back(p ? v * 2.0 : v - 1.0);
    eager_and_jit(
        f, [&](const Array& r) { check_values(r, want); }, Array(p));
  }
}

// ---- switch_ ------------------------------------------------------------------------------------

TEST_CASE("switch_: a std::tuple of three lambdas, the index clamped into range",
          "[control_flow]") {
  std::vector<float> av{1.f, -2.f}, bv{3.f, 0.5f};
  Array a = np::array(av), b = np::array(bv);
  auto f = [](const Array& i, const Array& u, const Array& v) {
    return lax::switch_(i,
                        std::tuple{[](const Array& s, const Array& t) { return s + t; },
                                   [](const Array& s, const Array& t) { return s * t; },
                                   [](const Array& s, const Array& t) { return s - t * 2.0f; }},
                        u, v);
  };
  for (int index : {-1, 0, 1, 2, 7}) {
    INFO("index " << index);
    int branch = std::clamp(index, 0, 2);
    std::vector<double> want;
    for (int k = 0; k < 2; ++k)
      want.push_back(branch == 0 ? av[k] + bv[k] : branch == 1 ? av[k] * bv[k] : av[k] - bv[k] * 2);
    eager_and_jit(
        f, [&](const Array& r) { check_values(r, want); }, i32(index), a, b);
  }
  // Unsigned indices are clamped too.
  eager_and_jit(
      f,
      [&](const Array& r) {
        check_values(r, {av[0] - 6, av[1] - 1});
      },
      Array(9u), a, b);
}

TEST_CASE("switch_: a std::vector of std::function branches", "[control_flow]") {
  std::vector<float> xv{0.5f, 2.f, -3.f};
  Array x = np::array(xv);
  Array c = np::array({1.f, 1.f, 2.f});  // captured by one branch
  std::vector<std::function<Array(const Array&)>> branches{
      [](const Array& v) { return v * v; },
      [&](const Array& v) { return v + c; },
      [](const Array& v) { return np::sum(v) * v; },
  };
  auto f = [&](const Array& i, const Array& v) { return lax::switch_(i, branches, v); };
  double total = xv[0] + xv[1] + xv[2];
  for (int index : {-1, 0, 1, 2, 7}) {
    INFO("index " << index);
    int branch = std::clamp(index, 0, 2);
    std::vector<double> cs{1, 1, 2}, want;
    for (int k = 0; k < 3; ++k)
      want.push_back(branch == 0 ? xv[k] * xv[k] : branch == 1 ? xv[k] + cs[k] : total * xv[k]);
    eager_and_jit(
        f, [&](const Array& r) { check_values(r, want); }, i32(index), x);
  }
}

TEST_CASE("switch_: a single branch runs for any index", "[control_flow]") {
  std::vector<std::function<Array(const Array&)>> one{[](const Array& v) { return v - 1.0f; }};
  auto f = [&](const Array& i, const Array& v) { return lax::switch_(i, one, v); };
  for (int index : {-5, 0, 3}) {
    INFO("index " << index);
    eager_and_jit(
        f,
        [](const Array& r) {
          check_values(r, {1, -3});
        },
        i32(index), np::array({2.f, -2.f}));
  }
}

// ---- while_loop ---------------------------------------------------------------------------------

TEST_CASE("while_loop: Collatz trip counts are data dependent, eagerly and under jit",
          "[control_flow]") {
  auto f = [](const Array& n) { return collatz(n); };
  auto jf = jit(f);
  for (int n : {27, 1, 97, 6, 871}) {
    INFO("n = " << n);
    int want = collatz_steps(n);
    auto [end_e, steps_e] = f(i32(n));
    CHECK(end_e.item<int>() == 1);
    CHECK(steps_e.item<int>() == want);
    CHECK(steps_e.dtype() == int32);
    auto [end_j, steps_j] = jf(i32(n));
    CHECK(end_j.item<int>() == 1);
    CHECK(steps_j.item<int>() == want);
  }
  CHECK(collatz_steps(27) == 111);  // the oracle itself, against the known value
  CHECK(jf.cache_info().traces == 1);
}

TEST_CASE("while_loop: Newton iterations for sqrt with a struct carry (int counter, f32[4])",
          "[control_flow]") {
  std::vector<float> av{2.f, 9.f, 0.25f, 1e4f};
  Array a = np::array(av);
  auto f = [](const Array& target) {
    return lax::while_loop(
        [&](const State& s) {
          Array err = np::max(np::abs(s.x * s.x - target) / target);
          return (err > 1e-4f) & (s.count < 100);
        },
        [&](const State& s) {
          return State{s.count + 1, 0.5f * (s.x + target / s.x)};
        },
        State{i32(0), np::ones_like(target)});
  };
  // The oracle: the same iteration in float, same stopping rule.
  std::vector<float> x(4, 1.f);
  int count = 0;
  auto err = [&] {
    float m = 0;
    for (int k = 0; k < 4; ++k) m = std::max(m, std::fabs(x[k] * x[k] - av[k]) / av[k]);
    return m;
  };
  while (err() > 1e-4f && count < 100) {
    for (int k = 0; k < 4; ++k) x[k] = 0.5f * (x[k] + av[k] / x[k]);
    ++count;
  }
  REQUIRE(count == 10);
  eager_and_jit(
      f,
      [&](const State& s) {
        CHECK(s.count.item<int>() == count);
        check_values(s.x, doubles(x), 1e-6);
        check_values(s.x, {std::sqrt(2.0), 3.0, 0.5, 100.0}, 1e-5);
      },
      a);
}

TEST_CASE("while_loop: a carry that never enters the loop comes back unchanged", "[control_flow]") {
  auto f = [](const Array& x) {
    return lax::while_loop([](const Array& v) { return np::sum(v) < 0.0f; },
                           [](const Array& v) { return v - 1.0f; }, x);
  };
  eager_and_jit(
      f,
      [](const Array& r) {
        check_values(r, {1, 2});
      },
      np::array({1.f, 2.f}));
}

// ---- fori_loop ----------------------------------------------------------------------------------

TEST_CASE("fori_loop: static bounds (a scan) and Array bounds (a while), sum of i*i",
          "[control_flow]") {
  auto body = [](const Array& i, const Array& acc) { return acc + i * i; };
  auto sum_sq = [](int lo, int hi) {
    std::int64_t s = 0;
    for (int i = lo; i < hi; ++i) s += static_cast<std::int64_t>(i) * i;
    return s;
  };
  SECTION("static bounds") {
    auto f = [&](const Array& init) { return lax::fori_loop(0, 100, body, init); };
    eager_and_jit(
        f,
        [&](const Array& r) {
          CHECK(r.dtype() == int32);
          CHECK(r.item<std::int64_t>() == sum_sq(0, 100));
        },
        i32(0));
    CHECK(sum_sq(0, 100) == 328350);
    // A weak-typed init (a C++ int) is promoted to the body's int32, as JAX does.
    CHECK(lax::fori_loop(0, 100, body, 0).item<std::int64_t>() == 328350);
    // Empty and reversed ranges leave the carry as it was.
    CHECK(lax::fori_loop(5, 5, body, i32(7)).item<int>() == 7);
    CHECK(lax::fori_loop(10, 3, body, i32(7)).item<int>() == 7);
    CHECK(lax::fori_loop(-3, 2, body, i32(0)).item<int>() == sum_sq(-3, 2));
  }
  SECTION("Array bounds") {
    auto f = [&](const Array& lo, const Array& hi) { return lax::fori_loop(lo, hi, body, i32(0)); };
    auto jf = jit(f);
    for (auto [lo, hi] :
         std::vector<std::pair<int, int>>{{3, 10}, {0, 100}, {5, 5}, {7, 2}, {-4, 3}}) {
      INFO("[" << lo << ", " << hi << ")");
      CHECK(f(i32(lo), i32(hi)).item<std::int64_t>() == sum_sq(lo, hi));
      CHECK(jf(i32(lo), i32(hi)).item<std::int64_t>() == sum_sq(lo, hi));
    }
    CHECK(sum_sq(3, 10) == 280);
    CHECK(jf.cache_info().traces == 1);
  }
}

TEST_CASE("fori_loop: a polynomial update of an f32[4] over 100 steps", "[control_flow]") {
  std::vector<float> x0{0.5f, -0.75f, 0.1f, 2.f};
  auto body = [](const Array& i, const Array& x) {
    return x + 0.05f * (x - x * x * x) + 0.0001f * i.astype(float32);
  };
  // The oracle, in float, in the same order of operations.
  std::vector<float> want = x0;
  for (int i = 0; i < 100; ++i)
    for (float& v : want) v = v + 0.05f * (v - v * v * v) + 0.0001f * static_cast<float>(i);
  auto with_static = [&](const Array& x) { return lax::fori_loop(0, 100, body, x); };
  auto with_arrays = [&](const Array& x) { return lax::fori_loop(i32(0), i32(100), body, x); };
  auto check = [&](const Array& r) {
    CHECK(r.aval() == ShapedArray{{4}, float32});
    check_values(r, doubles(want), 1e-5);
  };
  eager_and_jit(with_static, check, np::array(x0));
  eager_and_jit(with_arrays, check, np::array(x0));
}

TEST_CASE("fori_loop: 10,000 iterations of an f32[4] relaxation under jit", "[control_flow]") {
  std::vector<float> x0{1.f, -2.f, 0.5f, 30.f}, vv{4.f, 0.f, -1.f, 2.f};
  auto f = [](const Array& x, const Array& v) {
    return lax::fori_loop(
        0, 10000, [&](const Array&, const Array& y) { return y * 0.999f + (v - y) * 0.01f; }, x);
  };
  std::vector<float> want = x0;
  for (int i = 0; i < 10000; ++i)
    for (int k = 0; k < 4; ++k) want[k] = want[k] * 0.999f + (vv[k] - want[k]) * 0.01f;
  // The fixed point is v * 0.01 / 0.011; the oracle has reached it.
  for (int k = 0; k < 4; ++k) CHECK(want[k] == Approx(vv[k] / 1.1).margin(1e-5));
  Array r = jit(f)(np::array(x0), np::array(vv));
  check_values(r, doubles(want), 1e-4);

  // Static bounds: the loop runs its body 10,000 times without evaluating the condition.
  auto compiled = jit(f).lower(np::array(x0), np::array(vv)).compile();
  CHECK_THAT(compiled.hlo_text(), Catch::Contains("known_trip_count=10000"));
  CHECK_THAT(compiled.thunk_sequence(), Catch::Contains("(10000 trips, body: "));
  // Traced bounds: a plain while; the condition runs every time.
  auto traced = [](const Array& x, const Array& v, const Array& n) {
    return lax::fori_loop(
        Array(0), n, [&](const Array&, const Array& y) { return y * 0.999f + (v - y) * 0.01f; }, x);
  };
  auto compiled_traced =
      jit(traced).lower(np::array(x0), np::array(vv), Array(std::int32_t{10000})).compile();
  CHECK_THAT(compiled_traced.thunk_sequence(), Catch::Contains("(cond: "));
  check_values(jit(traced)(np::array(x0), np::array(vv), Array(std::int32_t{10000})), doubles(want),
               1e-4);
}

// ---- scan ---------------------------------------------------------------------------------------

std::vector<float> iota_values(int n, float scale, float shift) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<float>(i) * scale + shift);
  return v;
}

TEST_CASE("scan: cumulative sums (ys) and the total (carry) over f32[5,3], forward and reverse",
          "[control_flow]") {
  std::vector<float> xv = iota_values(15, 0.5f, -3.f);
  Array xs = np::array(xv, {5, 3});
  auto step = [](const Array& c, const Array& x) {
    Array s = c + x;
    return std::pair{s, s};
  };
  for (bool reverse : {false, true}) {
    INFO("reverse " << reverse);
    auto f = [&](const Array& v) {
      return lax::scan(step, np::zeros({3}), v, {.reverse = reverse});
    };
    std::vector<double> ys(15), total(3, 0.0);
    for (int t = 0; t < 5; ++t) {
      int row = reverse ? 4 - t : t;
      for (int j = 0; j < 3; ++j) {
        total[j] += xv[row * 3 + j];
        ys[row * 3 + j] = total[j];
      }
    }
    eager_and_jit(
        f,
        [&](const std::pair<Array, Array>& r) {
          CHECK(r.first.aval() == ShapedArray{{3}, float32});
          CHECK(r.second.aval() == ShapedArray{{5, 3}, float32});
          check_values(r.first, total);
          check_values(r.second, ys);
        },
        xs);
  }
}

TEST_CASE("scan: several xs and ys as tuples", "[control_flow]") {
  std::vector<float> av{1.f, -0.5f, 2.f, 0.25f}, bv = iota_values(8, 0.25f, -1.f);
  Array a = np::array(av), b = np::array(bv, {4, 2});
  auto f = [](const Array& c0, const std::tuple<Array, Array>& xs) {
    return lax::scan(
        [](const Array& c, const std::tuple<Array, Array>& x) {
          const auto& [ai, bi] = x;
          Array next = c * ai + bi;
          return std::pair{next, std::tuple{next, np::sum(next), ai * 2.0f}};
        },
        c0, xs);
  };
  std::vector<double> c{1, 2}, ys0, ys1, ys2;
  for (int t = 0; t < 4; ++t) {
    for (int j = 0; j < 2; ++j) c[j] = c[j] * av[t] + bv[t * 2 + j];
    ys0.insert(ys0.end(), c.begin(), c.end());
    ys1.push_back(c[0] + c[1]);
    ys2.push_back(av[t] * 2);
  }
  eager_and_jit(
      f,
      [&](const std::pair<Array, std::tuple<Array, Array, Array>>& r) {
        const auto& [y0, y1, y2] = r.second;
        check_values(r.first, c);
        CHECK(y0.shape() == Shape{4, 2});
        CHECK(y1.shape() == Shape{4});
        CHECK(y2.shape() == Shape{4});
        check_values(y0, ys0);
        check_values(y1, ys1);
        check_values(y2, ys2);
      },
      np::array({1.f, 2.f}), std::tuple{a, b});
}

TEST_CASE("scan: a length-only scan over std::tuple<>{} (Fibonacci)", "[control_flow]") {
  auto f = [](const Array& a0, const Array& b0) {
    return lax::scan(
        [](const std::pair<Array, Array>& c, std::tuple<>) {
          return std::pair{std::pair{c.second, c.first + c.second}, c.first};
        },
        std::pair{a0, b0}, std::tuple<>{}, {.length = 10});
  };
  std::vector<double> fib{0, 1};
  while (fib.size() < 12) fib.push_back(fib[fib.size() - 1] + fib[fib.size() - 2]);
  eager_and_jit(
      f,
      [&](const auto& r) {
        CHECK(r.first.first.template item<int>() == 55);
        CHECK(r.first.second.template item<int>() == 89);
        CHECK(r.second.aval() == ShapedArray{{10}, int32});
        check_values(r.second, std::vector<double>(fib.begin(), fib.begin() + 10));
      },
      i32(0), i32(1));
}

TEST_CASE("scan: a body that closes over an outside array", "[control_flow]") {
  std::vector<float> wv{0.5f, -0.25f, 1.5f}, xv = iota_values(18, 0.125f, -1.f);
  Array w = np::array(wv), xs = np::array(xv, {6, 3});
  auto f = [&](const Array& c0, const Array& v) {
    return lax::scan(
        [&](const Array& c, const Array& x) {
          Array next = np::tanh(w * c + x);
          return std::pair{next, next * w};
        },
        c0, v);
  };
  std::vector<double> c{0.1, 0.2, 0.3}, ys;
  for (int t = 0; t < 6; ++t)
    for (int j = 0; j < 3; ++j) {
      c[j] = std::tanh(wv[j] * c[j] + xv[t * 3 + j]);
      ys.push_back(c[j] * wv[j]);
    }
  eager_and_jit(
      f,
      [&](const std::pair<Array, Array>& r) {
        check_values(r.first, c, 1e-5);
        check_values(r.second, ys, 1e-5);
      },
      np::array({0.1f, 0.2f, 0.3f}), xs);
}

TEST_CASE("scan: xs of length 0 give back the init carry and empty ys", "[control_flow]") {
  auto over_xs = [](const Array& c0, const Array& xs) {
    return lax::scan(
        [](const Array& c, const Array& x) {
          return std::pair{c + x, c * 2.0f};
        },
        c0, xs);
  };
  eager_and_jit(
      over_xs,
      [](const std::pair<Array, Array>& r) {
        check_values(r.first, {1, 2, 3});
        CHECK(r.second.aval() == ShapedArray{{0, 3}, float32});
        CHECK(r.second.to_vector<float>().empty());
      },
      np::array({1.f, 2.f, 3.f}), np::zeros({0, 3}));
}

TEST_CASE("scan: a length-only scan of length 0 returns the init carry and empty ys",
          "[control_flow]") {
  auto no_xs = [](const Array& c0) {
    return lax::scan(
        [](const Array& c, std::tuple<>) {
          return std::pair{c + 1.0f, np::sum(c)};
        },
        c0, std::tuple<>{}, {.length = 0});
  };
  eager_and_jit(
      no_xs,
      [](const std::pair<Array, Array>& r) {
        check_values(r.first, {1, 2});
        CHECK(r.second.aval() == ShapedArray{{0}, float32});
      },
      np::array({1.f, 2.f}));
}

// ---- nested control flow ------------------------------------------------------------------------

TEST_CASE("nested: a cond inside a scan body, under jit", "[control_flow]") {
  std::vector<float> xv{1.f, -2.f, 0.5f, -0.25f, 3.f, 0.f, -1.f, 2.f};
  auto f = [](const Array& c0, const Array& xs) {
    return lax::scan(
        [](const Array& c, const Array& x) {
          Array next = lax::cond(
              x > 0.0f, [](const Array& a, const Array& b) { return a + b; },
              [](const Array& a, const Array&) { return a * 0.5f; }, c, x);
          return std::pair{next, next};
        },
        c0, xs);
  };
  double c = 1;
  std::vector<double> ys;
  for (float x : xv) {
    c = x > 0 ? c + x : c * 0.5;
    ys.push_back(c);
  }
  eager_and_jit(
      f,
      [&](const std::pair<Array, Array>& r) {
        check_values(r.first, {c});
        check_values(r.second, ys);
      },
      np::array(Array(1.f)), np::array(xv));
}

TEST_CASE("nested: a while inside a fori_loop (static and Array bounds), under jit",
          "[control_flow]") {
  auto body = [](const Array& i, const Array& acc) { return acc + collatz(i).second; };
  int want = 0;
  for (int n = 1; n < 30; ++n) want += collatz_steps(n);
  auto with_static = [&](const Array& init) { return lax::fori_loop(1, 30, body, init); };
  auto with_arrays = [&](const Array& lo, const Array& hi) {
    return lax::fori_loop(lo, hi, body, i32(0));
  };
  eager_and_jit(
      with_static, [&](const Array& r) { CHECK(r.item<int>() == want); }, i32(0));
  eager_and_jit(
      with_arrays, [&](const Array& r) { CHECK(r.item<int>() == want); }, i32(1), i32(30));
}

TEST_CASE("nested: a scan inside a cond branch and a switch inside a while body",
          "[control_flow]") {
  std::vector<float> xv{1.f, 2.f, -4.f, 0.5f};
  auto cumsum = [](const Array& xs) {
    return lax::scan(
               [](const Array& c, const Array& x) {
                 return std::pair{c + x, c + x};
               },
               np::array(Array(0.f)), xs)
        .second;
  };
  auto f = [&](const Array& p, const Array& xs) {
    return lax::cond(
        p, cumsum, [](const Array& v) { return -v; }, xs);
  };
  eager_and_jit(
      f,
      [](const Array& r) {
        check_values(r, {1, 3, -1, -0.5});
      },
      Array(true), np::array(xv));
  eager_and_jit(
      f,
      [](const Array& r) {
        check_values(r, {-1, -2, 4, -0.5});
      },
      Array(false), np::array(xv));

  // while i < 10: x = switch(i % 3, [x + 1, x * 2, x - 3]); i += 1
  auto g = [](const Array& x0) {
    return lax::while_loop([](const std::pair<Array, Array>& s) { return s.first < 10; },
                           [](const std::pair<Array, Array>& s) {
                             Array x =
                                 lax::switch_(s.first % 3,
                                              std::tuple{[](const Array& v) { return v + 1.0f; },
                                                         [](const Array& v) { return v * 2.0f; },
                                                         [](const Array& v) { return v - 3.0f; }},
                                              s.second);
                             return std::pair{s.first + 1, x};
                           },
                           std::pair{i32(0), x0});
  };
  double x = 0.5;
  for (int i = 0; i < 10; ++i) x = i % 3 == 0 ? x + 1 : i % 3 == 1 ? x * 2 : x - 3;
  eager_and_jit(
      g,
      [&](const std::pair<Array, Array>& r) {
        CHECK(r.first.item<int>() == 10);
        check_values(r.second, {x});
      },
      np::array(Array(0.5f)));
}

}  // namespace
}  // namespace jx
