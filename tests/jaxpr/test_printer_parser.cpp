// Jaxpr text: printer layout (JAX's pretty printer), parse(print(j)) round trips, parse errors
// with line and column, and typecheck errors on ill-typed texts.
#include <catch2/catch.hpp>

#include <functional>
#include <limits>
#include <random>

#include "support/error_of.hpp"
#include "jaxpr/jaxpr.hpp"
#include "jx/jx.hpp"

namespace jx {
namespace {

// The format does not depend on what a primitive means: `sin`'s rule ignores params it does not
// know, so it carries parameters of every kind (and sub-jaxprs) in these texts.

// parse(text) prints as `text` again, and so does parsing that printout.
void check_round_trip(const std::string& text) {
  INFO(text);
  Jaxpr j = read_jaxpr(text);
  CHECK(to_string(j) == text);
  CHECK(to_string(read_jaxpr(to_string(j))) == text);
}

using jx::testing::error_of;

std::string parse_error(const std::string& text) {
  return error_of<CompileError>([&] { read_jaxpr(text); });
}
std::string type_error(const std::string& text) {
  return error_of<TypeError>([&] { read_jaxpr(text); });
}

TEST_CASE("printer: one line when it fits, `; ` between equations", "[jaxpr]") {
  check_round_trip("{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }");
  check_round_trip("{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = cos b in (c,) }");
  // JAX prints an empty equation list as two spaces between `let` and `in`.
  check_round_trip("{ lambda ; a:f32[3]. let  in (a,) }");
  check_round_trip("{ lambda ; a:f32[3] b:i32[]. let  in (b, a) }");
  // An equation without inputs keeps the space before its (empty) input list.
  check_round_trip(
      "{ lambda ; . let a:i32[3] = iota[dimension=0 dtype=int32 shape=(3,)]  in (a,) }");
  check_round_trip("{ lambda ; . let  in () }");
  check_round_trip("{ lambda ; a:f32[]. let b:f32[] = integer_pow[y=-2] a in (b,) }");
}

TEST_CASE("printer: constvars before `;`, several outputs", "[jaxpr]") {
  check_round_trip(R"({ lambda a:f32[3]; b:f32[3]. let
    c:f32[3] = add b a
    d:f32[3] = mul b a
  in (c, d) })");
  check_round_trip("{ lambda a:f32[2,3] b:bool[]; . let  in (b, a) }");
}

TEST_CASE("printer: equations binding several or no outputs", "[jaxpr]") {
  // No primitive has these arities yet, so the IR is built by hand (printing does not check).
  Var a = new_var(ShapedArray{{}, float32}), b = new_var(ShapedArray{{}, float32});
  Var c = new_var(ShapedArray{{}, int32});
  Jaxpr j;
  j.invars = {a};
  j.eqns.push_back(Eqn{find_primitive("sin"), {a}, {}, {b, c}});
  j.eqns.push_back(Eqn{find_primitive("cos"), {b, c}, {}, {}});
  j.outvars = {Atom(a)};
  CHECK(to_string(j) == "{ lambda ; a:f32[]. let b:f32[] c:i32[] = sin a; cos b c in (a,) }");
  // Outputs nobody reads print as `_`, and names skip them.
  j.eqns.pop_back();
  j.outvars = {Atom(c)};
  CHECK(to_string(j) == "{ lambda ; a:f32[]. let _:f32[] b:i32[] = sin a in (b,) }");
}

TEST_CASE("printer: multi-line form indents equations by 4 and `in` by 2", "[jaxpr]") {
  check_round_trip(R"({ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = sin a
    d:f32[3] = cos b
    e:f32[3] = sin[name=long_enough_to_wrap] c
    f:f32[3] = neg e
  in (f, d) })");
  // A binder list wraps only once its line has reached 80 columns, continuing 4 in.
  check_round_trip(
      "{ lambda ; a:f32[1000,1000] b:f32[1000,1000] c:f32[1000,1000] d:f32[1000,1000] "
      "e:f32[1000,1000]\n"
      "    f:f32[1000,1000]. let\n"
      "    g:f32[1000,1000] = sin a\n"
      "  in (g,) }");
}

TEST_CASE("printer: literals of every dtype", "[jaxpr]") {
  // An output list wraps once its line reaches 80 columns; an empty equation list in the broken
  // form leaves a line of 4 spaces, as JAX's printer does.
  check_round_trip(R"({ lambda ; . let
    
  in (2.0:f32[], -1.5:f64[], -3:i32[], 4:i64[], 5:u32[], True:bool[], False:bool[],
    inf:f32[], -inf:f64[], nan:f32[]) })");
  check_round_trip(R"({ lambda ; a:f32[]. let
    b:f32[] = clamp -0.10000000149011612:f32[] a 1.0000000200408773e+20:f32[]
  in (b,) })");
  // Input atoms wrap the same way, onto a continuation line indented 6.
  check_round_trip(R"({ lambda ; a:f64[1000,1000,1000,1000,1000,1000,1000]. let
    b:f64[1000,1000,1000,1000,1000,1000,1000] = clamp -1.2345678901234567:f64[] a
      1e+300:f64[]
  in (b,) })");
  check_round_trip("{ lambda ; . let  in (-9223372036854775808:i64[], 4294967295:u32[]) }");
  // f32 values print as the double they are, the way JAX prints np.float32(0.1).item().
  check_round_trip("{ lambda ; . let  in (0.10000000149011612:f32[], 1e+20:f64[], 0.1:f64[]) }");
  // So do the 16-bit floats' (bfloat16's 0.1 is 0.10009765625); they read back exactly.
  check_round_trip("{ lambda ; . let  in (0.10009765625:bf16[], 0.0999755859375:f16[]) }");
  Jaxpr h = read_jaxpr("{ lambda ; . let  in (0.1:bf16[], 3.0:f16[], -inf:bf16[]) }");
  CHECK(to_string(h) == "{ lambda ; . let  in (0.10009765625:bf16[], 3.0:f16[], -inf:bf16[]) }");
  Jaxpr j = read_jaxpr("{ lambda ; . let  in (0.1:f32[], 2:f32[], -0.0:f32[]) }");
  CHECK(to_string(j) ==
        "{ lambda ; . let  in (0.10000000149011612:f32[], 2.0:f32[], -0.0:f32[]) }");
  CHECK(j.outvars[0].literal.item<float>() == 0.1f);
  CHECK(j.outvars[0].literal.dtype() == float32);
  Jaxpr k = read_jaxpr("{ lambda ; . let  in (-3:i32[], True:bool[], -inf:f64[], 7:u32[]) }");
  CHECK(k.outvars[0].literal.item<int>() == -3);
  CHECK(k.outvars[1].literal.item<bool>());
  CHECK(k.outvars[2].literal.item<double>() == -std::numeric_limits<double>::infinity());
  CHECK(k.outvars[3].literal.dtype() == uint32);
}

TEST_CASE("printer: dropped and unused outputs print as `_`", "[jaxpr]") {
  check_round_trip("{ lambda ; a:f32[]. let _:f32[] = sin a; b:f32[] = cos a in (b, 2.0:f32[]) }");
  // An output nobody reads prints `_` (JAX 0.9), so the names skip it.
  Jaxpr j = read_jaxpr("{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = cos a in (c,) }");
  CHECK(to_string(j) == "{ lambda ; a:f32[]. let _:f32[] = sin a; b:f32[] = cos a in (b,) }");
  CHECK(!j.eqns[0].outvars[0]->dropped);
  CHECK(read_jaxpr(to_string(j)).eqns[0].outvars[0]->dropped);
  // `_` binders are distinct variables and may appear anywhere a binder does.
  Jaxpr d = read_jaxpr("{ lambda _:f32[]; _:f32[] a:f32[]. let  in (a,) }");
  CHECK(d.constvars[0]->dropped);
  CHECK(d.invars[0]->dropped);
  CHECK(d.constvars[0] != d.invars[0]);
  CHECK(to_string(d) == "{ lambda _:f32[]; _:f32[] a:f32[]. let  in (a,) }");
}

TEST_CASE("printer: parameters of every kind", "[jaxpr]") {
  check_round_trip(R"({ lambda ; a:f32[3]. let
    b:f32[3] = sin[
      a=None
      b=True
      c=False
      d=3
      e=-7
      f=2.5
      g=1e-05
      h=float32
      i=int32
      j=Precision.HIGHEST
      k=(1, 2)
      l=(1,)
      m=()
      n=[0, 1]
      o=(([1], [0]), ([], []))
      p=[]
      q=inf
      r=-inf
      s=nan
    ] a
  in (b,) })");
  Jaxpr j = read_jaxpr(
      "{ lambda ; a:f32[]. let b:f32[] = sin[d=3 e=-7 f=2.5 h=float32 k=(1, 2) n=[0, 1] "
      "o=(([1], [0]), ([], [])) x=None z=True] a in (b,) }");
  const Params& p = j.eqns.at(0).params;
  CHECK(p.get("d") == Param::integer(3));
  CHECK(p.get("e") == Param::integer(-7));
  CHECK(p.get("f") == Param::floating(2.5));
  CHECK(p.get("h") == Param::dtype(float32));
  CHECK(p.get("k") == Param::ints({1, 2}));
  CHECK(p.get("n") == Param::int_list({0, 1}));
  CHECK(p.get("o") == Param::tuple({Param::tuple({Param::int_list({1}), Param::int_list({0})}),
                                    Param::tuple({Param::int_list({}), Param::int_list({})})}));
  CHECK(p.get("x").is_none());
  CHECK(p.get("z") == Param::boolean(true));
}

TEST_CASE("printer: sub-jaxprs share the variable names and nest their indentation", "[jaxpr]") {
  check_round_trip(R"({ lambda ; a:f32[3]. let
    b:f32[3] = sin[jaxpr={ lambda ; c:f32[3]. let d:f32[3] = sin c in (d,) }] a
  in (b,) })");
  check_round_trip(R"({ lambda ; a:f32[]. let
    b:f32[] = sin[
      branches=(
        { lambda ; c:f32[]. let d:f32[] = sin c in (d,) }
        { lambda ; e:f32[]. let f:f32[] = cos e in (f,) }
      )
    ] a
  in (b,) })");
  check_round_trip(R"({ lambda ; a:f32[]. let
    b:f32[] = sin[branches=({ lambda ; c:f32[]. let  in (c,) })] a
  in (b,) })");
  // Sub-jaxprs are closed: each binds its own variables (the same name may be reused).
  Jaxpr j = read_jaxpr(
      "{ lambda ; a:f32[]. let b:f32[] = sin[jaxpr={ lambda ; a:f32[]. let b:f32[] = "
      "sin a in (b,) }] a in (b,) }");
  const auto& sub = j.eqns.at(0).params.get("jaxpr").as_jaxpr();
  CHECK(sub->consts.empty());
  CHECK(sub->jaxpr.invars.at(0) != j.invars.at(0));
}

TEST_CASE("printer: a sub-jaxpr used twice or longer than 10 equations is printed up front",
          "[jaxpr]") {
  check_round_trip(R"(let jaxpr = { lambda ; a:f32[]. let b:f32[] = sin a in (b,) } in
{ lambda ; c:f32[]. let
    d:f32[] = sin[jaxpr=jaxpr] c
    e:f32[] = sin[jaxpr=jaxpr] d
  in (e,) })");
  check_round_trip(R"(let jaxpr = { lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = sin b
    d:f32[] = sin c
    e:f32[] = sin d
    f:f32[] = sin e
    g:f32[] = sin f
    h:f32[] = sin g
    i:f32[] = sin h
    j:f32[] = sin i
    k:f32[] = sin j
    l:f32[] = sin k
  in (l,) } in
{ lambda ; m:f32[]. let n:f32[] = cos[jaxpr=jaxpr] m in (n,) })");
}

TEST_CASE("printer: variables named like keywords and literals (in, let, inf, nan)", "[jaxpr]") {
  // Base-26 names reach `in` at 221, `inf` at 5751, `let` at 7559 and `nan` at 8801.
  Jaxpr j;
  j.invars.push_back(new_var(ShapedArray{{3}, float32}));
  Var last = j.invars[0];
  for (int k = 0; k < 8810; ++k) {
    Var v = new_var(ShapedArray{{3}, float32});
    j.eqns.push_back(Eqn{find_primitive("neg"), {last}, {}, {v}});
    last = v;
  }
  j.outvars.push_back(last);
  std::string text = to_string(j);
  for (const char* s : {"\n    in:f32[3] = neg im\n", "\n    io:f32[3] = neg in\n",
                        "\n    ing:f32[3] = neg inf\n", "\n    let:f32[3] = neg les\n",
                        "\n    nan:f32[3] = neg nam\n", "\n    nao:f32[3] = neg nan\n"})
    CHECK(text.find(s) != std::string::npos);
  CHECK(to_string(read_jaxpr(text)) == text);
}

TEST_CASE("printer: make_jaxpr output round trips", "[jaxpr]") {
  Array x = np::ones({2, 3});
  auto f = [](const Array& a) {
    Array b = lax::integer_pow(a, 3);
    Array c = lax::round(b, lax::RoundingMethod::kToNearestEven);
    Array d = lax::convert_element_type(c, int32);
    Array e = lax::exp(lax::sin(a));
    return std::make_tuple(d, e, lax::neg(e));
  };
  std::string text = make_jaxpr(f)(x).str();
  CHECK(text == R"({ lambda ; a:f32[2,3]. let
    b:f32[2,3] = integer_pow[y=3] a
    c:f32[2,3] = round[rounding_method=1] b
    d:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] c
    e:f32[2,3] = sin a
    f:f32[2,3] = exp e
    g:f32[2,3] = neg f
  in (d, f, g) })");
  check_round_trip(text);
  Jaxpr j = read_jaxpr(text);
  CHECK(j.eqns.at(2).params.get("new_dtype") == Param::dtype(int32));
  CHECK(j.eqns.at(2).params.get("weak_type") == Param::boolean(false));
}

TEST_CASE("parser: hand-written layouts are accepted", "[jaxpr]") {
  // Free whitespace, eqns on their own lines at any indentation, `;` optional between lines.
  Jaxpr j = read_jaxpr(R"(
{ lambda ; a:f32[3].
  let
  b:f32[3] = sin a;
  c:f32[3] = cos
     b
  in ( c , ) })");
  CHECK(to_string(j) == "{ lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = cos b in (c,) }");
  // Params are sorted whatever order they are written in.
  Jaxpr k = read_jaxpr("{ lambda ; a:f32[]. let b:f32[] = sin[z=1 a=2] a in (b,) }");
  CHECK(to_string(k) == "{ lambda ; a:f32[]. let b:f32[] = sin[a=2 z=1] a in (b,) }");
}

TEST_CASE("parser: errors name the line, the column and what was expected", "[jaxpr]") {
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:f32[3] = foo a in (b,) }") ==
        "jaxpr parse error at line 1, column 37: unknown primitive 'foo'");
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:f32[3] = sin z in (b,) }") ==
        "jaxpr parse error at line 1, column 41: undefined variable 'z'");
  CHECK(parse_error("{ lambda ; a:c64[3]. let  in (a,) }") ==
        "jaxpr parse error at line 1, column 14: expected a dtype (bool, i8, i16, i32, i64, u8, "
        "u16, u32, u64, bf16, f16, f32 or f64), got 'c64'");
  CHECK(parse_error("{ lambda ; a. let  in (a,) }") ==
        "jaxpr parse error at line 1, column 13: expected ':' and a type after variable 'a', "
        "got '.'");
  CHECK(parse_error("{ lambda ; a:f32[3]. let\n    b:f32[3] = sin a\n    c:f32[3] = cos q\n  in "
                    "(c,) }") == "jaxpr parse error at line 3, column 20: undefined variable 'q'");
  CHECK(parse_error("{ lambda ; a:f32[3]. let b:f32[3] = sin a") ==
        "jaxpr parse error at line 1, column 42: expected an equation or 'in', got the end of the "
        "text");
  CHECK(parse_error("") ==
        "jaxpr parse error at line 1, column 1: expected '{' to open a jaxpr, "
        "got the end of the text");
  CHECK(parse_error("lambda") ==
        "jaxpr parse error at line 1, column 1: expected '{' to open a "
        "jaxpr, got 'lambda'");
  CHECK(parse_error("{ lambda ; a:f32[3]. let  in (a,) } }") ==
        "jaxpr parse error at line 1, column 37: expected the end of the text, got '}'");
  CHECK(parse_error("{ lambda ; a:f32[$]. let  in (a,) }") ==
        "jaxpr parse error at line 1, column 18: unexpected character '$'");
  CHECK(parse_error("{ lambda ; a:f32[]\x01") ==
        "jaxpr parse error at line 1, column 19: unexpected character '\\x01'");
  CHECK(parse_error("{ lambda ; a:f32[-1]. let  in (a,) }") ==
        "jaxpr parse error at line 1, column 18: expected a dimension size (a non-negative "
        "integer), got '-1'");
  CHECK(parse_error("{ lambda ; a:f32[] a:f32[]. let  in (a,) }") ==
        "jaxpr parse error at line 1, column 20: variable 'a' is already defined");
  CHECK(parse_error("{ lambda ; a:f32[]. let b:f32[] = sin a; b:f32[] = cos a in (b,) }") ==
        "jaxpr parse error at line 1, column 42: variable 'b' is already defined");
  CHECK(parse_error("{ lambda ; a:f32[]. let b:f32[] = sin _ in (b,) }") ==
        "jaxpr parse error at line 1, column 39: expected a variable that can be read (`_` is "
        "never bound), got '_'");
  CHECK(parse_error("{ lambda ; a:f32[]. let b:f32[] = sin a in (b }") ==
        "jaxpr parse error at line 1, column 47: expected ',' or ')' in the outputs, got '}'");
  CHECK(parse_error("{ lambda ; a:f32[]. let b:f32[] a in (b,) }") ==
        "jaxpr parse error at line 1, column 35: expected ':' and a type after variable 'a', got "
        "'in'");
}

TEST_CASE("parser: literal and parameter errors", "[jaxpr]") {
  auto lit = [](const std::string& atom) {
    return parse_error("{ lambda ; . let  in (" + atom + ",) }");
  };
  CHECK(lit("True:f32[]") ==
        "jaxpr parse error at line 1, column 23: expected a number for a "
        "f32[] literal, got 'True'");
  CHECK(lit("2:bool[]") ==
        "jaxpr parse error at line 1, column 23: expected True or False for a "
        "bool literal, got '2'");
  CHECK(lit("2.5:i32[]") ==
        "jaxpr parse error at line 1, column 23: expected an integer (that fits in 64 bits), got "
        "'2.5'");
  CHECK(lit("3000000000:i32[]") ==
        "jaxpr parse error at line 1, column 23: literal 3000000000 does not fit in i32[]");
  CHECK(lit("-1:u32[]") ==
        "jaxpr parse error at line 1, column 23: literal -1 does not fit in u32[]");
  CHECK(lit("2.0:f32[3]") ==
        "jaxpr parse error at line 1, column 27: expected a scalar type for a literal, got f32[3]");
  CHECK(lit("2.0") ==
        "jaxpr parse error at line 1, column 26: expected ':' and a type after the "
        "literal 2.0, got ','");
  CHECK(lit("inf:i32[]") ==
        "jaxpr parse error at line 1, column 23: expected an integer (that "
        "fits in 64 bits), got 'inf'");
  auto param = [](const std::string& kv) {
    return parse_error("{ lambda ; a:f32[]. let b:f32[] = sin[" + kv + "] a in (b,) }");
  };
  CHECK(param("k=1 k=2") == "jaxpr parse error at line 1, column 43: parameter 'k' given twice");
  CHECK(param("k") ==
        "jaxpr parse error at line 1, column 40: expected '=' after parameter 'k', "
        "got ']'");
  CHECK(param("k=(1, 2") ==
        "jaxpr parse error at line 1, column 46: expected ',' or ')' in the "
        "tuple, got ']'");
  CHECK(param("k=[1 2]") ==
        "jaxpr parse error at line 1, column 44: expected ',' or ']' in the "
        "list, got '2'");
  CHECK(param("k=:") ==
        "jaxpr parse error at line 1, column 41: expected a parameter value, got ':'");
  CHECK(param("k=99999999999999999999") ==
        "jaxpr parse error at line 1, column 41: expected an "
        "integer (that fits in 64 bits), got "
        "'99999999999999999999'");
  // A sub-jaxpr cannot read the enclosing jaxpr's variables.
  CHECK(parse_error("{ lambda ; a:f32[]. let b:f32[] = sin[jaxpr={ lambda ; . let  in "
                    "(a,) }] a in (b,) }") ==
        "jaxpr parse error at line 1, column 67: undefined variable 'a'");
  // Deep nesting is an error, not a stack overflow.
  std::string deep = std::string(5000, '(') + "1" + std::string(5000, ')');
  CHECK_THAT(param("k=" + deep), Catch::Contains("nesting is too deep"));
}

TEST_CASE("parser: mangled texts throw jx errors, never crash", "[jaxpr]") {
  const std::vector<std::string> seeds = {
      "{ lambda a:f32[3]; b:f32[3] c:i32[]. let d:f32[3] = add b a; e:f32[3] = sin[k=(1, 2) "
      "l=[0] m=None] d in (e, 2.0:f32[]) }",
      "let jaxpr = { lambda ; a:f32[]. let b:f32[] = sin a in (b,) } in\n{ lambda ; c:f32[]. "
      "let\n    d:f32[] = sin[jaxpr=jaxpr] c\n    e:f32[] = cos[branches=(jaxpr { lambda ; "
      "f:f32[]. let  in (f,) })] d\n  in (e, -inf:f64[], True:bool[]) }"};
  const std::string alphabet = "{}()[]:;.,=- abcdefxyz_01239ef32i64u32boolTrueFalseinfnan\n";
  std::mt19937 rng(7);
  int parsed = 0;
  for (int it = 0; it < 4000; ++it) {
    std::string s = seeds[it % seeds.size()];
    for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n; ++k) {
      std::size_t pos = rng() % s.size();
      char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          s.erase(pos, 1 + rng() % 3);
          break;
        case 1:
          s.insert(pos, 1, c);
          break;
        default:
          s[pos] = c;
      }
    }
    INFO(s);
    try {
      std::string printed = to_string(read_jaxpr(s));
      CHECK(to_string(read_jaxpr(printed)) == printed);  // whatever parses, round trips
      ++parsed;
    } catch (const Error&) {
    }
  }
  CHECK(parsed > 0);
}

TEST_CASE("typecheck: ill-typed texts throw jx::TypeError in JAX's words", "[jaxpr]") {
  CHECK(type_error("{ lambda ; a:f32[3]. let b:f32[4] = sin a in (b,) }") ==
        "Jaxpr typecheck error: Value for variable 'b' inconsistently typed as f32[3] for "
        "let-binder of type f32[4]\n\nin equation:\n\nb:f32[4] = sin a");
  CHECK(type_error("{ lambda ; a:f32[3]. let b:i32[3] = sin a in (b,) }") ==
        "Jaxpr typecheck error: Value for variable 'b' inconsistently typed as f32[3] for "
        "let-binder of type i32[3]\n\nin equation:\n\nb:i32[3] = sin a");
  // A variable read before the equation that binds it.
  CHECK(type_error("{ lambda ; a:f32[]. let b:f32[] = sin c; c:f32[] = cos a in (b,) }") ==
        "Jaxpr typecheck error: Variable 'c' not defined\n\nin equation:\n\nb:f32[] = sin c");
  CHECK(type_error("{ lambda ; a:f32[]. let b:f32[] = sin b in (b,) }") ==
        "Jaxpr typecheck error: Variable 'b' not defined\n\nin equation:\n\nb:f32[] = sin b");
  // The primitive's own rule rejects the operand.
  CHECK(type_error("{ lambda ; a:i32[3]. let b:f32[3] = sin a in (b,) }") ==
        "Jaxpr typecheck error: sin does not accept dtype int32. Accepted dtypes are subtypes "
        "of floating.\n\nin equation:\n\nb:f32[3] = sin a");
  // Params of the wrong kind, or missing: the text's error, not an internal one.
  CHECK(type_error("{ lambda ; a:f32[]. let b:f32[] = integer_pow[y=3.5] a in (b,) }") ==
        "Jaxpr typecheck error: a primitive parameter is a float where an integer is "
        "expected\n\nin equation:\n\nb:f32[] = integer_pow[y=3.5] a");
  CHECK(type_error("{ lambda ; a:f32[]. let b:f32[] = integer_pow a in (b,) }") ==
        "Jaxpr typecheck error: missing primitive parameter 'y'\n\nin equation:\n\nb:f32[] = "
        "integer_pow a");
  CHECK(type_error("{ lambda ; a:f32[]. let b:f32[] c:f32[] = sin a in (b,) }") ==
        "Jaxpr typecheck error: the equation binds 2 outputs but sin has 1\n\nin "
        "equation:\n\nb:f32[] c:f32[] = sin a");
  // Sub-jaxprs are checked too.
  CHECK(type_error("{ lambda ; a:f32[]. let b:f32[] = sin[jaxpr={ lambda ; c:f32[]. let "
                   "d:i32[] = cos c in (d,) }] a in (b,) }") ==
        "Jaxpr typecheck error: Value for variable 'b' inconsistently typed as f32[] for "
        "let-binder of type i32[]\n\nin equation:\n\nb:i32[] = cos a");
}

TEST_CASE("typecheck: a hand-built jaxpr reading an unbound variable", "[jaxpr]") {
  Jaxpr j;
  Var a = new_var(ShapedArray{{2}, float32});
  Var b = new_var(ShapedArray{{2}, float32});
  j.invars = {a};
  j.outvars = {Atom(b)};
  CHECK(error_of<TypeError>([&] { typecheck(j); }) ==
        "Jaxpr typecheck error: Variable 'b' not defined");
  j.outvars = {Atom(Array())};
  CHECK(error_of<TypeError>([&] { typecheck(j); }) ==
        "Jaxpr typecheck error: a literal must be a concrete scalar");
}

}  // namespace
}  // namespace jx
