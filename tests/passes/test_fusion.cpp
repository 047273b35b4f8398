// Fusion passes: HLO text in, HLO text (or its structure) out, one rule per test; the verifier's
// fusion rules; the evaluator on fusions; and which fusion operands may be overwritten in place.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "hlo/evaluator.hpp"
#include "hlo/fusion.hpp"
#include "hlo/hlo_testing.hpp"
#include "passes/fusion/fusion_merger.hpp"
#include "passes/fusion/horizontal_fusion.hpp"
#include "passes/fusion/instruction_fusion.hpp"
#include "passes/fusion/multi_output_fusion.hpp"
#include "passes/splat_constants.hpp"

namespace jx::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::testing::error_of;
using hlo::testing::literal;
using hlo::testing::run_pass;

// Runs pass P on `text`, which it must change, and parses the printed result back for
// structural checks.
template <class P>
std::unique_ptr<hlo::Module> fused(const std::string& text) {
  auto [changed, out] = run_pass<P>(text);
  INFO(out);
  CHECK(changed);
  return hlo::parse_module(out);
}

std::vector<Instruction*> entry_fusions(const hlo::Module& m) {
  std::vector<Instruction*> out;
  for (Instruction* i : m.entry()->instructions())
    if (i->opcode == Opcode::kFusion) out.push_back(i);
  return out;
}

// The opcode names a fusion computes (parameters left out), operands first.
std::vector<std::string> ops_of(const Instruction& fusion) {
  std::vector<std::string> out;
  for (const Instruction* i : fusion.called.at(0)->instructions())
    if (i->opcode != Opcode::kParameter) out.emplace_back(hlo::info(i->opcode).name);
  return out;
}

bool has(const std::vector<std::string>& ops, const std::string& op) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

// How many instructions named `op` run: in the ENTRY and in its fusions' computations.
int count_op(const hlo::Module& m, const std::string& op) {
  int n = 0;
  for (const Instruction* i : m.entry()->instructions()) {
    if (hlo::info(i->opcode).name == op) ++n;
    if (i->opcode == Opcode::kFusion)
      for (const std::string& f : ops_of(*i)) n += f == op;
  }
  return n;
}

Instruction* find(const hlo::Module& m, const std::string& name) {
  for (const hlo::Computation* c : m.computations())
    for (Instruction* i : c->instructions())
      if (i->name == name) return i;
  FAIL("no instruction " << name);
  return nullptr;
}

// ---- instruction fusion ---------------------------------------------------------------------

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

// Row softmax of f32[ROWS,8]; ROWS is filled in.
const std::string kSoftmax =
    R"(HloModule m, entry_computation_layout={(f32[ROWS,8]{1,0})->f32[ROWS,8]{1,0}}

%max.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  ROOT %m.4 = f32[] maximum(f32[] %a.2, f32[] %b.3)
}

%add.5 (a.6: f32[], b.7: f32[]) -> f32[] {
  %a.6 = f32[] parameter(0)
  %b.7 = f32[] parameter(1)
  ROOT %s.8 = f32[] add(f32[] %a.6, f32[] %b.7)
}

ENTRY %main.9 (x.10: f32[ROWS,8]) -> f32[ROWS,8] {
  %x.10 = f32[ROWS,8]{1,0} parameter(0)
  %ninf.11 = f32[] constant(-inf)
  %mx.12 = f32[ROWS]{0} reduce(f32[ROWS,8]{1,0} %x.10, f32[] %ninf.11), dimensions={1}, to_apply=%max.1
  %bmx.13 = f32[ROWS,8]{1,0} broadcast(f32[ROWS]{0} %mx.12), dimensions={0}
  %s.14 = f32[ROWS,8]{1,0} subtract(f32[ROWS,8]{1,0} %x.10, f32[ROWS,8]{1,0} %bmx.13)
  %e.15 = f32[ROWS,8]{1,0} exponential(f32[ROWS,8]{1,0} %s.14)
  %zero.16 = f32[] constant(0)
  %sum.17 = f32[ROWS]{0} reduce(f32[ROWS,8]{1,0} %e.15, f32[] %zero.16), dimensions={1}, to_apply=%add.5
  %bsum.18 = f32[ROWS,8]{1,0} broadcast(f32[ROWS]{0} %sum.17), dimensions={0}
  ROOT %d.19 = f32[ROWS,8]{1,0} divide(f32[ROWS,8]{1,0} %e.15, f32[ROWS,8]{1,0} %bsum.18)
}
)";

std::string softmax_text(int rows) {
  std::string t = kSoftmax;
  for (std::size_t at; (at = t.find("ROWS")) != std::string::npos;)
    t.replace(at, 4, std::to_string(rows));
  return t;
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
  for (const Instruction* i : m->entry()->instructions())
    CHECK(i->opcode != Opcode::kBroadcast);
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

// ---- fusion merger --------------------------------------------------------------------------

// A loop fusion %f.17 computing `producer_body` from x, read by `consumers`; the ENTRY's root
// is `root_shape root_expr`.
std::string merger_text(const std::string& producer_body, const std::string& consumers,
                        const std::string& root_shape, const std::string& root_expr) {
  return R"(HloModule m

%producer.1 (p.2: f32[8]) -> f32[8] {
  %p.2 = f32[8]{0} parameter(0)
)" + producer_body +
         R"(}

%neg.6 (p.7: f32[8]) -> f32[8] {
  %p.7 = f32[8]{0} parameter(0)
  %e.8 = f32[8]{0} exponential(f32[8]{0} %p.7)
  ROOT %n.9 = f32[8]{0} negate(f32[8]{0} %e.8)
}

%sin.10 (p.11: f32[8], q.12: f32[8]) -> f32[8] {
  %p.11 = f32[8]{0} parameter(0)
  %q.12 = f32[8]{0} parameter(1)
  %s.13 = f32[8]{0} sine(f32[8]{0} %p.11)
  ROOT %a.14 = f32[8]{0} add(f32[8]{0} %s.13, f32[8]{0} %q.12)
}

%outer.30 (p.31: f32[8]) -> f32[4,8] {
  %p.31 = f32[8]{0} parameter(0)
  %b.32 = f32[4,8]{1,0} broadcast(f32[8]{0} %p.31), dimensions={1}
  ROOT %n.33 = f32[4,8]{1,0} negate(f32[4,8]{1,0} %b.32)
}

ENTRY %main.15 (x.16: f32[8]) -> )" +
         root_shape + R"( {
  %x.16 = f32[8]{0} parameter(0)
  %f.17 = f32[8]{0} fusion(f32[8]{0} %x.16), kind=kLoop, calls=%producer.1
)" + consumers +
         "  ROOT %r.20 = " + root_shape + " " + root_expr + "\n}\n";
}

const std::string kCheapProducer = R"(  %two.3 = f32[] constant(2)
  %b.4 = f32[8]{0} broadcast(f32[] %two.3), dimensions={}
  ROOT %m.5 = f32[8]{0} multiply(f32[8]{0} %p.2, f32[8]{0} %b.4)
)";
const std::string kCostlyProducer = R"(  %e.3 = f32[8]{0} exponential(f32[8]{0} %p.2)
  ROOT %m.5 = f32[8]{0} negate(f32[8]{0} %e.3)
)";
const std::string kTwoConsumers =
    R"(  %f.18 = f32[8]{0} fusion(f32[8]{0} %f.17), kind=kLoop, calls=%neg.6
  %f.19 = f32[8]{0} fusion(f32[8]{0} %f.17, f32[8]{0} %x.16), kind=kLoop, calls=%sin.10
)";
const std::string kPair = "(f32[8]{0}, f32[8]{0})";
const std::string kTupleOfBoth = "tuple(f32[8]{0} %f.18, f32[8]{0} %f.19)";

TEST_CASE("fusion merger: a cheap loop fusion merges into both fusions reading it",
          "[passes][fusion]") {
  auto m = fused<FusionMerger>(merger_text(kCheapProducer, kTwoConsumers, kPair, kTupleOfBoth));
  INFO(hlo::to_string(*m));
  std::vector<Instruction*> fusions = entry_fusions(*m);
  REQUIRE(fusions.size() == 2);
  CHECK(ops_of(*fusions[0]) ==
        std::vector<std::string>{"constant", "broadcast", "multiply", "exponential", "negate"});
  CHECK(ops_of(*fusions[1]) ==
        std::vector<std::string>{"constant", "broadcast", "multiply", "sine", "add"});
  // Both read x directly; the second reads it once for both of its former operands.
  for (const Instruction* f : fusions) {
    CHECK(f->operands == std::vector<Instruction*>{find(*m, "x.16")});
    CHECK(f->attrs.get_string("kind") == "kLoop");
  }
  CHECK(m->entry()->root()->operands == fusions);
}

TEST_CASE("fusion merger: a costly producer merges only into one user reading it once",
          "[passes][fusion]") {
  SECTION("two users: it would run twice") {
    std::string text = merger_text(kCostlyProducer, kTwoConsumers, kPair, kTupleOfBoth);
    auto [changed, out] = run_pass<FusionMerger>(text);
    CHECK_FALSE(changed);
    CHECK(out == hlo::to_string(*hlo::parse_module(text)));
  }
  SECTION("one user reading each element once") {
    auto m = fused<FusionMerger>(merger_text(
        kCostlyProducer, "  %f.18 = f32[8]{0} fusion(f32[8]{0} %f.17), kind=kLoop, calls=%neg.6\n",
        "f32[8]{0}", "negate(f32[8]{0} %f.18)"));
    std::vector<Instruction*> fusions = entry_fusions(*m);
    REQUIRE(fusions.size() == 1);
    CHECK(ops_of(*fusions[0]) ==
          std::vector<std::string>{"exponential", "negate", "exponential", "negate"});
  }
  SECTION("one user repeating its elements through a broadcast") {
    auto [changed, out] = run_pass<FusionMerger>(merger_text(
        kCostlyProducer,
        "  %f.18 = f32[4,8]{1,0} fusion(f32[8]{0} %f.17), kind=kLoop, calls=%outer.30\n",
        "f32[4,8]{1,0}", "negate(f32[4,8]{1,0} %f.18)"));
    CHECK_FALSE(changed);
  }
  SECTION("a user that is not a fusion") {
    auto [changed, out] = run_pass<FusionMerger>(
        merger_text(kCheapProducer, "", "f32[8]{0}", "negate(f32[8]{0} %f.17)"));
    CHECK_FALSE(changed);
  }
}

// ---- multi-output fusion --------------------------------------------------------------------

// exp(x) and `second`, both reading x: f32[N].
std::string siblings_text(int n, const std::string& second = "sine(f32[N]{0} %x.2)") {
  std::string t = R"(HloModule m, entry_computation_layout={(f32[N]{0})->(f32[N]{0}, f32[N]{0})}

ENTRY %main.1 (x.2: f32[N]) -> (f32[N]{0}, f32[N]{0}) {
  %x.2 = f32[N]{0} parameter(0)
  %e.3 = f32[N]{0} exponential(f32[N]{0} %x.2)
  %s.4 = f32[N]{0} )" +
                  second + R"(
  ROOT %t.5 = (f32[N]{0}, f32[N]{0}) tuple(f32[N]{0} %e.3, f32[N]{0} %s.4)
}
)";
  for (std::size_t at; (at = t.find("[N]")) != std::string::npos;)
    t.replace(at, 3, "[" + std::to_string(n) + "]");
  return t;
}

TEST_CASE("multi-output fusion: siblings reading the same 1 KiB merge into one kernel",
          "[passes][fusion]") {
  static_assert(MultiOutputFusion::kMinSharedBytes == 1024);
  auto [changed, out] = run_pass<MultiOutputFusion>(siblings_text(256));
  CHECK(changed);
  CHECK(out ==
        R"(HloModule m, entry_computation_layout={(f32[256]{0})->(f32[256]{0}, f32[256]{0})}

%fused_computation.6 (param.7: f32[256]) -> (f32[256]{0}, f32[256]{0}) {
  %param.7 = f32[256]{0} parameter(0)
  %exponential.8 = f32[256]{0} exponential(f32[256]{0} %param.7)
  %sine.9 = f32[256]{0} sine(f32[256]{0} %param.7)
  ROOT %tuple.10 = (f32[256]{0}, f32[256]{0}) tuple(f32[256]{0} %exponential.8, f32[256]{0} %sine.9)
}

ENTRY %main.1 (x.2: f32[256]) -> (f32[256]{0}, f32[256]{0}) {
  %x.2 = f32[256]{0} parameter(0)
  %fusion.11 = (f32[256]{0}, f32[256]{0}) fusion(f32[256]{0} %x.2), kind=kLoop, calls=%fused_computation.6
  %get-tuple-element.12 = f32[256]{0} get-tuple-element((f32[256]{0}, f32[256]{0}) %fusion.11), index=0
  %get-tuple-element.13 = f32[256]{0} get-tuple-element((f32[256]{0}, f32[256]{0}) %fusion.11), index=1
  ROOT %t.5 = (f32[256]{0}, f32[256]{0}) tuple(f32[256]{0} %get-tuple-element.12, f32[256]{0} %get-tuple-element.13)
}
)");
}

TEST_CASE("multi-output fusion: siblings with a path between them, or sharing little, stay apart",
          "[passes][fusion]") {
  SECTION("the second reads the first") {
    std::string text = siblings_text(256, "add(f32[N]{0} %x.2, f32[N]{0} %e.3)");
    auto [changed, out] = run_pass<MultiOutputFusion>(text);
    CHECK_FALSE(changed);
    CHECK(out == text);
  }
  SECTION("1020 shared bytes") {
    std::string text = siblings_text(255);
    auto [changed, out] = run_pass<MultiOutputFusion>(text);
    CHECK_FALSE(changed);
    CHECK(out == text);
  }
}

TEST_CASE("multi-output fusion: a loop fusion also needed elsewhere joins its elementwise reader",
          "[passes][fusion]") {
  auto [changed, out] = run_pass<MultiOutputFusion>(
      R"(HloModule m, entry_computation_layout={(f32[8]{0})->(f32[8]{0}, f32[8]{0})}

%fused_computation.1 (p.2: f32[8]) -> f32[8] {
  %p.2 = f32[8]{0} parameter(0)
  %e.3 = f32[8]{0} exponential(f32[8]{0} %p.2)
  ROOT %n.4 = f32[8]{0} negate(f32[8]{0} %e.3)
}

%fused_computation.5 (p.6: f32[8]) -> f32[8] {
  %p.6 = f32[8]{0} parameter(0)
  %l.7 = f32[8]{0} log(f32[8]{0} %p.6)
  ROOT %a.8 = f32[8]{0} abs(f32[8]{0} %l.7)
}

ENTRY %main.9 (x.10: f32[8]) -> (f32[8]{0}, f32[8]{0}) {
  %x.10 = f32[8]{0} parameter(0)
  %f.11 = f32[8]{0} fusion(f32[8]{0} %x.10), kind=kLoop, calls=%fused_computation.1
  %f.12 = f32[8]{0} fusion(f32[8]{0} %f.11), kind=kLoop, calls=%fused_computation.5
  ROOT %t.13 = (f32[8]{0}, f32[8]{0}) tuple(f32[8]{0} %f.11, f32[8]{0} %f.12)
}
)");
  CHECK(changed);
  // The producer's root is written once (output 0) and read in registers by the consumer.
  CHECK(out == R"(HloModule m, entry_computation_layout={(f32[8]{0})->(f32[8]{0}, f32[8]{0})}

%fused_computation.1 (p.2: f32[8]) -> f32[8] {
  %p.2 = f32[8]{0} parameter(0)
  %e.3 = f32[8]{0} exponential(f32[8]{0} %p.2)
  ROOT %n.4 = f32[8]{0} negate(f32[8]{0} %e.3)
}

%fused_computation.5 (p.6: f32[8]) -> f32[8] {
  %p.6 = f32[8]{0} parameter(0)
  %l.7 = f32[8]{0} log(f32[8]{0} %p.6)
  ROOT %a.8 = f32[8]{0} abs(f32[8]{0} %l.7)
}

%fused_computation.14 (param.15: f32[8]) -> (f32[8]{0}, f32[8]{0}) {
  %param.15 = f32[8]{0} parameter(0)
  %exponential.16 = f32[8]{0} exponential(f32[8]{0} %param.15)
  %negate.17 = f32[8]{0} negate(f32[8]{0} %exponential.16)
  %log.18 = f32[8]{0} log(f32[8]{0} %negate.17)
  %abs.19 = f32[8]{0} abs(f32[8]{0} %log.18)
  ROOT %tuple.20 = (f32[8]{0}, f32[8]{0}) tuple(f32[8]{0} %negate.17, f32[8]{0} %abs.19)
}

ENTRY %main.9 (x.10: f32[8]) -> (f32[8]{0}, f32[8]{0}) {
  %x.10 = f32[8]{0} parameter(0)
  %fusion.21 = (f32[8]{0}, f32[8]{0}) fusion(f32[8]{0} %x.10), kind=kLoop, calls=%fused_computation.14
  %get-tuple-element.22 = f32[8]{0} get-tuple-element((f32[8]{0}, f32[8]{0}) %fusion.21), index=0
  %get-tuple-element.23 = f32[8]{0} get-tuple-element((f32[8]{0}, f32[8]{0}) %fusion.21), index=1
  ROOT %t.13 = (f32[8]{0}, f32[8]{0}) tuple(f32[8]{0} %get-tuple-element.22, f32[8]{0} %get-tuple-element.23)
}
)");
}

// ---- horizontal fusion ----------------------------------------------------------------------

// exp(x: f32[N]) and sine(y: f32[2,3]), independent.
std::string independent_text(int n) {
  std::string t =
      R"(HloModule m, entry_computation_layout={(f32[N]{0}, f32[2,3]{1,0})->(f32[N]{0}, f32[2,3]{1,0})}

ENTRY %main.1 (x.2: f32[N], y.3: f32[2,3]) -> (f32[N]{0}, f32[2,3]{1,0}) {
  %x.2 = f32[N]{0} parameter(0)
  %y.3 = f32[2,3]{1,0} parameter(1)
  %e.4 = f32[N]{0} exponential(f32[N]{0} %x.2)
  %s.5 = f32[2,3]{1,0} sine(f32[2,3]{1,0} %y.3)
  ROOT %t.6 = (f32[N]{0}, f32[2,3]{1,0}) tuple(f32[N]{0} %e.4, f32[2,3]{1,0} %s.5)
}
)";
  for (std::size_t at; (at = t.find("[N]")) != std::string::npos;)
    t.replace(at, 3, "[" + std::to_string(n) + "]");
  return t;
}

TEST_CASE("horizontal fusion: two small independent kernels share one launch", "[passes][fusion]") {
  auto [changed, out] = run_pass<HorizontalFusion>(independent_text(8));
  CHECK(changed);
  CHECK(
      out ==
      R"(HloModule m, entry_computation_layout={(f32[8]{0}, f32[2,3]{1,0})->(f32[8]{0}, f32[2,3]{1,0})}

%fused_computation.7 (param.8: f32[8], param.10: f32[2,3]) -> (f32[8]{0}, f32[2,3]{1,0}) {
  %param.8 = f32[8]{0} parameter(0)
  %exponential.9 = f32[8]{0} exponential(f32[8]{0} %param.8)
  %param.10 = f32[2,3]{1,0} parameter(1)
  %sine.11 = f32[2,3]{1,0} sine(f32[2,3]{1,0} %param.10)
  ROOT %tuple.12 = (f32[8]{0}, f32[2,3]{1,0}) tuple(f32[8]{0} %exponential.9, f32[2,3]{1,0} %sine.11)
}

ENTRY %main.1 (x.2: f32[8], y.3: f32[2,3]) -> (f32[8]{0}, f32[2,3]{1,0}) {
  %x.2 = f32[8]{0} parameter(0)
  %y.3 = f32[2,3]{1,0} parameter(1)
  %fusion.13 = (f32[8]{0}, f32[2,3]{1,0}) fusion(f32[8]{0} %x.2, f32[2,3]{1,0} %y.3), kind=kLoop, calls=%fused_computation.7
  %get-tuple-element.14 = f32[8]{0} get-tuple-element((f32[8]{0}, f32[2,3]{1,0}) %fusion.13), index=0
  %get-tuple-element.15 = f32[2,3]{1,0} get-tuple-element((f32[8]{0}, f32[2,3]{1,0}) %fusion.13), index=1
  ROOT %t.6 = (f32[8]{0}, f32[2,3]{1,0}) tuple(f32[8]{0} %get-tuple-element.14, f32[2,3]{1,0} %get-tuple-element.15)
}
)");
}

TEST_CASE("horizontal fusion: a dependent pair or a big kernel is left alone", "[passes][fusion]") {
  static_assert(HorizontalFusion::kMaxBytes == 16 << 10);
  SECTION("dependent") {
    std::string text = siblings_text(8, "sine(f32[N]{0} %e.3)");
    auto [changed, out] = run_pass<HorizontalFusion>(text);
    CHECK_FALSE(changed);
    CHECK(out == text);
  }
  SECTION("16 KiB + 4 bytes") {
    std::string text = independent_text(4097);
    auto [changed, out] = run_pass<HorizontalFusion>(text);
    CHECK_FALSE(changed);
    CHECK(out == text);
  }
  SECTION("16 KiB") {
    auto m = fused<HorizontalFusion>(independent_text(4096));
    CHECK(entry_fusions(*m).size() == 1);
  }
}

TEST_CASE("horizontal fusion: a batch holds at most kMaxKernels kernels", "[passes][fusion]") {
  static_assert(HorizontalFusion::kMaxKernels == 16);
  // 17 negates of x: one batch of 16, and one kernel left over.
  std::string body, tuple_shape, tuple_args;
  for (int k = 0; k < 17; ++k) {
    std::string name = "%n." + std::to_string(3 + k);
    body += "  " + name + " = f32[8]{0} negate(f32[8]{0} %x.2)\n";
    tuple_shape += std::string(k ? ", " : "") + "f32[8]{0}";
    tuple_args += std::string(k ? ", " : "") + "f32[8]{0} " + name;
  }
  auto m =
      fused<HorizontalFusion>("HloModule m\n\nENTRY %main.1 (x.2: f32[8]) -> (" + tuple_shape +
                              ") {\n  %x.2 = f32[8]{0} parameter(0)\n" + body + "  ROOT %t.30 = (" +
                              tuple_shape + ") tuple(" + tuple_args + ")\n}\n");
  std::vector<Instruction*> fusions = entry_fusions(*m);
  REQUIRE(fusions.size() == 1);
  CHECK(fusions[0]->shape.tuple_shapes.size() == 16);
  CHECK(ops_of(*fusions[0]).size() == 17);  // 16 negates and the tuple
  CHECK(count_op(*m, "negate") == 17);
}

// ---- splat constants ------------------------------------------------------------------------

TEST_CASE("splat constants: a uniform array becomes a broadcast scalar; others stay",
          "[passes][fusion]") {
  // {0, -0} differ in their bits, and a 1-element array is no splat worth a broadcast.
  auto [changed, out] = run_pass<SplatConstants>(
      R"(HloModule m, entry_computation_layout={(f32[2,2]{1,0})->(f32[2,2]{1,0}, f32[2]{0}, f32[1]{0}, s32[3]{0})}

ENTRY %main.1 (x.2: f32[2,2]) -> (f32[2,2]{1,0}, f32[2]{0}, f32[1]{0}, s32[3]{0}) {
  %x.2 = f32[2,2]{1,0} parameter(0)
  %c.3 = f32[2,2]{1,0} constant({ { 7, 7 }, { 7, 7 } })
  %a.4 = f32[2,2]{1,0} add(f32[2,2]{1,0} %x.2, f32[2,2]{1,0} %c.3)
  %c.5 = f32[2]{0} constant({0, -0})
  %c.6 = f32[1]{0} constant({5})
  %c.7 = s32[3]{0} constant({1, 2, 1})
  ROOT %t.8 = (f32[2,2]{1,0}, f32[2]{0}, f32[1]{0}, s32[3]{0}) tuple(f32[2,2]{1,0} %a.4, f32[2]{0} %c.5, f32[1]{0} %c.6, s32[3]{0} %c.7)
}
)");
  CHECK(changed);
  CHECK(
      out ==
      R"(HloModule m, entry_computation_layout={(f32[2,2]{1,0})->(f32[2,2]{1,0}, f32[2]{0}, f32[1]{0}, s32[3]{0})}

ENTRY %main.1 (x.2: f32[2,2]) -> (f32[2,2]{1,0}, f32[2]{0}, f32[1]{0}, s32[3]{0}) {
  %x.2 = f32[2,2]{1,0} parameter(0)
  %constant.9 = f32[] constant(7)
  %broadcast.10 = f32[2,2]{1,0} broadcast(f32[] %constant.9), dimensions={}
  %a.4 = f32[2,2]{1,0} add(f32[2,2]{1,0} %x.2, f32[2,2]{1,0} %broadcast.10)
  %c.5 = f32[2]{0} constant({0, -0})
  %c.6 = f32[1]{0} constant({5})
  %c.7 = s32[3]{0} constant({1, 2, 1})
  ROOT %t.8 = (f32[2,2]{1,0}, f32[2]{0}, f32[1]{0}, s32[3]{0}) tuple(f32[2,2]{1,0} %a.4, f32[2]{0} %c.5, f32[1]{0} %c.6, s32[3]{0} %c.7)
}
)");
}

// ---- the verifier on fusions ----------------------------------------------------------------

TEST_CASE("HLO verifier: a fusion's kind, parameters and root must match it", "[passes][fusion]") {
  const std::string text = R"(HloModule m

%fused_computation.1 (p.2: f32[8], q.3: f32[8]) -> f32[8] {
  %p.2 = f32[8]{0} parameter(0)
  %q.3 = f32[8]{0} parameter(1)
  ROOT %a.4 = f32[8]{0} add(f32[8]{0} %p.2, f32[8]{0} %q.3)
}

%scalar.10 (p.11: f32[8], q.12: f32[8]) -> f32[] {
  %p.11 = f32[8]{0} parameter(0)
  %q.12 = f32[8]{0} parameter(1)
  ROOT %z.13 = f32[] constant(0)
}

ENTRY %main.5 (x.6: f32[8], y.7: f32[4]) -> f32[8] {
  %x.6 = f32[8]{0} parameter(0)
  %y.7 = f32[4]{0} parameter(1)
  ROOT %f.8 = f32[8]{0} fusion(f32[8]{0} %x.6, f32[8]{0} %x.6), kind=kLoop, calls=%fused_computation.1
}
)";
  hlo::verify(*hlo::parse_module(text));
  auto verify_error = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return error_of<CompileError>([&] { hlo::verify(*hlo::parse_module(t)); });
  };
  CHECK(verify_error("fusion(f32[8]{0} %x.6, f32[8]{0} %x.6)", "fusion(f32[8]{0} %x.6)") ==
        "HLO verifier: f.8: %fused_computation.1 takes 2 parameter(s) for 1 operand(s)");
  CHECK(verify_error("f32[8]{0} %x.6)", "f32[4]{0} %y.7)") ==
        "HLO verifier: f.8: parameter 1 of %fused_computation.1 must be f32[4]{0}");
  CHECK(verify_error("calls=%fused_computation.1", "calls=%scalar.10") ==
        "HLO verifier: f.8: the root of %scalar.10 must be f32[8]{0}");
  CHECK(verify_error("kind=kLoop", "kind=kFoo") == "HLO verifier: f.8: unknown fusion kind kFoo");
  CHECK(verify_error("kind=kLoop, ", "") ==
        "HLO verifier: f.8: fusion needs kind=kLoop|kInput|kOutput");
}

// ---- the evaluator on fusions ---------------------------------------------------------------

TEST_CASE("evaluator: a fused softmax has the values of the unfused one", "[passes][fusion]") {
  // Rows {0, 1, 2} and {5, 5, 5}: e^k / (1 + e + e²) and 1/3.
  Array x = literal<float>({0, 1, 2, 5, 5, 5}, {2, 3});
  std::string text = kSoftmax;
  for (std::size_t at; (at = text.find("ROWS,8")) != std::string::npos;) text.replace(at, 6, "2,3");
  for (std::size_t at; (at = text.find("ROWS")) != std::string::npos;) text.replace(at, 4, "2");
  double s = 1 + std::exp(1.0) + std::exp(2.0);
  std::vector<double> want = {1 / s, std::exp(1.0) / s, std::exp(2.0) / s, 1 / 3., 1 / 3., 1 / 3.};

  auto unfused = hlo::parse_module(text);
  hlo::verify(*unfused);
  auto m = fused<InstructionFusion>(text);
  REQUIRE(entry_fusions(*m).size() == 1);
  std::vector<Array> args{x};
  for (const hlo::Module* module : {unfused.get(), m.get()}) {
    std::vector<double> got = hlo::evaluate(*module->entry(), args).to_vector<double>();
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < want.size(); ++k) CHECK(got[k] == Approx(want[k]).epsilon(1e-6));
  }
}

// ---- in-place reads -------------------------------------------------------------------------

// Output 1 of two_outputs() when the test is about output 0: it reads only q.
const std::string kNegateQ = "\n  %o1 = f32[4,4]{1,0} negate(f32[4,4]{1,0} %q)";

// A two-output fusion over p: f32[4,4], q: f32[4,4] and v: f32[4], whose `body` computes
// output 0 as %out and output 1 as %o1.
std::unique_ptr<hlo::Module> two_outputs(const std::string& body) {
  auto m = hlo::parse_module(R"(HloModule m

%add.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  ROOT %add.4 = f32[] add(f32[] %a.2, f32[] %b.3)
}

%fused_computation.5 (p: f32[4,4], q: f32[4,4], v: f32[4]) -> (f32[4,4]{1,0}, f32[4,4]{1,0}) {
  %p = f32[4,4]{1,0} parameter(0)
  %q = f32[4,4]{1,0} parameter(1)
  %v = f32[4]{0} parameter(2))" +
                             body + R"(
  ROOT %t = (f32[4,4]{1,0}, f32[4,4]{1,0}) tuple(f32[4,4]{1,0} %out, f32[4,4]{1,0} %o1)
}

ENTRY %main.6 (x.7: f32[4,4], y.8: f32[4,4], z.9: f32[4]) -> (f32[4,4]{1,0}, f32[4,4]{1,0}) {
  %x.7 = f32[4,4]{1,0} parameter(0)
  %y.8 = f32[4,4]{1,0} parameter(1)
  %z.9 = f32[4]{0} parameter(2)
  ROOT %f.10 = (f32[4,4]{1,0}, f32[4,4]{1,0}) fusion(f32[4,4]{1,0} %x.7, f32[4,4]{1,0} %y.8, f32[4]{0} %z.9), kind=kLoop, calls=%fused_computation.5
}
)");
  hlo::verify(*m);
  return m;
}

bool out0_reads_p_only_in_place(const std::string& body, const std::string& o1 = kNegateQ) {
  auto m = two_outputs(body + o1);
  INFO(body);
  return hlo::reads_only_at_output_index(*m->entry()->root(), 0, 0);
}

TEST_CASE("reads_only_at_output_index: elementwise chains yes; broadcast, reduce, transpose no",
          "[passes][fusion]") {
  CHECK(out0_reads_p_only_in_place(R"(
  %e = f32[4,4]{1,0} exponential(f32[4,4]{1,0} %p)
  %m = f32[4,4]{1,0} multiply(f32[4,4]{1,0} %e, f32[4,4]{1,0} %p)
  %out = f32[4,4]{1,0} add(f32[4,4]{1,0} %m, f32[4,4]{1,0} %q))"));
  // Same shapes, other indices: a broadcast mapping dims {1,0}, and a transpose.
  CHECK_FALSE(out0_reads_p_only_in_place(R"(
  %b = f32[4,4]{1,0} broadcast(f32[4,4]{1,0} %p), dimensions={1,0}
  %out = f32[4,4]{1,0} add(f32[4,4]{1,0} %b, f32[4,4]{1,0} %p))"));
  CHECK_FALSE(out0_reads_p_only_in_place(R"(
  %tr = f32[4,4]{1,0} transpose(f32[4,4]{1,0} %p), dimensions={1,0}
  %out = f32[4,4]{1,0} add(f32[4,4]{1,0} %tr, f32[4,4]{1,0} %p))"));
  CHECK_FALSE(out0_reads_p_only_in_place(R"(
  %zero = f32[] constant(0)
  %r = f32[4]{0} reduce(f32[4,4]{1,0} %p, f32[] %zero), dimensions={1}, to_apply=%add.1
  %b = f32[4,4]{1,0} broadcast(f32[4]{0} %r), dimensions={0}
  %out = f32[4,4]{1,0} subtract(f32[4,4]{1,0} %p, f32[4,4]{1,0} %b))"));
  // Output 1 reading p too.
  CHECK_FALSE(out0_reads_p_only_in_place(R"(
  %out = f32[4,4]{1,0} exponential(f32[4,4]{1,0} %p))",
                                         R"(
  %o1 = f32[4,4]{1,0} add(f32[4,4]{1,0} %p, f32[4,4]{1,0} %q))"));
  // Operand 2 (v: f32[4]) is broadcast into output 0: another shape, never in place.
  auto m = two_outputs(R"(
  %b = f32[4,4]{1,0} broadcast(f32[4]{0} %v), dimensions={0}
  %out = f32[4,4]{1,0} add(f32[4,4]{1,0} %b, f32[4,4]{1,0} %p))" +
                       kNegateQ);
  CHECK(hlo::reads_only_at_output_index(*m->entry()->root(), 0, 0));
  CHECK_FALSE(hlo::reads_only_at_output_index(*m->entry()->root(), 2, 0));
  // q feeds only output 1.
  CHECK(hlo::reads_only_at_output_index(*m->entry()->root(), 1, 1));
  CHECK_FALSE(hlo::reads_only_at_output_index(*m->entry()->root(), 1, 0));
}

TEST_CASE("reads_only_at_output_index: an array-rooted elementwise fusion", "[passes][fusion]") {
  auto m = hlo::parse_module(R"(HloModule m

%fused_computation.1 (p.2: f32[8], q.3: f32[]) -> f32[8] {
  %p.2 = f32[8]{0} parameter(0)
  %q.3 = f32[] parameter(1)
  %b.4 = f32[8]{0} broadcast(f32[] %q.3), dimensions={}
  %e.5 = f32[8]{0} exponential(f32[8]{0} %p.2)
  %m.6 = f32[8]{0} multiply(f32[8]{0} %e.5, f32[8]{0} %b.4)
  ROOT %a.7 = f32[8]{0} add(f32[8]{0} %m.6, f32[8]{0} %p.2)
}

ENTRY %main.8 (x.9: f32[8], y.10: f32[]) -> f32[8] {
  %x.9 = f32[8]{0} parameter(0)
  %y.10 = f32[] parameter(1)
  ROOT %f.11 = f32[8]{0} fusion(f32[8]{0} %x.9, f32[] %y.10), kind=kLoop, calls=%fused_computation.1
}
)");
  CHECK(hlo::reads_only_at_output_index(*m->entry()->root(), 0, 0));
  CHECK_FALSE(hlo::reads_only_at_output_index(*m->entry()->root(), 1, 0));
}

TEST_CASE("reads_only_at_output_index: an unfused elementwise instruction", "[passes][fusion]") {
  auto m = hlo::parse_module(R"(HloModule m

ENTRY %main.1 (x.2: f32[4,4], y.3: f32[4]) -> (f32[4,4]{1,0}, f32[4,4]{1,0}) {
  %x.2 = f32[4,4]{1,0} parameter(0)
  %y.3 = f32[4]{0} parameter(1)
  %e.4 = f32[4,4]{1,0} exponential(f32[4,4]{1,0} %x.2)
  %b.5 = f32[4,4]{1,0} broadcast(f32[4]{0} %y.3), dimensions={0}
  ROOT %t.6 = (f32[4,4]{1,0}, f32[4,4]{1,0}) tuple(f32[4,4]{1,0} %e.4, f32[4,4]{1,0} %b.5)
}
)");
  CHECK(hlo::reads_only_at_output_index(*find(*m, "e.4"), 0, 0));
  CHECK_FALSE(hlo::reads_only_at_output_index(*find(*m, "b.5"), 0, 0));
}

TEST_CASE("reads_only_at_output_index: not when another output reads the value written",
          "[passes][fusion]") {
  // Output 1 = abs(out): the kernel recomputes out from p for it after storing output 0, so
  // p must not be overwritten by output 0.
  CHECK_FALSE(out0_reads_p_only_in_place(R"(
  %out = f32[4,4]{1,0} exponential(f32[4,4]{1,0} %p))",
                                         R"(
  %o1 = f32[4,4]{1,0} abs(f32[4,4]{1,0} %out))"));
}

}  // namespace
}  // namespace jx::passes
