// Split column reductions: a large reduce over every dim but the last, of narrow rows, becomes a
// reduce per entry of the first dim and a reduce of those, with the same values (the evaluator
// runs the module before and after the pass); other reduces stay.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "hlo/evaluator.hpp"
#include "hlo/hlo_testing.hpp"
#include "passes/fusion/instruction_fusion.hpp"
#include "passes/split_column_reductions.hpp"

namespace jx::passes {
namespace {

using hlo::testing::literal;

std::string dims_text(const Shape& s) {
  std::string out;
  for (std::size_t d = 0; d < s.size(); ++d) out += (d ? "," : "") + std::to_string(s[d]);
  return out;
}

// A module reducing an f32 operand of dims `x` over `reduced` with `combiner`.
std::string reduce_module(const Shape& x, const Shape& reduced, const std::string& combiner,
                          const std::string& init = "0") {
  Shape out;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(x.size()); ++d)
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end())
      out.push_back(x[static_cast<std::size_t>(d)]);
  std::string xt = "f32[" + dims_text(x) + "]", ot = "f32[" + dims_text(out) + "]";
  return "HloModule m\n\n%f (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
         "  %b = f32[] parameter(1)\n  ROOT %c = f32[] " +
         combiner + "(f32[] %a, f32[] %b)\n}\n\nENTRY %main (x: " + xt + ") -> " + ot +
         " {\n  %x = " + xt + " parameter(0)\n  %init = f32[] constant(" + init +
         ")\n  ROOT %r = " + ot + " reduce(" + xt + " %x, f32[] %init), dimensions={" +
         dims_text(reduced) + "}, to_apply=%f\n}\n";
}

// The reduces of the entry computation, operands before users.
std::vector<const hlo::Instruction*> reduces(const hlo::Module& m) {
  std::vector<const hlo::Instruction*> out;
  for (const hlo::Instruction* i : m.entry()->instructions())
    if (i->opcode == hlo::Opcode::kReduce) out.push_back(i);
  return out;
}

// Runs the pass; checks that it changed the module as `splits` says, with the same values.
void check_split(const Shape& x, const Shape& reduced, const std::string& combiner, bool splits,
                 const std::string& init = "0") {
  std::string text = reduce_module(x, reduced, combiner, init);
  INFO(text);
  auto module = hlo::parse_module(text);
  hlo::verify(*module);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> xv(static_cast<std::size_t>(shape_size(x)));
  for (float& v : xv) v = u(rng);
  std::vector<Array> args = {literal(xv, x)};
  std::vector<float> before = hlo::evaluate(*module->entry(), args).to_vector<float>();
  CHECK(SplitColumnReductions().run(*module) == splits);
  hlo::verify(*module);
  INFO(hlo::to_string(*module));
  std::vector<const hlo::Instruction*> r = reduces(*module);
  if (splits) {
    REQUIRE(r.size() == 2);
    Shape middle;
    for (std::int64_t d = 1; d + 1 < static_cast<std::int64_t>(x.size()); ++d) middle.push_back(d);
    CHECK(r[0]->operands[0]->opcode == hlo::Opcode::kParameter);
    CHECK(r[0]->attrs.get_ints("dimensions") == middle);
    CHECK(r[0]->shape.dims == Shape{x.front(), x.back()});
    CHECK(r[1]->operands[0] == r[0]);
    CHECK(r[1]->attrs.get_ints("dimensions") == Shape{0});
    CHECK(r[1]->called == r[0]->called);
  } else {
    CHECK(r.size() == 1);
  }
  std::vector<float> after = hlo::evaluate(*module->entry(), args).to_vector<float>();
  REQUIRE(after.size() == before.size());
  for (std::size_t k = 0; k < after.size(); ++k)
    CHECK(after[k] == Approx(before[k]).epsilon(1e-4).margin(1e-4));
}

TEST_CASE("split column reductions: large sums and maxima over narrow rows split", "[passes]") {
  check_split({16, 64, 64, 8}, {0, 1, 2}, "add", true);               // 2 MiB, 32-byte rows
  check_split({32, 32, 32, 16}, {2, 0, 1}, "maximum", true, "-inf");  // dims in any order
  check_split({16, 64, 64, 8}, {0, 1, 2}, "add", true, "-0");
  check_split({64, 4096, 2}, {0, 1}, "add", true);  // rank 3
}

TEST_CASE("split column reductions: small, wide-row, short or other reduces stay", "[passes]") {
  check_split({16, 32, 32, 8}, {0, 1, 2}, "add", false);  // 512 KiB
  check_split({16, 64, 256}, {0, 1}, "add", false);       // 1 KiB rows
  check_split({8, 128, 64, 8}, {0, 1, 2}, "add", false);  // 8 entries of the first dim
  check_split({4096, 4, 16}, {0, 1}, "add", false);       // 256-byte entries
  check_split({65536, 8}, {0}, "add", false);             // rank 2
  check_split({16, 64, 64, 8}, {1, 2, 3}, "add", false);  // keeps the first dim
  check_split({16, 64, 64, 8}, {0, 1}, "add", false);     // keeps two dims
  // Each part would start from an init that is not the combiner's identity: a sum from 5, the
  // max from 0.
  check_split({16, 64, 64, 8}, {0, 1, 2}, "add", false, "5");
  check_split({32, 32, 32, 16}, {0, 1, 2}, "maximum", false, "0");
}

TEST_CASE("instruction fusion: a column reduction's partial sums stay a kernel of their own",
          "[passes][fusion]") {
  // Read through a generator, the partial sums would be recomputed a row apart per column.
  auto module = hlo::parse_module(reduce_module({16, 64, 64, 8}, {0, 1, 2}, "add"));
  REQUIRE(SplitColumnReductions().run(*module));
  REQUIRE(InstructionFusion().run(*module));
  hlo::verify(*module);
  INFO(hlo::to_string(*module));
  int fusions = 0;
  for (const hlo::Instruction* i : module->entry()->instructions())
    if (i->opcode == hlo::Opcode::kFusion) {
      ++fusions;
      int inner = 0;
      for (const hlo::Instruction* f : i->called[0]->instructions())
        inner += f->opcode == hlo::Opcode::kReduce;
      CHECK(inner == 1);
    }
  CHECK(fusions + static_cast<int>(reduces(*module).size()) == 2);
}

}  // namespace
}  // namespace jx::passes
