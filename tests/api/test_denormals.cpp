// Denormal floats on the CPU: flushed to zero by default in compiled programs and eager
// operations alike (XLA's CPU client computes JAX programs so), kept with
// --cpu_flush_denormals=false; the caller's own floating-point mode is left as it was.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "codegen/cpu/cpu_isa.hpp"
#include "jx/jx.hpp"
#include "support/config_guard.hpp"
#include "support/float_environment.hpp"

namespace jx {
namespace {

using testing::ConfigGuard;

// Computed here, in IEEE 754 arithmetic: volatile keeps the compiler from folding them.
volatile float tiny = 1e-30f, small = 1e-10f, big = 1e30f;
volatile float denormal = 1e-40f;

Array scalar(float v) { return np::array(std::vector<float>{v}); }
float only(const Array& a) { return a.to_vector<float>().at(0); }

TEST_CASE("denormals: flushed to zero, jitted or eager, and kept when the flag is off",
          "[jit][denormals]") {
  const float product = tiny * small, undone = denormal * big, negative = -tiny * small;
  REQUIRE(std::fpclassify(product) == FP_SUBNORMAL);
  REQUIRE(std::fpclassify(static_cast<float>(denormal)) == FP_SUBNORMAL);
  REQUIRE(std::fpclassify(undone) == FP_NORMAL);
  auto mul = jit([](const Array& x, const Array& y) { return x * y; });
  ConfigGuard guard;

  SECTION("flushed: results (FTZ) and inputs (DAZ) below float's normal range are zeros") {
    CHECK(config().cpu_flush_denormals);  // the default
    CHECK(only(mul(scalar(tiny), scalar(small))) == 0.0f);
    CHECK(only(scalar(tiny) * scalar(small)) == 0.0f);
    float neg = only(mul(scalar(-tiny), scalar(small)));
    CHECK(neg == 0.0f);
    CHECK(std::signbit(neg));  // a flushed result keeps its sign
    CHECK(only(mul(scalar(denormal), scalar(big))) == 0.0f);
    CHECK(only(scalar(denormal) * scalar(big)) == 0.0f);
  }
  SECTION("kept: the IEEE 754 results, bit for bit") {
    config().cpu_flush_denormals = false;
    CHECK(only(mul(scalar(tiny), scalar(small))) == product);
    CHECK(only(scalar(tiny) * scalar(small)) == product);
    CHECK(only(mul(scalar(-tiny), scalar(small))) == negative);
    CHECK(only(mul(scalar(denormal), scalar(big))) == undone);
    CHECK(only(scalar(denormal) * scalar(big)) == undone);
  }
}

TEST_CASE("denormals: the caller's floating-point mode is its own after a call",
          "[jit][denormals]") {
  const unsigned long before = detail::float_control();
  auto mul = jit([](const Array& x, const Array& y) { return x * y; });
  CHECK(only(mul(scalar(tiny), scalar(small))) == 0.0f);
  CHECK(only(scalar(tiny) * scalar(small)) == 0.0f);
  CHECK(detail::float_control() == before);
  const float own = tiny * small;  // the caller's arithmetic is IEEE 754's
  CHECK(std::fpclassify(own) == FP_SUBNORMAL);
}

TEST_CASE("denormals: every thread of a split kernel computes in the caller's mode",
          "[jit][denormals]") {
  // 256 x 512 floats (512 KiB) split their rows over the pool's threads: each row must come
  // out alike, flushed or kept, whichever thread computed it and whatever it ran before.
  auto mul = jit([](const Array& x) { return x * np::array(static_cast<float>(small)); });
  Array x = np::full({256, 512}, np::array(static_cast<float>(tiny)));
  REQUIRE(mul.lower(x).compile().thunk_sequence().find("parallel") != std::string::npos);
  const float product = tiny * small;
  ConfigGuard guard;
  // Back-to-back calls, so that the workers, still polling after the last job, take chunks.
  for (bool flush : {true, false, true}) {
    INFO("cpu_flush_denormals = " << flush);
    config().cpu_flush_denormals = flush;
    for (int call = 0; call < 20; ++call) {
      std::vector<float> got = mul(x).to_vector<float>();
      std::size_t as_wanted = 0;
      for (float v : got) as_wanted += v == (flush ? 0.0f : product);
      CHECK(as_wanted == got.size());
    }
  }
}

// AMX's tile unit reads subnormal bf16 operands as zeros and flushes subnormal sums, as
// vdpbf16ps does, whatever --cpu_flush_denormals says (docs/architecture.md). AVX-512's vector
// kernel (--cpu_isa=avx512, which leaves AMX out) keeps both when the flag is off, except in
// products of few rows, whose pairs vdpbf16ps multiplies.
TEST_CASE("denormals: the tile unit flushes bf16 products whatever the flag", "[jit][denormals]") {
  constexpr std::int64_t n = 256;
  const float subnormal = std::ldexp(1.0f, -130), half_way = std::ldexp(1.0f, -70);
  REQUIRE(std::fpclassify(subnormal) == FP_SUBNORMAL);
  ConfigGuard guard;
  config().cpu_flush_denormals = false;  // before the operands are made: they hold subnormals
  // Every sum is n subnormals, a normal float; and the identity times 2^-70 squared, 2^-140.
  Array subnormals = np::full({n, n}, np::array(subnormal)).astype(bfloat16);
  Array ones = np::ones({n, n}, bfloat16);
  Array scaled = np::full({n, n}, np::array(half_way)).astype(bfloat16);
  Array diagonal = (np::eye(n) * half_way).astype(bfloat16);
  const float sum_of_subnormals = static_cast<float>(n) * subnormal, tiny_sum = half_way * half_way;
  REQUIRE(std::fpclassify(sum_of_subnormals) == FP_NORMAL);
  REQUIRE(std::fpclassify(tiny_sum) == FP_SUBNORMAL);
  REQUIRE(subnormals.astype(float32).to_vector<float>().front() == subnormal);
  auto product = [](const Array& a, const Array& b) {
    return lax::dot_general(a, b, {{1}, {0}, {}, {}}, float32);
  };
  auto all_equal = [](const Array& a, float want) {
    std::vector<float> v = a.to_vector<float>();
    return std::all_of(v.begin(), v.end(), [&](float x) { return x == want; });
  };
  for (const char* isa : {"native", "avx512"}) {
    INFO("--cpu_isa=" << isa);
    config().cpu_isa = isa;
    const codegen::cpu::CpuIsa& target = codegen::cpu::configured_cpu_isa();
    bool tiles = target.amx_bf16;
    auto f = jit(product);
    CHECK(all_equal(f(subnormals, ones), tiles ? 0.0f : sum_of_subnormals));
    Array tiny = f(scaled, diagonal);
    CHECK(all_equal(np::diagonal(tiny), tiles ? 0.0f : tiny_sum));
    // Three rows read rhs in place, their pairs multiplied by vdpbf16ps where AVX-512 BF16 runs
    // at 16 lanes, which flushes as the tile unit does.
    bool pair_instruction = target.avx512_bf16 && target.vector_bytes == 64;
    Array three_rows = lax::slice(subnormals, {0, 0}, {3, n});
    CHECK(all_equal(f(three_rows, ones), pair_instruction ? 0.0f : sum_of_subnormals));
  }
}

}  // namespace
}  // namespace jx
