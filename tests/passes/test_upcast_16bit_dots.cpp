// Upcast 16-bit dots: bf16 and f16 dots become f32 dots, rounded once, of their operands as they
// are where the backend reads them, else of operands converted to f32.
#include <catch2/catch.hpp>

#include <algorithm>

#include <jx/jx.hpp>

#include "codegen/cpu/cpu_isa.hpp"
#include "hlo/hlo_testing.hpp"
#include "passes/upcast_16bit_dots.hpp"

namespace jx::passes {
namespace {

using hlo::testing::run_pass;

TEST_CASE("upcast-16bit-dots: a bf16 dot becomes an f32 dot of converted operands", "[passes]") {
  auto [changed, out] = run_pass<Upcast16BitDots>(
      R"(HloModule m, entry_computation_layout={(bf16[2,3]{1,0}, bf16[3]{0})->bf16[2]{0}}

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
  const std::string module =
      R"(HloModule m, entry_computation_layout={(f16[2,3]{1,0}, f16[3]{0})->f16[2]{0}}

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
  auto [changed, out] = run_pass<Upcast16BitDots>(
      R"(HloModule m, entry_computation_layout={(f32[3]{0}, f32[3]{0})->f32[]}

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

// On the CPU a bf16 matrix product reads its operands as they are where the CPU multiplies bf16
// pairs (AVX-512 BF16 on AMD's cores: CpuIsa::bf16_pairs_pay) or bf16 tiles (AMX), and converts
// them to f32 elsewhere (this runs again under --cpu_isa=avx2): the same values either way, each
// the f32 sum of exact products rounded once.
TEST_CASE("16-bit dots: the CPU's kernel reads bf16 operands where it multiplies bf16 pairs",
          "[passes][gemm]") {
  // Row i of x holds i/8 and (i+1)/8 alternately along k; column j of w holds 1 and j/4. Every
  // product and every partial sum is exact in f32: out[i, j] = 48 (i/8 + (i+1)/8 * j/4), which
  // the product then rounds to bf16 once, as the oracle does.
  const std::int64_t m = 40, k = 96, n = 24;
  std::vector<float> xs, ws;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t p = 0; p < k; ++p) xs.push_back(static_cast<float>(i + p % 2) / 8);
  for (std::int64_t p = 0; p < k; ++p)
    for (std::int64_t j = 0; j < n; ++j) ws.push_back(p % 2 ? static_cast<float>(j) / 4 : 1.0f);
  Array x = np::array(xs, {m, k}).astype(bfloat16), w = np::array(ws, {k, n}).astype(bfloat16);
  auto matmul = [](const Array& a, const Array& b) { return np::matmul(a, b); };
  auto compiled = jit(matmul).lower(x, w).compile();
  const codegen::cpu::CpuIsa& isa = codegen::cpu::cpu_isa(config().cpu_isa);
  bool pairs = isa.bf16_pairs_pay() || isa.amx_bf16;
  INFO(compiled.hlo_text());
  CHECK((compiled.hlo_text().find("f32[40,96]") == std::string::npos) == pairs);
  std::vector<float> got = jit(matmul)(x, w).astype(float32).to_vector<float>();
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double exact = 48 * (static_cast<double>(i) / 8 + static_cast<double>(i + 1) / 8 * j / 4);
      float want = static_cast<float>(BFloat16(static_cast<float>(exact)));
      INFO("out[" << i << ", " << j << "]");
      CHECK(got[static_cast<std::size_t>(i * n + j)] == want);
    }
}

}  // namespace
}  // namespace jx::passes
