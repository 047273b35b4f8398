// The autodiff transforms at the jaxpr level, jaxpr text in and out: jvp_jaxpr (symbolic zeros do
// no tangent work), partial_eval_jaxpr (residuals), dce_jaxpr, vjp_jaxpr, and transpose_jaxpr of
// every linear primitive family, checked by <ct, L(t)> == <L^T(ct), t> with an explicit-loop dot.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "jaxpr/dce.hpp"
#include "jaxpr/jaxpr.hpp"
#include "jx/jx.hpp"
#include "support/grad_values.hpp"
#include "transforms/jvp.hpp"
#include "transforms/partial_eval.hpp"
#include "transforms/transpose.hpp"
#include "transforms/vjp.hpp"

namespace jx {
namespace {

ClosedJaxprData closed(const std::string& text) { return ClosedJaxprData{read_jaxpr(text), {}}; }
std::string text(const ClosedJaxprData& j) { return to_string(j.jaxpr); }

std::vector<Array> run(const ClosedJaxprData& j, const std::vector<Array>& args) {
  return eval_jaxpr(j.jaxpr, j.consts, args);
}

double scalar(const Array& x) { return x.item<double>(); }

// The oracle for the transposition identity: sum_i a[i] * b[i], one element at a time.
double inner(const Array& a, const Array& b) {
  REQUIRE(a.shape() == b.shape());
  std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>();
  double s = 0;
  for (std::size_t i = 0; i < av.size(); ++i) s += av[i] * bv[i];
  return s;
}

Array random_like(const ShapedArray& aval, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<std::size_t>(aval.size()));
  for (double& e : v) e = u(rng);
  return np::array(v, aval.shape).astype(aval.dtype);
}

// Checks transpose_jaxpr(j, linear) against the definition of the transpose: for random linear
// inputs t and output cotangents ct, <ct, L(t)> == <L^T(ct), t>. `known` holds the values of
// the non-linear inputs, in order.
void check_transpose(const std::string& src, const std::vector<bool>& linear,
                     const std::vector<Array>& known = {}, double tol = 1e-10) {
  INFO(src);
  ClosedJaxprData j = closed(src);
  ClosedJaxprData t = transpose_jaxpr(j, linear);
  INFO("transpose: " << text(t));
  typecheck(t.jaxpr);
  CHECK(to_string(read_jaxpr(text(t))) == text(t));
  // The transpose takes the known inputs then one cotangent per output, and returns one
  // cotangent per linear input, each typed like that input.
  std::vector<ShapedArray> want_in;
  for (const Array& k : known) want_in.push_back(k.aval());
  for (const ShapedArray& a : j.jaxpr.out_avals()) want_in.push_back(a);
  REQUIRE(t.jaxpr.in_avals().size() == want_in.size());
  for (std::size_t i = 0; i < want_in.size(); ++i) {
    CHECK(t.jaxpr.in_avals()[i].shape == want_in[i].shape);
    CHECK(t.jaxpr.in_avals()[i].dtype == want_in[i].dtype);
  }
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<Array> args, tangents, cts;
    for (std::size_t i = 0, k = 0; i < linear.size(); ++i) {
      if (linear[i]) {
        tangents.push_back(random_like(j.jaxpr.invars[i]->aval, rng));
        args.push_back(tangents.back());
      } else {
        args.push_back(known.at(k++));
      }
    }
    std::vector<Array> outs = run(j, args);
    std::vector<Array> t_args = known;
    for (const Array& o : outs) {
      cts.push_back(random_like(o.aval(), rng));
      t_args.push_back(cts.back());
    }
    std::vector<Array> in_cts = run(t, t_args);
    REQUIRE(in_cts.size() == tangents.size());
    double lhs = 0, rhs = 0;
    for (std::size_t i = 0; i < outs.size(); ++i) lhs += inner(cts[i], outs[i]);
    for (std::size_t i = 0; i < in_cts.size(); ++i) {
      REQUIRE(in_cts[i].shape() == tangents[i].shape());
      CHECK(in_cts[i].dtype() == tangents[i].dtype());
      rhs += inner(in_cts[i], tangents[i]);
    }
    CHECK(lhs == Approx(rhs).epsilon(tol).margin(tol));
  }
}

// Float64 values for the f64 jaxprs below (a C++ double alone is a weak float32).
using testing::grad_values::f64;

// ---- jvp ---------------------------------------------------------------------------------------

TEST_CASE("jvp_jaxpr: a zero tangent input does no tangent work", "[autodiff_api]") {
  ClosedJaxprData j =
      closed("{ lambda ; a:f32[] b:f32[]. let c:f32[] = mul a b; d:f32[] = sin c in (d,) }");
  // Only a has a tangent (c): `mul a tb` is never emitted.
  CHECK(text(jvp_jaxpr(j, {true, false})) == R"({ lambda ; a:f32[] b:f32[] c:f32[]. let
    d:f32[] = mul a b
    e:f32[] = mul c b
    f:f32[] = sin d
    g:f32[] = cos d
    h:f32[] = mul e g
  in (f, h) })");
  // Both tangents: the product rule's two terms are added.
  CHECK(text(jvp_jaxpr(j, {true, true})) == R"({ lambda ; a:f32[] b:f32[] c:f32[] d:f32[]. let
    e:f32[] = mul a b
    f:f32[] = mul c b
    g:f32[] = mul a d
    h:f32[] = add_any f g
    i:f32[] = sin e
    j:f32[] = cos e
    k:f32[] = mul h j
  in (i, k) })");
  // No tangents: the primal program alone, and an instantiated zero tangent.
  CHECK(text(jvp_jaxpr(j, {false, false})) == R"({ lambda ; a:f32[] b:f32[]. let
    c:f32[] = mul a b
    d:f32[] = sin c
  in (d, 0.0:f32[]) })");
}

TEST_CASE("jvp_jaxpr: values equal the product and chain rules", "[autodiff_api]") {
  ClosedJaxprData j =
      closed("{ lambda ; a:f64[] b:f64[]. let c:f64[] = mul a b; d:f64[] = sin c in (d,) }");
  double a = 0.3, b = -1.2, ta = 0.7, tb = -0.4;
  std::vector<Array> outs = run(jvp_jaxpr(j, {true, true}), {f64(a), f64(b), f64(ta), f64(tb)});
  CHECK(scalar(outs[0]) == Approx(std::sin(a * b)));
  CHECK(scalar(outs[1]) == Approx(std::cos(a * b) * (ta * b + a * tb)));
  outs = run(jvp_jaxpr(j, {false, true}), {f64(a), f64(b), f64(tb)});
  CHECK(scalar(outs[1]) == Approx(std::cos(a * b) * a * tb));
}

TEST_CASE("jvp_jaxpr: a piecewise-constant op contributes a zero tangent", "[autodiff_api]") {
  // d/da (floor(a) * a) = floor(a): floor's tangent is a symbolic zero, so only `mul c b` remains.
  ClosedJaxprData j =
      closed("{ lambda ; a:f32[3]. let b:f32[3] = floor a; c:f32[3] = mul b a in (c,) }");
  ClosedJaxprData d = jvp_jaxpr(j, {true});
  CHECK(text(d) == R"({ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = floor a
    d:f32[3] = mul c a
    e:f32[3] = mul c b
  in (d, e) })");
  std::vector<Array> outs = run(d, {np::array({1.5f, -0.5f, 2.f}), np::array({1.f, 2.f, 3.f})});
  CHECK(outs[1].to_vector<double>() == std::vector<double>{1, -2, 6});
}

TEST_CASE("jvp_jaxpr: an output that is an input passes its tangent through", "[autodiff_api]") {
  ClosedJaxprData j = closed("{ lambda ; a:f32[2] b:f32[2]. let c:f32[2] = neg b in (a, c) }");
  // a's tangent is the third input; b's tangent is zero, so c's tangent is instantiated zeros.
  ClosedJaxprData d = jvp_jaxpr(j, {true, false});
  std::vector<Array> outs =
      run(d, {np::array({1.f, 2.f}), np::array({3.f, 4.f}), np::array({5.f, 6.f})});
  REQUIRE(outs.size() == 4);
  CHECK(outs[2].to_vector<double>() == std::vector<double>{5, 6});
  CHECK(outs[3].to_vector<double>() == std::vector<double>{0, 0});
  CHECK(outs[3].shape() == Shape{2});
  // The tangent input goes straight to the output: no equation reads it, and the zero tangent
  // of c is staged, a broadcast of a literal (omnistaging), not a captured constant.
  CHECK(text(d) == R"({ lambda ; a:f32[2] b:f32[2] c:f32[2]. let
    d:f32[2] = neg b
    e:f32[2] = broadcast_in_dim 0.0:f32[]
  in (a, d, c, e) })");
}

// ---- partial evaluation ------------------------------------------------------------------------

TEST_CASE("partial_eval_jaxpr: the known side computes residuals for the unknown side",
          "[autodiff_api]") {
  ClosedJaxprData j = closed(R"({ lambda ; a:f32[] b:f32[]. let
    c:f32[] = sin a
    d:f32[] = mul c b
    e:f32[] = cos a
  in (d, e) })");
  PartialEval pe = partial_eval_jaxpr(j, {false, true}, {false, false});
  // Known: e (an output), then the residual sin a. Unknown: residual, then b.
  CHECK(text(pe.known) == "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = cos a in (c, b) }");
  CHECK(text(pe.unknown) == "{ lambda ; a:f32[] b:f32[]. let c:f32[] = mul a b in (c,) }");
  CHECK(pe.out_unknowns == std::vector<bool>{true, false});
  CHECK(pe.num_residuals == 1);

  // Running the halves in turn gives the original outputs.
  double a = 0.4, b = 2.5;
  std::vector<Array> known = run(pe.known, {Array(a)});
  std::vector<Array> unknown = run(pe.unknown, {known[1], Array(b)});
  CHECK(scalar(unknown[0]) == Approx(std::sin(a) * b));
  CHECK(scalar(known[0]) == Approx(std::cos(a)));
}

TEST_CASE("partial_eval_jaxpr: an instantiated known output becomes a residual", "[autodiff_api]") {
  ClosedJaxprData j = closed(R"({ lambda ; a:f32[] b:f32[]. let
    c:f32[] = sin a
    d:f32[] = mul c b
    e:f32[] = cos a
  in (d, e) })");
  PartialEval pe = partial_eval_jaxpr(j, {false, true}, {false, true});
  CHECK(text(pe.known) == "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = cos a in (b, c) }");
  CHECK(text(pe.unknown) ==
        "{ lambda ; a:f32[] b:f32[] c:f32[]. let d:f32[] = mul a c in (d, b) }");
  CHECK(pe.out_unknowns == std::vector<bool>{true, true});
  CHECK(pe.num_residuals == 2);
}

TEST_CASE("partial_eval_jaxpr: all known or all unknown", "[autodiff_api]") {
  ClosedJaxprData j =
      closed("{ lambda ; a:f32[] b:f32[]. let c:f32[] = mul a b; d:f32[] = sin c in (d,) }");
  PartialEval known = partial_eval_jaxpr(j, {false, false}, {false});
  CHECK(text(known.known) == text(j));
  CHECK(text(known.unknown) == "{ lambda ; . let  in () }");
  CHECK(known.num_residuals == 0);
  // An unknown b makes everything downstream of it unknown; a is a residual.
  PartialEval half = partial_eval_jaxpr(j, {false, true}, {false});
  CHECK(text(half.known) == "{ lambda ; a:f32[]. let  in (a,) }");
  CHECK(text(half.unknown) == text(j));
  CHECK(half.num_residuals == 1);
}

// ---- dce ---------------------------------------------------------------------------------------

TEST_CASE("dce_jaxpr: unread equations go, transitively; used inputs are reported",
          "[autodiff_api]") {
  ClosedJaxprData j = closed(R"({ lambda ; a:f32[] b:f32[]. let
    c:f32[] = mul a b
    d:f32[] = sin c
    e:f32[] = cos a
    f:f32[] = exp e
  in (d, f) })");
  DceResult all = dce_jaxpr(j);
  CHECK(text(all.jaxpr) == text(j));
  CHECK(all.used_inputs == std::vector<bool>{true, true});

  // Only f: the chain c → d goes, and b is no longer read.
  DceResult r = dce_jaxpr(j, {false, true});
  CHECK(text(r.jaxpr) ==
        "{ lambda ; a:f32[] b:f32[]. let c:f32[] = cos a; d:f32[] = exp c in (d,) }");
  CHECK(r.used_inputs == std::vector<bool>{true, false});
  DceResult pruned = dce_jaxpr(j, {false, true}, /*prune_invars=*/true);
  CHECK(text(pruned.jaxpr) == "{ lambda ; a:f32[]. let b:f32[] = cos a; c:f32[] = exp b in (c,) }");
  CHECK(run(pruned.jaxpr, {Array(0.5f)})[0].item<double>() == Approx(std::exp(std::cos(0.5))));
}

TEST_CASE("dce_jaxpr: equations feeding no output are dropped; no used outputs, no body",
          "[autodiff_api]") {
  ClosedJaxprData j = closed("{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = cos b in (a,) }");
  CHECK(text(dce_jaxpr(j).jaxpr) == "{ lambda ; a:f32[]. let  in (a,) }");
  CHECK(text(dce_jaxpr(j, {false}).jaxpr) == "{ lambda ; a:f32[]. let  in () }");
}

TEST_CASE("dce_jaxpr: unread constvars are dropped with their consts", "[autodiff_api]") {
  ClosedJaxprData j{read_jaxpr(R"({ lambda a:f32[] b:f32[]; c:f32[]. let
    d:f32[] = mul c a
    e:f32[] = mul c b
  in (d, e) })"),
                    {Array(2.f), Array(3.f)}};
  DceResult r = dce_jaxpr(j, {false, true});
  CHECK(text(r.jaxpr) == "{ lambda a:f32[]; b:f32[]. let c:f32[] = mul b a in (c,) }");
  REQUIRE(r.jaxpr.consts.size() == 1);
  CHECK(r.jaxpr.consts[0].item<float>() == 3.f);
  CHECK(run(r.jaxpr, {Array(5.f)})[0].item<float>() == 15.f);
}

// ---- vjp ---------------------------------------------------------------------------------------

TEST_CASE("vjp_jaxpr: forward keeps the residuals, backward is the transposed tangent map",
          "[autodiff_api]") {
  ClosedJaxprData j =
      closed("{ lambda ; a:f32[] b:f32[]. let c:f32[] = mul a b; d:f32[] = sin c in (d,) }");
  VjpJaxprs v = vjp_jaxpr(j, {true, true});
  CHECK(text(v.forward) == R"({ lambda ; a:f32[] b:f32[]. let
    c:f32[] = mul a b
    d:f32[] = sin c
    e:f32[] = cos c
  in (d, b, a, e) })");
  // Residuals (b, a, cos(ab)), then the output cotangent → (ct_a, ct_b).
  CHECK(text(v.backward) == R"({ lambda ; a:f32[] b:f32[] c:f32[] d:f32[]. let
    e:f32[] = mul d c
    f:f32[] = mul b e
    g:f32[] = mul e a
  in (g, f) })");
  CHECK(v.num_outputs == 1);
  CHECK(v.num_residuals == 3);
}

TEST_CASE("vjp_jaxpr: values equal the closed-form gradient", "[autodiff_api]") {
  ClosedJaxprData j = closed(R"({ lambda ; a:f64[3] b:f64[3]. let
    c:f64[3] = mul a b
    d:f64[3] = tanh c
    e:f64[] = reduce_sum[axes=(0,)] d
  in (e,) })");
  VjpJaxprs v = vjp_jaxpr(j, {true, true});
  std::vector<double> a = {0.1, -0.7, 1.3}, b = {2.0, 0.5, -0.3};
  std::vector<Array> fwd = run(v.forward, {np::array(a), np::array(b)});
  REQUIRE(fwd.size() == 1 + v.num_residuals);
  std::vector<Array> bwd_args(fwd.begin() + 1, fwd.end());
  bwd_args.push_back(f64(2.0));
  std::vector<Array> cts = run(v.backward, bwd_args);
  REQUIRE(cts.size() == 2);
  std::vector<double> ga = cts[0].to_vector<double>(), gb = cts[1].to_vector<double>();
  double sum = 0;
  for (int i = 0; i < 3; ++i) {
    double th = std::tanh(a[i] * b[i]);
    sum += th;
    CHECK(ga[i] == Approx(2 * (1 - th * th) * b[i]));
    CHECK(gb[i] == Approx(2 * (1 - th * th) * a[i]));
  }
  CHECK(scalar(fwd[0]) == Approx(sum));
}

TEST_CASE("vjp_jaxpr: residuals the backward pass does not read are dropped from both halves",
          "[autodiff_api]") {
  // Only b is differentiated: the backward pass reads a, never cos(a), so the forward pass does
  // not compute it.
  ClosedJaxprData j =
      closed("{ lambda ; a:f32[] b:f32[]. let c:f32[] = mul a b; d:f32[] = sin a in (c, d) }");
  VjpJaxprs v = vjp_jaxpr(j, {false, true});
  CHECK(text(v.forward) ==
        "{ lambda ; a:f32[] b:f32[]. let c:f32[] = mul a b; d:f32[] = sin a in (c, d, a) }");
  CHECK(text(v.backward) == "{ lambda ; a:f32[] b:f32[] c:f32[]. let d:f32[] = mul a b in (d,) }");
  CHECK(v.num_residuals == 1);
}

// ---- transpose: exact texts --------------------------------------------------------------------

TEST_CASE("transpose_jaxpr: equations run in reverse with their transpose rules",
          "[autodiff_api]") {
  // e = -(2a - b): ct_a = -2 ct, ct_b = ct.
  ClosedJaxprData j = closed(R"({ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = mul a 2.0:f32[]
    d:f32[3] = sub c b
    e:f32[3] = neg d
  in (e,) })");
  CHECK(text(transpose_jaxpr(j, {true, true})) == R"({ lambda ; a:f32[3]. let
    b:f32[3] = neg a
    c:f32[3] = neg b
    d:f32[3] = mul b 2.0:f32[]
  in (d, c) })");
}

TEST_CASE("transpose_jaxpr: non-linear equations run forward first", "[autodiff_api]") {
  // b is known: sin b is computed before the cotangent of a is scaled by it.
  ClosedJaxprData j =
      closed("{ lambda ; a:f32[] b:f32[]. let c:f32[] = sin b; d:f32[] = mul a c in (d,) }");
  ClosedJaxprData t = transpose_jaxpr(j, {true, false});
  CHECK(text(t) == "{ lambda ; a:f32[] b:f32[]. let c:f32[] = sin a; d:f32[] = mul b c in (d,) }");
  CHECK(run(t, {Array(0.5f), Array(3.f)})[0].item<double>() == Approx(3 * std::sin(0.5)));
}

TEST_CASE("transpose_jaxpr: a linear input read twice accumulates; an unread one gets zeros",
          "[autodiff_api]") {
  ClosedJaxprData j = closed(R"({ lambda ; a:f64[2] b:f64[2]. let
    c:f64[2] = mul a 3.0:f64[]
    d:f64[2] = add c a
  in (d,) })");
  std::vector<Array> cts = run(transpose_jaxpr(j, {true, true}), {f64({1, -2}, {2})});
  CHECK(cts[0].to_vector<double>() == std::vector<double>{4, -8});
  CHECK(cts[1].to_vector<double>() == std::vector<double>{0, 0});
  CHECK(cts[1].shape() == Shape{2});
}

// ---- transpose: the identity <ct, L t> = <L^T ct, t> per linear family ----------------------

TEST_CASE("transpose: add, sub, neg, and a 0-d operand that broadcasts", "[autodiff_api]") {
  check_transpose(R"({ lambda ; a:f64[2,3] b:f64[2,3]. let
    c:f64[2,3] = add a b
    d:f64[2,3] = sub c b
    e:f64[2,3] = neg a
    f:f64[2,3] = sub e d
  in (f, c) })",
                  {true, true});
  // A 0-d linear operand broadcasts: its cotangent is the sum of the output's.
  check_transpose(
      "{ lambda ; a:f64[3] b:f64[]. let c:f64[3] = add a b; d:f64[3] = sub b c in (d,) }",
      {true, true});
}

TEST_CASE("transpose: mul and div by a known value, either side, broadcasting", "[autodiff_api]") {
  Array k = f64({0.5, -2, 3}, {3});
  check_transpose("{ lambda ; a:f64[3] b:f64[3]. let c:f64[3] = mul a b in (c,) }", {true, false},
                  {k});
  check_transpose("{ lambda ; a:f64[3] b:f64[3]. let c:f64[3] = mul a b in (c,) }", {false, true},
                  {k});
  check_transpose("{ lambda ; a:f64[3] b:f64[3]. let c:f64[3] = div a b in (c,) }", {true, false},
                  {k});
  check_transpose("{ lambda ; a:f64[] b:f64[3]. let c:f64[3] = mul b a in (c,) }", {true, false},
                  {k});
  check_transpose("{ lambda ; a:f64[] b:f64[3]. let c:f64[3] = div a b in (c,) }", {true, false},
                  {k});
  check_transpose("{ lambda ; a:f64[3] b:f64[]. let c:f64[3] = div a b in (c,) }", {true, false},
                  {f64(4.0)});
  check_transpose(
      "{ lambda ; a:f64[3]. let b:f64[3] = mul a -1.5:f64[]; c:f64[3] = div b 4.0:f64[] in (c,) }",
      {true});
}

TEST_CASE("transpose: dot_general, matmul in either operand", "[autodiff_api]") {
  std::mt19937 rng(7);
  Array a = random_like({{2, 3}, float64}, rng), b = random_like({{3, 4}, float64}, rng);
  const char* mm = R"({ lambda ; a:f64[2,3] b:f64[3,4]. let
    c:f64[2,4] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b
  in (c,) })";
  check_transpose(mm, {true, false}, {b});
  check_transpose(mm, {false, true}, {a});
}

TEST_CASE("transpose: dot_general with batch dims, several and unordered contractions",
          "[autodiff_api]") {
  std::mt19937 rng(9);
  // Leading batch dims: [2,3,4] x [2,4,5] → [2,3,5].
  const char* bmm = R"({ lambda ; a:f64[2,3,4] b:f64[2,4,5]. let
    c:f64[2,3,5] = dot_general[dimension_numbers=(([2], [1]), ([0], [0]))] a b
  in (c,) })";
  check_transpose(bmm, {true, false}, {random_like({{2, 4, 5}, float64}, rng)});
  check_transpose(bmm, {false, true}, {random_like({{2, 3, 4}, float64}, rng)});
  // Batch dims in the middle and last, contracting dims listed out of order:
  // lhs [3,2,4,5] (batch 1, contract 3 and 2), rhs [5,4,6,2] (batch 3, contract 0 and 1).
  const char* odd = R"({ lambda ; a:f64[3,2,4,5] b:f64[5,4,6,2]. let
    c:f64[2,3,6] = dot_general[dimension_numbers=(([3, 2], [0, 1]), ([1], [3]))] a b
  in (c,) })";
  check_transpose(odd, {true, false}, {random_like({{5, 4, 6, 2}, float64}, rng)});
  check_transpose(odd, {false, true}, {random_like({{3, 2, 4, 5}, float64}, rng)});
  const char* swapped = R"({ lambda ; a:f64[3,2,4,5] b:f64[4,5,6,2]. let
    c:f64[2,3,6] = dot_general[dimension_numbers=(([3, 2], [1, 0]), ([1], [3]))] a b
  in (c,) })";
  check_transpose(swapped, {true, false}, {random_like({{4, 5, 6, 2}, float64}, rng)});
  check_transpose(swapped, {false, true}, {random_like({{3, 2, 4, 5}, float64}, rng)});
  // An outer product: no contraction at all.
  const char* outer = R"({ lambda ; a:f64[3] b:f64[4]. let
    c:f64[3,4] = dot_general[dimension_numbers=(([], []), ([], []))] a b
  in (c,) })";
  check_transpose(outer, {true, false}, {random_like({{4}, float64}, rng)});
  check_transpose(outer, {false, true}, {random_like({{3}, float64}, rng)});
}

TEST_CASE("transpose: broadcast_in_dim, new dims and size-1 dims expanded", "[autodiff_api]") {
  check_transpose(R"({ lambda ; a:f64[3]. let
    b:f64[2,3,4] = broadcast_in_dim[broadcast_dimensions=(1,) shape=(2, 3, 4)] a
  in (b,) })",
                  {true});
  check_transpose(R"({ lambda ; a:f64[1,3,1]. let
    b:f64[2,3,4] = broadcast_in_dim[broadcast_dimensions=(0, 1, 2) shape=(2, 3, 4)] a
  in (b,) })",
                  {true});
  check_transpose(R"({ lambda ; a:f64[3,1]. let
    b:f64[3,2,1] = broadcast_in_dim[broadcast_dimensions=(0, 2) shape=(3, 2, 1)] a
  in (b,) })",
                  {true});
  check_transpose(R"({ lambda ; a:f64[]. let
    b:f64[2,2] = broadcast_in_dim[broadcast_dimensions=() shape=(2, 2)] a
  in (b,) })",
                  {true});
}

TEST_CASE("transpose: reshape, transpose, squeeze, expand_dims's broadcast", "[autodiff_api]") {
  check_transpose(R"({ lambda ; a:f64[2,3,4]. let
    b:f64[4,6] = reshape[dimensions=None new_sizes=(4, 6)] a
  in (b,) })",
                  {true});
  // A 3-cycle: its transpose needs the inverse permutation, not the same one.
  check_transpose(R"({ lambda ; a:f64[2,3,4]. let
    b:f64[4,2,3] = transpose[permutation=(2, 0, 1)] a
  in (b,) })",
                  {true});
  check_transpose(R"({ lambda ; a:f64[2,1,3,1]. let
    b:f64[2,3] = squeeze[dimensions=(1, 3)] a
  in (b,) })",
                  {true});
  check_transpose(R"({ lambda ; a:f64[2,3]. let
    b:f64[1,2,3,1] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a
  in (b,) })",
                  {true});
}

TEST_CASE("transpose: reduce_sum over some and all axes", "[autodiff_api]") {
  check_transpose("{ lambda ; a:f64[2,3,4]. let b:f64[3] = reduce_sum[axes=(0, 2)] a in (b,) }",
                  {true});
  check_transpose("{ lambda ; a:f64[2,3]. let b:f64[] = reduce_sum[axes=(0, 1)] a in (b,) }",
                  {true});
}

TEST_CASE("transpose: convert_element_type between float widths", "[autodiff_api]") {
  check_transpose(R"({ lambda ; a:f32[2,3]. let
    b:f64[2,3] = convert_element_type[new_dtype=float64 weak_type=False] a
  in (b,) })",
                  {true}, {}, 1e-6);
  check_transpose(R"({ lambda ; a:f64[4]. let
    b:f32[4] = convert_element_type[new_dtype=float32 weak_type=False] a
  in (b,) })",
                  {true}, {}, 1e-6);
}

TEST_CASE("transpose: select_n routes each cotangent to its case", "[autodiff_api]") {
  Array which = np::array(std::vector<int>{1, 0, 0, 1}, {2, 2}).astype(bool_);
  check_transpose(
      "{ lambda ; p:bool[2,2] a:f64[2,2] b:f64[2,2]. let c:f64[2,2] = select_n p a b in (c,) }",
      {false, true, true}, {which});
  check_transpose(
      "{ lambda ; p:bool[2,2] a:f64[2,2] b:f64[2,2]. let c:f64[2,2] = select_n p a b in (c,) }",
      {false, false, true}, {which, np::zeros({2, 2}, float64)});
  Array idx = np::array(std::vector<int>{2, 0, 1, 1, 0, 2});
  check_transpose(R"({ lambda ; p:i32[6] a:f64[6] b:f64[6] c:f64[6]. let
    d:f64[6] = select_n p a b c
  in (d,) })",
                  {false, true, true, true}, {idx});
}

TEST_CASE("transpose: slice, with and without strides", "[autodiff_api]") {
  check_transpose(R"({ lambda ; a:f64[5,7]. let
    b:f64[3,4] = slice[limit_indices=(4, 7) start_indices=(1, 3) strides=(1, 1)] a
  in (b,) })",
                  {true});
  check_transpose(R"({ lambda ; a:f64[5,7]. let
    b:f64[2,3] = slice[limit_indices=(5, 7) start_indices=(1, 0) strides=(2, 3)] a
  in (b,) })",
                  {true});
  // The limit is not on the stride grid: the last element taken is 1 + 2*2 = 5 < 6.
  check_transpose(R"({ lambda ; a:f64[8]. let
    b:f64[3] = slice[limit_indices=(7,) start_indices=(1,) strides=(2,)] a
  in (b,) })",
                  {true});
}

TEST_CASE("transpose: pad with low, high and interior padding, in operand and padding value",
          "[autodiff_api]") {
  const char* interior = R"({ lambda ; a:f64[2,3] b:f64[]. let
    c:f64[5,9] = pad[padding_config=((1, 1, 1), (0, 2, 2))] a b
  in (c,) })";
  check_transpose(interior, {true, false}, {f64(0.0)});
  check_transpose(interior, {true, true});
  // A known operand must be zero for the map to be linear in the padding value alone.
  check_transpose(interior, {false, true}, {np::zeros({2, 3}, float64)});
  // Negative padding crops.
  check_transpose(R"({ lambda ; a:f64[4] b:f64[]. let
    c:f64[6] = pad[padding_config=((-1, 0, 1),)] a b
  in (c,) })",
                  {true, true});
  check_transpose(R"({ lambda ; a:f64[5]. let
    b:f64[4] = pad[padding_config=((2, -3, 0),)] a 0.0:f64[]
  in (b,) })",
                  {true});
}

TEST_CASE("transpose: concatenate of several operands", "[autodiff_api]") {
  const char* cat = R"({ lambda ; a:f64[2,1] b:f64[2,3] c:f64[2,2]. let
    d:f64[2,6] = concatenate[dimension=1] a b c
  in (d,) })";
  check_transpose(cat, {true, true, true});
  check_transpose(
      "{ lambda ; a:f64[2,2] b:f64[3,2]. let c:f64[5,2] = concatenate[dimension=0] a b in (c,) }",
      {true, true});
}

TEST_CASE("transpose: dynamic_slice and dynamic_update_slice, indices clamped", "[autodiff_api]") {
  const char* ds = R"({ lambda ; a:f64[4,5] i:i32[] j:i32[]. let
    b:f64[2,3] = dynamic_slice[slice_sizes=(2, 3)] a i j
  in (b,) })";
  check_transpose(ds, {true, false, false}, {Array(1), Array(2)});
  // Out of range: both clamp to the last valid start, (2, 2).
  check_transpose(ds, {true, false, false}, {Array(7), Array(-3)});
  const char* dus = R"({ lambda ; a:f64[4,5] u:f64[2,3] i:i32[] j:i32[]. let
    b:f64[4,5] = dynamic_update_slice a u i j
  in (b,) })";
  check_transpose(dus, {true, true, false, false}, {Array(1), Array(2)});
  check_transpose(dus, {true, true, false, false}, {Array(9), Array(-1)});
  // With a known (zero) operand only the update is linear.
  check_transpose(dus, {false, true, false, false},
                  {np::zeros({4, 5}, float64), Array(0), Array(1)});
}

TEST_CASE("transpose: a composite linear map", "[autodiff_api]") {
  // A chain of layout ops and arithmetic, fan-out included.
  check_transpose(R"({ lambda ; a:f64[2,3] b:f64[3]. let
    c:f64[3,2] = transpose[permutation=(1, 0)] a
    d:f64[3,2] = broadcast_in_dim[broadcast_dimensions=(0,) shape=(3, 2)] b
    e:f64[3,2] = add c d
    f:f64[6] = reshape[dimensions=None new_sizes=(6,)] e
    g:f64[3] = slice[limit_indices=(6,) start_indices=(0,) strides=(2,)] f
    h:f64[3] = mul g 0.5:f64[]
    i:f64[3] = sub h b
    j:f64[2] = reduce_sum[axes=(0,)] e
  in (i, j) })",
                  {true, true});
}

}  // namespace
}  // namespace jx
