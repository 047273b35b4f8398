// jx::jit: values against hand-computed oracles, retracing only on a new abstract signature,
// pytrees in and out, static arguments, jit under other traces, disable_jit and errors.
#include <catch2/catch.hpp>

#include <pthread.h>

#include <cmath>
#include <exception>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include "jx/jx.hpp"
#include "library/numpy_testing.hpp"
#include "support/config_guard.hpp"
#include "support/error_of.hpp"

namespace jx_jit_test {

struct Dense {
  jx::Array w, b;
};
JX_PYTREE(Dense, w, b)

}  // namespace jx_jit_test

namespace jx {
namespace {

using Catch::Contains;
using jx_jit_test::Dense;
using np_testing::check_values;

using testing::ConfigGuard;

using jx::testing::error_of;

Array f32(const Shape& s, float v = 1) { return np::full(s, v); }

TEST_CASE("jit: elementwise values equal a hand-computed oracle; the second call hits", "[jit]") {
  int traces = 0;
  auto f = jit([&](const Array& a, const Array& b) {
    ++traces;
    return np::tanh(a * b) + np::exp(-a);
  });
  std::vector<float> av = {0.5f, -1, 2, 0}, bv = {1, 0.25f, -0.5f, 3};
  Array a = np::array(av, {2, 2}), b = np::array(bv, {2, 2});
  std::vector<double> oracle;
  for (int i = 0; i < 4; ++i) oracle.push_back(std::tanh(double(av[i]) * bv[i]) + std::exp(-av[i]));
  Array y = f(a, b);
  CHECK(y.aval() == ShapedArray{{2, 2}, float32});
  check_values(y, oracle, 1e-6);
  check_values(f(b, a),
               {std::tanh(0.5) + std::exp(-1.0), std::tanh(-0.25) + std::exp(-0.25),
                std::tanh(-1.0) + std::exp(0.5), std::tanh(0.0) + std::exp(-3.0)},
               1e-6);
  CHECK(traces == 1);
  CacheInfo info = f.cache_info();
  CHECK(info.hits == 1);
  CHECK(info.misses == 1);
  CHECK(info.traces == 1);
  CHECK(info.compiles == 1);
  CHECK(info.entries == 1);
}

TEST_CASE("jit: tanh(a @ b) equals a hand-computed oracle, and the second call hits", "[jit]") {
  int traces = 0;
  auto f = jit([&](const Array& a, const Array& b) {
    ++traces;
    return np::tanh(np::matmul(a, b));
  });
  std::vector<float> av = {1, 2, 3, 4, 5, 6}, bv = {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f};
  Array a = np::array(av, {2, 3}), b = np::array(bv, {3, 2});
  std::vector<double> oracle;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += double(av[i * 3 + k]) * bv[k * 2 + j];
      oracle.push_back(std::tanh(s));
    }
  Array y = f(a, b);
  CHECK(y.aval() == ShapedArray{{2, 2}, float32});
  check_values(y, oracle, 1e-6);
  check_values(f(a, b), oracle, 1e-6);
  CHECK(traces == 1);
  CacheInfo info = f.cache_info();
  CHECK(info.hits == 1);
  CHECK(info.misses == 1);
  CHECK(info.traces == 1);
  CHECK(info.compiles == 1);
  CHECK(info.entries == 1);
  CHECK(info.trace_ms >= 0);
}

TEST_CASE("jit: exactly one retrace per new shape, dtype, weak type, structure or static",
          "[jit]") {
  int traces = 0;
  auto f = jit([&](const Array& x, const Array& s) {
    ++traces;
    return x * s;
  });
  Array x3 = f32({3});
  f(x3, 2.0f);
  REQUIRE(traces == 1);

  SECTION("a scalar's value is not in the key, only its dtype and weak type") {
    check_values(f(x3, 5.0f), {5, 5, 5});
    CHECK(traces == 1);
  }
  SECTION("new shape") {
    check_values(f(f32({4}), 2.0f), {2, 2, 2, 2});
    CHECK(traces == 2);
    f(x3, 2.0f);
    CHECK(traces == 2);
  }
  SECTION("new dtype") {
    Array y = f(np::ones({3}, int32), 3);
    CHECK(y.dtype() == int32);
    check_values(y, {3, 3, 3});
    CHECK(traces == 2);
  }
  SECTION("new weak type: a strong f32[] instead of a C++ float") {
    f(x3, np::array(2.0f));
    CHECK(traces == 2);
    f(x3, np::array(7.0f));
    CHECK(traces == 2);
  }
  SECTION("a C++ double is a weak f64[]: another signature") {
    f(x3, 2.0);
    CHECK(traces == 2);
  }
  CHECK(f.cache_info().traces == traces);
}

TEST_CASE("jit: a new tree structure retraces once", "[jit]") {
  int traces = 0;
  auto f = jit([&](const std::vector<Array>& xs, const std::map<std::string, Array>& m) {
    ++traces;
    Array s = np::zeros({2});
    for (const auto& x : xs) s = s + x;
    for (const auto& [k, v] : m) s = s + v;
    return s;
  });
  std::map<std::string, Array> m{{"a", f32({2}, 10)}};
  check_values(f(std::vector<Array>{f32({2}), f32({2})}, m), {12, 12});
  check_values(f(std::vector<Array>{f32({2}), f32({2}, 2)}, m), {13, 13});
  CHECK(traces == 1);
  check_values(f(std::vector<Array>{f32({2}), f32({2}), f32({2})}, m), {13, 13});
  CHECK(traces == 2);
  std::map<std::string, Array> renamed{{"b", f32({2}, 10)}};
  f(std::vector<Array>{f32({2}), f32({2})}, renamed);
  CHECK(traces == 3);
  f(std::vector<Array>{f32({2}), f32({2})}, m);
  f(std::vector<Array>{f32({2}), f32({2})}, renamed);
  CHECK(traces == 3);
}

TEST_CASE("jit: pytrees of every kind in and out keep their structure", "[jit]") {
  using In = std::tuple<std::vector<Array>, std::array<Array, 2>, std::pair<Array, float>,
                        std::map<std::string, Array>, Dense>;
  auto f =
      jit([](const std::tuple<std::vector<Array>, std::array<Array, 2>, std::pair<Array, Array>,
                              std::map<std::string, Array>, Dense>& t) {
        const auto& [v, a, p, m, d] = t;
        std::vector<Array> vs{v[0] + v[1], v[1]};
        std::array<Array, 2> as{a[1], a[0] * 2.0f};
        std::pair<Array, Array> ps{p.first * p.second, p.second};
        std::map<std::string, Array> ms{{"sum", m.at("x") + m.at("y")}};
        Dense ds{d.w * 10.0f, d.b};
        return std::make_tuple(vs, as, ps, ms, ds, 1.5f);
      });
  In in{std::vector<Array>{f32({2}, 1), f32({2}, 2)},
        std::array<Array, 2>{f32({1}, 3), f32({1}, 4)}, std::pair<Array, float>{f32({3}, 5), 2.0f},
        std::map<std::string, Array>{{"x", f32({2}, 6)}, {"y", f32({2}, 7)}},
        Dense{f32({2, 2}, 8), f32({2}, 9)}};
  for (int call = 0; call < 2; ++call) {
    auto [vs, as, ps, ms, ds, scalar] = f(in);
    static_assert(std::is_same_v<decltype(vs), std::vector<Array>>);
    static_assert(std::is_same_v<decltype(as), std::array<Array, 2>>);
    static_assert(std::is_same_v<decltype(ps), std::pair<Array, Array>>);
    static_assert(std::is_same_v<decltype(ms), std::map<std::string, Array>>);
    static_assert(std::is_same_v<decltype(ds), Dense>);
    static_assert(std::is_same_v<decltype(scalar), Array>);  // scalars come back as Arrays
    REQUIRE(vs.size() == 2);
    check_values(vs[0], {3, 3});
    check_values(vs[1], {2, 2});
    check_values(as[0], {4});
    check_values(as[1], {6});
    check_values(ps.first, {10, 10, 10});
    CHECK(ps.second.aval() == ShapedArray{{}, float32, true});
    check_values(ps.second, {2});
    REQUIRE(ms.size() == 1);
    check_values(ms.at("sum"), {13, 13});
    check_values(ds.w, {80, 80, 80, 80});
    check_values(ds.b, {9, 9});
    check_values(scalar, {1.5});
  }
  CHECK(f.cache_info().traces == 1);
  CHECK(f.cache_info().hits == 1);
}

TEST_CASE("jit: jx::Static values join the key; the function reads .value", "[jit]") {
  int traces = 0;
  auto g = jit([&](const Array& x, Static<int> n) {
    ++traces;
    Array y = x;
    for (int i = 1; i < n.value; ++i) y = y * x;  // a Python-style loop unrolled at trace time
    return y;
  });
  Array x = np::array({1.f, 2.f, 3.f});
  check_values(g(x, Static<int>{3}), {1, 8, 27});
  check_values(g(x * 2.0f, Static<int>{3}), {8, 64, 216});
  CHECK(traces == 1);
  check_values(g(x, Static<int>{2}), {1, 4, 9});
  CHECK(traces == 2);
  check_values(g(x, Static{3}), {1, 8, 27});
  CHECK(traces == 2);
}

TEST_CASE("jit: static_argnums for scalars taken by value, Arrays and strings", "[jit]") {
  int traces = 0;
  auto power = jit(
      [&](const Array& x, int n) {
        ++traces;
        Array y = np::ones_like(x);
        for (int i = 0; i < n; ++i) y = y * x;
        return y;
      },
      {.static_argnums = {1}, .name = "power"});
  Array x = np::array({2.f, 3.f});
  check_values(power(x, 3), {8, 27});
  check_values(power(x, 3), {8, 27});
  check_values(power(x, 2), {4, 9});
  CHECK(traces == 2);

  // A function taking an Array: the static scalar arrives as a concrete Array.
  auto scale = jit([](const Array& x, const Array& k) { return x * k.item<float>(); },
                   {.static_argnums = {1}});
  check_values(scale(x, 4.0f), {8, 12});
  check_values(scale(x, 5.0f), {10, 15});
  CHECK(scale.cache_info().traces == 2);

  auto act =
      jit([](const Array& x, const std::string& kind) { return kind == "tanh" ? np::tanh(x) : x; },
          {.static_argnums = {1}});
  check_values(act(x, std::string("tanh")), {std::tanh(2.0), std::tanh(3.0)});
  check_values(act(x, std::string("id")), {2, 3});
  CHECK(act.cache_info().traces == 2);
}

TEST_CASE("jit: arguments that cannot be keyed are errors in JAX's words", "[jit]") {
  auto f = jit([](const Array& x, const std::string&) { return x; });
  CHECK(error_of<TypeError>([&] { f(f32({2}), std::string("a")); }) ==
        "Argument 1 of jit(f) is not a valid jx type (a pytree of Arrays and scalars): mark it "
        "static with jx::Static or JitOptions::static_argnums");
  auto g = jit([](const Array& x, int n) { return x * n; });
  CHECK(error_of<TypeError>([&] { g(f32({2}), 3); }) ==
        "Argument 1 of jit(f) holds C++ scalars, which the function takes as they are, so it "
        "cannot be traced: mark it static (jx::Static or JitOptions::static_argnums) or take "
        "jx::Arrays instead");
  auto h =
      jit([](const Array& x, const std::vector<float>&) { return x; }, {.static_argnums = {1}});
  CHECK(error_of<TypeError>([&] { h(f32({2}), std::vector<float>{1}); }) ==
        "Non-hashable static arguments are not supported: Argument 1 of jit(f) is in "
        "static_argnums, but its type has no std::hash or ==");
  auto k = jit([](const Array& x) { return x; }, {.static_argnums = {2}});
  CHECK(error_of<Error>([&] { k(f32({2})); }) ==
        "jitted function jit(f) has static_argnums=(2,), but was called with only 1 positional "
        "arguments");
  CHECK(error_of<Error>([] { jit([](const Array& x) { return x; }, {.static_argnums = {-1}}); }) ==
        "jit: static_argnums must be argument positions in [0, 64), got -1");
  CHECK(error_of<Error>([] {
          jit([](const Array& x) { return x; }, {.static_argnums = {0}, .donate_argnums = {0}});
        }) == "jit: argument 0 is in both static_argnums and donate_argnums");
  CHECK(error_of<Error>([&] { jit([](const Array& x) { return x; })(Array()); }) ==
        "use of an empty jx::Array (default-constructed, never assigned)");
}

TEST_CASE("jit: inside jit and under make_jaxpr the function is one jit equation", "[jit]") {
  int inner_traces = 0;
  auto inner = jit([&](const Array& x) {
    ++inner_traces;
    return np::sin(x) * 2.0f;
  });
  auto outer = jit([&](const Array& x) { return inner(x) + 1.0f; });
  Array x = np::array({0.5f, 1.f});
  check_values(outer(x), {2 * std::sin(0.5) + 1, 2 * std::sin(1.0) + 1});
  CHECK(inner_traces == 1);  // once, staged in outer's trace: no program of its own
  CHECK(inner.cache_info().misses == 0);
  CHECK(inner.cache_info().entries == 0);
  CHECK(outer.cache_info().entries == 1);

  // make_jaxpr(jit(f)) is one jit equation whose jaxpr is f's, as in JAX; traced again only for
  // a new signature.
  CHECK(make_jaxpr(inner)(x).str() == R"({ lambda ; a:f32[2]. let
    b:f32[2] = jit[
      name=f
      jaxpr={ lambda ; a:f32[2]. let
          c:f32[2] = sin a
          b:f32[2] = mul c 2.0:f32[]
        in (b,) }
    ] a
  in (b,) })");
  CHECK(inner_traces == 1);
  CHECK(inner.cache_info().entries == 0);
  // Eagerly, inner compiles on its own.
  check_values(inner(x), {2 * std::sin(0.5), 2 * std::sin(1.0)});
  CHECK(inner.cache_info().entries == 1);
}

TEST_CASE("jit: a jitted function closing over an outer tracer is staged, never cached", "[jit]") {
  std::int64_t entries = -1;
  auto outer = jit([&](const Array& x) {
    auto add_x = jit([&](const Array& c) { return c + x; });
    Array y = add_x(np::array({10.f, 20.f}));  // concrete argument, traced closure
    entries = add_x.cache_info().entries;
    return y;
  });
  check_values(outer(np::array({1.f, 2.f})), {11, 22});
  CHECK(entries == 0);
}

TEST_CASE("jit: copies share one cache; clear_cache empties it", "[jit]") {
  int traces = 0;
  auto f = jit([&](const Array& x) {
    ++traces;
    return -x;
  });
  auto g = f;
  f(f32({2}));
  check_values(g(f32({2}, 3)), {-3, -3});
  CHECK(traces == 1);
  CHECK(f.cache_info().hits == 1);
  g.clear_cache();
  CHECK(f.cache_info().entries == 0);
  f(f32({2}));
  CHECK(traces == 2);
}

TEST_CASE("jit: captured arrays become constants of the compiled program", "[jit]") {
  Array c = np::array({1.f, 2.f, 3.f});
  auto f = jit([&](const Array& x) { return x * c + 0.5f; });
  check_values(f(np::array({2.f, 2.f, 2.f})), {2.5, 4.5, 6.5});
  check_values(f(np::array({1.f, 0.f, -1.f})), {1.5, 0.5, -2.5});
  CHECK(f.cache_info().traces == 1);
}

TEST_CASE("jit: disable_jit calls the function eagerly every time", "[jit]") {
  ConfigGuard guard;
  config().disable_jit = true;
  int calls = 0;
  bool saw_tracer = false;
  auto f = jit([&](const Array& x, const Array& s) {
    ++calls;
    saw_tracer = saw_tracer || x.is_tracer();
    return std::make_pair(x * s, 2.0f);
  });
  auto [y, two] = f(f32({2}), 3.0f);
  f(f32({2}), 3.0f);
  check_values(y, {3, 3});
  check_values(two, {2});
  CHECK(calls == 2);
  CHECK_FALSE(saw_tracer);
  CacheInfo info = f.cache_info();
  CHECK(info.misses + info.hits + info.traces + info.entries == 0);
}

TEST_CASE("jit: reading a traced value is a ConcretizationError; the cache stays clean", "[jit]") {
  auto relu = jit([](const Array& x) { return (x > 0.0f) ? x : np::zeros_like(x); });
  std::string msg = error_of<ConcretizationError>([&] { relu(np::array(2.0f)); });
  CHECK_THAT(msg, Contains("Abstract tracer value encountered where concrete value is expected"));
  CHECK_THAT(msg, Contains("inside jit(f)"));
  CHECK_THAT(msg, Contains("jx::lax::cond"));
  CHECK(relu.cache_info().entries == 0);
  CHECK(relu.cache_info().traces == 1);
  auto item = jit([](const Array& x) { return Array(x.item<float>()); }, {.name = "item"});
  CHECK_THAT(error_of<ConcretizationError>([&] { item(np::array(2.0f)); }),
             Contains("`item()` was called on a traced array inside jit(item)"));
}

TEST_CASE("jit: a function of no arguments is traced once", "[jit]") {
  int traces = 0;
  auto f = jit([&] {
    ++traces;
    return np::arange(3.0) * 2.0f;
  });
  check_values(f(), {0, 2, 4});
  check_values(f(), {0, 2, 4});
  CHECK(traces == 1);
}

// x [m, k] of sines and w [k, n] of cosines, and their product by a loop in double.
struct Product {
  Array x, w;
  std::vector<double> want;
  // The elements of `got` more than 1e-3 from the loop's: each is a sum of k products of
  // magnitude at most 1, in float32.
  int wrong(const std::vector<double>& got) const {
    REQUIRE(got.size() == want.size());
    int n = 0;
    for (std::size_t i = 0; i < got.size(); ++i) n += std::abs(got[i] - want[i]) > 1e-3;
    return n;
  }
};

Product sin_cos_product(std::int64_t m, std::int64_t k, std::int64_t n) {
  std::vector<float> xv, wv;
  for (std::int64_t i = 0; i < m * k; ++i) xv.push_back(std::sin(0.37f * float(i)));
  for (std::int64_t i = 0; i < k * n; ++i) wv.push_back(std::cos(0.11f * float(i)));
  std::vector<double> want;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::int64_t p = 0; p < k; ++p)
        s += double(xv[std::size_t(i * k + p)]) * double(wv[std::size_t(p * n + j)]);
      want.push_back(s);
    }
  Array x = np::array(xv, {m, k}), w = np::array(wv, {k, n});
  return {x, w, want};
}

TEST_CASE("jit: a matrix product that keeps its packed panels gets a workspace per call", "[jit]") {
  // [270, 260] x [260, 730] under AVX2's tiles: split by columns, two blocks of rows, so the
  // first keeps the panels it packs in the kernel's workspace for the second (on any host).
  ConfigGuard guard;
  config().cpu_isa = "avx2";
  Product p = sin_cos_product(270, 260, 730);
  const Array &x = p.x, &w = p.w;
  for (int threads : {1, 0}) {  // 0: one per core
    INFO("--cpu_threads=" << threads);
    config().cpu_threads = threads;
    auto compiled =
        jit([](const Array& a, const Array& b) { return np::matmul(a, b); }).lower(x, w).compile();
    CHECK_THAT(compiled.thunk_sequence(), Contains(" workspace="));
    CHECK(p.wrong(compiled(x, w).to_vector<double>()) == 0);
  }
}

// Runs `f` on a new thread whose stack is `stack_bytes`, as a fiber's or a musl thread's is.
void on_small_stack(std::size_t stack_bytes, const std::function<void()>& f) {
  struct Call {
    const std::function<void()>* f;
    std::exception_ptr error;
  } call{&f, nullptr};
  pthread_attr_t attr;
  REQUIRE(pthread_attr_init(&attr) == 0);
  REQUIRE(pthread_attr_setstacksize(&attr, stack_bytes) == 0);
  pthread_t thread;
  auto run = [](void* p) -> void* {
    auto* c = static_cast<Call*>(p);
    try {
      (*c->f)();
    } catch (...) {
      c->error = std::current_exception();
    }
    return nullptr;
  };
  REQUIRE(pthread_create(&thread, &attr, run, &call) == 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  if (call.error) std::rethrow_exception(call.error);
}

TEST_CASE("jit: compiled calls run on a thread of a 128 KiB stack", "[jit]") {
  // The matrix kernel's packed block of lhs (256 KiB under AVX2's tiles on a core of a 512 KiB
  // second level) and its panels lie in the call's workspace; a row of softmax stays on the stack
  // (16 KiB). The caller's thread runs its share of each kernel.
  Product p = sin_cos_product(600, 512, 512);
  const Array &x = p.x, &w = p.w;
  auto product = jit([](const Array& a, const Array& b) { return np::matmul(a, b); });
  Array rows = np::reshape(np::arange(64 * 4096, float32), {64, 4096}) * 1e-4f;
  auto softmax = jit([](const Array& a) { return nn::softmax(a, -1); });
  product(x, w);  // compiled here: the calls below hit the cache
  softmax(rows);
  std::vector<double> got;
  std::vector<float> first_row;
  on_small_stack(128 << 10, [&] {
    got = product(x, w).to_vector<double>();
    first_row = softmax(rows).to_vector<float>();
  });
  CHECK(p.wrong(got) == 0);
  // Row 0 is exp(0.0001 j) over the sum of them.
  REQUIRE(first_row.size() == 64 * 4096);
  double sum = 0;
  for (int j = 0; j < 4096; ++j) sum += std::exp(1e-4 * j);
  CHECK(first_row[0] == Approx(1 / sum).epsilon(1e-5));
  CHECK(first_row[4095] == Approx(std::exp(0.4095) / sum).epsilon(1e-5));
}

TEST_CASE("jit: threads calling one jitted function share its cache", "[jit]") {
  auto f = jit([](const Array& x) { return x * 2.0f; });
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        Array y = f(np::full({1 + (i + t) % 3}, float(t)));
        ok[t] += y.to_vector<float>().at(0) == 2.0f * t;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(ok == std::vector<int>(4, 50));
  CacheInfo info = f.cache_info();
  CHECK(info.entries == 3);
  CHECK(info.hits + info.misses == 200);
  // Threads missing on one signature together wait for one compile.
  CHECK(info.misses == 3);
  CHECK(info.compiles == 3);
  CHECK(f.cache_misses().size() == 3);
}

TEST_CASE("jit: concurrent first calls are one trace, not retraces", "[jit]") {
  testing::ConfigGuard guard;
  config().strict_retraces = true;
  // Long enough to trace and compile that the four first calls overlap.
  auto f = jit(
      [](const Array& a) {
        Array s = a;
        for (int i = 0; i < 200; ++i) s = np::sin(s) + a;
        return s;
      },
      {.name = "step", .max_retraces = 0});
  Array x = np::ones({16}, float32);
  std::vector<std::thread> threads;
  std::vector<std::string> errors(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      try {
        f(x);
      } catch (const Error& e) {
        errors[t] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  CHECK(errors == std::vector<std::string>(4));
  CacheInfo info = f.cache_info();
  CHECK(info.traces == 1);
  CHECK(info.misses == 1);
  CHECK(info.hits == 3);
}

}  // namespace
}  // namespace jx
