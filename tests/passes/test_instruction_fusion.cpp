// Instruction fusion: HLO text in, HLO text (or its structure) out, one rule per test.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "passes/fusion/instruction_fusion.hpp"
#include "passes/fusion_testing.hpp"

namespace jx::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::testing::run_pass;
using testing::count_op;
using testing::entry_fusions;
using testing::find;
using testing::fused;
using testing::has;
using testing::ops_of;
using testing::softmax_text;

TEST_CASE("instruction fusion: an elementwise chain with splat constants is one loop fusion",
          "[passes][fusion]") {
  auto [changed, out] =
      run_pass<InstructionFusion>(R"(HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

ENTRY %main.1 (x.2: f32[4]) -> f32[4] {
  %x.2 = f32[4]{0} parameter(0)
  %two.3 = f32[] constant(2)
  %b.4 = f32[4]{0} broadcast(f32[] %two.3), dimensions={}
  %m.5 = f32[4]{0} multiply(f32[4]{0} %x.2, f32[4]{0} %b.4)
  %one.6 = f32[] constant(1)
  %b.7 = f32[4]{0} broadcast(f32[] %one.6), dimensions={}
  %a.8 = f32[4]{0} add(f32[4]{0} %m.5, f32[4]{0} %b.7)
  ROOT %t.9 = f32[4]{0} tanh(f32[4]{0} %a.8)
}
)");
  CHECK(changed);
  CHECK(out == R"(HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

%fused_computation.10 (param.13: f32[4]) -> f32[4] {
  %constant.11 = f32[] constant(2)
  %broadcast.12 = f32[4]{0} broadcast(f32[] %constant.11), dimensions={}
  %param.13 = f32[4]{0} parameter(0)
  %multiply.14 = f32[4]{0} multiply(f32[4]{0} %param.13, f32[4]{0} %broadcast.12)
  %constant.15 = f32[] constant(1)
  %broadcast.16 = f32[4]{0} broadcast(f32[] %constant.15), dimensions={}
  %add.17 = f32[4]{0} add(f32[4]{0} %multiply.14, f32[4]{0} %broadcast.16)
  ROOT %tanh.18 = f32[4]{0} tanh(f32[4]{0} %add.17)
}

ENTRY %main.1 (x.2: f32[4]) -> f32[4] {
  %x.2 = f32[4]{0} parameter(0)
  ROOT %fusion.19 = f32[4]{0} fusion(f32[4]{0} %x.2), kind=kLoop, calls=%fused_computation.10
}
)");
}

TEST_CASE("instruction fusion: a reduce takes its elementwise producers into an input fusion",
          "[passes][fusion]") {
  auto [changed, out] = run_pass<InstructionFusion>(
      R"(HloModule m, entry_computation_layout={(f32[4,8]{1,0})->f32[4]{0}}

%add.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  ROOT %add.4 = f32[] add(f32[] %a.2, f32[] %b.3)
}

ENTRY %main.5 (x.6: f32[4,8]) -> f32[4] {
  %x.6 = f32[4,8]{1,0} parameter(0)
  %e.7 = f32[4,8]{1,0} exponential(f32[4,8]{1,0} %x.6)
  %m.8 = f32[4,8]{1,0} multiply(f32[4,8]{1,0} %e.7, f32[4,8]{1,0} %x.6)
  %zero.9 = f32[] constant(0)
  ROOT %r.10 = f32[4]{0} reduce(f32[4,8]{1,0} %m.8, f32[] %zero.9), dimensions={1}, to_apply=%add.1
}
)");
  CHECK(changed);
  CHECK(out == R"(HloModule m, entry_computation_layout={(f32[4,8]{1,0})->f32[4]{0}}

%add.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  ROOT %add.4 = f32[] add(f32[] %a.2, f32[] %b.3)
}

%fused_computation.11 (param.12: f32[4,8]) -> f32[4] {
  %param.12 = f32[4,8]{1,0} parameter(0)
  %exponential.13 = f32[4,8]{1,0} exponential(f32[4,8]{1,0} %param.12)
  %multiply.14 = f32[4,8]{1,0} multiply(f32[4,8]{1,0} %exponential.13, f32[4,8]{1,0} %param.12)
  %constant.15 = f32[] constant(0)
  ROOT %reduce.16 = f32[4]{0} reduce(f32[4,8]{1,0} %multiply.14, f32[] %constant.15), dimensions={1}, to_apply=%add.1
}

ENTRY %main.5 (x.6: f32[4,8]) -> f32[4] {
  %x.6 = f32[4,8]{1,0} parameter(0)
  ROOT %fusion.17 = f32[4]{0} fusion(f32[4,8]{1,0} %x.6), kind=kInput, calls=%fused_computation.11
}
)");
}

// One fusion computing all of softmax: both reduces, the exp and the divide.
void check_softmax_is_one_fusion(const std::string& text) {
  auto m = fused<InstructionFusion>(text);
  INFO(hlo::to_string(*m));
  std::vector<Instruction*> fusions = entry_fusions(*m);
  REQUIRE(fusions.size() == 1);
  CHECK(m->entry()->root() == fusions[0]);
  CHECK(m->entry()->instructions().size() == 2);  // the parameter and the fusion
  std::vector<std::string> ops = ops_of(*fusions[0]);
  CHECK(std::count(ops.begin(), ops.end(), "reduce") == 2);
  CHECK(std::count(ops.begin(), ops.end(), "exponential") == 1);
  CHECK(has(ops, "subtract"));
  CHECK(has(ops, "divide"));
  CHECK(fusions[0]->operands.size() == 1);  // x, read once
}

TEST_CASE("instruction fusion: row softmax is one fusion", "[passes][fusion]") {
  check_softmax_is_one_fusion(softmax_text(4));
}

TEST_CASE("instruction fusion: row softmax of a single row is one fusion", "[passes][fusion]") {
  // A size-1 leading dim: the divide's loop over dim 1 and the sum's own loop must be seen as
  // the same loop, or the max is taken for reused and left out.
  check_softmax_is_one_fusion(softmax_text(1));
}

TEST_CASE("instruction fusion: a column sum broadcast along rows is not recomputed per row",
          "[passes][fusion]") {
  // The divide's loop reads the sum with its outer loop dropped: fused, the sum would run once
  // per row. It becomes an input fusion of its own.
  auto [changed, out] = run_pass<InstructionFusion>(
      R"(HloModule m, entry_computation_layout={(f32[4,8]{1,0})->f32[4,8]{1,0}}

%add.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  ROOT %add.4 = f32[] add(f32[] %a.2, f32[] %b.3)
}

ENTRY %main.5 (x.6: f32[4,8]) -> f32[4,8] {
  %x.6 = f32[4,8]{1,0} parameter(0)
  %zero.7 = f32[] constant(0)
  %cs.8 = f32[8]{0} reduce(f32[4,8]{1,0} %x.6, f32[] %zero.7), dimensions={0}, to_apply=%add.1
  %b.9 = f32[4,8]{1,0} broadcast(f32[8]{0} %cs.8), dimensions={1}
  ROOT %d.10 = f32[4,8]{1,0} divide(f32[4,8]{1,0} %x.6, f32[4,8]{1,0} %b.9)
}
)");
  CHECK(changed);
  CHECK(out == R"(HloModule m, entry_computation_layout={(f32[4,8]{1,0})->f32[4,8]{1,0}}

%add.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  ROOT %add.4 = f32[] add(f32[] %a.2, f32[] %b.3)
}

%fused_computation.11 (param.12: f32[8], param.14: f32[4,8]) -> f32[4,8] {
  %param.12 = f32[8]{0} parameter(0)
  %broadcast.13 = f32[4,8]{1,0} broadcast(f32[8]{0} %param.12), dimensions={1}
  %param.14 = f32[4,8]{1,0} parameter(1)
  ROOT %divide.15 = f32[4,8]{1,0} divide(f32[4,8]{1,0} %param.14, f32[4,8]{1,0} %broadcast.13)
}

%fused_computation.17 (param.19: f32[4,8]) -> f32[8] {
  %constant.18 = f32[] constant(0)
  %param.19 = f32[4,8]{1,0} parameter(0)
  ROOT %reduce.20 = f32[8]{0} reduce(f32[4,8]{1,0} %param.19, f32[] %constant.18), dimensions={0}, to_apply=%add.1
}

ENTRY %main.5 (x.6: f32[4,8]) -> f32[4,8] {
  %x.6 = f32[4,8]{1,0} parameter(0)
  %fusion.21 = f32[8]{0} fusion(f32[4,8]{1,0} %x.6), kind=kInput, calls=%fused_computation.17
  ROOT %fusion.16 = f32[4,8]{1,0} fusion(f32[8]{0} %fusion.21, f32[4,8]{1,0} %x.6), kind=kLoop, calls=%fused_computation.11
}
)");
}

TEST_CASE("instruction fusion: exp behind a broadcast that repeats it stays out",
          "[passes][fusion]") {
  // exp(y) broadcast along dim 1 drops the outer loop: each row would recompute it. exp(z)
  // broadcast along dim 0 is computed once per row, and joins.
  auto [changed, out] = run_pass<InstructionFusion>(
      R"(HloModule m, entry_computation_layout={(f32[4,8]{1,0}, f32[8]{0}, f32[4]{0})->(f32[4,8]{1,0}, f32[4,8]{1,0})}

ENTRY %main.1 (x.2: f32[4,8], y.3: f32[8], z.4: f32[4]) -> (f32[4,8]{1,0}, f32[4,8]{1,0}) {
  %x.2 = f32[4,8]{1,0} parameter(0)
  %y.3 = f32[8]{0} parameter(1)
  %z.4 = f32[4]{0} parameter(2)
  %ey.5 = f32[8]{0} exponential(f32[8]{0} %y.3)
  %by.6 = f32[4,8]{1,0} broadcast(f32[8]{0} %ey.5), dimensions={1}
  %a.7 = f32[4,8]{1,0} add(f32[4,8]{1,0} %x.2, f32[4,8]{1,0} %by.6)
  %ez.8 = f32[4]{0} exponential(f32[4]{0} %z.4)
  %bz.9 = f32[4,8]{1,0} broadcast(f32[4]{0} %ez.8), dimensions={0}
  %b.10 = f32[4,8]{1,0} add(f32[4,8]{1,0} %x.2, f32[4,8]{1,0} %bz.9)
  ROOT %t.11 = (f32[4,8]{1,0}, f32[4,8]{1,0}) tuple(f32[4,8]{1,0} %a.7, f32[4,8]{1,0} %b.10)
}
)");
  CHECK(changed);
  CHECK(
      out ==
      R"(HloModule m, entry_computation_layout={(f32[4,8]{1,0}, f32[8]{0}, f32[4]{0})->(f32[4,8]{1,0}, f32[4,8]{1,0})}

%fused_computation.12 (param.13: f32[4], param.16: f32[4,8]) -> f32[4,8] {
  %param.13 = f32[4]{0} parameter(0)
  %exponential.14 = f32[4]{0} exponential(f32[4]{0} %param.13)
  %broadcast.15 = f32[4,8]{1,0} broadcast(f32[4]{0} %exponential.14), dimensions={0}
  %param.16 = f32[4,8]{1,0} parameter(1)
  ROOT %add.17 = f32[4,8]{1,0} add(f32[4,8]{1,0} %param.16, f32[4,8]{1,0} %broadcast.15)
}

%fused_computation.19 (param.20: f32[8], param.22: f32[4,8]) -> f32[4,8] {
  %param.20 = f32[8]{0} parameter(0)
  %broadcast.21 = f32[4,8]{1,0} broadcast(f32[8]{0} %param.20), dimensions={1}
  %param.22 = f32[4,8]{1,0} parameter(1)
  ROOT %add.23 = f32[4,8]{1,0} add(f32[4,8]{1,0} %param.22, f32[4,8]{1,0} %broadcast.21)
}

ENTRY %main.1 (x.2: f32[4,8], y.3: f32[8], z.4: f32[4]) -> (f32[4,8]{1,0}, f32[4,8]{1,0}) {
  %x.2 = f32[4,8]{1,0} parameter(0)
  %y.3 = f32[8]{0} parameter(1)
  %z.4 = f32[4]{0} parameter(2)
  %ey.5 = f32[8]{0} exponential(f32[8]{0} %y.3)
  %fusion.24 = f32[4,8]{1,0} fusion(f32[8]{0} %ey.5, f32[4,8]{1,0} %x.2), kind=kLoop, calls=%fused_computation.19
  %fusion.18 = f32[4,8]{1,0} fusion(f32[4]{0} %z.4, f32[4,8]{1,0} %x.2), kind=kLoop, calls=%fused_computation.12
  ROOT %t.11 = (f32[4,8]{1,0}, f32[4,8]{1,0}) tuple(f32[4,8]{1,0} %fusion.24, f32[4,8]{1,0} %fusion.18)
}
)");
}

TEST_CASE("instruction fusion: a cheap producer is duplicated into at most kMaxDuplication users",
          "[passes][fusion]") {
  // negate has five users, each rooting a kernel of its own.
  auto m = fused<InstructionFusion>(
      R"(HloModule m, entry_computation_layout={(f32[8]{0})->(f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0})}

ENTRY %main.1 (x.2: f32[8]) -> (f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}) {
  %x.2 = f32[8]{0} parameter(0)
  %n.3 = f32[8]{0} negate(f32[8]{0} %x.2)
  %u.4 = f32[8]{0} exponential(f32[8]{0} %n.3)
  %u.5 = f32[8]{0} sine(f32[8]{0} %n.3)
  %u.6 = f32[8]{0} cosine(f32[8]{0} %n.3)
  %u.7 = f32[8]{0} tanh(f32[8]{0} %n.3)
  %u.8 = f32[8]{0} abs(f32[8]{0} %n.3)
  ROOT %t.9 = (f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}) tuple(f32[8]{0} %u.4, f32[8]{0} %u.5, f32[8]{0} %u.6, f32[8]{0} %u.7, f32[8]{0} %u.8)
}
)");
  static_assert(InstructionFusion::kMaxDuplication == 4);
  std::vector<Instruction*> fusions = entry_fusions(*m);
  CHECK(fusions.size() == 4);
  for (const Instruction* f : fusions) {
    CHECK(ops_of(*f).size() == 2);
    CHECK(ops_of(*f)[0] == "negate");
    CHECK(f->operands == std::vector<Instruction*>{find(*m, "x.2")});
  }
  // The fifth user reads the original, which stays.
  const Instruction* fifth = find(*m, "u.4");
  REQUIRE(fifth->operands.size() == 1);
  CHECK(fifth->operands[0]->opcode == Opcode::kNegate);
  CHECK(count_op(*m, "negate") == 5);
}

TEST_CASE("instruction fusion: a value a dot reads is loaded, not recomputed, by other kernels",
          "[passes][fusion]") {
  // relu(x + y) is written for the dot whatever the groups: the reduction reads that buffer
  // instead of x and y. The widened bf16 value is copied into the reduction, which reads 2
  // bytes an element instead of 4.
  auto m = fused<InstructionFusion>(
      R"(HloModule m, entry_computation_layout={(f32[4,8]{1,0}, f32[4,8]{1,0}, f32[8,2]{1,0}, bf16[4,8]{1,0})->(f32[4,2]{1,0}, f32[8]{0}, f32[4,2]{1,0}, f32[8]{0})}

%add.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  ROOT %s.4 = f32[] add(f32[] %a.2, f32[] %b.3)
}

ENTRY %main.5 (x.6: f32[4,8], y.7: f32[4,8], w.8: f32[8,2], h.9: bf16[4,8]) -> (f32[4,2]{1,0}, f32[8]{0}, f32[4,2]{1,0}, f32[8]{0}) {
  %x.6 = f32[4,8]{1,0} parameter(0)
  %y.7 = f32[4,8]{1,0} parameter(1)
  %w.8 = f32[8,2]{1,0} parameter(2)
  %h.9 = bf16[4,8]{1,0} parameter(3)
  %a.10 = f32[4,8]{1,0} add(f32[4,8]{1,0} %x.6, f32[4,8]{1,0} %y.7)
  %zero.11 = f32[] constant(0)
  %zeros.12 = f32[4,8]{1,0} broadcast(f32[] %zero.11), dimensions={}
  %r.13 = f32[4,8]{1,0} maximum(f32[4,8]{1,0} %a.10, f32[4,8]{1,0} %zeros.12)
  %d.14 = f32[4,2]{1,0} dot(f32[4,8]{1,0} %r.13, f32[8,2]{1,0} %w.8), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %s.15 = f32[8]{0} reduce(f32[4,8]{1,0} %r.13, f32[] %zero.11), dimensions={0}, to_apply=%add.1
  %c.16 = f32[4,8]{1,0} convert(bf16[4,8]{1,0} %h.9)
  %e.17 = f32[4,2]{1,0} dot(f32[4,8]{1,0} %c.16, f32[8,2]{1,0} %w.8), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %t.18 = f32[8]{0} reduce(f32[4,8]{1,0} %c.16, f32[] %zero.11), dimensions={0}, to_apply=%add.1
  ROOT %out.19 = (f32[4,2]{1,0}, f32[8]{0}, f32[4,2]{1,0}, f32[8]{0}) tuple(f32[4,2]{1,0} %d.14, f32[8]{0} %s.15, f32[4,2]{1,0} %e.17, f32[8]{0} %t.18)
}
)");
  const Instruction* relu = find(*m, "d.14")->operands[0];
  REQUIRE(relu->opcode == Opcode::kFusion);
  CHECK(ops_of(*relu) == std::vector<std::string>{"add", "constant", "broadcast", "maximum"});
  const Instruction* sum = find(*m, "out.19")->operands[1];
  REQUIRE(sum->opcode == Opcode::kFusion);
  CHECK(!has(ops_of(*sum), "maximum"));
  CHECK(sum->operands[0] == relu);
  CHECK(count_op(*m, "add") == 1);  // the reduction's combiner is a computation of its own

  const Instruction* widened_sum = find(*m, "out.19")->operands[3];
  REQUIRE(widened_sum->opcode == Opcode::kFusion);
  CHECK(has(ops_of(*widened_sum), "convert"));
  CHECK(widened_sum->operands[0] == find(*m, "h.9"));
  CHECK(count_op(*m, "convert") == 2);
}

TEST_CASE("instruction fusion: a value a dot reads through a reshape is loaded too",
          "[passes][fusion]") {
  // A reshape outside a kernel is its operand's buffer: x * y is written for the dot all the same.
  auto m = fused<InstructionFusion>(
      R"(HloModule m, entry_computation_layout={(f32[2,4,8]{2,1,0}, f32[2,4,8]{2,1,0}, f32[8,2]{1,0})->(f32[8,2]{1,0}, f32[8]{0})}

%add.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  ROOT %s.4 = f32[] add(f32[] %a.2, f32[] %b.3)
}

ENTRY %main.5 (x.6: f32[2,4,8], y.7: f32[2,4,8], w.8: f32[8,2]) -> (f32[8,2]{1,0}, f32[8]{0}) {
  %x.6 = f32[2,4,8]{2,1,0} parameter(0)
  %y.7 = f32[2,4,8]{2,1,0} parameter(1)
  %w.8 = f32[8,2]{1,0} parameter(2)
  %v.9 = f32[2,4,8]{2,1,0} multiply(f32[2,4,8]{2,1,0} %x.6, f32[2,4,8]{2,1,0} %y.7)
  %r.10 = f32[8,8]{1,0} reshape(f32[2,4,8]{2,1,0} %v.9)
  %d.11 = f32[8,2]{1,0} dot(f32[8,8]{1,0} %r.10, f32[8,2]{1,0} %w.8), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %zero.12 = f32[] constant(0)
  %s.13 = f32[8]{0} reduce(f32[2,4,8]{2,1,0} %v.9, f32[] %zero.12), dimensions={0,1}, to_apply=%add.1
  ROOT %out.14 = (f32[8,2]{1,0}, f32[8]{0}) tuple(f32[8,2]{1,0} %d.11, f32[8]{0} %s.13)
}
)");
  const Instruction* sum = find(*m, "out.14")->operands[1];
  REQUIRE(sum->opcode == Opcode::kFusion);
  CHECK(!has(ops_of(*sum), "multiply"));
  CHECK(sum->operands[0] == find(*m, "v.9"));
  CHECK(count_op(*m, "multiply") == 1);
}

TEST_CASE("instruction fusion: a broadcast scalar constant joins every user, however many",
          "[passes][fusion]") {
  // relu's zeros, read by five kernels: each reads an immediate, and no array of zeros is left.
  auto m = fused<InstructionFusion>(
      R"(HloModule m, entry_computation_layout={(f32[8]{0})->(f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0})}

ENTRY %main.1 (x.2: f32[8]) -> (f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}) {
  %x.2 = f32[8]{0} parameter(0)
  %c.3 = f32[] constant(0)
  %z.4 = f32[8]{0} broadcast(f32[] %c.3), dimensions={}
  %u.5 = f32[8]{0} maximum(f32[8]{0} %x.2, f32[8]{0} %z.4)
  %u.6 = f32[8]{0} minimum(f32[8]{0} %x.2, f32[8]{0} %z.4)
  %u.7 = f32[8]{0} add(f32[8]{0} %x.2, f32[8]{0} %z.4)
  %u.8 = f32[8]{0} multiply(f32[8]{0} %x.2, f32[8]{0} %z.4)
  %u.9 = f32[8]{0} subtract(f32[8]{0} %x.2, f32[8]{0} %z.4)
  ROOT %t.10 = (f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}) tuple(f32[8]{0} %u.5, f32[8]{0} %u.6, f32[8]{0} %u.7, f32[8]{0} %u.8, f32[8]{0} %u.9)
}
)");
  std::vector<Instruction*> fusions = entry_fusions(*m);
  CHECK(fusions.size() == 5);
  for (const Instruction* f : fusions) {
    CHECK(has(ops_of(*f), "broadcast"));
    CHECK(f->operands == std::vector<Instruction*>{find(*m, "x.2")});
  }
  for (const Instruction* i : m->entry()->instructions()) CHECK(i->opcode != Opcode::kBroadcast);
}

TEST_CASE("instruction fusion: duplicated cheap producers die; an expensive one is not copied",
          "[passes][fusion]") {
  // negate (two users) goes into both kernels and disappears; exp (two users) stays one
  // instruction, its users unfused.
  auto [changed, out] = run_pass<InstructionFusion>(
      R"(HloModule m, entry_computation_layout={(f32[8]{0})->(f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0})}

ENTRY %main.1 (x.2: f32[8]) -> (f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}) {
  %x.2 = f32[8]{0} parameter(0)
  %n.3 = f32[8]{0} negate(f32[8]{0} %x.2)
  %u.4 = f32[8]{0} sine(f32[8]{0} %n.3)
  %u.5 = f32[8]{0} cosine(f32[8]{0} %n.3)
  %e.6 = f32[8]{0} exponential(f32[8]{0} %x.2)
  %v.7 = f32[8]{0} abs(f32[8]{0} %e.6)
  %v.8 = f32[8]{0} floor(f32[8]{0} %e.6)
  ROOT %t.9 = (f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}) tuple(f32[8]{0} %u.4, f32[8]{0} %u.5, f32[8]{0} %v.7, f32[8]{0} %v.8)
}
)");
  CHECK(changed);
  CHECK(
      out ==
      R"(HloModule m, entry_computation_layout={(f32[8]{0})->(f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0})}

%fused_computation.10 (param.11: f32[8]) -> f32[8] {
  %param.11 = f32[8]{0} parameter(0)
  %negate.12 = f32[8]{0} negate(f32[8]{0} %param.11)
  ROOT %cosine.13 = f32[8]{0} cosine(f32[8]{0} %negate.12)
}

%fused_computation.15 (param.16: f32[8]) -> f32[8] {
  %param.16 = f32[8]{0} parameter(0)
  %negate.17 = f32[8]{0} negate(f32[8]{0} %param.16)
  ROOT %sine.18 = f32[8]{0} sine(f32[8]{0} %negate.17)
}

ENTRY %main.1 (x.2: f32[8]) -> (f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}) {
  %x.2 = f32[8]{0} parameter(0)
  %e.6 = f32[8]{0} exponential(f32[8]{0} %x.2)
  %v.7 = f32[8]{0} abs(f32[8]{0} %e.6)
  %v.8 = f32[8]{0} floor(f32[8]{0} %e.6)
  %fusion.19 = f32[8]{0} fusion(f32[8]{0} %x.2), kind=kLoop, calls=%fused_computation.15
  %fusion.14 = f32[8]{0} fusion(f32[8]{0} %x.2), kind=kLoop, calls=%fused_computation.10
  ROOT %t.9 = (f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}) tuple(f32[8]{0} %fusion.19, f32[8]{0} %fusion.14, f32[8]{0} %v.7, f32[8]{0} %v.8)
}
)");
}

TEST_CASE("instruction fusion: the producers of a duplicated op are not computed twice",
          "[passes][fusion]") {
  // m = exp(d) * 2 feeds a dot and log(m) + 1. The cheap multiply is copied into the log's
  // kernel; exp, whose one user is that copied multiply, must not be copied with it while the
  // original multiply still reads the original exp.
  auto m = fused<InstructionFusion>(
      R"(HloModule m, entry_computation_layout={(f32[64,64]{1,0}, f32[64,64]{1,0})->(f32[64,64]{1,0}, f32[64,64]{1,0})}

ENTRY %main.1 (x.2: f32[64,64], w.3: f32[64,64]) -> (f32[64,64]{1,0}, f32[64,64]{1,0}) {
  %x.2 = f32[64,64]{1,0} parameter(0)
  %w.3 = f32[64,64]{1,0} parameter(1)
  %d.4 = f32[64,64]{1,0} dot(f32[64,64]{1,0} %x.2, f32[64,64]{1,0} %w.3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %e.5 = f32[64,64]{1,0} exponential(f32[64,64]{1,0} %d.4)
  %two.6 = f32[] constant(2)
  %b.7 = f32[64,64]{1,0} broadcast(f32[] %two.6), dimensions={}
  %m.8 = f32[64,64]{1,0} multiply(f32[64,64]{1,0} %e.5, f32[64,64]{1,0} %b.7)
  %l.9 = f32[64,64]{1,0} log(f32[64,64]{1,0} %m.8)
  %one.10 = f32[] constant(1)
  %b.11 = f32[64,64]{1,0} broadcast(f32[] %one.10), dimensions={}
  %a.12 = f32[64,64]{1,0} add(f32[64,64]{1,0} %l.9, f32[64,64]{1,0} %b.11)
  %d.13 = f32[64,64]{1,0} dot(f32[64,64]{1,0} %m.8, f32[64,64]{1,0} %w.3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %t.14 = (f32[64,64]{1,0}, f32[64,64]{1,0}) tuple(f32[64,64]{1,0} %d.13, f32[64,64]{1,0} %a.12)
}
)");
  INFO(hlo::to_string(*m));
  CHECK(count_op(*m, "exponential") == 1);
  // Nor is the splat left to a kernel that writes it to memory.
  for (const Instruction* i : m->entry()->instructions()) CHECK(i->opcode != Opcode::kBroadcast);
}

TEST_CASE("instruction fusion: a dot never joins; its epilogue is a loop fusion reading it",
          "[passes][fusion]") {
  auto [changed, out] = run_pass<InstructionFusion>(
      R"(HloModule m, entry_computation_layout={(f32[4,8]{1,0}, f32[8,16]{1,0}, f32[16]{0})->f32[4,16]{1,0}}

ENTRY %main.1 (a.2: f32[4,8], w.3: f32[8,16], b.4: f32[16]) -> f32[4,16] {
  %a.2 = f32[4,8]{1,0} parameter(0)
  %w.3 = f32[8,16]{1,0} parameter(1)
  %b.4 = f32[16]{0} parameter(2)
  %na.5 = f32[4,8]{1,0} negate(f32[4,8]{1,0} %a.2)
  %d.6 = f32[4,16]{1,0} dot(f32[4,8]{1,0} %na.5, f32[8,16]{1,0} %w.3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bb.7 = f32[4,16]{1,0} broadcast(f32[16]{0} %b.4), dimensions={1}
  %s.8 = f32[4,16]{1,0} add(f32[4,16]{1,0} %d.6, f32[4,16]{1,0} %bb.7)
  %zero.9 = f32[] constant(0)
  %bz.10 = f32[4,16]{1,0} broadcast(f32[] %zero.9), dimensions={}
  ROOT %r.11 = f32[4,16]{1,0} maximum(f32[4,16]{1,0} %s.8, f32[4,16]{1,0} %bz.10)
}
)");
  CHECK(changed);
  CHECK(
      out ==
      R"(HloModule m, entry_computation_layout={(f32[4,8]{1,0}, f32[8,16]{1,0}, f32[16]{0})->f32[4,16]{1,0}}

%fused_computation.12 (param.13: f32[16], param.15: f32[4,16]) -> f32[4,16] {
  %param.13 = f32[16]{0} parameter(0)
  %broadcast.14 = f32[4,16]{1,0} broadcast(f32[16]{0} %param.13), dimensions={1}
  %param.15 = f32[4,16]{1,0} parameter(1)
  %add.16 = f32[4,16]{1,0} add(f32[4,16]{1,0} %param.15, f32[4,16]{1,0} %broadcast.14)
  %constant.17 = f32[] constant(0)
  %broadcast.18 = f32[4,16]{1,0} broadcast(f32[] %constant.17), dimensions={}
  ROOT %maximum.19 = f32[4,16]{1,0} maximum(f32[4,16]{1,0} %add.16, f32[4,16]{1,0} %broadcast.18)
}

ENTRY %main.1 (a.2: f32[4,8], w.3: f32[8,16], b.4: f32[16]) -> f32[4,16] {
  %a.2 = f32[4,8]{1,0} parameter(0)
  %w.3 = f32[8,16]{1,0} parameter(1)
  %b.4 = f32[16]{0} parameter(2)
  %na.5 = f32[4,8]{1,0} negate(f32[4,8]{1,0} %a.2)
  %d.6 = f32[4,16]{1,0} dot(f32[4,8]{1,0} %na.5, f32[8,16]{1,0} %w.3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %fusion.20 = f32[4,16]{1,0} fusion(f32[16]{0} %b.4, f32[4,16]{1,0} %d.6), kind=kLoop, calls=%fused_computation.12
}
)");
}

TEST_CASE("instruction fusion: parameters, tuples and get-tuple-elements stay outside",
          "[passes][fusion]") {
  auto [changed, out] = run_pass<InstructionFusion>(
      R"(HloModule m, entry_computation_layout={(f32[8]{0}, f32[8]{0})->(f32[8]{0}, f32[8]{0})}

ENTRY %main.1 (x.2: f32[8], y.3: f32[8]) -> (f32[8]{0}, f32[8]{0}) {
  %x.2 = f32[8]{0} parameter(0)
  %y.3 = f32[8]{0} parameter(1)
  %t.4 = (f32[8]{0}, f32[8]{0}) tuple(f32[8]{0} %x.2, f32[8]{0} %y.3)
  %g.5 = f32[8]{0} get-tuple-element((f32[8]{0}, f32[8]{0}) %t.4), index=1
  %a.6 = f32[8]{0} add(f32[8]{0} %x.2, f32[8]{0} %g.5)
  %n.7 = f32[8]{0} negate(f32[8]{0} %a.6)
  ROOT %t.8 = (f32[8]{0}, f32[8]{0}) tuple(f32[8]{0} %n.7, f32[8]{0} %x.2)
}
)");
  CHECK(changed);
  CHECK(out ==
        R"(HloModule m, entry_computation_layout={(f32[8]{0}, f32[8]{0})->(f32[8]{0}, f32[8]{0})}

%fused_computation.9 (param.10: f32[8], param.11: f32[8]) -> f32[8] {
  %param.10 = f32[8]{0} parameter(0)
  %param.11 = f32[8]{0} parameter(1)
  %add.12 = f32[8]{0} add(f32[8]{0} %param.10, f32[8]{0} %param.11)
  ROOT %negate.13 = f32[8]{0} negate(f32[8]{0} %add.12)
}

ENTRY %main.1 (x.2: f32[8], y.3: f32[8]) -> (f32[8]{0}, f32[8]{0}) {
  %x.2 = f32[8]{0} parameter(0)
  %y.3 = f32[8]{0} parameter(1)
  %t.4 = (f32[8]{0}, f32[8]{0}) tuple(f32[8]{0} %x.2, f32[8]{0} %y.3)
  %g.5 = f32[8]{0} get-tuple-element((f32[8]{0}, f32[8]{0}) %t.4), index=1
  %fusion.14 = f32[8]{0} fusion(f32[8]{0} %x.2, f32[8]{0} %g.5), kind=kLoop, calls=%fused_computation.9
  ROOT %t.8 = (f32[8]{0}, f32[8]{0}) tuple(f32[8]{0} %fusion.14, f32[8]{0} %x.2)
}
)");
}

// negate(x + c) with c a constant of n distinct elements.
std::string add_constant_text(int n) {
  std::string dims = "f32[" + std::to_string(n) + "]", values;
  for (int k = 0; k < n; ++k) values += (k ? ", " : "") + std::to_string(k);
  return "HloModule m, entry_computation_layout={(" + dims + "{0})->" + dims +
         "{0}}\n\nENTRY %main.1 (x.2: " + dims + ") -> " + dims + " {\n  %x.2 = " + dims +
         "{0} parameter(0)\n  %c.3 = " + dims + "{0} constant({" + values + "})\n  %a.4 = " + dims +
         "{0} add(" + dims + "{0} %x.2, " + dims + "{0} %c.3)\n  ROOT %n.5 = " + dims +
         "{0} negate(" + dims + "{0} %a.4)\n}\n";
}

TEST_CASE("instruction fusion: a constant over kMaxFusedConstant elements stays an operand",
          "[passes][fusion]") {
  static_assert(InstructionFusion::kMaxFusedConstant == 1024);
  SECTION("1024 elements join") {
    auto m = fused<InstructionFusion>(add_constant_text(1024));
    std::vector<Instruction*> fusions = entry_fusions(*m);
    REQUIRE(fusions.size() == 1);
    CHECK(ops_of(*fusions[0]) == std::vector<std::string>{"constant", "add", "negate"});
    CHECK(fusions[0]->operands.size() == 1);
  }
  SECTION("1025 elements are read from their buffer") {
    auto m = fused<InstructionFusion>(add_constant_text(1025));
    std::vector<Instruction*> fusions = entry_fusions(*m);
    REQUIRE(fusions.size() == 1);
    CHECK(ops_of(*fusions[0]) == std::vector<std::string>{"add", "negate"});
    REQUIRE(fusions[0]->operands.size() == 2);
    CHECK(fusions[0]->operands[1] == find(*m, "c.3"));
    CHECK(find(*m, "c.3")->opcode == Opcode::kConstant);
  }
}

}  // namespace
}  // namespace jx::passes
