// The fusion passes after instruction fusion (test_instruction_fusion.cpp) and splat constants:
// HLO text in, HLO text (or its structure) out, one rule per test; the verifier's fusion rules;
// the evaluator on fusions; and which fusion operands may be overwritten in place.
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
#include "passes/fusion_testing.hpp"
#include "passes/splat_constants.hpp"

namespace jx::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::testing::error_of;
using hlo::testing::literal;
using hlo::testing::run_pass;
using testing::count_op;
using testing::entry_fusions;
using testing::find;
using testing::fused;
using testing::kSoftmax;
using testing::ops_of;

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

// The costly producer read by one fusion whose body is `n` diamonds, x' = sin(x) + cos(x): 2^n
// paths lead from its parameter to its root. Its body holds 1 + 3n instructions.
std::string diamonds_text(int n) {
  std::string body = "%diamonds.40 (p.41: f32[8]) -> f32[8] {\n  %p.41 = f32[8]{0} parameter(0)\n";
  std::string x = "%p.41";
  for (int k = 0, id = 42; k < n; ++k) {
    std::string s = "%s." + std::to_string(id++), c = "%c." + std::to_string(id++);
    std::string a = "%a." + std::to_string(id++);
    body += "  " + s + " = f32[8]{0} sine(f32[8]{0} " + x + ")\n";
    body += "  " + c + " = f32[8]{0} cosine(f32[8]{0} " + x + ")\n";
    body += (k == n - 1 ? "  ROOT " : "  ") + a + " = f32[8]{0} add(f32[8]{0} " + s +
            ", f32[8]{0} " + c + ")\n";
    x = a;
  }
  std::string text =
      merger_text(kCostlyProducer,
                  "  %f.18 = f32[8]{0} fusion(f32[8]{0} %f.17), kind=kLoop, calls=%diamonds.40\n",
                  "f32[8]{0}", "negate(f32[8]{0} %f.18)");
  text.insert(text.find("%producer.1"), body + "}\n\n");
  return text;
}

TEST_CASE("fusion merger: a costly producer merges into a user whose body reuses every value",
          "[passes][fusion]") {
  // Whether the user reads the producer once is judged on each value once, not on each path.
  auto m = fused<FusionMerger>(diamonds_text(64));
  std::vector<Instruction*> fusions = entry_fusions(*m);
  REQUIRE(fusions.size() == 1);
  std::vector<std::string> ops = ops_of(*fusions[0]);
  CHECK(ops.size() == 2 + 3 * 64);
  CHECK(std::count(ops.begin(), ops.end(), "exponential") == 1);
  CHECK(std::count(ops.begin(), ops.end(), "sine") == 64);
}

TEST_CASE("fusion merger: a merged body holds at most kMaxMergedSize instructions",
          "[passes][fusion]") {
  // The producer's 3 instructions and the user's 1 + 3n: 1024 at n = 340, 1027 at 341.
  static_assert(FusionMerger::kMaxMergedSize == 1024);
  auto m = fused<FusionMerger>(diamonds_text(340));
  std::vector<Instruction*> fusions = entry_fusions(*m);
  REQUIRE(fusions.size() == 1);
  CHECK(ops_of(*fusions[0]).size() == 2 + 3 * 340);
  auto [changed, out] = run_pass<FusionMerger>(diamonds_text(341));
  CHECK_FALSE(changed);
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

TEST_CASE("multi-output fusion: a third sibling joins a multi-output fusion of its shape",
          "[passes][fusion]") {
  // Adam's three updates read the same gradient: the first two merge, then the third joins.
  const std::string text = R"(HloModule m

ENTRY %main.1 (x.2: f32[256], y.3: f32[16]) -> (f32[256]{0}, f32[256]{0}, f32[256]{0}, f32[16]{0}) {
  %x.2 = f32[256]{0} parameter(0)
  %y.3 = f32[16]{0} parameter(1)
  %e.4 = f32[256]{0} exponential(f32[256]{0} %x.2)
  %s.5 = f32[256]{0} sine(f32[256]{0} %x.2)
  %c.6 = f32[256]{0} cosine(f32[256]{0} %x.2)
  %n.7 = f32[16]{0} negate(f32[16]{0} %y.3)
  ROOT %t.8 = (f32[256]{0}, f32[256]{0}, f32[256]{0}, f32[16]{0}) tuple(f32[256]{0} %e.4, f32[256]{0} %s.5, f32[256]{0} %c.6, f32[16]{0} %n.7)
}
)";
  auto [changed, out] = run_pass<MultiOutputFusion>(text);
  CHECK(changed);
  INFO(out);
  auto m = hlo::parse_module(out);
  const hlo::Instruction* fusion = nullptr;
  for (const hlo::Instruction* i : m->entry()->instructions())
    if (i->opcode == hlo::Opcode::kFusion) {
      CHECK(fusion == nullptr);  // one kernel for the three
      fusion = i;
    }
  REQUIRE(fusion != nullptr);
  CHECK(fusion->shape.tuple_shapes.size() == 3);
  CHECK(fusion->operands.size() == 1);                              // x, read once
  CHECK(out.find("negate(f32[16]{0} %y.3)") != std::string::npos);  // another shape: apart
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

TEST_CASE("horizontal fusion: under a read bound, a kernel reading more is left alone",
          "[passes][fusion]") {
  // exp reads 32 bytes, sine 24: a bound of 31 bytes leaves exp alone, 32 batches both.
  std::string text = independent_text(8);
  auto [changed, out] = run_pass<HorizontalFusion>(text, nullptr, 31);
  CHECK_FALSE(changed);
  CHECK(out == text);
  CHECK(run_pass<HorizontalFusion>(text, nullptr, 32).first);
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

// A two-output fusion of `kind` over p: f32[4,4], q: f32[4,4] and v: f32[4], whose `body`
// computes output 0 as %out and output 1 as %o1.
std::unique_ptr<hlo::Module> two_outputs(const std::string& body,
                                         const std::string& kind = "kLoop") {
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
  ROOT %f.10 = (f32[4,4]{1,0}, f32[4,4]{1,0}) fusion(f32[4,4]{1,0} %x.7, f32[4,4]{1,0} %y.8, f32[4]{0} %z.9), kind=)" +
                             kind +
                             R"(, calls=%fused_computation.5
}
)");
  hlo::verify(*m);
  return m;
}

bool out0_reads_p_only_in_place(const std::string& body, const std::string& o1 = kNegateQ,
                                const std::string& kind = "kLoop") {
  auto m = two_outputs(body + o1, kind);
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
  // Output 1 reading p too: a loop kernel loads p for both before storing either; other kernels
  // may store output 0 before output 1 reads p.
  const std::string o1_reads_p = "\n  %o1 = f32[4,4]{1,0} add(f32[4,4]{1,0} %p, f32[4,4]{1,0} %q)";
  const std::string exp_p = "\n  %out = f32[4,4]{1,0} exponential(f32[4,4]{1,0} %p)";
  CHECK(out0_reads_p_only_in_place(exp_p, o1_reads_p));
  CHECK_FALSE(out0_reads_p_only_in_place(exp_p, o1_reads_p, "kInput"));
  // Operand 2 (v: f32[4]) is broadcast into output 0: another shape, never in place.
  auto m = two_outputs(R"(
  %b = f32[4,4]{1,0} broadcast(f32[4]{0} %v), dimensions={0}
  %out = f32[4,4]{1,0} add(f32[4,4]{1,0} %b, f32[4,4]{1,0} %p))" +
                       kNegateQ);
  CHECK(hlo::reads_only_at_output_index(*m->entry()->root(), 0, 0));
  CHECK_FALSE(hlo::reads_only_at_output_index(*m->entry()->root(), 2, 0));
  // q feeds only output 1: output 0 may overwrite it only where both are stored together.
  CHECK(hlo::reads_only_at_output_index(*m->entry()->root(), 1, 1));
  CHECK(hlo::reads_only_at_output_index(*m->entry()->root(), 1, 0));
  auto input = two_outputs(R"(
  %out = f32[4,4]{1,0} add(f32[4,4]{1,0} %p, f32[4,4]{1,0} %p))" +
                               kNegateQ,
                           "kInput");
  CHECK(hlo::reads_only_at_output_index(*input->entry()->root(), 1, 1));
  CHECK_FALSE(hlo::reads_only_at_output_index(*input->entry()->root(), 1, 0));
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

TEST_CASE("reads_only_at_output_index: another output reading the value written",
          "[passes][fusion]") {
  // Output 1 = abs(out): a loop kernel computes it from p before storing output 0; a kernel
  // storing outputs at different times would recompute out from an overwritten p.
  const std::string exp_p = "\n  %out = f32[4,4]{1,0} exponential(f32[4,4]{1,0} %p)";
  const std::string abs_out = "\n  %o1 = f32[4,4]{1,0} abs(f32[4,4]{1,0} %out)";
  CHECK(out0_reads_p_only_in_place(exp_p, abs_out));
  CHECK_FALSE(out0_reads_p_only_in_place(exp_p, abs_out, "kInput"));
}

}  // namespace
}  // namespace jx::passes
