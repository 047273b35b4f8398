// CSE: HLO text in, HLO text out; identical instructions merge into the first, and only those.
#include <catch2/catch.hpp>

#include "hlo/hlo_testing.hpp"
#include "passes/cse.hpp"

namespace jx::passes {
namespace {

using hlo::testing::run_pass;

TEST_CASE("cse: merges equal constants, then the users that became equal", "[passes]") {
  auto [changed, out] =
      run_pass<Cse>(R"(HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}

ENTRY %main.1 (x.2: f32[3]) -> f32[3] {
  %x.2 = f32[3]{0} parameter(0)
  %c.3 = f32[3]{0} constant({1, 2, 3})
  %c.4 = f32[3]{0} constant({1, 2, 3})
  %add.5 = f32[3]{0} add(f32[3]{0} %x.2, f32[3]{0} %c.3)
  %add.6 = f32[3]{0} add(f32[3]{0} %x.2, f32[3]{0} %c.4)
  %exp.7 = f32[3]{0} exponential(f32[3]{0} %add.6)
  %exp.8 = f32[3]{0} exponential(f32[3]{0} %add.5)
  ROOT %mul.9 = f32[3]{0} multiply(f32[3]{0} %exp.7, f32[3]{0} %exp.8)
}
)");
  CHECK(changed);
  CHECK(out == R"(HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}

ENTRY %main.1 (x.2: f32[3]) -> f32[3] {
  %x.2 = f32[3]{0} parameter(0)
  %c.3 = f32[3]{0} constant({1, 2, 3})
  %add.5 = f32[3]{0} add(f32[3]{0} %x.2, f32[3]{0} %c.3)
  %exp.7 = f32[3]{0} exponential(f32[3]{0} %add.5)
  ROOT %mul.9 = f32[3]{0} multiply(f32[3]{0} %exp.7, f32[3]{0} %exp.7)
}
)");
}

TEST_CASE("cse: reduces with the same combiner merge; the root may be replaced", "[passes]") {
  auto [changed, out] = run_pass<Cse>(
      R"(HloModule m, entry_computation_layout={(f32[2,3]{1,0})->(f32[2]{0}, f32[2]{0})}

%add.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  ROOT %add.4 = f32[] add(f32[] %a.2, f32[] %b.3)
}

ENTRY %main.5 (x.6: f32[2,3]) -> (f32[2]{0}, f32[2]{0}) {
  %x.6 = f32[2,3]{1,0} parameter(0)
  %zero.7 = f32[] constant(0)
  %r.8 = f32[2]{0} reduce(f32[2,3]{1,0} %x.6, f32[] %zero.7), dimensions={1}, to_apply=%add.1
  %r.9 = f32[2]{0} reduce(f32[2,3]{1,0} %x.6, f32[] %zero.7), dimensions={1}, to_apply=%add.1
  %t.10 = (f32[2]{0}, f32[2]{0}) tuple(f32[2]{0} %r.8, f32[2]{0} %r.9)
  ROOT %t.11 = (f32[2]{0}, f32[2]{0}) tuple(f32[2]{0} %r.8, f32[2]{0} %r.9)
}
)");
  CHECK(changed);
  CHECK(out == R"(HloModule m, entry_computation_layout={(f32[2,3]{1,0})->(f32[2]{0}, f32[2]{0})}

%add.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  ROOT %add.4 = f32[] add(f32[] %a.2, f32[] %b.3)
}

ENTRY %main.5 (x.6: f32[2,3]) -> (f32[2]{0}, f32[2]{0}) {
  %x.6 = f32[2,3]{1,0} parameter(0)
  %zero.7 = f32[] constant(0)
  %r.8 = f32[2]{0} reduce(f32[2,3]{1,0} %x.6, f32[] %zero.7), dimensions={1}, to_apply=%add.1
  ROOT %t.10 = (f32[2]{0}, f32[2]{0}) tuple(f32[2]{0} %r.8, f32[2]{0} %r.8)
}
)");
}

TEST_CASE("cse: near misses stay apart (no change)", "[passes]") {
  // Constants differing only in the sign of zero, compares in different directions, operands
  // in another order, different shapes, different parameters, and iotas along other dims.
  const char* text =
      R"(HloModule m, entry_computation_layout={(f32[2]{0}, f32[2]{0})->(f32[2]{0}, f32[2]{0}, pred[2]{0}, pred[2]{0}, f32[2]{0}, f32[2]{0}, s32[2,2]{1,0}, s32[2,2]{1,0})}

ENTRY %main.1 (x.2: f32[2], y.3: f32[2]) -> (f32[2]{0}, f32[2]{0}, pred[2]{0}, pred[2]{0}, f32[2]{0}, f32[2]{0}, s32[2,2]{1,0}, s32[2,2]{1,0}) {
  %c.4 = f32[2]{0} constant({0, 1})
  %c.5 = f32[2]{0} constant({-0, 1})
  %x.2 = f32[2]{0} parameter(0)
  %y.3 = f32[2]{0} parameter(1)
  %lt.6 = pred[2]{0} compare(f32[2]{0} %x.2, f32[2]{0} %y.3), direction=LT
  %gt.7 = pred[2]{0} compare(f32[2]{0} %x.2, f32[2]{0} %y.3), direction=GT
  %s.8 = f32[2]{0} subtract(f32[2]{0} %x.2, f32[2]{0} %y.3)
  %s.9 = f32[2]{0} subtract(f32[2]{0} %y.3, f32[2]{0} %x.2)
  %i.10 = s32[2,2]{1,0} iota(), iota_dimension=0
  %i.11 = s32[2,2]{1,0} iota(), iota_dimension=1
  ROOT %t.12 = (f32[2]{0}, f32[2]{0}, pred[2]{0}, pred[2]{0}, f32[2]{0}, f32[2]{0}, s32[2,2]{1,0}, s32[2,2]{1,0}) tuple(f32[2]{0} %c.4, f32[2]{0} %c.5, pred[2]{0} %lt.6, pred[2]{0} %gt.7, f32[2]{0} %s.8, f32[2]{0} %s.9, s32[2,2]{1,0} %i.10, s32[2,2]{1,0} %i.11)
}
)";
  auto [changed, out] = run_pass<Cse>(text);
  CHECK_FALSE(changed);
  CHECK(out == text);
}

}  // namespace
}  // namespace jx::passes
