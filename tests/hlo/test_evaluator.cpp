// The HLO evaluator on whole computations, against values worked out by hand; and robustness:
// mangled HLO text parses or throws CompileError, never worse, and what verifies can be printed.
#include <catch2/catch.hpp>

#include <random>

#include "hlo/evaluator.hpp"
#include "hlo/hlo_testing.hpp"
#include "hlo/ir.hpp"
#include "passes/pipeline.hpp"

namespace jx::hlo {
namespace {

using testing::literal;

// Evaluates the ENTRY computation of `text` (an array root) on `args`.
Array run(const std::string& text, std::vector<Array> args) {
  auto m = parse_module(text);
  verify(*m);
  return evaluate(*m->entry(), args);
}

TEST_CASE("evaluator: dot, with and without batch dimensions", "[hlo]") {
  Array a = literal<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Array b = literal<float>({1, 0, 0, 1, 1, 1}, {3, 2});
  CHECK(run(R"(HloModule m
ENTRY %main (a: f32[2,3], b: f32[3,2]) -> f32[2,2] {
  %a = f32[2,3]{1,0} parameter(0)
  %b = f32[3,2]{1,0} parameter(1)
  ROOT %d = f32[2,2]{1,0} dot(f32[2,3]{1,0} %a, f32[3,2]{1,0} %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
            {a, b})
            .to_vector<float>() == std::vector<float>{4, 5, 10, 11});
  // Batch 2 of [1,2]·[2,1]; the s32 result widens to f64.
  Array x = literal<std::int32_t>({1, 2, 3, 4}, {2, 1, 2});
  CHECK(run(R"(HloModule m
ENTRY %main (x: s32[2,1,2]) -> f64[2,1,1] {
  %x = s32[2,1,2]{2,1,0} parameter(0)
  %t = s32[2,2,1]{2,1,0} transpose(s32[2,1,2]{2,1,0} %x), dimensions={0,2,1}
  ROOT %d = f64[2,1,1]{2,1,0} dot(s32[2,1,2]{2,1,0} %x, s32[2,2,1]{2,1,0} %t), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})",
            {x})
            .to_vector<double>() == std::vector<double>{5, 25});
}

TEST_CASE("evaluator: xor and the shifts, amounts past the width included", "[hlo]") {
  Array x = literal<std::int32_t>({-8, -8, 1, 5}, {4});
  Array y = literal<std::int32_t>({1, 32, 31, -1}, {4});
  auto eval = [&](const std::string& op) {
    return run(R"(HloModule m
ENTRY %main (x: s32[4], y: s32[4]) -> s32[4] {
  %x = s32[4]{0} parameter(0)
  %y = s32[4]{0} parameter(1)
  ROOT %r = s32[4]{0} )" +
                   op + R"((s32[4]{0} %x, s32[4]{0} %y)
})",
               {x, y})
        .to_vector<std::int32_t>();
  };
  CHECK(eval("xor") == std::vector<std::int32_t>{-7, -40, 30, -6});
  CHECK(eval("shift-left") == std::vector<std::int32_t>{-16, 0, INT32_MIN, 0});
  CHECK(eval("shift-right-logical") == std::vector<std::int32_t>{2147483644, 0, 0, 0});
  CHECK(eval("shift-right-arithmetic") == std::vector<std::int32_t>{-4, -1, 0, 0});
}

TEST_CASE("evaluator: reduce through its computation, argmax with NaN", "[hlo]") {
  Array x = literal<float>({1, 5, 3, 2, 8, 4}, {2, 3});
  const std::string reduce = R"(HloModule m
%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(f32[] %a, f32[] %b)
}
ENTRY %main (x: f32[2,3]) -> f32[DIMS] {
  %x = f32[2,3]{1,0} parameter(0)
  %init = f32[] constant(-inf)
  ROOT %r = f32[DIMS] reduce(f32[2,3]{1,0} %x, f32[] %init), dimensions={AXES}, to_apply=%max
})";
  auto with = [&](const std::string& dims, const std::string& axes) {
    std::string t = reduce;
    for (auto [from, to] : {std::pair{std::string("DIMS"), dims}, {"DIMS", dims}, {"AXES", axes}})
      t.replace(t.find(from), from.size(), to);
    return t;
  };
  CHECK(run(with("2", "1"), {x}).to_vector<float>() == std::vector<float>{5, 8});
  CHECK(run(with("3", "0"), {x}).to_vector<float>() == std::vector<float>{2, 8, 4});
  CHECK(run(with("", "0,1"), {x}).item<float>() == 8);
  Array y = literal<float>({1, 7, 7, std::nanf(""), 2, std::nanf("")}, {2, 3});
  CHECK(run(R"(HloModule m
ENTRY %main (y: f32[2,3]) -> s32[2] {
  %y = f32[2,3]{1,0} parameter(0)
  ROOT %i = s32[2]{0} argmax(f32[2,3]{1,0} %y), dimensions={1}
})",
            {y})
            .to_vector<int>() == std::vector<int>{1, 0});
}

TEST_CASE("evaluator: pad, dynamic slices, concatenate", "[hlo]") {
  Array x = literal<std::int32_t>({1, 2, 3, 4}, {2, 2});
  Array i = literal<std::int32_t>({5});  // clamped to 1 (the window must fit)
  CHECK(run(R"(HloModule m
ENTRY %main (x: s32[2,2]) -> s32[3,5] {
  %x = s32[2,2]{1,0} parameter(0)
  %z = s32[] constant(0)
  ROOT %p = s32[3,5]{1,0} pad(s32[2,2]{1,0} %x, s32[] %z), padding=1_0x-1_2_2
})",
            {x})
            .to_vector<int>() == std::vector<int>{0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 4, 0, 0});
  CHECK(run(R"(HloModule m
ENTRY %main (x: s32[2,2], i: s32[]) -> s32[1,2] {
  %x = s32[2,2]{1,0} parameter(0)
  %i = s32[] parameter(1)
  %z = s32[] constant(0)
  ROOT %d = s32[1,2]{1,0} dynamic-slice(s32[2,2]{1,0} %x, s32[] %i, s32[] %z), dynamic_slice_sizes={1,2}
})",
            {x, i})
            .to_vector<int>() == std::vector<int>{3, 4});
  CHECK(run(R"(HloModule m
ENTRY %main (x: s32[2,2], i: s32[]) -> s32[2,2] {
  %x = s32[2,2]{1,0} parameter(0)
  %i = s32[] parameter(1)
  %u = s32[1,1]{1,0} constant({ {9} })
  ROOT %d = s32[2,2]{1,0} dynamic-update-slice(s32[2,2]{1,0} %x, s32[1,1]{1,0} %u, s32[] %i, s32[] %i)
})",
            {x, i})
            .to_vector<int>() == std::vector<int>{1, 2, 3, 9});
  CHECK(run(R"(HloModule m
ENTRY %main (x: s32[2,2]) -> s32[2,4] {
  %x = s32[2,2]{1,0} parameter(0)
  ROOT %c = s32[2,4]{1,0} concatenate(s32[2,2]{1,0} %x, s32[2,2]{1,0} %x), dimensions={1}
})",
            {x})
            .to_vector<int>() == std::vector<int>{1, 2, 1, 2, 3, 4, 3, 4});
}

TEST_CASE("HLO text: mangled text throws CompileError, never worse", "[hlo]") {
  const std::string text =
      R"(HloModule m, entry_computation_layout={(f32[2,3]{1,0})->(f32[2]{0}, s32[3,2]{1,0})}

%add.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  ROOT %add.4 = f32[] add(f32[] %a.2, f32[] %b.3)
}

ENTRY %main.5 (x.6: f32[2,3]) -> (f32[2]{0}, s32[3,2]{1,0}) {
  %x.6 = f32[2,3]{1,0} parameter(0)
  %c.7 = f32[] constant(1.5)
  %b.8 = f32[2,3]{1,0} broadcast(f32[] %c.7), dimensions={}
  %m.9 = f32[2,3]{1,0} multiply(f32[2,3]{1,0} %x.6, f32[2,3]{1,0} %b.8)
  %r.10 = f32[2]{0} reduce(f32[2,3]{1,0} %m.9, f32[] %c.7), dimensions={1}, to_apply=%add.1
  %k.11 = s32[2,3]{1,0} constant({ {1, 2, 3}, {4, 5, 6} })
  %t.12 = s32[3,2]{1,0} transpose(s32[2,3]{1,0} %k.11), dimensions={1,0}
  %s.13 = s32[3,2]{1,0} slice(s32[3,2]{1,0} %t.12), slice={[0:3], [0:2:1]}
  ROOT %out.14 = (f32[2]{0}, s32[3,2]{1,0}) tuple(f32[2]{0} %r.10, s32[3,2]{1,0} %s.13)
}
)";
  std::mt19937 rng(1234);
  const std::string alphabet = "%{}[](),=:_-x0123456789 \nfsu.ROOTENTRY";
  int parsed = 0, verified = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string t = text;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      std::size_t at = rng() % t.size();
      switch (rng() % 3) {
        case 0:
          t.erase(at, 1 + rng() % 4);
          break;
        case 1:
          t.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
        default:
          t[at] = alphabet[rng() % alphabet.size()];
      }
    }
    INFO(t);
    std::unique_ptr<Module> m;
    try {
      m = parse_module(t);
    } catch (const CompileError&) {
      continue;
    }
    ++parsed;
    try {
      verify(*m);
    } catch (const CompileError&) {
      continue;
    }
    ++verified;
    // What verifies prints, parses back the same, and survives the pipeline.
    std::string printed = to_string(*m);
    CHECK(to_string(*parse_module(printed)) == printed);
    passes::PipelineOptions options;
    options.verify = true;
    passes::run_pipeline(*m, options);
  }
  CHECK(parsed > 0);
  CHECK(verified > 0);
}

}  // namespace
}  // namespace jx::hlo
