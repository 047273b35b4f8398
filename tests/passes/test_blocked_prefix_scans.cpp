// Blocked prefix scans: a long last-dim scan with fewer rows than threads becomes block totals,
// their carries and block scans seeded with them; the values stay those of the one scan
// (integers, so exactly), and scans the rewrite does not fit are left alone.
#include <catch2/catch.hpp>

#include <jx/jx.hpp>

#include "hlo/evaluator.hpp"
#include "hlo/hlo_testing.hpp"
#include "passes/blocked_prefix_scans.hpp"

namespace jx::passes {
namespace {

// A module scanning s32[dims] along its last dim with `op` (add, multiply, maximum, minimum)
// from `init`, reversed or not.
std::string scan_module(const std::string& dims, std::int64_t n, const std::string& op,
                        const std::string& init, bool reverse) {
  std::string pad = reverse ? "0_" + std::to_string(n - 1) : std::to_string(n - 1) + "_0";
  std::string lead = dims.find(',') == std::string::npos ? "" : "1x";
  std::string type = "s32[" + dims + "]";
  return "HloModule m\n\n%region (a: s32[], b: s32[]) -> s32[] {\n  %a = s32[] parameter(0)\n"
         "  %b = s32[] parameter(1)\n  ROOT %c = s32[] " +
         op + "(s32[] %a, s32[] %b)\n}\n\nENTRY %main (x: " + type + ") -> " + type +
         " {\n  %x = " + type + " parameter(0)\n  %init = s32[] constant(" + init +
         ")\n  ROOT %scan = " + type + " reduce-window(" + type +
         " %x, s32[] %init), window={size=" + lead + std::to_string(n) +
         " pad=" + (lead.empty() ? "" : "0_0x") + pad + "}, to_apply=%region\n}\n";
}

Array ramp(const Shape& dims) {
  std::vector<std::int32_t> v;
  for (std::int64_t k = 0; k < shape_size(dims); ++k)
    v.push_back(static_cast<std::int32_t>((k * 7919) % 23) - 11);
  return hlo::testing::literal(v, dims);
}

// {changed, the rewritten module's value, the original's value}
struct Outcome {
  bool changed;
  std::vector<std::int32_t> got, want;
};
Outcome rewrite(const std::string& text, const Shape& dims, int threads) {
  auto before = hlo::parse_module(text);
  auto after = hlo::parse_module(text);
  BlockedPrefixScans pass(threads, /*min_block=*/2);
  bool changed = pass.run(*after);
  hlo::verify(*after);
  INFO(hlo::to_string(*after));
  Array x = ramp(dims);
  return {changed, hlo::evaluate(*after->entry(), {&x, 1}).to_vector<std::int32_t>(),
          hlo::evaluate(*before->entry(), {&x, 1}).to_vector<std::int32_t>()};
}

TEST_CASE("blocked-prefix-scans: a long row becomes blocks that keep the scan's values",
          "[passes]") {
  struct Case {
    std::string op, init;
  };
  for (const Case& c : {Case{"add", "0"}, Case{"multiply", "1"}, Case{"maximum", "-2147483648"},
                        Case{"minimum", "2147483647"}})
    for (bool reverse : {false, true}) {
      INFO(c.op << (reverse ? " reversed" : ""));
      Outcome one_row = rewrite(scan_module("24", 24, c.op, c.init, reverse), {24}, 4);
      CHECK(one_row.changed);
      CHECK(one_row.got == one_row.want);
      Outcome two_rows = rewrite(scan_module("2,30", 30, c.op, c.init, reverse), {2, 30}, 4);
      CHECK(two_rows.changed);
      CHECK(two_rows.got == two_rows.want);
    }
  // The structure: totals by a reduce, carries and blocks by two scans, and no copy of the
  // operand (reshapes name its buffer).
  auto [changed, text] = hlo::testing::run_pass<BlockedPrefixScans>(
      scan_module("24", 24, "add", "0", false), 4, std::int64_t{2});
  CHECK(changed);
  CHECK_THAT(text, Catch::Contains("s32[4]{0} reduce(s32[4,6]{1,0}"));
  CHECK_THAT(text, Catch::Contains("s32[4,6]{1,0} reduce-window(s32[4,6]{1,0}"));
  CHECK_THAT(text, Catch::Contains("ROOT %reshape"));
}

TEST_CASE("blocked-prefix-scans: scans the blocks do not fit are left alone", "[passes]") {
  auto unchanged = [](const std::string& text, const Shape& dims, int threads) {
    Outcome o = rewrite(text, dims, threads);
    CHECK(o.got == o.want);
    return !o.changed;
  };
  // Fewer than 4 threads: one core streams most of the bandwidth.
  CHECK(unchanged(scan_module("24", 24, "add", "0", false), {24}, 2));
  // As many rows as threads already.
  CHECK(unchanged(scan_module("4,24", 24, "add", "0", false), {4, 24}, 4));
  // An init that is no identity would be folded in once per block.
  CHECK(unchanged(scan_module("24", 24, "add", "3", false), {24}, 4));
  CHECK(unchanged(scan_module("24", 24, "maximum", "0", false), {24}, 4));
  // A prime length has no blocks.
  CHECK(unchanged(scan_module("23", 23, "add", "0", false), {23}, 4));
  // A combiner that is not one commutative opcode.
  CHECK(unchanged(scan_module("24", 24, "subtract", "0", false), {24}, 4));
}

}  // namespace
}  // namespace jx::passes
