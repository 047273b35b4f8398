// reverse and reduce-window in HLO: XLA's text form and its round trip, parse and verifier
// errors, the evaluator against explicit loops, and which windows are prefix scans.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "hlo/builder.hpp"
#include "hlo/evaluator.hpp"
#include "hlo/hlo_testing.hpp"
#include "hlo/ir.hpp"
#include "hlo/window.hpp"

namespace jx::hlo {
namespace {

using testing::check_round_trip;
using testing::error_of;
using testing::f32;
using testing::literal;
using testing::parse_error;
using testing::verify_error;

Computation* binary_region(Module& m, Opcode op, DType d) {
  Computation* c = m.add_computation("region");
  Builder b(c);
  HloShape s = HloShape::array(d, {});
  Instruction* x = b.parameter(0, s);
  Instruction* y = b.parameter(1, s);
  c->set_root(b.binary(op, x, y));
  return c;
}


TEST_CASE("HLO text: reverse and reduce-window print as XLA's and round-trip", "[hlo][window]") {
  Module m("jit_f");
  Computation* c = m.add_computation("main", true);
  Builder b(c);
  Instruction* x = b.parameter(0, f32({2, 4}));
  Instruction* zero = b.constant(literal<float>({0.f}));
  Instruction* r = b.op(Opcode::kReverse, f32({2, 4}), {x}, [] {
    Attrs a;
    a.set("dimensions", std::vector<std::int64_t>{1});
    return a;
  }());
  Instruction* scan = b.reduce_window(r, zero, prefix_scan_window({2, 4}, 1, false),
                                      binary_region(m, Opcode::kAdd, float32));
  Window pool(2);
  pool[0] = {2, 2, 1, 0, 1, 1};
  pool[1] = {3, 1, 0, 2, 2, 2};
  Instruction* pooled =
      b.reduce_window(scan, zero, pool, binary_region(m, Opcode::kMaximum, float32));
  c->set_root(pooled);
  std::string text = to_string(m);
  using Catch::Contains;
  CHECK_THAT(text, Contains("%reverse.4 = f32[2,4]{1,0} reverse(f32[2,4]{1,0} %Arg_0.2), "
                            "dimensions={1}"));
  CHECK_THAT(text, Contains("reduce-window(f32[2,4]{1,0} %reverse.4, f32[] %constant.3), "
                            "window={size=1x4 pad=0_0x3_0}, to_apply=%region"));
  // Dim 0: 2 padded to 3, one window of 2 at stride 2. Dim 1: base dilation 2 of 4 elements is
  // 7, padded to 9, where windows of 3 dilated by 2 (span 5) fit 5 times.
  CHECK(pooled->shape.dims == Shape{1, 5});
  CHECK_THAT(text, Contains("window={size=2x3 stride=2x1 pad=1_0x0_2 lhs_dilate=1x2 "
                            "rhs_dilate=1x2}"));
  check_round_trip(m);

  // Fields in another order and a rank-0 window read back the same.
  auto parsed = parse_module(R"(HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main (x: f32[5], y: f32[]) -> f32[] {
  %x = f32[5] parameter(0)
  %y = f32[] parameter(1)
  %zero = f32[] constant(0)
  %w = f32[2] reduce-window(%x, %zero), window={pad=1_0 size=3 stride=2}, to_apply=%add
  ROOT %t = f32[] reduce-window(%y, %zero), window={}, to_apply=%add
})");
  verify(*parsed);
  CHECK_THAT(to_string(*parsed), Contains("window={size=3 stride=2 pad=1_0}"));
  CHECK(window_of(*parsed->entry()->owned()[3]) == Window{{3, 2, 1, 0, 1, 1}});
}

TEST_CASE("HLO text: reduce-window parse and verifier errors", "[hlo][window]") {
  const std::string head = R"(HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %zero = f32[] constant(0)
)";
  auto with = [&](const std::string& line) { return head + "  ROOT " + line + "\n}\n"; };
  using Catch::Contains;
  CHECK_THAT(parse_error(with("%w = f32[4] reduce-window(%x, %zero), window={size=4 skip=1}, "
                              "to_apply=%add")),
             Contains("unknown window field 'skip'"));
  CHECK_THAT(parse_error(with("%w = f32[4] reduce-window(%x, %zero), window={size=4 pad=3_0x0_0}, "
                              "to_apply=%add")),
             Contains("window fields must have one entry per dimension"));
  CHECK_THAT(parse_error(with("%w = f32[4] reduce-window(%x, %zero), window={pad=3_0}, "
                              "to_apply=%add")),
             Contains("a window needs its size"));
  CHECK_THAT(verify_error(with("%w = f32[4] reduce-window(%x, %zero), window={size=4 pad=2_0}, "
                               "to_apply=%add")),
             Contains("result shape must be f32[3]{0}, got f32[4]{0}"));
  CHECK_THAT(verify_error(with("%w = f32[4] reduce-window(%x, %zero), window={size=0}, "
                               "to_apply=%add")),
             Contains("window sizes, strides and dilations must be at least 1"));
  CHECK_THAT(verify_error(with("%w = f32[4] reduce-window(%x, %zero), to_apply=%add")),
             Contains("missing attribute 'window'"));
  CHECK_THAT(verify_error(with("%w = f32[4] reduce-window(%x, %x), window={size=1}, "
                               "to_apply=%add")),
             Contains("init value must be a f32 scalar"));
  CHECK_THAT(verify_error(with("%r = f32[4] reverse(%x), dimensions={1}")),
             Contains("dimensions {1} must be unique dimensions in [0, 1)"));
}

// The reduce-window oracle: every output folds the operand elements its window covers.
std::vector<double> window_oracle(const std::vector<double>& x, const Shape& dims,
                                  const Window& window, double init, double (*f)(double, double)) {
  Shape out = window_output_dims(dims, window);
  std::vector<double> result;
  for (std::int64_t i = 0; i < out[0]; ++i)
    for (std::int64_t j = 0; j < out[1]; ++j) {
      double acc = init;
      for (std::int64_t a = 0; a < window[0].size; ++a)
        for (std::int64_t b = 0; b < window[1].size; ++b) {
          std::int64_t p = i * window[0].stride + a * window[0].window_dilation - window[0].pad_lo;
          std::int64_t q = j * window[1].stride + b * window[1].window_dilation - window[1].pad_lo;
          if (p < 0 || q < 0 || p % window[0].base_dilation || q % window[1].base_dilation)
            continue;
          p /= window[0].base_dilation;
          q /= window[1].base_dilation;
          if (p >= dims[0] || q >= dims[1]) continue;
          acc = f(acc, x[static_cast<std::size_t>(p * dims[1] + q)]);
        }
      result.push_back(acc);
    }
  return result;
}

TEST_CASE("HLO evaluator: reduce-window folds each window; reverse mirrors", "[hlo][window]") {
  Shape dims{5, 6};
  std::vector<double> x;
  for (int k = 0; k < 30; ++k) x.push_back(std::sin(k * 1.7) * 10);
  const std::vector<Window> windows = {
      {{2, 2, 0, 0, 1, 1}, {3, 3, 0, 0, 1, 1}},  // pooling
      {{3, 1, 1, 1, 1, 1}, {2, 2, 1, 2, 1, 1}},  // padded, strided
      {{2, 1, 0, 1, 2, 1}, {3, 2, 1, 0, 1, 2}},  // base and window dilation
      prefix_scan_window(dims, 1, false),       prefix_scan_window(dims, 0, true),
  };
  for (const Window& w : windows) {
    Module m("m");
    Computation* c = m.add_computation("main", true);
    Builder b(c);
    Instruction* p = b.parameter(0, HloShape::array(float64, dims));
    Instruction* init = b.parameter(1, HloShape::array(float64, {}));
    c->set_root(b.reduce_window(p, init, w, binary_region(m, Opcode::kAdd, float64)));
    verify(m);
    INFO(to_string(m));
    Array args[] = {literal<double>(x, dims), literal<double>({0.5})};
    std::vector<double> got = evaluate(*c, args).to_vector<double>();
    std::vector<double> want =
        window_oracle(x, dims, w, 0.5, [](double a, double b) { return a + b; });
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < got.size(); ++k) CHECK(got[k] == want[k]);
  }

  Module m("m");
  Computation* c = m.add_computation("main", true);
  Builder b(c);
  Instruction* p = b.parameter(0, HloShape::array(float64, dims));
  Attrs a;
  a.set("dimensions", std::vector<std::int64_t>{0, 1});
  c->set_root(b.op(Opcode::kReverse, p->shape, {p}, a));
  Array args[] = {literal<double>(x, dims)};
  std::vector<double> got = evaluate(*c, args).to_vector<double>();
  std::vector<double> want(x.rbegin(), x.rend());
  CHECK(got == want);
}

TEST_CASE("as_prefix_scan: the whole axis, padded before (or after) it, stride 1",
          "[hlo][window]") {
  Module m("m");
  Computation* c = m.add_computation("main", true);
  Builder b(c);
  Instruction* x = b.parameter(0, f32({3, 4}));
  Instruction* zero = b.constant(literal<float>({0.f}));
  Computation* add = binary_region(m, Opcode::kAdd, float32);
  auto scan = [&](const Window& w) { return as_prefix_scan(*b.reduce_window(x, zero, w, add)); };
  auto forward = scan(prefix_scan_window({3, 4}, 1, false));
  REQUIRE(forward);
  CHECK(forward->axis == 1);
  CHECK_FALSE(forward->reverse);
  auto backward = scan(prefix_scan_window({3, 4}, 0, true));
  REQUIRE(backward);
  CHECK(backward->axis == 0);
  CHECK(backward->reverse);
  Window wider = prefix_scan_window({3, 4}, 1, false);
  wider[1].size = 5;
  wider[1].pad_lo = 4;  // the same sums, but not the form codegen scans
  CHECK_FALSE(scan(wider));
  Window strided = prefix_scan_window({3, 4}, 1, false);
  strided[0].stride = 2;
  CHECK_FALSE(scan(strided));
  CHECK_FALSE(scan(Window(2)));  // every window of 1
}

}  // namespace
}  // namespace jx::hlo
