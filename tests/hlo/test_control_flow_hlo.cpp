// HLO while and conditional: the text form round trips (called computations included), the
// verifier checks their signatures, the evaluator runs them (a sum and a factorial by while, a
// three-way conditional with out-of-range indices), and the analyses take them.
#include <catch2/catch.hpp>

#include "hlo/builder.hpp"
#include "hlo/cost_analysis.hpp"
#include "hlo/dot_graph.hpp"
#include "hlo/evaluator.hpp"
#include "hlo/hlo_testing.hpp"
#include "hlo/ir.hpp"

namespace jx::hlo {
namespace {

using testing::error_of;
using testing::literal;

HloShape scalar(DType d) { return HloShape::array(d, {}); }

// sum of i for i in [0, n): carry (i, acc).
constexpr const char* kSumLoop = R"(HloModule sum_loop, entry_computation_layout={(s32[])->s32[]}

%cond (ci: s32[], cacc: s32[], cn: s32[]) -> pred[] {
  %ci = s32[] parameter(0)
  %cacc = s32[] parameter(1)
  %cn = s32[] parameter(2)
  ROOT %lt = pred[] compare(s32[] %ci, s32[] %cn), direction=LT
}

%body (bi: s32[], bacc: s32[], bn: s32[]) -> (s32[], s32[], s32[]) {
  %bi = s32[] parameter(0)
  %bacc = s32[] parameter(1)
  %bn = s32[] parameter(2)
  %one = s32[] constant(1)
  %next = s32[] add(s32[] %bi, s32[] %one)
  %sum = s32[] add(s32[] %bacc, s32[] %bi)
  ROOT %carry = (s32[], s32[], s32[]) tuple(s32[] %next, s32[] %sum, s32[] %bn)
}

ENTRY %main (n: s32[]) -> s32[] {
  %n = s32[] parameter(0)
  %zero = s32[] constant(0)
  %loop = (s32[], s32[], s32[]) while(s32[] %zero, s32[] %zero, s32[] %n), condition=%cond, body=%body
  ROOT %total = s32[] get-tuple-element((s32[], s32[], s32[]) %loop), index=1
}
)";

// Branch 0: (x + 1, 10), branch 1: (x * x, 11), branch 2: (-x, 12).
constexpr const char* kThreeWay = R"(HloModule three_way

%b0 (x0: f32[3]) -> (f32[3], s32[]) {
  %x0 = f32[3]{0} parameter(0)
  %one = f32[] constant(1)
  %ones = f32[3]{0} broadcast(f32[] %one), dimensions={}
  %inc = f32[3]{0} add(f32[3]{0} %x0, f32[3]{0} %ones)
  %tag0 = s32[] constant(10)
  ROOT %r0 = (f32[3]{0}, s32[]) tuple(f32[3]{0} %inc, s32[] %tag0)
}

%b1 (x1: f32[3]) -> (f32[3], s32[]) {
  %x1 = f32[3]{0} parameter(0)
  %sq = f32[3]{0} multiply(f32[3]{0} %x1, f32[3]{0} %x1)
  %tag1 = s32[] constant(11)
  ROOT %r1 = (f32[3]{0}, s32[]) tuple(f32[3]{0} %sq, s32[] %tag1)
}

%b2 (x2: f32[3]) -> (f32[3], s32[]) {
  %x2 = f32[3]{0} parameter(0)
  %neg = f32[3]{0} negate(f32[3]{0} %x2)
  %tag2 = s32[] constant(12)
  ROOT %r2 = (f32[3]{0}, s32[]) tuple(f32[3]{0} %neg, s32[] %tag2)
}

ENTRY %main (k: s32[], x: f32[3]) -> (f32[3], s32[]) {
  %k = s32[] parameter(0)
  %x = f32[3]{0} parameter(1)
  %pick = (f32[3]{0}, s32[]) conditional(s32[] %k, f32[3]{0} %x), branch_computations={%b0, %b1, %b2}
  %y = f32[3]{0} get-tuple-element((f32[3]{0}, s32[]) %pick), index=0
  %tag = s32[] get-tuple-element((f32[3]{0}, s32[]) %pick), index=1
  ROOT %out = (f32[3]{0}, s32[]) tuple(f32[3]{0} %y, s32[] %tag)
}
)";

std::string verify_error(std::string_view text) {
  return error_of<CompileError>([&] { verify(*parse_module(text)); });
}

// `text` with the first occurrence of each `from` replaced by its `to` (each must occur).
std::string replaced(std::string text,
                     std::initializer_list<std::pair<std::string_view, std::string_view>> edits) {
  for (auto [from, to] : edits) {
    auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  }
  return text;
}

TEST_CASE("HLO while and conditional: text round trip", "[hlo][control_flow]") {
  for (const char* text : {kSumLoop, kThreeWay}) {
    auto m = parse_module(text);
    verify(*m);
    std::string printed = to_string(*m);
    INFO(printed);
    auto again = parse_module(printed);
    verify(*again);
    CHECK(to_string(*again) == printed);
  }
  std::string printed = to_string(*parse_module(kSumLoop));
  CHECK(printed.find("%loop = (s32[], s32[], s32[]) while(s32[] %zero, s32[] %zero, s32[] %n), "
                     "condition=%cond, body=%body") != std::string::npos);
  CHECK(to_string(*parse_module(kThreeWay))
            .find("conditional(s32[] %k, f32[3]{0} %x), branch_computations={%b0, %b1, %b2}") !=
        std::string::npos);
}

TEST_CASE("HLO Builder: while_loop, conditional and get_tuple_element", "[hlo][control_flow]") {
  Module m("built");
  Computation* cond = m.add_computation("cond");
  Builder cb(cond);
  Instruction* c0 = cb.parameter(0, scalar(int32));
  cond->set_root(cb.compare(c0, cb.constant(literal<std::int32_t>({5})), "LT"));
  Computation* body = m.add_computation("body");
  Builder bb(body);
  Instruction* b0 = bb.parameter(0, scalar(int32));
  body->set_root(bb.tuple({bb.binary(Opcode::kAdd, b0, bb.constant(literal<std::int32_t>({2})))}));
  Computation* branch = m.add_computation("branch");
  Builder rb(branch);
  branch->set_root(rb.tuple({rb.parameter(0, scalar(int32))}));

  Computation* entry = m.add_computation("main", true);
  Builder b(entry);
  Instruction* x = b.parameter(0, scalar(int32));
  Instruction* loop = b.while_loop({x}, cond, body);
  Instruction* pick = b.conditional(x, {b.get_tuple_element(loop, 0)}, {branch});
  entry->set_root(b.get_tuple_element(pick, 0));
  verify(m);
  CHECK(loop->shape == HloShape::tuple({scalar(int32)}));
  CHECK(pick->shape == HloShape::tuple({scalar(int32)}));
  std::string text = to_string(m);
  CHECK(to_string(*parse_module(text)) == text);
  Array seven = literal<std::int32_t>({7});
  CHECK(evaluate(*entry, std::span<const Array>(&seven, 1)).item<std::int32_t>() == 7);
  Array one = literal<std::int32_t>({1});
  CHECK(evaluate(*entry, std::span<const Array>(&one, 1)).item<std::int32_t>() == 5);
}

TEST_CASE("HLO verifier: while and conditional signatures", "[hlo][control_flow]") {
  CHECK(verify_error(replaced(kSumLoop, {{"cn: s32[]) -> pred[]", "cn: s32[]) -> s32[]"},
                                         {"ROOT %lt = pred[] compare(s32[] %ci, s32[] %cn)",
                                          "ROOT %lt = s32[] add(s32[] %ci, s32[] %cn)"}})) ==
        "HLO verifier: loop: the condition %cond must return pred[], got s32[]");
  CHECK(verify_error(replaced(kSumLoop, {{", body=%body", ""}})) ==
        "HLO verifier: loop: while needs a condition and a body");
  CHECK(verify_error(replaced(kSumLoop, {{"body=%body", "body=%cond"}})) ==
        "HLO verifier: loop: the root of %cond must be a tuple (s32[], s32[], s32[]), got pred[] "
        "compare");
  std::string_view gte = "get-tuple-element((s32[], s32[], s32[]) %loop)";
  CHECK(verify_error(replaced(
            kSumLoop, {{"%loop = (s32[], s32[], s32[]) while", "%loop = (s32[], s32[]) while"},
                       {gte, "get-tuple-element(%loop)"}})) ==
        "HLO verifier: loop: result shape must be (s32[], s32[], s32[]), got (s32[], s32[])");
  CHECK(verify_error(replaced(kSumLoop, {{"while(s32[] %zero, s32[] %zero, s32[] %n)",
                                          "while(s32[] %zero, s32[] %n)"}})) ==
        "HLO verifier: loop: result shape must be (s32[], s32[]), got (s32[], s32[], s32[])");
  CHECK(verify_error(replaced(
            kThreeWay, {{"%b1 (x1: f32[3]) -> (f32[3], s32[])", "%b1 (x1: f32[3]) -> (f32[3])"},
                        {"ROOT %r1 = (f32[3]{0}, s32[]) tuple(f32[3]{0} %sq, s32[] %tag1)",
                         "ROOT %r1 = (f32[3]{0}) tuple(f32[3]{0} %sq)"}})) ==
        "HLO verifier: pick: the root of %b1 must be a tuple (f32[3]{0}, s32[]), got (f32[3]{0}) "
        "tuple");
  CHECK(verify_error(replaced(kThreeWay, {{"(k: s32[], x: f32[3])", "(k: f32[], x: f32[3])"},
                                          {"%k = s32[] parameter(0)", "%k = f32[] parameter(0)"},
                                          {"conditional(s32[] %k", "conditional(f32[] %k"}})) ==
        "HLO verifier: pick: the branch index must be s32[], got f32[]");
  CHECK(verify_error(replaced(kThreeWay, {{"branch_computations={%b0, %b1, %b2}",
                                           "branch_computations={%b0, %main}"}})) ==
        "HLO verifier: pick: %main takes 2 parameter(s) for 1 operand(s)");
}

TEST_CASE("HLO cost analysis and Graphviz view of a while", "[hlo][control_flow]") {
  auto m = parse_module(kSumLoop);
  verify(*m);
  CHECK(cost_analysis(*m).flops == 3);  // the condition's compare and the body's two adds, once
  CHECK(memory_analysis(*m).output_bytes == 4);
  CHECK(to_dot(*m).find("while %cond %body") != std::string::npos);
}

TEST_CASE("HLO evaluator: while loops", "[hlo][control_flow]") {
  auto sum = parse_module(kSumLoop);
  verify(*sum);
  for (std::int32_t n : {0, 1, 10}) {
    Array arg = literal<std::int32_t>({n});
    CHECK(evaluate(*sum->entry(), std::span<const Array>(&arg, 1)).item<std::int32_t>() ==
          n * (n - 1) / 2);
  }
  // n! in f64 with an s32 counter: carry (n, acc).
  auto factorial = parse_module(R"(HloModule factorial
%cond (cn: s32[], cacc: f64[]) -> pred[] {
  %cn = s32[] parameter(0)
  %cacc = f64[] parameter(1)
  %zero = s32[] constant(0)
  ROOT %gt = pred[] compare(s32[] %cn, s32[] %zero), direction=GT
}
%body (bn: s32[], bacc: f64[]) -> (s32[], f64[]) {
  %bn = s32[] parameter(0)
  %bacc = f64[] parameter(1)
  %one = s32[] constant(1)
  %less = s32[] subtract(s32[] %bn, s32[] %one)
  %nf = f64[] convert(s32[] %bn)
  %prod = f64[] multiply(f64[] %bacc, f64[] %nf)
  ROOT %carry = (s32[], f64[]) tuple(s32[] %less, f64[] %prod)
}
ENTRY %main (n: s32[]) -> f64[] {
  %n = s32[] parameter(0)
  %start = f64[] constant(1)
  %loop = (s32[], f64[]) while(s32[] %n, f64[] %start), condition=%cond, body=%body
  ROOT %r = f64[] get-tuple-element((s32[], f64[]) %loop), index=1
})");
  verify(*factorial);
  double want = 1;
  for (std::int32_t n = 0; n <= 20; ++n) {
    if (n > 0) want *= n;
    Array arg = literal<std::int32_t>({n});
    CHECK(evaluate(*factorial->entry(), std::span<const Array>(&arg, 1)).item<double>() == want);
  }
}

TEST_CASE("HLO evaluator: conditional, out-of-range indices run the last branch",
          "[hlo][control_flow]") {
  auto m = parse_module(kThreeWay);
  verify(*m);
  std::vector<float> x{1.5f, -2.f, 3.f};
  for (std::int32_t k : {0, 1, 2, 3, 100, -1, -7}) {
    INFO("index " << k);
    std::vector<Array> out =
        evaluate_outputs(*m->entry(), std::vector<Array>{literal<std::int32_t>({k}), literal(x)});
    REQUIRE(out.size() == 2);
    int branch = k == 0 || k == 1 ? k : 2;
    std::vector<float> want;
    for (float v : x) want.push_back(branch == 0 ? v + 1 : branch == 1 ? v * v : -v);
    CHECK(out[0].to_vector<float>() == want);
    CHECK(out[1].item<std::int32_t>() == 10 + branch);
  }
}

}  // namespace
}  // namespace jx::hlo
