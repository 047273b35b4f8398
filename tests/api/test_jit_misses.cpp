// Recompilation made visible and bounded: the structured record of every cache miss (reason,
// argument path, before and after, stage times), the global callback, jx::NoRetrace, a
// function's own cache capacity with its evictions, and max_retraces.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "jx/jx.hpp"
#include "support/config_guard.hpp"
#include "support/error_of.hpp"

namespace jx_jit_misses_test {

struct Layer {
  jx::Array w, b;
};
JX_PYTREE(Layer, w, b)

}  // namespace jx_jit_misses_test

namespace jx {
namespace {

using jx_jit_misses_test::Layer;
using testing::ConfigGuard;
using testing::error_of;

Array f32(const Shape& s) { return np::zeros(s); }

TEST_CASE("cache misses: each miss records its reason, path, before and after", "[jit][misses]") {
  auto f = jit([](const Layer& l, const Array& x) { return np::matmul(x, l.w) + l.b; },
               {.name = "layer"});
  Layer l{f32({3, 2}), f32({2})};
  f(l, f32({4, 3}));                                             // first_call
  f(l, f32({4, 3}));                                             // a hit
  f(l, f32({5, 3}));                                             // new_shape at args[1]
  f(Layer{f32({3, 2}), np::zeros({2}, bfloat16)}, f32({5, 3}));  // new_dtype at args[0].b
  std::vector<CacheMiss> m = f.cache_misses();
  REQUIRE(m.size() == 3);
  CHECK(m[0].function == "jit(layer)");
  CHECK(m[0].reason == MissReason::first_call);
  CHECK(m[0].path.empty());
  CHECK(m[1].reason == MissReason::new_shape);
  CHECK(m[1].path == "args[1]");
  CHECK(m[1].before == "f32[4,3]");
  CHECK(m[1].after == "f32[5,3]");
  CHECK(m[1].str() == "jit(layer): new_shape at args[1]: f32[4,3] → f32[5,3]");
  CHECK(m[2].reason == MissReason::new_dtype);
  CHECK(m[2].path == "args[0].b");
  CHECK(m[2].before == "f32[2]");
  CHECK(m[2].after == "bf16[2]");
  for (const CacheMiss& x : m) {
    CHECK(x.times.trace_ms > 0);
    CHECK(x.times.codegen_ms > 0);
  }
  CHECK(f.cache_info().misses == 3);
}

TEST_CASE("cache misses: weak types, static values, tree structure and flags", "[jit][misses]") {
  auto g = jit([](const Array& x, int n) { return x * n; }, {.static_argnums = {1}});
  g(f32({2}), 2);
  g(f32({2}), 3);
  auto h = jit([](const Array& x, const Array& y) { return x + y; });
  h(f32({2}), Array(1.0f));  // a weak scalar
  h(f32({2}), np::array(1.0f));
  auto k = jit([](const std::vector<Array>& xs) { return xs[0]; });
  k(std::vector<Array>{f32({2})});
  k(std::vector<Array>{f32({2}), f32({2})});
  std::vector<CacheMiss> gm = g.cache_misses(), hm = h.cache_misses(), km = k.cache_misses();
  REQUIRE(gm.size() == 2);
  CHECK(gm[1].reason == MissReason::new_static_value);
  CHECK(gm[1].before == "2");
  CHECK(gm[1].after == "3");
  REQUIRE(hm.size() == 2);
  CHECK(hm[1].reason == MissReason::new_weak_type);
  CHECK(hm[1].str() == "jit(f): new_weak_type at args[1]: f32[] weak → f32[]");
  REQUIRE(km.size() == 2);
  CHECK(km[1].reason == MissReason::new_tree_structure);
  CHECK(km[1].path == "args[0]");
  // The same abstract values from other C++ types: the message still says what changed.
  auto m = jit([](const Array& x, const Array& s) { return x * s; });
  m(f32({2}), 2.0f);
  m(f32({2}), 2.0);
  REQUIRE(m.cache_misses().size() == 2);
  CHECK(m.cache_misses()[1].str() ==
        "jit(f): new_tree_structure at args: the C++ argument types before → other C++ types (a "
        "float for a double, say)");
  {
    ConfigGuard guard;
    config().enable_x64 = true;
    h(f32({2}), np::array(1.0f));
  }
  REQUIRE(h.cache_misses().size() == 3);
  CHECK(h.cache_misses()[2].reason == MissReason::flags_changed);
  CHECK(h.cache_misses()[2].path == "enable_x64");
}

// A stateless lambda's caches are shared by every jit of it: a flag that changes its code must
// key them, or a later --cpu_isa would run the code compiled for the first.
TEST_CASE("cache misses: a flag that changes compiled code compiles anew", "[jit][misses]") {
  auto twice = [](const Array& x) { return x * 2.0f; };
  auto f = jit(twice);
  f(f32({2}));
  {
    ConfigGuard guard;
    config().cpu_isa = "avx2";
    config().precise_math = true;
    jit(twice)(f32({2}));  // the same caches as f's
    config().default_matmul_precision = "highest";
    config().cpu_parallel_min_bytes = 1;
    f(f32({2}));
    config().cpu_vector_width = 512;
    f(f32({2}));
  }
  f(f32({2}));  // the first entry again
  std::vector<CacheMiss> m = f.cache_misses();
  REQUIRE(m.size() == 4);
  CHECK(m[1].reason == MissReason::flags_changed);
  CHECK(m[1].str() == "jit(f): flags_changed at cpu_isa: native → avx2");
  CHECK(m[2].reason == MissReason::flags_changed);
  CHECK(m[2].path == "default_matmul_precision");
  CHECK(m[2].before == "");
  CHECK(m[2].after == "highest");
  CHECK(m[3].str() == "jit(f): flags_changed at cpu_vector_width: 0 → 512");
  CHECK(f.cache_info().entries == 4);
}

TEST_CASE("cache misses: a function's own capacity evicts, and the evicted signature says so",
          "[jit][misses]") {
  auto f = jit([](const Array& x) { return x * 2.0f; }, {.cache_capacity = 2});
  f(f32({1}));
  f(f32({2}));
  f(f32({3}));  // evicts f32[1]
  CHECK(f.cache_info().entries == 2);
  CHECK(f.cache_info().evictions == 1);
  f(f32({1}));
  std::vector<CacheMiss> m = f.cache_misses();
  REQUIRE(m.size() == 4);
  CHECK(m[3].reason == MissReason::evicted);
  CHECK(f.cache_info().evictions == 2);
  CHECK(error_of<Error>([] { jit([](const Array& x) { return x; }, {.cache_capacity = -1}); }) ==
        "jit: cache_capacity must be positive (0 takes --cache_capacity), got -1");
}

TEST_CASE("cache misses: on_cache_miss sees every miss of every function", "[jit][misses]") {
  std::vector<std::string> seen;
  on_cache_miss([&](const CacheMiss& m) { seen.push_back(m.str()); });
  auto a = jit([](const Array& x) { return x + 1.0f; }, {.name = "a"});
  auto b = jit([](const Array& x) { return x - 1.0f; }, {.name = "b"});
  a(f32({2}));
  b(f32({2}));
  a(f32({2}));
  a(f32({3}));
  on_cache_miss(nullptr);
  a(f32({4}));
  CHECK(seen == std::vector<std::string>{"jit(a): first_call", "jit(b): first_call",
                                         "jit(a): new_shape at args[0]: f32[2] → f32[3]"});
}

TEST_CASE("NoRetrace: a miss inside the scope is a RetraceError naming what changed",
          "[jit][misses][errors]") {
  auto step = jit([](const Array& x) { return x * x; }, {.name = "step"});
  step(f32({8}));
  {
    NoRetrace guard;
    CHECK(step(np::ones({8})).to_vector<double>() == std::vector<double>(8, 1.0));  // a hit
    CHECK(error_of<RetraceError>([&] { step(f32({9})); }) ==
          "jit(step) would retrace inside jx::NoRetrace: jit(step): new_shape at args[0]: f32[8] "
          "→ f32[9]");
  }
  CHECK(step.cache_misses().size() == 2);     // the refused miss is recorded
  CHECK(step(f32({9})).shape() == Shape{9});  // outside the scope it compiles
}

TEST_CASE("max_retraces: a warning past the budget, an error with --strict_retraces",
          "[jit][misses][errors]") {
  ConfigGuard guard;
  std::vector<std::string> lines;
  config().log = [&](const std::string& m) { lines.push_back(m); };
  auto f = jit([](const Array& x) { return x + 1.0f; }, {.max_retraces = 1});
  f(f32({1}));
  f(f32({2}));  // one retrace: within budget
  CHECK(lines.empty());
  f(f32({3}));
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] ==
        "jx: jit(f) retraced 2 times, more than its max_retraces=1; this time: jit(f): new_shape "
        "at args[0]: f32[2] → f32[3]");
  config().strict_retraces = true;
  CHECK(error_of<RetraceError>([&] { f(f32({4})); }) ==
        "jit(f) retraced 3 times, more than its max_retraces=1; this time: jit(f): new_shape at "
        "args[0]: f32[3] → f32[4]");
}

}  // namespace
}  // namespace jx
