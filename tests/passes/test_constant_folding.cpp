// Constant folding: HLO text in, HLO text out, and the folded values against known results
// (XLA's semantics for the corner cases: integer division by zero, NaN to integer, ...).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "hlo/hlo_testing.hpp"
#include "passes/constant_folding.hpp"

namespace jx::passes {
namespace {

using hlo::testing::run_pass;

TEST_CASE("constant folding: a chain of constant ops becomes one constant", "[passes]") {
  auto [changed, out] =
      run_pass<ConstantFolding>(R"(HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}

ENTRY %main.1 (x.2: f32[3]) -> f32[3] {
  %x.2 = f32[3]{0} parameter(0)
  %c.3 = f32[] constant(2)
  %b.4 = f32[3]{0} broadcast(f32[] %c.3), dimensions={}
  %iota.5 = f32[3]{0} iota(), iota_dimension=0
  %add.6 = f32[3]{0} add(f32[3]{0} %b.4, f32[3]{0} %iota.5)
  ROOT %mul.7 = f32[3]{0} multiply(f32[3]{0} %x.2, f32[3]{0} %add.6)
}
)");
  CHECK(changed);
  CHECK(out == R"(HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}

ENTRY %main.1 (x.2: f32[3]) -> f32[3] {
  %x.2 = f32[3]{0} parameter(0)
  %constant.10 = f32[3]{0} constant({2, 3, 4})
  ROOT %mul.7 = f32[3]{0} multiply(f32[3]{0} %x.2, f32[3]{0} %constant.10)
}
)");
}

TEST_CASE("constant folding: layout ops, and a big broadcast stays a broadcast", "[passes]") {
  auto [changed, out] = run_pass<ConstantFolding>(
      R"(HloModule m, entry_computation_layout={()->(s32[3,2]{1,0}, s32[2]{0}, s32[5]{0}, f32[64,64]{1,0})}

ENTRY %main.1 () -> (s32[3,2]{1,0}, s32[2]{0}, s32[5]{0}, f32[64,64]{1,0}) {
  %c.2 = s32[2,3]{1,0} constant({ {1, 2, 3}, {4, 5, 6} })
  %t.3 = s32[3,2]{1,0} transpose(s32[2,3]{1,0} %c.2), dimensions={1,0}
  %r.4 = s32[6]{0} reshape(s32[2,3]{1,0} %c.2)
  %s.5 = s32[2]{0} slice(s32[6]{0} %r.4), slice={[1:5:3]}
  %k.6 = s32[3]{0} constant({7, 8, 9})
  %cat.7 = s32[5]{0} concatenate(s32[2]{0} %s.5, s32[3]{0} %k.6), dimensions={0}
  %one.8 = f32[] constant(1)
  %big.9 = f32[64,64]{1,0} broadcast(f32[] %one.8), dimensions={}
  ROOT %t.10 = (s32[3,2]{1,0}, s32[2]{0}, s32[5]{0}, f32[64,64]{1,0}) tuple(s32[3,2]{1,0} %t.3, s32[2]{0} %s.5, s32[5]{0} %cat.7, f32[64,64]{1,0} %big.9)
}
)");
  CHECK(changed);
  CHECK(
      out ==
      R"(HloModule m, entry_computation_layout={()->(s32[3,2]{1,0}, s32[2]{0}, s32[5]{0}, f32[64,64]{1,0})}

ENTRY %main.1 () -> (s32[3,2]{1,0}, s32[2]{0}, s32[5]{0}, f32[64,64]{1,0}) {
  %one.8 = f32[] constant(1)
  %big.9 = f32[64,64]{1,0} broadcast(f32[] %one.8), dimensions={}
  %constant.11 = s32[3,2]{1,0} constant({ {1, 4}, {2, 5}, {3, 6} })
  %constant.13 = s32[2]{0} constant({2, 5})
  %constant.14 = s32[5]{0} constant({2, 5, 7, 8, 9})
  ROOT %t.10 = (s32[3,2]{1,0}, s32[2]{0}, s32[5]{0}, f32[64,64]{1,0}) tuple(s32[3,2]{1,0} %constant.11, s32[2]{0} %constant.13, s32[5]{0} %constant.14, f32[64,64]{1,0} %big.9)
}
)");
}

TEST_CASE("constant folding: nothing constant is no change", "[passes]") {
  const char* text = R"(HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}

ENTRY %main.1 (x.2: f32[3]) -> f32[3] {
  %x.2 = f32[3]{0} parameter(0)
  %c.3 = f32[3]{0} constant({1, 2, 3})
  ROOT %add.4 = f32[3]{0} add(f32[3]{0} %x.2, f32[3]{0} %c.3)
}
)";
  auto [changed, out] = run_pass<ConstantFolding>(text);
  CHECK_FALSE(changed);
  CHECK(out == text);
}

// Folds `op` applied to constant operands and returns the folded root's literal.
Array fold(const std::string& result_shape, const std::string& op, const std::string& operands,
           const std::string& attrs = "") {
  std::string text = "HloModule m\n\nENTRY %main () -> " + result_shape + " {\n" + operands +
                     "  ROOT %r = " + result_shape + " " + op + attrs + "\n}\n";
  INFO(text);
  auto module = hlo::parse_module(text);
  hlo::verify(*module);
  CHECK(ConstantFolding().run(*module));
  const hlo::Instruction* root = module->entry()->root();
  REQUIRE(root->opcode == hlo::Opcode::kConstant);
  return *root->literal;
}

TEST_CASE("constant folding: values follow XLA's semantics", "[passes]") {
  const std::string ints =
      "  %a = s32[4]{0} constant({7, -7, -2147483648, 5})\n"
      "  %b = s32[4]{0} constant({0, 2, -1, -3})\n";
  const std::string ab = "(s32[4]{0} %a, s32[4]{0} %b)";
  CHECK(fold("s32[4]", "divide" + ab, ints).to_vector<int>() ==
        std::vector<int>{-1, -3, std::numeric_limits<int>::min(), -1});
  CHECK(fold("s32[4]", "remainder" + ab, ints).to_vector<int>() == std::vector<int>{7, -1, 0, 2});
  CHECK(fold("s32[4]", "add" + ab, ints).to_vector<int>() ==
        std::vector<int>{7, -5, 2147483647, 2});  // wraps
  CHECK(fold("s32[4]", "negate(s32[4]{0} %a)", ints).to_vector<int>() ==
        std::vector<int>{-7, 7, std::numeric_limits<int>::min(), -5});

  const std::string floats = "  %x = f32[4]{0} constant({nan, -inf, 3e+09, -1.5})\n";
  CHECK(fold("s32[4]", "convert(f32[4]{0} %x)", floats).to_vector<int>() ==
        std::vector<int>{0, std::numeric_limits<int>::min(), std::numeric_limits<int>::max(), -1});
  auto m = fold("f32[4]", "maximum(f32[4]{0} %x, f32[4]{0} %y)",
                floats + "  %y = f32[4]{0} constant({1, 0, 0, nan})\n")
               .to_vector<float>();
  CHECK((std::isnan(m[0]) && m[1] == 0.f && m[2] == 3e9f && std::isnan(m[3])));
  CHECK(fold("pred[4]", "compare(f32[4]{0} %x, f32[4]{0} %x)", floats, ", direction=NE")
            .to_vector<bool>() == std::vector<bool>{true, false, false, false});
  CHECK(fold("f32[4]", "select(pred[4]{0} %p, f32[4]{0} %x, f32[4]{0} %y)",
             floats + "  %y = f32[4]{0} constant({1, 2, 3, 4})\n" +
                 "  %p = pred[4]{0} constant({false, true, false, true})\n")
            .to_vector<float>() == std::vector<float>{1, -INFINITY, 3, -1.5});
  CHECK(fold("f64[]", "sqrt(f64[] %x)", "  %x = f64[] constant(2)\n").item<double>() ==
        std::sqrt(2.0));
  CHECK(
      fold("f32[2]", "round-nearest-even(f32[2]{0} %x)", "  %x = f32[2]{0} constant({2.5, -0.5})\n")
          .to_vector<float>() == std::vector<float>{2, -0.f});
  CHECK(
      fold("f32[2]", "round-nearest-afz(f32[2]{0} %x)", "  %x = f32[2]{0} constant({2.5, -0.5})\n")
          .to_vector<float>() == std::vector<float>{3, -1});
  CHECK(fold("u32[2]", "convert(s32[2]{0} %x)", "  %x = s32[2]{0} constant({-1, 3})\n")
            .to_vector<std::uint32_t>() == std::vector<std::uint32_t>{4294967295u, 3});
  CHECK(fold("f32[2,3]", "broadcast(f32[2]{0} %x)", "  %x = f32[2]{0} constant({1, 2})\n",
             ", dimensions={0}")
            .to_vector<float>() == std::vector<float>{1, 1, 1, 2, 2, 2});
  CHECK(fold("s32[2,3]", "iota()", "", ", iota_dimension=1").to_vector<int>() ==
        std::vector<int>{0, 1, 2, 0, 1, 2});
  CHECK(fold("f32[2]", "clamp(f32[] %lo, f32[2]{0} %x, f32[] %hi)",
             "  %lo = f32[] constant(0)\n  %hi = f32[] constant(1)\n"
             "  %x = f32[2]{0} constant({-3, 0.5})\n")
            .to_vector<float>() == std::vector<float>{0, 0.5});
}

}  // namespace
}  // namespace jx::passes
