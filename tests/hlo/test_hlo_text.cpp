// HLO text: the printer's format, print(parse(print(m))) == print(m) for builder-made modules,
// parse errors with line and column, and verifier errors on malformed modules.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "hlo/builder.hpp"
#include "hlo/hlo_testing.hpp"
#include "hlo/ir.hpp"

namespace jx::hlo {
namespace {

using testing::check_round_trip;
using testing::error_of;
using testing::f32;
using testing::literal;
using testing::parse_error;
using testing::verify_error;

Instruction* add_raw(Computation* c, Opcode op, HloShape shape,
                     std::vector<Instruction*> operands) {
  auto inst = std::make_unique<Instruction>();
  inst->opcode = op;
  inst->shape = std::move(shape);
  inst->operands = std::move(operands);
  return c->add(std::move(inst));
}

TEST_CASE("HLO printer: XLA's text form", "[hlo]") {
  Module m("jit_f");
  Computation* c = m.add_computation("main", true);
  Builder b(c);
  Instruction* x = b.parameter(0, f32({2, 3}));
  Instruction* y = b.parameter(1, f32({3}));
  Instruction* yb = b.broadcast(y, {2, 3}, {1});
  Instruction* s = b.binary(Opcode::kAdd, x, yb);
  Instruction* zero = b.constant(literal<float>({0.f}));
  Instruction* r = b.reduce(s, zero, {1}, Opcode::kMaximum);
  c->set_root(b.tuple({r, b.compare(s, x, "LT")}));
  CHECK(
      to_string(m) ==
      R"(HloModule jit_f, entry_computation_layout={(f32[2,3]{1,0}, f32[3]{0})->(f32[2]{0}, pred[2,3]{1,0})}

%region.7 (Arg_0.8: f32[], Arg_1.9: f32[]) -> f32[] {
  %Arg_0.8 = f32[] parameter(0)
  %Arg_1.9 = f32[] parameter(1)
  ROOT %maximum.10 = f32[] maximum(f32[] %Arg_0.8, f32[] %Arg_1.9)
}

ENTRY %main.1 (Arg_0.2: f32[2,3], Arg_1.3: f32[3]) -> (f32[2]{0}, pred[2,3]{1,0}) {
  %Arg_0.2 = f32[2,3]{1,0} parameter(0)
  %Arg_1.3 = f32[3]{0} parameter(1)
  %broadcast.4 = f32[2,3]{1,0} broadcast(f32[3]{0} %Arg_1.3), dimensions={1}
  %add.5 = f32[2,3]{1,0} add(f32[2,3]{1,0} %Arg_0.2, f32[2,3]{1,0} %broadcast.4)
  %constant.6 = f32[] constant(0)
  %reduce.11 = f32[2]{0} reduce(f32[2,3]{1,0} %add.5, f32[] %constant.6), dimensions={1}, to_apply=%region.7
  %compare.12 = pred[2,3]{1,0} compare(f32[2,3]{1,0} %add.5, f32[2,3]{1,0} %Arg_0.2), direction=LT
  ROOT %tuple.13 = (f32[2]{0}, pred[2,3]{1,0}) tuple(f32[2]{0} %reduce.11, pred[2,3]{1,0} %compare.12)
}
)");
  check_round_trip(m);
}

TEST_CASE("HLO text: every attribute kind round trips", "[hlo]") {
  Module m("jit_g");
  Computation* c = m.add_computation("main", true);
  Builder b(c);
  Instruction* x = b.parameter(0, f32({4, 6}));
  Instruction* w = b.parameter(1, f32({6, 5}));
  Instruction* i = b.parameter(2, HloShape::array(int32, {}));
  auto with = [](const char* name, AttrValue v) {
    Attrs a;
    a.set(name, std::move(v));
    return a;
  };
  using Ints = std::vector<std::int64_t>;
  Instruction* t = b.op(Opcode::kTranspose, f32({6, 4}), {x}, with("dimensions", Ints{1, 0}));
  Instruction* sl = b.op(Opcode::kSlice, f32({2, 3}), {x}, with("slice", Ints{0, 2, 1, 1, 6, 2}));
  Instruction* pad_value = b.constant(literal<float>({-1.5f}));
  Instruction* pd =
      b.op(Opcode::kPad, f32({4, 11}), {sl, pad_value}, with("padding", Ints{1, 1, 0, -1, 5, 2}));
  Instruction* cat = b.op(Opcode::kConcatenate, f32({8, 6}), {x, x}, with("dimensions", Ints{0}));
  Instruction* io = b.op(Opcode::kIota, HloShape::array(int32, {3, 2}), {},
                         with("iota_dimension", std::int64_t{1}));
  Attrs dn;
  dn.set("lhs_contracting_dims", Ints{1});
  dn.set("rhs_contracting_dims", Ints{0});
  dn.set("lhs_batch_dims", Ints{});
  dn.set("rhs_batch_dims", Ints{});
  Instruction* d = b.op(Opcode::kDot, f32({4, 5}), {x, w}, dn);
  Instruction* ds =
      b.op(Opcode::kDynamicSlice, f32({2, 2}), {x, i, i}, with("dynamic_slice_sizes", Ints{2, 2}));
  Instruction* am =
      b.op(Opcode::kArgMax, HloShape::array(int32, {4}), {x}, with("dimensions", Ints{1}));
  Instruction* tup = b.tuple({t, pd, cat, io, d, ds, am});
  Instruction* gte =
      b.op(Opcode::kGetTupleElement, f32({4, 5}), {tup}, with("index", std::int64_t{4}));
  c->set_root(b.tuple({gte, b.unary(Opcode::kLog1p, d), b.convert(i, float64)}));
  check_round_trip(m);
  std::string text = to_string(m);
  CHECK(text.find("slice={[0:2], [1:6:2]}") != std::string::npos);
  CHECK(text.find("padding=1_1x-1_5_2") != std::string::npos);
  CHECK(text.find("lhs_batch_dims={}, lhs_contracting_dims={1}, rhs_batch_dims={}") !=
        std::string::npos);
  CHECK(text.find("iota(), iota_dimension=1") != std::string::npos);
  CHECK(text.find("log-plus-one(") != std::string::npos);
}

TEST_CASE("HLO text: constants of every dtype and special values round trip", "[hlo]") {
  Module m("consts");
  Computation* c = m.add_computation("main", true);
  Builder b(c);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<Instruction*> cs{
      b.constant(literal<float>({1.5f})),
      b.constant(literal<float>({0.1f, -0.f, kInf, -kInf, std::nanf(""), 1e-5f, 3e38f})),
      b.constant(literal<double>({0.1, 1e300, -2.5, 1e16}, {2, 2})),
      b.constant(literal<std::int32_t>({1, -2, 3, 4, 5, 6}, {2, 1, 3})),
      b.constant(
          literal<std::int64_t>({9007199254740993LL, std::numeric_limits<std::int64_t>::min()})),
      b.constant(literal<std::uint32_t>({4294967295u, 0u})),
      b.constant(literal<bool>({true, false, true})),
      b.constant(literal<bool>({false})),
      b.constant(literal<float>({}, {0})),
      b.constant(literal<float>({}, {0, 2})),
      b.constant(literal<float>({}, {2, 0})),
  };
  c->set_root(b.tuple(cs));
  check_round_trip(m);
  std::string text = to_string(m);
  for (const char* piece :
       {"constant(1.5)", "constant({0.1, -0, inf, -inf, nan, 1e-05, 3e+38})",
        "constant({ {0.1, 1e+300}, {-2.5, 1e+16} })", "constant({ { {1, -2, 3} }, { {4, 5, 6} } })",
        "constant({9007199254740993, -9223372036854775808})", "constant({4294967295, 0})",
        "constant({true, false, true})", "constant(false)", "f32[0]{0} constant({})",
        "f32[2,0]{1,0} constant({ {}, {} })"}) {
    INFO(piece);
    CHECK(text.find(piece) != std::string::npos);
  }
  // Values survive exactly, NaN and the sign of zero included.
  auto parsed = parse_module(text);
  auto values = parsed->entry()->root()->operands[1]->literal->to_vector<float>();
  CHECK(std::signbit(values[1]));
  CHECK(std::isnan(values[4]));
  CHECK(values[0] == 0.1f);
  CHECK(parsed->entry()->root()->operands[4]->literal->to_vector<std::int64_t>()[0] ==
        9007199254740993LL);
}

TEST_CASE("HLO parser: names are kept, new names never collide", "[hlo]") {
  const char* text = R"(HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}

ENTRY %main (x: f32[3]) -> f32[3] {
  %x = f32[3]{0} parameter(0)
  %neg.41 = f32[3]{0} negate(f32[3]{0} %x)
  ROOT %out = f32[3]{0} negate(f32[3]{0} %neg.41)
}
)";
  auto m = parse_module(text);
  verify(*m);
  CHECK(to_string(*m) == text);
  Builder b(m->entry());
  CHECK(b.unary(Opcode::kExp, m->entry()->root())->name == "exponential.42");
}

TEST_CASE("HLO parser: XLA's optional pieces (no operand shapes, comments, no ROOT)", "[hlo]") {
  auto m = parse_module(R"(HloModule m
/* a comment */
ENTRY %main.1 (p.2: f32[]) -> f32[] {
  %p.2 = f32[] parameter(0)  // the only argument
  %e.3 = f32[] exponential(%p.2)
  %n.4 = f32[] negate(%e.3)
}
)");
  verify(*m);
  CHECK(m->entry()->root()->name == "n.4");
  CHECK(to_string(*m).find("ROOT %n.4 = f32[] negate(f32[] %e.3)") != std::string::npos);
}

TEST_CASE("HLO parser: errors name the line, the column and what was expected", "[hlo]") {
  const std::string head = "HloModule m\n\nENTRY %main (p: f32[3]) -> f32[3] {\n";
  auto body = [&](const std::string& lines) { return head + lines + "}\n"; };
  const std::string p = "  %p = f32[3]{0} parameter(0)\n";
  CHECK(parse_error("HloModul m") ==
        "HLO parse error at line 1, column 1: expected 'HloModule', got 'H'");
  CHECK(parse_error("HloModule m\n") ==
        "HLO parse error at line 2, column 1: expected an ENTRY computation");
  CHECK(parse_error(body(p + "  ROOT %q = f32[3]{0} sin(f32[3]{0} %p)\n")) ==
        "HLO parse error at line 5, column 23: unknown opcode 'sin'");
  CHECK(parse_error(body(p + "  ROOT %q = f32[3]{0} negate(f32[3]{0} %r)\n")) ==
        "HLO parse error at line 5, column 40: unknown instruction %r");
  CHECK(parse_error(body(p + "  ROOT %q = f32[3]{0} negate(f32[4]{0} %p)\n")) ==
        "HLO parse error at line 5, column 40: operand %p has shape f32[3]{0}, not f32[4]{0}");
  CHECK(parse_error(body(p + "  ROOT %q = f32[3]{0} negate(f32[3]{0} %p\n")) ==
        "HLO parse error at line 6, column 1: expected ')', got '}'");
  CHECK(parse_error(body(p + "  ROOT %q = c64[3]{0} negate(f32[3]{0} %p)\n")) ==
        "HLO parse error at line 5, column 13: unknown element type 'c64'");
  CHECK(parse_error(body("  %p = f32[3]{1} parameter(0)\n")) ==
        "HLO parse error at line 4, column 14: expected a row-major layout");
  CHECK(parse_error(body("  %p = f32[3]{0} parameter(1)\n")) ==
        "HLO parse error at line 4, column 28: parameter number 1 is out of range: the "
        "signature has 1 parameter(s)");
  CHECK(parse_error(body(p + "  ROOT %p = f32[3]{0} negate(f32[3]{0} %p)\n")) ==
        "HLO parse error at line 5, column 8: duplicate name %p");
  CHECK(parse_error(body(p + "  ROOT %c = f32[3]{0} constant({1, 2})\n")) ==
        "HLO parse error at line 5, column 32: expected 3 elements in dimension 0, got 2");
  CHECK(parse_error(body(p + "  ROOT %c = f32[3]{0} constant({1, x, 2})\n")) ==
        "HLO parse error at line 5, column 36: expected a f32 value, got 'x'");
  CHECK(parse_error(body(p + "  ROOT %c = s32[] constant(3000000000)\n")) ==
        "HLO parse error at line 5, column 28: value out of range for s32");
  CHECK(parse_error(body(p + "  ROOT %q = f32[3]{0} negate(f32[3]{0} %p), to_apply=%nowhere\n")) ==
        "HLO parse error at line 5, column 54: unknown computation %nowhere");
  CHECK(parse_error(body(p + "  ROOT %q = f32[3]{0} negate(f32[3]{0} %p), dimensions=?\n")) ==
        "HLO parse error at line 5, column 56: expected an attribute value, got '?'");
  CHECK(parse_error(head + "  ROOT %p = f32[2]{0} parameter(0)\n}\n") ==
        "HLO parse error at line 3, column 7: the signature of %main does not match parameter %p");
  // The module header with an entry_computation_layout.
  auto with_layout = [&](const std::string& layout) {
    return "HloModule m, entry_computation_layout=" + layout + body(p).substr(11);
  };
  CHECK(parse_error(with_layout("{()->f32[]{0}}")) ==
        "HLO parse error at line 1, column 49: expected a row-major layout");
  CHECK(parse_error(with_layout("{()->f32[3]{0}}")) ==
        "HLO parse error at line 1, column 14: entry_computation_layout does not match the "
        "ENTRY computation");
  CHECK(parse_error(body(p) + "junk") ==
        "HLO parse error at line 6, column 5: expected '(', got end of input");
  CHECK(parse_error(body("")) == "HLO parse error at line 4, column 1: expected '%', got '}'");
  CHECK(parse_error(body(p + "  ROOT %a = f32[3]{0} negate(f32[3]{0} %p)\n" +
                         "  ROOT %b = f32[3]{0} negate(f32[3]{0} %p)\n")) ==
        "HLO parse error at line 6, column 3: a second ROOT in computation %main");
}

TEST_CASE("HLO verifier: shape rules name the instruction", "[hlo]") {
  auto module = [](const std::string& params, const std::string& lines) {
    return "HloModule m\n\nENTRY %main (" + params + ") -> f32[] {\n" + lines +
           "  ROOT %z = f32[] constant(0)\n}\n";
  };
  const std::string x = "x: f32[2,3]", px = "  %x = f32[2,3]{1,0} parameter(0)\n";
  auto check = [&](const std::string& line, const std::string& message) {
    INFO(line);
    CHECK(verify_error(module(x, px + "  " + line + "\n")) == "HLO verifier: " + message);
  };
  check("%a = f32[2,3]{1,0} add(f32[2,3]{1,0} %x)", "a: add takes 2 operand(s), got 1");
  check(
      "%c = f32[3]{0} constant({1, 2, 3})\n  %a = f32[2,3]{1,0} add(f32[2,3]{1,0} %x, f32[3]{0} "
      "%c)",
      "a: operand 1 has shape f32[3]{0}, the result's dimensions are f32[2,3]{1,0}");
  check("%a = s32[2,3]{1,0} negate(f32[2,3]{1,0} %x)",
        "a: operand 0 has type f32[2,3]{1,0}, expected s32");
  check("%a = f32[2,3]{1,0} compare(f32[2,3]{1,0} %x, f32[2,3]{1,0} %x), direction=LT",
        "a: compare must return pred, got f32[2,3]{1,0}");
  check("%a = pred[2,3]{1,0} compare(f32[2,3]{1,0} %x, f32[2,3]{1,0} %x), direction=XX",
        "a: direction must be one of EQ NE LT LE GT GE");
  check("%a = f32[2,3]{1,0} select(f32[2,3]{1,0} %x, f32[2,3]{1,0} %x, f32[2,3]{1,0} %x)",
        "a: select's predicate must be pred");
  check("%a = f32[2,3]{1,0} not(f32[2,3]{1,0} %x)",
        "a: not needs pred or an integer type, got f32[2,3]{1,0}");
  check("%c = s32[2,3]{1,0} convert(f32[2,3]{1,0} %x)\n  %a = s32[2,3]{1,0} sine(s32[2,3]{1,0} %c)",
        "a: sine needs a floating type, got s32[2,3]{1,0}");
  check("%a = f32[2,3]{1,0} is-finite(f32[2,3]{1,0} %x)",
        "a: is-finite must return pred, got f32[2,3]{1,0}");
  check("%a = f32[2,3,4]{2,1,0} broadcast(f32[2,3]{1,0} %x), dimensions={0,2}",
        "a: operand f32[2,3]{1,0} does not broadcast to f32[2,3,4]{2,1,0} along dimensions {0,2}");
  check("%a = f32[2,3,4]{2,1,0} broadcast(f32[2,3]{1,0} %x), dimensions={1,1}",
        "a: dimensions {1,1} must be unique dimensions in [0, 3)");
  check("%a = f32[2,3,4]{2,1,0} broadcast(f32[2,3]{1,0} %x)", "a: missing attribute 'dimensions'");
  check("%a = f32[5]{0} reshape(f32[2,3]{1,0} %x)", "a: cannot reshape f32[2,3]{1,0} to f32[5]{0}");
  check("%a = f32[3,2]{1,0} transpose(f32[2,3]{1,0} %x), dimensions={0,0}",
        "a: permutation {0,0} must be unique dimensions in [0, 2)");
  check("%a = f32[2,3]{1,0} transpose(f32[2,3]{1,0} %x), dimensions={1,0}",
        "a: result shape must be f32[3,2]{1,0}, got f32[2,3]{1,0}");
  check("%a = f32[2,2]{1,0} slice(f32[2,3]{1,0} %x), slice={[0:2], [2:4]}",
        "a: slice [2:4:1] is out of bounds for dimension 1 of f32[2,3]{1,0}");
  check("%a = f32[2,3]{1,0} slice(f32[2,3]{1,0} %x), slice={[0:2], [0:3:2]}",
        "a: result shape must be f32[2,2]{1,0}, got f32[2,3]{1,0}");
  check("%a = f32[4,4]{1,0} concatenate(f32[2,3]{1,0} %x, f32[2,3]{1,0} %x), dimensions={0}",
        "a: result shape must be f32[4,3]{1,0}, got f32[4,4]{1,0}");
  check("%a = f32[4,3]{1,0} concatenate(f32[2,3]{1,0} %x, f32[2,3]{1,0} %x), dimensions={2}",
        "a: dimensions {2} must name one dimension of f32[2,3]{1,0}");
  check("%a = f32[2,3]{1,0} get-tuple-element(f32[2,3]{1,0} %x), index=0",
        "a: operand must be a tuple, got f32[2,3]{1,0}");
  check(
      "%t = (f32[2,3]{1,0}) tuple(f32[2,3]{1,0} %x)\n  %a = f32[2,3]{1,0} "
      "get-tuple-element((f32[2,3]{1,0}) %t), index=1",
      "a: index 1 out of range for (f32[2,3]{1,0})");
  check("%t = (f32[2,3]{1,0}, f32[]) tuple(f32[2,3]{1,0} %x)",
        "t: result shape must be (f32[2,3]{1,0}), got (f32[2,3]{1,0}, f32[])");
  check(
      "%a = f32[3,3]{1,0} dot(f32[2,3]{1,0} %x, f32[2,3]{1,0} %x), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={1}",
      "a: result shape must be f32[2,2]{1,0}, got f32[3,3]{1,0}");
  check(
      "%a = f32[2,2]{1,0} dot(f32[2,3]{1,0} %x, f32[2,3]{1,0} %x), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={0}",
      "a: dimension sizes differ: f32[2,3]{1,0} dim 1, f32[2,3]{1,0} dim 0");
  const std::string i = "%i = s32[] constant(0)\n  ";
  check(i + "%a = f32[1,3]{1,0} dynamic-slice(f32[2,3]{1,0} %x, s32[] %i, s32[] %i), "
            "dynamic_slice_sizes={1,2}",
        "a: dynamic_slice_sizes must be the result's dimensions {1,3}");
  check(i + "%a = f32[3,3]{1,0} dynamic-slice(f32[2,3]{1,0} %x, s32[] %i, s32[] %i)",
        "a: a window of f32[3,3]{1,0} does not fit in f32[2,3]{1,0}");
  check(i + "%a = f32[1,3]{1,0} dynamic-slice(f32[2,3]{1,0} %x, s32[] %i)",
        "a: expected 3 operands, got 2");
  check("%a = f32[2]{0} iota(), iota_dimension=1",
        "a: iota_dimension 1 out of range for f32[2]{0}");
  check("%a = f32[2,3]{1,0} exponential(f32[2,3]{1,0} %x), calls=%main",
        "a: exponential calls no computation");
}

TEST_CASE("HLO verifier: reduce needs a scalar init, valid dims and a combiner", "[hlo]") {
  const std::string text = R"(HloModule m

%add.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  ROOT %add.4 = f32[] add(f32[] %a.2, f32[] %b.3)
}

%bad.10 (a.11: f32[]) -> f32[] {
  ROOT %a.11 = f32[] parameter(0)
}

ENTRY %main.5 (x.6: f32[2,3]) -> f32[2] {
  %x.6 = f32[2,3]{1,0} parameter(0)
  %zero.7 = f32[] constant(0)
  ROOT %r.8 = f32[2]{0} reduce(f32[2,3]{1,0} %x.6, f32[] %zero.7), dimensions={1}, to_apply=%add.1
}
)";
  verify(*parse_module(text));
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  CHECK(verify_error(replace("dimensions={1}", "dimensions={0}")) ==
        "HLO verifier: r.8: result shape must be f32[3]{0}, got f32[2]{0}");
  CHECK(verify_error(replace("dimensions={1}", "dimensions={2}")) ==
        "HLO verifier: r.8: dimensions {2} must be unique dimensions in [0, 2)");
  CHECK(verify_error(replace("to_apply=%add.1", "to_apply=%bad.10")) ==
        "HLO verifier: r.8: to_apply %bad.10 must map two f32[] to one");
}

TEST_CASE("HLO verifier: structure (roots, parameters, operands, cycles)", "[hlo]") {
  SECTION("no root") {
    Module m("m");
    Computation* c = m.add_computation("main", true);
    Builder(c).parameter(0, f32({}));
    CHECK(verify_error(m) == "HLO verifier: %main.1: computation has no root");
  }
  SECTION("parameter numbers must be dense") {
    Module m("m");
    Computation* c = m.add_computation("main", true);
    c->set_root(Builder(c).parameter(1, f32({})));
    CHECK(verify_error(m) ==
          "HLO verifier: %main.1: parameter numbers must be dense: no parameter(0)");
  }
  SECTION("an operand from another computation") {
    Module m("m");
    Computation* other = m.add_computation("other");
    Instruction* foreign = Builder(other).parameter(0, f32({}));
    other->set_root(foreign);
    Computation* c = m.add_computation("main", true);
    Builder b(c);
    b.parameter(0, f32({}));
    c->set_root(b.unary(Opcode::kNegate, foreign));
    CHECK(verify_error(m) ==
          "HLO verifier: negate.5: operand %Arg_0.2 is not in computation %main.3");
  }
  SECTION("a null operand, a wrong operand count") {
    Module m("m");
    Computation* c = m.add_computation("main", true);
    c->set_root(add_raw(c, Opcode::kNegate, f32({}), {nullptr}));
    CHECK(verify_error(m) == "HLO verifier: negate.2: operand 0 is null");
    c->root()->operands.clear();
    CHECK(verify_error(m) == "HLO verifier: negate.2: negate takes 1 operand(s), got 0");
  }
  SECTION("a cycle") {
    Module m("m");
    Computation* c = m.add_computation("main", true);
    Builder b(c);
    Instruction* p = b.parameter(0, f32({}));
    Instruction* a = b.binary(Opcode::kAdd, p, p);
    Instruction* n = b.unary(Opcode::kNegate, a);
    a->operands[1] = n;
    c->set_root(n);
    CHECK(verify_error(m) == "HLO verifier: add.3: is part of a cycle");
  }
  SECTION("a constant without a literal, a name used twice") {
    Module m("m");
    Computation* c = m.add_computation("main", true);
    Instruction* k = add_raw(c, Opcode::kConstant, f32({}), {});
    c->set_root(k);
    CHECK(verify_error(m) == "HLO verifier: constant.2: constant without a concrete literal");
    k->literal = literal<float>({1.f});
    verify(m);
    Instruction* dup = add_raw(c, Opcode::kNegate, f32({}), {k});
    dup->name = "constant.2";
    CHECK(verify_error(m) == "HLO verifier: constant.2: the name is used twice in the module");
  }
  SECTION("no entry") {
    Module m("m");
    CHECK(verify_error(m) == "HLO verifier: module m: no ENTRY computation");
  }
}

}  // namespace
}  // namespace jx::hlo
