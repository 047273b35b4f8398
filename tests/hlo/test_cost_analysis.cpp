// Cost and memory analysis on hand-written modules with counts worked out by hand.
#include <catch2/catch.hpp>

#include "hlo/cost_analysis.hpp"
#include "hlo/ir.hpp"

namespace jx::hlo {
namespace {

TEST_CASE("cost analysis: flops, transcendentals and bytes per instruction", "[hlo]") {
  auto m = parse_module(
      R"(HloModule m, entry_computation_layout={(f32[2,3]{1,0}, f32[3,4]{1,0})->(f32[2,4]{1,0}, f32[2]{0})}

%add.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  ROOT %add.4 = f32[] add(f32[] %a.2, f32[] %b.3)
}

ENTRY %main.5 (x.6: f32[2,3], w.7: f32[3,4]) -> (f32[2,4]{1,0}, f32[2]{0}) {
  %x.6 = f32[2,3]{1,0} parameter(0)
  %w.7 = f32[3,4]{1,0} parameter(1)
  %e.8 = f32[2,3]{1,0} exponential(f32[2,3]{1,0} %x.6)
  %s.9 = f32[2,3]{1,0} add(f32[2,3]{1,0} %e.8, f32[2,3]{1,0} %x.6)
  %d.10 = f32[2,4]{1,0} dot(f32[2,3]{1,0} %s.9, f32[3,4]{1,0} %w.7), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %zero.11 = f32[] constant(0)
  %r.12 = f32[2]{0} reduce(f32[2,3]{1,0} %s.9, f32[] %zero.11), dimensions={1}, to_apply=%add.1
  ROOT %t.13 = (f32[2,4]{1,0}, f32[2]{0}) tuple(f32[2,4]{1,0} %d.10, f32[2]{0} %r.12)
}
)");
  verify(*m);
  HloCost cost = cost_analysis(*m);
  CHECK(cost.transcendentals == 6);            // exp over 2×3
  CHECK(cost.flops == 6 + 2 * 2 * 4 * 3 + 6);  // add, dot (2·m·n·k), reduce (its inputs)
  // exp 24+24, add 24·3, dot 24+48+32, reduce 24+4+8; parameters, constants, tuples: none.
  CHECK(cost.bytes_accessed == 48 + 72 + 104 + 36);
  HloMemory memory = memory_analysis(*m);
  CHECK(memory.argument_bytes == 24 + 48);
  CHECK(memory.output_bytes == 32 + 8);
}

TEST_CASE("cost analysis: batched dot counts 2·batch·m·n·k", "[hlo]") {
  auto m = parse_module(R"(HloModule m

ENTRY %main.1 (a.2: f64[5,2,3], b.3: f64[5,3,4]) -> f64[5,2,4] {
  %a.2 = f64[5,2,3]{2,1,0} parameter(0)
  %b.3 = f64[5,3,4]{2,1,0} parameter(1)
  ROOT %d.4 = f64[5,2,4]{2,1,0} dot(f64[5,2,3]{2,1,0} %a.2, f64[5,3,4]{2,1,0} %b.3), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
)");
  verify(*m);
  HloCost cost = cost_analysis(*m);
  CHECK(cost.flops == 2 * 5 * 2 * 4 * 3);
  CHECK(cost.transcendentals == 0);
  CHECK(cost.bytes_accessed == 8 * (30 + 60 + 40));
  CHECK(memory_analysis(*m).output_bytes == 8 * 40);
}

TEST_CASE("cost analysis: a reshape moves no bytes (it names its operand's buffer)", "[hlo]") {
  auto m = parse_module(R"(HloModule m

ENTRY %main.1 (a.2: f32[2,3]) -> f32[6] {
  %a.2 = f32[2,3]{1,0} parameter(0)
  %n.3 = f32[2,3]{1,0} negate(f32[2,3]{1,0} %a.2)
  ROOT %r.4 = f32[6]{0} reshape(f32[2,3]{1,0} %n.3)
}
)");
  verify(*m);
  HloCost cost = cost_analysis(*m);
  CHECK(cost.flops == 6);
  CHECK(cost.bytes_accessed == 24 + 24);  // the negate's; none for the reshape
}

}  // namespace
}  // namespace jx::hlo
