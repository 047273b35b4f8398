// The jit cache as a user measures it: cache_info counters, LRU eviction at the configured
// capacity, compile log lines and the explanations of cache misses (captured via config().log).
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "jx/jx.hpp"
#include "support/config_guard.hpp"

namespace jx_jit_cache_test {

struct Layer {
  jx::Array w, b;
};
JX_PYTREE(Layer, w, b)

}  // namespace jx_jit_cache_test

namespace jx {
namespace {

using jx_jit_cache_test::Layer;

using testing::ConfigGuard;

// Captures config().log messages while alive.
struct LogCapture : ConfigGuard {
  std::vector<std::string> lines;
  LogCapture() {
    config().log = [this](const std::string& m) { lines.push_back(m); };
  }
};

Array f32(const Shape& s) { return np::zeros(s); }

Array shared_fn(const Array& x) { return x * 2.0f + 1.0f; }

TEST_CASE("jit cache: cache_info counts hits, misses, traces, compiles and entries", "[jit]") {
  auto f = jit([](const Array& x) { return x + 1.0f; });
  CacheInfo empty = f.cache_info();
  CHECK(empty.hits + empty.misses + empty.traces + empty.compiles + empty.entries == 0);
  f(f32({1}));
  f(f32({1}));
  f(f32({2}));
  f(f32({1}));
  f(f32({2}));
  CacheInfo info = f.cache_info();
  CHECK(info.misses == 2);
  CHECK(info.hits == 3);
  CHECK(info.traces == 2);
  CHECK(info.compiles == 2);
  CHECK(info.entries == 2);
  CHECK(info.trace_ms > 0);
  CHECK(info.lower_ms >= 0);
  CHECK(info.optimize_ms >= 0);
  CHECK(info.codegen_ms >= 0);
}

TEST_CASE("jit cache: least recently used entries are evicted at config().cache_capacity",
          "[jit]") {
  ConfigGuard guard;
  config().cache_capacity = 2;
  int traces = 0;
  auto f = jit([&](const Array& x) {
    ++traces;
    return x * 2.0f;
  });
  f(f32({3}));
  f(f32({4}));
  f(f32({5}));  // evicts f32[3]
  CHECK(traces == 3);
  CHECK(f.cache_info().entries == 2);
  f(f32({4}));  // a hit: f32[4] becomes the most recent, f32[5] the least
  CHECK(traces == 3);
  f(f32({3}));  // evicted before: retraced, evicting f32[5]
  CHECK(traces == 4);
  f(f32({4}));
  CHECK(traces == 4);
  f(f32({5}));
  CHECK(traces == 5);
  CHECK(f.cache_info().entries == 2);
  CHECK(f.cache_info().misses == 5);
}

TEST_CASE("jit cache: log_compiles writes one line per compile with stage times", "[jit]") {
  LogCapture log;
  config().log_compiles = true;
  auto f = jit([](const Array& x, const Array& n) { return x * n; });
  f(f32({3}), 2);
  f(f32({3}), 5);
  REQUIRE(log.lines.size() == 1);
  CHECK_THAT(
      log.lines[0],
      Catch::Matches(R"(jx: compiled jit_f for \(f32\[3\], i32\[\] weak\) in \d+\.\d ms )"
                     R"(\[trace \d+\.\d, lower \d+\.\d, optimize \d+\.\d, codegen \d+\.\d\])"));
  auto g = jit([](const Array& x, Static<int> k) { return x + float(k.value); }, {.name = "g"});
  g(f32({2, 2}), Static<int>{7});
  REQUIRE(log.lines.size() == 2);
  CHECK_THAT(log.lines[1], Catch::StartsWith("jx: compiled jit_g for (f32[2,2], static 7) in "));
}

TEST_CASE("jit cache: explain_cache_misses names each differing path", "[jit]") {
  LogCapture log;
  config().explain_cache_misses = true;
  const std::string head =
      "jx: cache miss for jit_f (1 entry cached); the closest signature "
      "differs at:\n  ";

  SECTION("a leaf's shape inside nested pytrees") {
    auto f = jit([](const std::vector<Layer>& layers, const std::map<std::string, Array>& p) {
      return layers[1].w + p.at("bias");
    });
    std::vector<Layer> layers{{f32({3}), f32({3})}, {f32({3}), f32({3})}};
    std::map<std::string, Array> p{{"bias", f32({3})}};
    f(layers, p);
    CHECK(log.lines.empty());  // the first compile has nothing to explain
    f(layers, p);
    CHECK(log.lines.empty());  // nor has a hit
    layers[1].w = f32({4});
    p["bias"] = f32({4});
    f(layers, p);
    REQUIRE(log.lines.size() == 1);
    CHECK(log.lines[0] == head +
                              "args[0][1].w: f32[3] → f32[4]\n"
                              "  args[1][\"bias\"]: f32[3] → f32[4]");
  }
  SECTION("dtype and weak type") {
    auto f = jit([](const Array& x, const Array& s) { return x * s; });
    f(f32({2}), 2.0f);
    f(f32({2}), np::array(2.0f));
    f(np::zeros({2}, int32), np::array(2.0f));
    REQUIRE(log.lines.size() == 2);
    CHECK(log.lines[0] == head + "args[1]: weak_type true → false");
    CHECK(log.lines[1] ==
          "jx: cache miss for jit_f (2 entries cached); the closest signature differs at:\n"
          "  args[0]: f32[2] → i32[2]");
  }
  SECTION("tree structure: list length, dict keys, leaf against container") {
    auto f = jit([](const std::vector<Array>& xs, const std::map<std::string, Array>& m) {
      return std::make_pair(xs, m);
    });
    std::map<std::string, Array> ab{{"a", f32({})}, {"b", f32({})}};
    std::map<std::string, Array> ac{{"a", f32({})}, {"c", f32({})}};
    f(std::vector<Array>{f32({1}), f32({1})}, ab);
    f(std::vector<Array>{f32({1}), f32({1}), f32({1})}, ab);
    REQUIRE(log.lines.size() == 1);
    CHECK(log.lines[0] == head + "args[0]: list of 2 → list of 3");
    log.lines.clear();
    f(std::vector<Array>{f32({1}), f32({1})}, ac);
    REQUIRE(log.lines.size() == 1);
    CHECK(log.lines[0] ==
          "jx: cache miss for jit_f (2 entries cached); the closest signature differs at:\n"
          "  args[1]: dict with keys ['a', 'b'] → dict with keys ['a', 'c']");
  }
  SECTION("static values") {
    auto g = jit([](const Array& x, int n) { return x * n; }, {.static_argnums = {1}, .name = "g"});
    g(f32({2}), 3);
    g(f32({2}), 4);
    REQUIRE(log.lines.size() == 1);
    CHECK(log.lines[0] ==
          "jx: cache miss for jit_g (1 entry cached); the closest signature differs at:\n"
          "  static arg 1: 3 → 4");
  }
  SECTION("the closest of several entries is the one explained") {
    auto f = jit([](const Array& x, const Array& y) { return std::make_pair(x, y); });
    f(f32({2}), f32({2}));
    f(f32({3}), f32({5}));
    log.lines.clear();
    f(f32({3}), f32({6}));
    REQUIRE(log.lines.size() == 1);
    CHECK(log.lines[0] ==
          "jx: cache miss for jit_f (2 entries cached); the closest signature differs at:\n"
          "  args[1]: f32[5] → f32[6]");
  }
  SECTION("long lists of differences are cut at ten") {
    auto f = jit([](const std::vector<Array>& xs) { return xs; });
    f(std::vector<Array>(12, f32({1})));
    f(std::vector<Array>(12, f32({2})));
    REQUIRE(log.lines.size() == 1);
    CHECK_THAT(log.lines[0], Catch::Contains("  args[0][9]: f32[1] → f32[2]\n  ... and 2 more"));
    CHECK_THAT(log.lines[0], !Catch::Contains("args[0][10]"));
  }
}

TEST_CASE("jit cache: wrappers of one function pointer or stateless lambda share a cache",
          "[jit]") {
  Array x = np::array({1.0f, 2.0f});
  for (int i = 0; i < 3; ++i)
    CHECK(jit(&shared_fn, {.name = "shared"})(x).to_vector<float>() == std::vector<float>{3, 5});
  CacheInfo info = jit(&shared_fn, {.name = "shared"}).cache_info();
  CHECK(info.compiles == 1);
  CHECK(info.hits == 2);

  // Other options, a lambda with captures, a std::function: each a cache of its own.
  CHECK(jit(&shared_fn, {.name = "other"}).cache_info().compiles == 0);
  auto stateless = [] { return jit([](const Array& a) { return a - 1.0f; }); };
  stateless()(x);
  CHECK(stateless().cache_info().hits + stateless().cache_info().misses == 1);
  int offset = 1;
  auto captured = [&offset] { return jit([offset](const Array& a) { return a - offset; }); };
  captured()(x);
  CHECK(captured().cache_info().misses == 0);
  auto wrapped = [] { return jit(std::function<Array(const Array&)>(shared_fn)); };
  wrapped()(x);
  CHECK(wrapped().cache_info().misses == 0);
}

}  // namespace
}  // namespace jx
