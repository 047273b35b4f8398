// DCE: HLO text in, HLO text out; dead instructions and uncalled computations go.
#include <catch2/catch.hpp>

#include "hlo/hlo_testing.hpp"
#include "passes/dce.hpp"

namespace jx::passes {
namespace {

using hlo::testing::run_pass;

TEST_CASE("dce: removes dead instructions and the computations only they called", "[passes]") {
  auto [changed, out] =
      run_pass<Dce>(R"(HloModule m, entry_computation_layout={(f32[3]{0}, f32[3]{0})->f32[3]{0}}

%add.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  %dead.4 = f32[] multiply(f32[] %a.2, f32[] %b.3)
  ROOT %add.5 = f32[] add(f32[] %a.2, f32[] %b.3)
}

%unused.6 (c.7: f32[]) -> f32[] {
  ROOT %c.7 = f32[] parameter(0)
}

ENTRY %main.8 (x.9: f32[3], y.10: f32[3]) -> f32[3] {
  %x.9 = f32[3]{0} parameter(0)
  %y.10 = f32[3]{0} parameter(1)
  %zero.11 = f32[] constant(0)
  %sum.12 = f32[] reduce(f32[3]{0} %x.9, f32[] %zero.11), dimensions={0}, to_apply=%add.1
  %exp.13 = f32[3]{0} exponential(f32[3]{0} %x.9)
  ROOT %neg.14 = f32[3]{0} negate(f32[3]{0} %exp.13)
}
)");
  CHECK(changed);
  CHECK(out == R"(HloModule m, entry_computation_layout={(f32[3]{0}, f32[3]{0})->f32[3]{0}}

ENTRY %main.8 (x.9: f32[3], y.10: f32[3]) -> f32[3] {
  %x.9 = f32[3]{0} parameter(0)
  %y.10 = f32[3]{0} parameter(1)
  %exp.13 = f32[3]{0} exponential(f32[3]{0} %x.9)
  ROOT %neg.14 = f32[3]{0} negate(f32[3]{0} %exp.13)
}
)");
}

TEST_CASE("dce: keeps called computations, cleans inside them", "[passes]") {
  auto [changed, out] = run_pass<Dce>(R"(HloModule m, entry_computation_layout={(f32[3]{0})->f32[]}

%add.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  %dead.4 = f32[] multiply(f32[] %a.2, f32[] %b.3)
  ROOT %add.5 = f32[] add(f32[] %a.2, f32[] %b.3)
}

ENTRY %main.8 (x.9: f32[3]) -> f32[] {
  %x.9 = f32[3]{0} parameter(0)
  %zero.11 = f32[] constant(0)
  ROOT %sum.12 = f32[] reduce(f32[3]{0} %x.9, f32[] %zero.11), dimensions={0}, to_apply=%add.1
}
)");
  CHECK(changed);
  CHECK(out == R"(HloModule m, entry_computation_layout={(f32[3]{0})->f32[]}

%add.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  ROOT %add.5 = f32[] add(f32[] %a.2, f32[] %b.3)
}

ENTRY %main.8 (x.9: f32[3]) -> f32[] {
  %x.9 = f32[3]{0} parameter(0)
  %zero.11 = f32[] constant(0)
  ROOT %sum.12 = f32[] reduce(f32[3]{0} %x.9, f32[] %zero.11), dimensions={0}, to_apply=%add.1
}
)");
}

TEST_CASE("dce: nothing dead is no change", "[passes]") {
  const char* text = R"(HloModule m, entry_computation_layout={(f32[3]{0}, s32[])->f32[3]{0}}

ENTRY %main.1 (x.2: f32[3], unused.3: s32[]) -> f32[3] {
  %x.2 = f32[3]{0} parameter(0)
  %unused.3 = s32[] parameter(1)
  ROOT %neg.4 = f32[3]{0} negate(f32[3]{0} %x.2)
}
)";
  auto [changed, out] = run_pass<Dce>(text);
  CHECK_FALSE(changed);
  CHECK(out == text);
}

}  // namespace
}  // namespace jx::passes
