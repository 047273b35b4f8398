// Ahead-of-time use of jit: f.lower(args) → Lowered (jaxpr, HLO text) → compile() → Compiled,
// called like f on the non-static arguments; checked against make_jaxpr and against f itself.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <map>

#include "library/numpy_testing.hpp"
#include "jx/jx.hpp"
#include "support/error_of.hpp"

namespace jx {
namespace {

using np_testing::check_values;

using jx::testing::error_of;

TEST_CASE("jit AOT: lowered jaxpr text is make_jaxpr's; compiled(a, b) equals f(a, b)", "[jit]") {
  auto fn = [](const Array& a, const Array& b) { return np::tanh(np::matmul(a, b)); };
  auto f = jit(fn);
  Array a = np::array(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Array b = np::array(std::vector<float>{0.5f, -1, 0.25f, 2, -0.5f, 1}, {3, 2});
  auto lowered = f.lower(a, b);
  CHECK(lowered.jaxpr_text() == make_jaxpr(fn)(a, b).str());
  CHECK(lowered.jaxpr_text().find("d:f32[2,2] = tanh c") != std::string::npos);
  CHECK(lowered.hlo_text().rfind("HloModule jit_f, entry_computation_layout={(f32[2,3]{1,0}, "
                                 "f32[3,2]{1,0})->f32[2,2]{1,0}}",
                                 0) == 0);
  CHECK(lowered.hlo_text().find("ROOT %tanh") != std::string::npos);
  auto compiled = lowered.compile();
  CHECK(compiled.hlo_text().find(" dot(f32[2,3]{1,0} %Arg_0") != std::string::npos);
  // Cost by hand: the dot does 2·m·n·k = 2·2·2·3 flops, tanh one transcendental per element;
  // bytes: the dot reads 24 + 24 and writes 16, tanh reads 16 and writes 16.
  CostAnalysis cost = compiled.cost_analysis();
  CHECK(cost.flops == 24);
  CHECK(cost.transcendentals == 4);
  CHECK(cost.bytes_accessed == 24 + 24 + 16 + 16 + 16);
  MemoryAnalysis mem = compiled.memory_analysis();
  CHECK(mem.argument_bytes == 48);
  CHECK(mem.output_bytes == 16);
  CHECK(mem.temp_bytes == 0);  // the dot writes into the output, where tanh runs in place
  Array y = compiled(a, b);
  CHECK(y.to_vector<float>() == f(a, b).to_vector<float>());
  // The oracle: a @ b by hand, then tanh.
  std::vector<double> ab = {1 * 0.5 + 2 * 0.25 + 3 * -0.5, 1 * -1 + 2 * 2 + 3 * 1,
                            4 * 0.5 + 5 * 0.25 + 6 * -0.5, 4 * -1 + 5 * 2 + 6 * 1};
  check_values(y, {std::tanh(ab[0]), std::tanh(ab[1]), std::tanh(ab[2]), std::tanh(ab[3])});
}

TEST_CASE("jit AOT: lower traces without touching the cache; compile counts", "[jit]") {
  int traces = 0;
  auto f = jit([&](const Array& x) {
    ++traces;
    return x * x;
  });
  auto lowered = f.lower(np::zeros({3}));
  CHECK(traces == 1);
  CacheInfo info = f.cache_info();
  CHECK(info.traces == 1);
  CHECK(info.compiles == 0);
  CHECK(info.entries == 0);
  CHECK(info.misses == 0);
  auto compiled = lowered.compile();
  CHECK(f.cache_info().compiles == 1);
  check_values(compiled(np::array({1.f, 2.f, 3.f})), {1, 4, 9});
  CHECK(traces == 1);
  CHECK(f.cache_info().entries == 0);
}

TEST_CASE("jit AOT: static arguments are fixed at lowering and left out of the call", "[jit]") {
  auto g = jit([](const Array& x, int n, Static<float> k) { return x * float(n) + k.value; },
               {.static_argnums = {1}});
  auto compiled = g.lower(np::zeros({2}), 3, Static<float>{0.5f}).compile();
  check_values(compiled(np::array({1.f, 2.f})), {3.5, 6.5});
}

TEST_CASE("jit AOT: pytrees in and out of a compiled function", "[jit]") {
  auto f = jit([](const std::map<std::string, Array>& p, const Array& s) {
    return std::make_pair(p.at("w") * s, std::vector<Array>{p.at("b"), s});
  });
  std::map<std::string, Array> p{{"w", np::array({1.f, 2.f})}, {"b", np::array({3.f})}};
  auto compiled = f.lower(p, 2.0f).compile();
  auto [ws, rest] = compiled(p, 4.0f);
  check_values(ws, {4, 8});
  REQUIRE(rest.size() == 2);
  check_values(rest[0], {3});
  check_values(rest[1], {4});
}

TEST_CASE("jit AOT: a compiled function called with other types is a TypeError", "[jit]") {
  auto f = jit([](const Array& x, const std::vector<Array>& ys) { return x + ys[0]; });
  auto compiled = f.lower(np::zeros({3}), std::vector<Array>{np::zeros({3})}).compile();
  CHECK(
      error_of<TypeError>([&] { compiled(np::zeros({4}), std::vector<Array>{np::zeros({3})}); }) ==
      "Computation jit_f was compiled for other argument types than it was called with: "
      "args[0]: f32[3] → f32[4]");
  CHECK(error_of<TypeError>([&] {
          compiled(np::zeros({3}), std::vector<Array>{np::zeros({3}), np::zeros({3})});
        }) ==
        "Computation jit_f was compiled for other argument types than it was called with: "
        "args[1]: list of 1 → list of 2");
}

TEST_CASE("jit AOT: a compiled function called under a trace is staged into it", "[jit]") {
  auto f = jit([](const Array& x) { return np::sin(x); });
  auto compiled = f.lower(np::zeros({2})).compile();
  auto g = [&](const Array& x) { return compiled(x) * 2.0f; };
  CHECK(make_jaxpr(g)(np::zeros({2})).str() ==
        "{ lambda ; a:f32[2]. let b:f32[2] = sin a; c:f32[2] = mul b 2.0:f32[] in (c,) }");
}

}  // namespace
}  // namespace jx
