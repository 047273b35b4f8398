// jx::parse_jaxpr: texts JAX 0.11 prints (quoted from its tests and docs) read back into programs
// that run, jit and differentiate, and print back to the same text.
#include <catch2/catch.hpp>

#include <cmath>

#include "jx/jx.hpp"
#include "support/error_of.hpp"

namespace jx {
namespace {

using testing::error_of;

double scalar(const Array& x) { return x.to_vector<double>().at(0); }

TEST_CASE("parse_jaxpr: JAX's grad of sin(cos(x)) runs, jits, differentiates and prints back",
          "[jaxpr][parse]") {
  // jax.make_jaxpr(jax.grad(lambda x: jnp.sin(jnp.cos(x))))(3.0), from make_jaxpr's docstring.
  const char* text = R"({ lambda ; a:f32[]. let
    b:f32[] = cos a
    c:f32[] = sin a
    _:f32[] = sin b
    d:f32[] = cos b
    e:f32[] = mul 1.0:f32[] d
    f:f32[] = neg e
    g:f32[] = mul f c
  in (g,) })";
  ClosedJaxpr j = parse_jaxpr(text);
  CHECK(j.str() == text);
  auto df = [j](const Array& x) { return j({x})[0]; };
  // d/dx sin(cos x) = -cos(cos x) sin x; its derivative, -sin(cos x) sin^2 x - cos(cos x) cos x.
  double x = 3.0;
  CHECK(scalar(df(np::array(3.0f))) == Approx(-std::cos(std::cos(x)) * std::sin(x)).epsilon(1e-6));
  CHECK(scalar(jit(df)(np::array(3.0f))) ==
        Approx(-std::cos(std::cos(x)) * std::sin(x)).epsilon(1e-6));
  double second =
      -std::sin(std::cos(x)) * std::sin(x) * std::sin(x) - std::cos(std::cos(x)) * std::cos(x);
  CHECK(scalar(jx::grad(df)(np::array(3.0f))) == Approx(second).epsilon(1e-5));
}

TEST_CASE("parse_jaxpr: JAX's nested jit texts, shared jaxprs and aliased arguments",
          "[jaxpr][parse]") {
  // pjit_test.py test_pretty_print_with_aliased_args: jit(lambda x, y, z: x * y * z)(x, x, x).
  const char* aliased = R"({ lambda ; a:f32[1]. let
    b:f32[1] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[1] c:f32[1] d:f32[1]. let
          e:f32[1] = mul a c
          b:f32[1] = mul e d
        in (b,) }
    ] a a a
  in (b,) })";
  ClosedJaxpr j = parse_jaxpr(aliased);
  CHECK(j.str() == aliased);
  CHECK(scalar(j({np::array({2.f})})[0]) == 8);
  // pjit_test.py test_pretty_print: one jaxpr called twice is printed once, up front.
  const char* shared =
      R"(let lambda = { lambda ; a:f32[1]. let b:f32[1] = integer_pow[y=2] a in (b,) } in
{ lambda ; c:f32[1]. let
    d:f32[1] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[1]. let
          e:f32[1] = jit[name=<lambda> jaxpr=lambda] c
          f:f32[1] = jit[name=<lambda> jaxpr=lambda] c
          d:f32[1] = add e f
        in (d,) }
    ] c
  in (d,) })";
  ClosedJaxpr s = parse_jaxpr(shared);
  CHECK(s.str() == shared);
  auto f = [s](const Array& x) { return np::sum(s({x})[0]); };
  CHECK(scalar(f(np::array({3.f}))) == 18);            // 2 x^2
  CHECK(scalar(jx::grad(f)(np::array({3.f}))) == 12);  // 4 x
  CHECK(scalar(jit(jx::grad(f))(np::array({3.f}))) == 12);
  // A named function's shared jaxpr takes its name: `name=inner` stays a name.
  auto inner = jit([](const Array& b) { return b * 2.f; }, {.name = "inner"});
  ClosedJaxpr twice = make_jaxpr([&](const Array& a) { return inner(a) + inner(a + 1.f); })(
      np::array({1.f, 2.f, 3.f}));
  CHECK(twice.str().find("let inner = {") == 0);
  CHECK(parse_jaxpr(twice.str()).str() == twice.str());
}

TEST_CASE("parse_jaxpr: JAX's cond and scan texts", "[jaxpr][parse]") {
  // The jaxpr of JAX's api_test.py test_cond, laid out by JAX's printer.
  const char* cond = R"({ lambda ; a:f32[]. let
    b:bool[] = ge a 0.0:f32[]
    c:f32[] = add a 1.0:f32[]
    d:f32[] = add a 2.0:f32[]
    e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
    f:f32[] = cond[
      branches=(
        { lambda ; g:f32[] h:f32[] i:f32[]. let j:f32[] = sub i g in (j,) }
        { lambda ; k:f32[] l:f32[] m:f32[]. let n:f32[] = add l k in (n,) }
      )
    ] e a c d
  in (f,) })";
  ClosedJaxpr c = parse_jaxpr(cond);
  CHECK(c.str() == cond);
  // Branch 1 (x >= 0) adds its 2nd and 1st operands, (x + 1) + x; branch 0 takes d - a = 2.
  CHECK(scalar(c({np::array(1.0f)})[0]) == 3);
  CHECK(scalar(c({np::array(-3.0f)})[0]) == 2);
  // lax.scan(lambda c, x: (c + x, c + x), init, xs) as JAX 0.11 binds it (ft_in/ft_out).
  const char* scan = R"({ lambda ; a:f32[] b:f32[5]. let
    c:f32[] d:f32[5] = scan[
      ft_in=((), (None,), (None,))
      ft_out=((None,), (RightsOnly(Right(None)),))
      jaxpr={ lambda ; e:f32[] f:f32[]. let g:f32[] = add e f in (g, g) }
      length=5
      reverse=False
      unroll=1
    ] a b
  in (c, d) })";
  ClosedJaxpr sc = parse_jaxpr(scan);
  CHECK(sc.str() == scan);
  std::vector<Array> outs = sc({np::array(0.5f), np::array({1.f, 2.f, 3.f, 4.f, 5.f})});
  CHECK(scalar(outs[0]) == 15.5);
  CHECK(outs[1].to_vector<double>() == std::vector<double>{1.5, 3.5, 6.5, 10.5, 15.5});
}

TEST_CASE("parse_jaxpr: constvars take the consts given, checked", "[jaxpr][parse][errors]") {
  const char* text = "{ lambda a:f32[2]; b:f32[2]. let c:f32[2] = add b a in (c,) }";
  ClosedJaxpr j = parse_jaxpr(text, {np::array({1.f, 2.f})});
  CHECK(j({np::array({10.f, 20.f})})[0].to_vector<double>() == std::vector<double>{11, 22});
  CHECK(error_of<ValueError>([&] { parse_jaxpr(text); }) ==
        "parse_jaxpr: the jaxpr's constvars are [f32[2]] but the consts given are []");
  CHECK(error_of<ValueError>([&] {
          parse_jaxpr(text, {np::array({1, 2})});
        }) == "parse_jaxpr: the jaxpr's constvars are [f32[2]] but the consts given are [i32[2]]");
  CHECK(error_of<CompileError>([] {
          parse_jaxpr("{ lambda ; a:f32[]. let b:f32[] = frob a in (b,) }");
        }) == "jaxpr parse error at line 1, column 35: unknown primitive 'frob'");
  // Called with other arguments than its invars: a TypeError, not a failed internal check.
  CHECK(error_of<TypeError>([&] { j({}); }) == "ClosedJaxpr takes arguments [f32[2]], got []");
  CHECK(error_of<TypeError>([&] { j({np::array({1.f, 2.f, 3.f})}); }) ==
        "ClosedJaxpr takes arguments [f32[2]], got [f32[3]]");
}

}  // namespace
}  // namespace jx
