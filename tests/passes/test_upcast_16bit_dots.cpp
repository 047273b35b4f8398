// Upcast 16-bit dots: bf16 and f16 dots become f32 dots of converted operands, rounded once.
#include <catch2/catch.hpp>

#include <algorithm>

#include <jx/jx.hpp>

#include "hlo/hlo_testing.hpp"
#include "passes/upcast_16bit_dots.hpp"

namespace jx::passes {
namespace {

using hlo::testing::run_pass;

TEST_CASE("upcast-16bit-dots: a bf16 dot becomes an f32 dot of converted operands", "[passes]") {
  auto [changed, out] =
      run_pass<Upcast16BitDots>(R"(HloModule m, entry_computation_layout={(bf16[2,3]{1,0}, bf16[3]{0})->bf16[2]{0}}

ENTRY %main.1 (a.2: bf16[2,3], b.3: bf16[3]) -> bf16[2] {
  %a.2 = bf16[2,3]{1,0} parameter(0)
  %b.3 = bf16[3]{0} parameter(1)
  ROOT %dot.4 = bf16[2]{0} dot(bf16[2,3]{1,0} %a.2, bf16[3]{0} %b.3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  CHECK(changed);
  CHECK(out.find("f32[2,3]{1,0} convert(bf16[2,3]{1,0} %a.2)") != std::string::npos);
  CHECK(out.find("f32[3]{0} convert(bf16[3]{0} %b.3)") != std::string::npos);
  CHECK(out.find("f32[2]{0} dot(f32[2,3]{1,0}") != std::string::npos);
  CHECK(out.find("ROOT") < out.find("bf16[2]{0} convert(f32[2]{0}"));
  CHECK(out.find("bf16[2]{0} dot") == std::string::npos);
}

TEST_CASE("upcast-16bit-dots: a library that reads 16-bit operands gets them as they are",
          "[passes]") {
  const std::string module = R"(HloModule m, entry_computation_layout={(f16[2,3]{1,0}, f16[3]{0})->f16[2]{0}}

ENTRY %main.1 (a.2: f16[2,3], b.3: f16[3]) -> f16[2] {
  %a.2 = f16[2,3]{1,0} parameter(0)
  %b.3 = f16[3]{0} parameter(1)
  ROOT %dot.4 = f16[2]{0} dot(f16[2,3]{1,0} %a.2, f16[3]{0} %b.3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  std::vector<std::string> asked;
  auto library = [&](const hlo::Instruction& dot) {
    asked.push_back(dot.shape.str());
    return true;
  };
  auto [changed, out] = run_pass<Upcast16BitDots>(module, library);
  CHECK(changed);
  CHECK(asked == std::vector<std::string>{"f32[2]{0}"});
  CHECK(out.find("f32[2]{0} dot(f16[2,3]{1,0} %a.2, f16[3]{0} %b.3)") != std::string::npos);
  CHECK(out.find("f16[2]{0} convert(f32[2]{0}") != std::string::npos);
  CHECK(out.find("f32[2,3]{1,0} convert") == std::string::npos);
}

TEST_CASE("upcast-16bit-dots: f32 dots are left alone", "[passes]") {
  auto [changed, out] =
      run_pass<Upcast16BitDots>(R"(HloModule m, entry_computation_layout={(f32[3]{0}, f32[3]{0})->f32[]}

ENTRY %main.1 (a.2: f32[3], b.3: f32[3]) -> f32[] {
  %a.2 = f32[3]{0} parameter(0)
  %b.3 = f32[3]{0} parameter(1)
  ROOT %dot.4 = f32[] dot(f32[3]{0} %a.2, f32[3]{0} %b.3), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
)");
  CHECK_FALSE(changed);
}

// 1000 x bf16(0.01) = 1000 x 0.010009765625 = 10.009765625 in f32, and 1000 x f16(0.01) =
// 1000 x 0.01000213623046875 = 10.00213623046875: both round to 10 (constants worked out by
// hand); accumulating in 16 bits instead stalls where an ulp outgrows 0.01.
TEST_CASE("16-bit dots accumulate in float32 and round once, jitted and eager", "[passes]") {
  for (DType d : {bfloat16, float16}) {
    INFO(dtype_name(d));
    Array x = np::full({1000}, 0.01, d), y = np::ones({1000}, d);
    auto dot = [](const Array& a, const Array& b) { return np::dot(a, b); };
    const float want = 10.0f;
    CHECK(jit(dot)(x, y).dtype() == d);
    CHECK(jit(dot)(x, y).item<float>() == want);
    CHECK(dot(x, y).item<float>() == want);
    // A matrix product big enough for the blocked kernel: every element is the same sum.
    Array m = np::full({64, 1000}, 0.01, d), n = np::ones({1000, 64}, d);
    std::vector<float> got = jit(dot)(m, n).to_vector<float>();
    CHECK(std::all_of(got.begin(), got.end(), [&](float v) { return v == want; }));
  }
}

}  // namespace
}  // namespace jx::passes
