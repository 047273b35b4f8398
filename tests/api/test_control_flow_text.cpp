// jx::lax control flow as make_jaxpr prints it (JAX's text, parsed back and run against the
// oracle values) and under the jit cache: branches and bodies are traced once per signature.
#include <catch2/catch.hpp>

#include <cstdint>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "library/numpy_testing.hpp"
#include "jaxpr/jaxpr.hpp"
#include "jx/jx.hpp"

namespace jx {
namespace {

using np_testing::check_values;

// ---- jaxpr texts --------------------------------------------------------------------------------

// The text parses back to the same text, and the parsed program computes what `want` says.
void check_round_trip(const ClosedJaxpr& j, const std::vector<Array>& args,
                      const std::vector<std::vector<double>>& want) {
  Jaxpr parsed = read_jaxpr(j.str());
  CHECK(to_string(parsed) == j.str());
  std::vector<Array> outs = eval_jaxpr(parsed, j.consts(), args);
  REQUIRE(outs.size() == want.size());
  for (std::size_t k = 0; k < want.size(); ++k) check_values(outs[k], want[k]);
}

TEST_CASE("make_jaxpr: cond prints as JAX's cond[branches=(...)]", "[control_flow][golden]") {
  // lax.cond(p, lambda x: x + 1., lambda x: x * 2., x)   on bool[], f32[3]
  auto f = [](const Array& p, const Array& x) {
    return lax::cond(
        p, [](const Array& v) { return v + 1.0f; }, [](const Array& v) { return v * 2.0f; }, x);
  };
  ClosedJaxpr j = make_jaxpr(f)(Array(true), np::zeros({3}));
  CHECK(j.str() == R"({ lambda ; a:bool[] b:f32[3]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:f32[3] = cond[
      branches=(
        { lambda ; e:f32[3]. let f:f32[3] = mul e 2.0:f32[] in (f,) }
        { lambda ; g:f32[3]. let h:f32[3] = add g 1.0:f32[] in (h,) }
      )
    ] c b
  in (d,) })");
  check_round_trip(j, {Array(true), np::array({1.f, 2.f, 3.f})}, {{2, 3, 4}});
  check_round_trip(j, {Array(false), np::array({1.f, 2.f, 3.f})}, {{2, 4, 6}});
}

TEST_CASE("make_jaxpr: while_loop prints as JAX's while[body_jaxpr=... cond_jaxpr=...]",
          "[control_flow][golden]") {
  // lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2.), (0, x))   on f32[3]
  auto f = [](const Array& x) {
    return lax::while_loop([](const std::pair<Array, Array>& c) { return c.first < 10; },
                           [](const std::pair<Array, Array>& c) {
                             return std::pair{c.first + 1, c.second * 2.0f};
                           },
                           std::pair{Array(0), x})
        .second;
  };
  ClosedJaxpr j = make_jaxpr(f)(np::zeros({3}));
  CHECK(j.str() == R"({ lambda ; a:f32[3]. let
    _:i32[] b:f32[3] = while[
      body_jaxpr={ lambda ; c:i32[] d:f32[3]. let
          e:i32[] = add c 1:i32[]
          f:f32[3] = mul d 2.0:f32[]
        in (e, f) }
      body_nconsts=0
      cond_jaxpr={ lambda ; g:i32[] h:f32[3]. let
          i:bool[] = lt g 10:i32[]
        in (i,) }
      cond_nconsts=0
    ] 0:i32[] a
  in (b,) })");
  check_round_trip(j, {np::array({1.f, -1.f, 0.5f})}, {{1024, -1024, 512}});
}

TEST_CASE("make_jaxpr: scan prints as JAX 0.11's scan[ft_in=... ft_out=... jaxpr=...]",
          "[control_flow][golden]") {
  // lax.scan(lambda c, x: (c + x, c + x), c, xs)   on f32[3], f32[5,3]
  auto f = [](const Array& c, const Array& xs) {
    return lax::scan(
        [](const Array& carry, const Array& x) {
          Array s = carry + x;
          return std::pair{s, s};
        },
        c, xs);
  };
  ClosedJaxpr j = make_jaxpr(f)(np::zeros({3}), np::zeros({5, 3}));
  CHECK(j.str() == R"({ lambda ; a:f32[3] b:f32[5,3]. let
    c:f32[3] d:f32[5,3] = scan[
      ft_in=((), (None,), (None,))
      ft_out=((None,), (RightsOnly(Right(None)),))
      jaxpr={ lambda ; e:f32[3] f:f32[3]. let g:f32[3] = add e f in (g, g) }
      length=5
      reverse=False
      unroll=1
    ] a b
  in (c, d) })");
  std::vector<double> ys, total(3, 0);
  for (int t = 0; t < 5; ++t)
    for (int k = 0; k < 3; ++k) ys.push_back(total[k] += t * 3 + k);
  check_round_trip(j, {np::zeros({3}), np_testing::iota_f32({5, 3})}, {total, ys});
}

// ---- the jit cache ------------------------------------------------------------------------------

TEST_CASE("jit cache: control flow is traced once per abstract signature", "[control_flow]") {
  int traces = 0, branch_traces = 0, body_traces = 0;
  auto f = jit([&](const Array& p, const Array& xs) {
    ++traces;
    Array y = lax::cond(
        p,
        [&](const Array& v) {
          ++branch_traces;
          return v * 2.0f;
        },
        [](const Array& v) { return v; }, xs);
    return lax::scan(
               [&](const Array& c, const Array& x) {
                 ++body_traces;
                 return std::pair{c + x, c};
               },
               np::zeros({2}), y)
        .first;
  });
  Array xs = np::array(std::vector<float>{1.f, 2.f, 3.f, 4.f}, {2, 2});
  check_values(f(Array(true), xs), {8, 12});
  int branches_first = branch_traces, bodies_first = body_traces;
  CHECK(branches_first >= 1);
  CHECK(bodies_first >= 1);
  check_values(f(Array(false), xs), {4, 6});
  check_values(f(Array(true), xs * 2.0f), {16, 24});
  CHECK(traces == 1);
  CHECK(branch_traces == branches_first);
  CHECK(body_traces == bodies_first);
  CacheInfo info = f.cache_info();
  CHECK(info.misses == 1);
  CHECK(info.hits == 2);
  CHECK(info.compiles == 1);
  // A new shape is a new entry.
  check_values(f(Array(true), np::ones({3, 2})), {6, 6});
  CHECK(traces == 2);
  CHECK(f.cache_info().misses == 2);
  CHECK(f.cache_info().entries == 2);
}

}  // namespace
}  // namespace jx
