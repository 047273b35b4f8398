// HLO while and conditional compiled end to end (passes, fusion inside the bodies, nested
// executables run by thunks) from HLO text, against plain C++ loops.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "api/compile.hpp"
#include "hlo/hlo_testing.hpp"
#include "hlo/ir.hpp"
#include "support/float_environment.hpp"

namespace jx {
namespace {

using hlo::testing::literal;

api::CompiledProgram compile(std::string_view text) {
  return api::compile_module(hlo::parse_module(text), "control_flow");
}

// The text of computation %name in a printed module.
std::string computation_text(const std::string& module, const std::string& name) {
  auto start = module.find("\n%" + name + " ");
  REQUIRE(start != std::string::npos);
  return module.substr(start, module.find("\n}\n", start) - start);
}

void check_close(const Array& got, const std::vector<float>& want) {
  std::vector<float> v = got.to_vector<float>();
  REQUIRE(v.size() == want.size());
  for (std::size_t k = 0; k < v.size(); ++k) CHECK(v[k] == Approx(want[k]).epsilon(1e-5));
}

// x ← 0.999·x + 0.01·(v − x), n times, with x's double kept alive past the loop.
constexpr const char* kRelax = R"(HloModule relax
%cond (ci: s32[], cn: s32[], cx: f32[4], cv: f32[4]) -> pred[] {
  %ci = s32[] parameter(0)
  %cn = s32[] parameter(1)
  %cx = f32[4]{0} parameter(2)
  %cv = f32[4]{0} parameter(3)
  ROOT %lt = pred[] compare(s32[] %ci, s32[] %cn), direction=LT
}
%body (bi: s32[], bn: s32[], bx: f32[4], bv: f32[4]) -> (s32[], s32[], f32[4], f32[4]) {
  %bi = s32[] parameter(0)
  %bn = s32[] parameter(1)
  %bx = f32[4]{0} parameter(2)
  %bv = f32[4]{0} parameter(3)
  %one = s32[] constant(1)
  %next = s32[] add(s32[] %bi, s32[] %one)
  %decay = f32[] constant(0.999)
  %decays = f32[4]{0} broadcast(f32[] %decay), dimensions={}
  %rate = f32[] constant(0.01)
  %rates = f32[4]{0} broadcast(f32[] %rate), dimensions={}
  %kept = f32[4]{0} multiply(f32[4]{0} %bx, f32[4]{0} %decays)
  %gap = f32[4]{0} subtract(f32[4]{0} %bv, f32[4]{0} %bx)
  %pull = f32[4]{0} multiply(f32[4]{0} %gap, f32[4]{0} %rates)
  %nx = f32[4]{0} add(f32[4]{0} %kept, f32[4]{0} %pull)
  ROOT %carry = (s32[], s32[], f32[4]{0}, f32[4]{0}) tuple(s32[] %next, s32[] %bn, f32[4]{0} %nx, f32[4]{0} %bv)
}
ENTRY %main (n: s32[], x: f32[4], v: f32[4]) -> (s32[], f32[4], f32[4]) {
  %n = s32[] parameter(0)
  %x = f32[4]{0} parameter(1)
  %v = f32[4]{0} parameter(2)
  %twice = f32[4]{0} add(f32[4]{0} %x, f32[4]{0} %x)
  %zero = s32[] constant(0)
  %loop = (s32[], s32[], f32[4]{0}, f32[4]{0}) while(s32[] %zero, s32[] %n, f32[4]{0} %twice, f32[4]{0} %v), condition=%cond, body=%body
  %count = s32[] get-tuple-element((s32[], s32[], f32[4]{0}, f32[4]{0}) %loop), index=0
  %y = f32[4]{0} get-tuple-element((s32[], s32[], f32[4]{0}, f32[4]{0}) %loop), index=2
  %after = f32[4]{0} negate(f32[4]{0} %twice)
  ROOT %out = (s32[], f32[4]{0}, f32[4]{0}) tuple(s32[] %count, f32[4]{0} %y, f32[4]{0} %after)
})";

TEST_CASE("compiled while: 10,000 iterations of a fused f32[4] update", "[compile][control_flow]") {
  api::CompiledProgram program = compile(kRelax);
  std::string body = computation_text(program.hlo_text->get(), "body");
  INFO(program.hlo_text->get());
  CHECK(body.find(" fusion(") != std::string::npos);
  CHECK(program.thunk_sequence->get().find("while %loop (cond: ") != std::string::npos);

  std::vector<float> x0{1.f, -2.f, 0.5f, 30.f}, v{4.f, 0.f, -1.f, 2.f};
  for (std::int32_t n : {10000, 0, 3}) {
    INFO("n = " << n);
    std::vector<float> x;
    for (float e : x0) x.push_back(e + e);
    std::vector<float> after;
    for (float e : x) after.push_back(-e);
    {
      // x[1] decays past float's normal range, which jx's CPU programs flush to zero.
      detail::ScopedFlushDenormals flush(true);
      for (std::int32_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < x.size(); ++k) x[k] = x[k] * 0.999f + (v[k] - x[k]) * 0.01f;
    }
    std::vector<Array> out = program({literal<std::int32_t>({n}), literal(x0), literal(v)});
    REQUIRE(out.size() == 3);
    CHECK(out[0].item<std::int32_t>() == n);
    check_close(out[1], x);
    CHECK(out[2].to_vector<float>() == after);  // the loop's operand is intact afterwards
  }
}

TEST_CASE("compiled while: a carry of five dtypes", "[compile][control_flow]") {
  api::CompiledProgram program = compile(R"(HloModule dtypes
%cond (ci: s32[], cf: f64[3], cu: u32[2], cp: pred[], cs: s64[]) -> pred[] {
  %ci = s32[] parameter(0)
  %cf = f64[3]{0} parameter(1)
  %cu = u32[2]{0} parameter(2)
  %cp = pred[] parameter(3)
  %cs = s64[] parameter(4)
  %limit = s32[] constant(20)
  ROOT %lt = pred[] compare(s32[] %ci, s32[] %limit), direction=LT
}
%body (bi: s32[], bf: f64[3], bu: u32[2], bp: pred[], bs: s64[]) -> (s32[], f64[3], u32[2], pred[], s64[]) {
  %bi = s32[] parameter(0)
  %bf = f64[3]{0} parameter(1)
  %bu = u32[2]{0} parameter(2)
  %bp = pred[] parameter(3)
  %bs = s64[] parameter(4)
  %one = s32[] constant(1)
  %next = s32[] add(s32[] %bi, s32[] %one)
  %scale = f64[3]{0} constant({1.5, 1.5, 1.5})
  %shift = f64[3]{0} constant({1, 1, 1})
  %scaled = f64[3]{0} multiply(f64[3]{0} %bf, f64[3]{0} %scale)
  %nf = f64[3]{0} subtract(f64[3]{0} %scaled, f64[3]{0} %shift)
  %three = u32[2]{0} constant({3, 3})
  %seven = u32[2]{0} constant({7, 7})
  %tripled = u32[2]{0} multiply(u32[2]{0} %bu, u32[2]{0} %three)
  %nu = u32[2]{0} add(u32[2]{0} %tripled, u32[2]{0} %seven)
  %np = pred[] not(pred[] %bp)
  %wide = s64[] convert(s32[] %bi)
  %ns = s64[] add(s64[] %bs, s64[] %wide)
  ROOT %carry = (s32[], f64[3]{0}, u32[2]{0}, pred[], s64[]) tuple(s32[] %next, f64[3]{0} %nf, u32[2]{0} %nu, pred[] %np, s64[] %ns)
}
ENTRY %main (f: f64[3], u: u32[2], p: pred[], s: s64[]) -> (f64[3], u32[2], pred[], s64[]) {
  %f = f64[3]{0} parameter(0)
  %u = u32[2]{0} parameter(1)
  %p = pred[] parameter(2)
  %s = s64[] parameter(3)
  %zero = s32[] constant(0)
  %loop = (s32[], f64[3]{0}, u32[2]{0}, pred[], s64[]) while(s32[] %zero, f64[3]{0} %f, u32[2]{0} %u, pred[] %p, s64[] %s), condition=%cond, body=%body
  %rf = f64[3]{0} get-tuple-element((s32[], f64[3]{0}, u32[2]{0}, pred[], s64[]) %loop), index=1
  %ru = u32[2]{0} get-tuple-element((s32[], f64[3]{0}, u32[2]{0}, pred[], s64[]) %loop), index=2
  %rp = pred[] get-tuple-element((s32[], f64[3]{0}, u32[2]{0}, pred[], s64[]) %loop), index=3
  %rs = s64[] get-tuple-element((s32[], f64[3]{0}, u32[2]{0}, pred[], s64[]) %loop), index=4
  ROOT %out = (f64[3]{0}, u32[2]{0}, pred[], s64[]) tuple(f64[3]{0} %rf, u32[2]{0} %ru, pred[] %rp, s64[] %rs)
})");
  std::vector<double> f{0.25, 2.0, -3.0};
  std::vector<std::uint32_t> u{1, 4000000000u};
  bool p = true;
  std::int64_t s = std::int64_t{1} << 40;
  std::vector<Array> out =
      program({literal(f), literal(u), literal<bool>({p}), literal<std::int64_t>({s})});
  for (std::int32_t i = 0; i < 20; ++i) {
    for (double& e : f) e = e * 1.5 - 1;
    for (std::uint32_t& e : u) e = e * 3u + 7u;
    p = !p;
    s += i;
  }
  REQUIRE(out.size() == 4);
  std::vector<double> got_f = out[0].to_vector<double>();
  for (std::size_t k = 0; k < f.size(); ++k) CHECK(got_f[k] == Approx(f[k]).epsilon(1e-12));
  CHECK(out[1].to_vector<std::uint32_t>() == u);
  CHECK(out[2].item<bool>() == p);
  CHECK(out[3].item<std::int64_t>() == s);
}

TEST_CASE("compiled while: a carry of one array", "[compile][control_flow]") {
  api::CompiledProgram program = compile(R"(HloModule one
%cond (c: s32[]) -> pred[] {
  %c = s32[] parameter(0)
  %limit = s32[] constant(1000)
  ROOT %lt = pred[] compare(s32[] %c, s32[] %limit), direction=LT
}
%body (b: s32[]) -> (s32[]) {
  %b = s32[] parameter(0)
  %two = s32[] constant(2)
  %one = s32[] constant(1)
  %doubled = s32[] multiply(s32[] %b, s32[] %two)
  %next = s32[] add(s32[] %doubled, s32[] %one)
  ROOT %carry = (s32[]) tuple(s32[] %next)
}
ENTRY %main (x: s32[]) -> s32[] {
  %x = s32[] parameter(0)
  %loop = (s32[]) while(s32[] %x), condition=%cond, body=%body
  ROOT %r = s32[] get-tuple-element((s32[]) %loop), index=0
})");
  for (std::int32_t x0 : {0, 7, 999, 1000, 5000}) {
    std::int32_t x = x0;
    while (x < 1000) x = x * 2 + 1;
    CHECK(program({literal<std::int32_t>({x0})})[0].item<std::int32_t>() == x);
  }
}

TEST_CASE("compiled while: a body that swaps its carry and passes a value through",
          "[compile][control_flow]") {
  // 7 times: (i, a, b, c) ← (i + 1, b, a, c); the body's outputs copy its parameters.
  api::CompiledProgram program = compile(R"(HloModule swap
%cond (ci: s32[], ca: f32[2], cb: f32[2], cc: s32[]) -> pred[] {
  %ci = s32[] parameter(0)
  %ca = f32[2]{0} parameter(1)
  %cb = f32[2]{0} parameter(2)
  %cc = s32[] parameter(3)
  %seven = s32[] constant(7)
  ROOT %lt = pred[] compare(s32[] %ci, s32[] %seven), direction=LT
}
%body (bi: s32[], ba: f32[2], bb: f32[2], bc: s32[]) -> (s32[], f32[2], f32[2], s32[]) {
  %bi = s32[] parameter(0)
  %ba = f32[2]{0} parameter(1)
  %bb = f32[2]{0} parameter(2)
  %bc = s32[] parameter(3)
  %one = s32[] constant(1)
  %next = s32[] add(s32[] %bi, s32[] %one)
  ROOT %carry = (s32[], f32[2]{0}, f32[2]{0}, s32[]) tuple(s32[] %next, f32[2]{0} %bb, f32[2]{0} %ba, s32[] %bc)
}
ENTRY %main (a: f32[2], c: s32[]) -> (f32[2], f32[2], s32[]) {
  %a = f32[2]{0} parameter(0)
  %c = s32[] parameter(1)
  %d = f32[2]{0} add(f32[2]{0} %a, f32[2]{0} %a)
  %zero = s32[] constant(0)
  %loop = (s32[], f32[2]{0}, f32[2]{0}, s32[]) while(s32[] %zero, f32[2]{0} %a, f32[2]{0} %d, s32[] %c), condition=%cond, body=%body
  %ra = f32[2]{0} get-tuple-element((s32[], f32[2]{0}, f32[2]{0}, s32[]) %loop), index=1
  %rb = f32[2]{0} get-tuple-element((s32[], f32[2]{0}, f32[2]{0}, s32[]) %loop), index=2
  %neg = f32[2]{0} negate(f32[2]{0} %rb)
  %rc = s32[] get-tuple-element((s32[], f32[2]{0}, f32[2]{0}, s32[]) %loop), index=3
  ROOT %out = (f32[2]{0}, f32[2]{0}, s32[]) tuple(f32[2]{0} %ra, f32[2]{0} %neg, s32[] %rc)
})");
  std::vector<Array> out = program({literal<float>({1.f, 2.f}), literal<std::int32_t>({42})});
  CHECK(out[0].to_vector<float>() == std::vector<float>{2.f, 4.f});
  CHECK(out[1].to_vector<float>() == std::vector<float>{-1.f, -2.f});
  CHECK(out[2].item<std::int32_t>() == 42);
}

TEST_CASE("compiled conditional: three branches, out-of-range indices run the last",
          "[compile][control_flow]") {
  api::CompiledProgram program = compile(R"(HloModule three_way
%b0 (x0: f32[3], y0: f32[3]) -> (f32[3], s32[]) {
  %x0 = f32[3]{0} parameter(0)
  %y0 = f32[3]{0} parameter(1)
  %sum = f32[3]{0} add(f32[3]{0} %x0, f32[3]{0} %y0)
  %tag0 = s32[] constant(10)
  ROOT %r0 = (f32[3]{0}, s32[]) tuple(f32[3]{0} %sum, s32[] %tag0)
}
%b1 (x1: f32[3], y1: f32[3]) -> (f32[3], s32[]) {
  %x1 = f32[3]{0} parameter(0)
  %y1 = f32[3]{0} parameter(1)
  %prod = f32[3]{0} multiply(f32[3]{0} %x1, f32[3]{0} %y1)
  %tag1 = s32[] constant(11)
  ROOT %r1 = (f32[3]{0}, s32[]) tuple(f32[3]{0} %prod, s32[] %tag1)
}
%b2 (x2: f32[3], y2: f32[3]) -> (f32[3], s32[]) {
  %x2 = f32[3]{0} parameter(0)
  %y2 = f32[3]{0} parameter(1)
  %tag2 = s32[] constant(12)
  ROOT %r2 = (f32[3]{0}, s32[]) tuple(f32[3]{0} %x2, s32[] %tag2)
}
ENTRY %main (k: s32[], x: f32[3], y: f32[3]) -> (f32[3], s32[]) {
  %k = s32[] parameter(0)
  %x = f32[3]{0} parameter(1)
  %y = f32[3]{0} parameter(2)
  %pick = (f32[3]{0}, s32[]) conditional(s32[] %k, f32[3]{0} %x, f32[3]{0} %y), branch_computations={%b0, %b1, %b2}
  %v = f32[3]{0} get-tuple-element((f32[3]{0}, s32[]) %pick), index=0
  %tag = s32[] get-tuple-element((f32[3]{0}, s32[]) %pick), index=1
  ROOT %out = (f32[3]{0}, s32[]) tuple(f32[3]{0} %v, s32[] %tag)
})");
  CHECK(program.thunk_sequence->get().find("conditional %pick (branches: ") != std::string::npos);
  std::vector<float> x{1.5f, -2.f, 3.f}, y{2.f, 0.5f, -1.f};
  for (std::int32_t k : {0, 1, 2, 3, 100, -1, -5}) {
    INFO("index " << k);
    int branch = k == 0 || k == 1 ? k : 2;
    std::vector<float> want;
    for (std::size_t e = 0; e < x.size(); ++e)
      want.push_back(branch == 0 ? x[e] + y[e] : branch == 1 ? x[e] * y[e] : x[e]);
    std::vector<Array> out = program({literal<std::int32_t>({k}), literal(x), literal(y)});
    REQUIRE(out.size() == 2);
    CHECK(out[0].to_vector<float>() == want);
    CHECK(out[1].item<std::int32_t>() == 10 + branch);
  }
}

TEST_CASE("compiled while: a while nested in a while's body", "[compile][control_flow]") {
  // for i in [0, n): for j in [0, i): acc ← 0.5·acc + j
  api::CompiledProgram program = compile(R"(HloModule nested
%inner_cond (cj: s32[], ci: s32[], cacc: f32[2]) -> pred[] {
  %cj = s32[] parameter(0)
  %ci = s32[] parameter(1)
  %cacc = f32[2]{0} parameter(2)
  ROOT %lt = pred[] compare(s32[] %cj, s32[] %ci), direction=LT
}
%inner_body (bj: s32[], bi: s32[], bacc: f32[2]) -> (s32[], s32[], f32[2]) {
  %bj = s32[] parameter(0)
  %bi = s32[] parameter(1)
  %bacc = f32[2]{0} parameter(2)
  %one = s32[] constant(1)
  %nj = s32[] add(s32[] %bj, s32[] %one)
  %half = f32[2]{0} constant({0.5, 0.5})
  %halved = f32[2]{0} multiply(f32[2]{0} %bacc, f32[2]{0} %half)
  %jf = f32[] convert(s32[] %bj)
  %js = f32[2]{0} broadcast(f32[] %jf), dimensions={}
  %nacc = f32[2]{0} add(f32[2]{0} %halved, f32[2]{0} %js)
  ROOT %carry = (s32[], s32[], f32[2]{0}) tuple(s32[] %nj, s32[] %bi, f32[2]{0} %nacc)
}
%outer_cond (oi: s32[], on: s32[], oacc: f32[2]) -> pred[] {
  %oi = s32[] parameter(0)
  %on = s32[] parameter(1)
  %oacc = f32[2]{0} parameter(2)
  ROOT %olt = pred[] compare(s32[] %oi, s32[] %on), direction=LT
}
%outer_body (pi: s32[], pn: s32[], pacc: f32[2]) -> (s32[], s32[], f32[2]) {
  %pi = s32[] parameter(0)
  %pn = s32[] parameter(1)
  %pacc = f32[2]{0} parameter(2)
  %zero = s32[] constant(0)
  %inner = (s32[], s32[], f32[2]{0}) while(s32[] %zero, s32[] %pi, f32[2]{0} %pacc), condition=%inner_cond, body=%inner_body
  %iacc = f32[2]{0} get-tuple-element((s32[], s32[], f32[2]{0}) %inner), index=2
  %uno = s32[] constant(1)
  %ni = s32[] add(s32[] %pi, s32[] %uno)
  ROOT %ocarry = (s32[], s32[], f32[2]{0}) tuple(s32[] %ni, s32[] %pn, f32[2]{0} %iacc)
}
ENTRY %main (n: s32[], acc: f32[2]) -> f32[2] {
  %n = s32[] parameter(0)
  %acc = f32[2]{0} parameter(1)
  %start = s32[] constant(0)
  %outer = (s32[], s32[], f32[2]{0}) while(s32[] %start, s32[] %n, f32[2]{0} %acc), condition=%outer_cond, body=%outer_body
  ROOT %r = f32[2]{0} get-tuple-element((s32[], s32[], f32[2]{0}) %outer), index=2
})");
  for (std::int32_t n : {0, 1, 6, 40}) {
    INFO("n = " << n);
    std::vector<float> acc{3.f, -1.f};
    Array out = program({literal<std::int32_t>({n}), literal(acc)})[0];
    for (std::int32_t i = 0; i < n; ++i)
      for (std::int32_t j = 0; j < i; ++j)
        for (float& a : acc) a = 0.5f * a + static_cast<float>(j);
    check_close(out, acc);
  }
}

TEST_CASE("compiled while: a conditional in a while's body", "[compile][control_flow]") {
  // 12 times: x ← x + 1, x · 2 or x − 3 by i mod 3.
  api::CompiledProgram program = compile(R"(HloModule switch_loop
%add_one (a: f32[4]) -> (f32[4]) {
  %a = f32[4]{0} parameter(0)
  %one = f32[4]{0} constant({1, 1, 1, 1})
  %r = f32[4]{0} add(f32[4]{0} %a, f32[4]{0} %one)
  ROOT %ra = (f32[4]{0}) tuple(f32[4]{0} %r)
}
%double (d: f32[4]) -> (f32[4]) {
  %d = f32[4]{0} parameter(0)
  %dd = f32[4]{0} add(f32[4]{0} %d, f32[4]{0} %d)
  ROOT %rd = (f32[4]{0}) tuple(f32[4]{0} %dd)
}
%minus_three (m: f32[4]) -> (f32[4]) {
  %m = f32[4]{0} parameter(0)
  %three = f32[4]{0} constant({3, 3, 3, 3})
  %mm = f32[4]{0} subtract(f32[4]{0} %m, f32[4]{0} %three)
  ROOT %rm = (f32[4]{0}) tuple(f32[4]{0} %mm)
}
%cond (ci: s32[], cx: f32[4]) -> pred[] {
  %ci = s32[] parameter(0)
  %cx = f32[4]{0} parameter(1)
  %twelve = s32[] constant(12)
  ROOT %lt = pred[] compare(s32[] %ci, s32[] %twelve), direction=LT
}
%body (bi: s32[], bx: f32[4]) -> (s32[], f32[4]) {
  %bi = s32[] parameter(0)
  %bx = f32[4]{0} parameter(1)
  %modulus = s32[] constant(3)
  %which = s32[] remainder(s32[] %bi, s32[] %modulus)
  %step = (f32[4]{0}) conditional(s32[] %which, f32[4]{0} %bx), branch_computations={%add_one, %double, %minus_three}
  %nx = f32[4]{0} get-tuple-element((f32[4]{0}) %step), index=0
  %inc = s32[] constant(1)
  %ni = s32[] add(s32[] %bi, s32[] %inc)
  ROOT %carry = (s32[], f32[4]{0}) tuple(s32[] %ni, f32[4]{0} %nx)
}
ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %zero = s32[] constant(0)
  %loop = (s32[], f32[4]{0}) while(s32[] %zero, f32[4]{0} %x), condition=%cond, body=%body
  ROOT %result = f32[4]{0} get-tuple-element((s32[], f32[4]{0}) %loop), index=1
})");
  std::vector<float> x{0.f, 1.f, -2.5f, 10.f};
  Array out = program({literal(x)})[0];
  for (int i = 0; i < 12; ++i)
    for (float& e : x) e = i % 3 == 0 ? e + 1 : i % 3 == 1 ? e * 2 : e - 3;
  CHECK(out.to_vector<float>() == x);
}

}  // namespace
}  // namespace jx
