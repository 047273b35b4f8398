// Tracing with make_jaxpr: pytree arguments and results, captured constants, nested traces,
// evaluation of traced jaxprs against eager results, and the errors tracers raise.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <map>

#include "support/error_of.hpp"
#include "jaxpr/jaxpr.hpp"
#include "jx/jx.hpp"

namespace jx_trace_test {

struct Dense {
  jx::Array w, b;
};
JX_PYTREE(Dense, w, b)

}  // namespace jx_trace_test

namespace jx {
namespace {

using Catch::Contains;
using jx_trace_test::Dense;

Array f32(const Shape& s) { return np::zeros(s); }

using jx::testing::error_of;

TEST_CASE("make_jaxpr: std::vector and std::tuple arguments flatten in order", "[trace]") {
  auto f = [](const std::vector<Array>& xs, const std::tuple<Array, Array>& t) {
    Array a = xs[0] + xs[1];
    return a * std::get<1>(t);
  };
  std::vector<Array> xs{f32({2}), f32({2})};
  auto t = std::make_tuple(np::zeros({2}, int32), f32({2}));
  CHECK(make_jaxpr(f)(xs, t).str() == R"({ lambda ; a:f32[2] b:f32[2] c:i32[2] d:f32[2]. let
    e:f32[2] = add a b
    f:f32[2] = mul e d
  in (f,) })");
}

TEST_CASE("make_jaxpr: std::map arguments flatten by key, results are pytrees", "[trace]") {
  // Keys in sorted order, as JAX flattens a dict: "b" before "w".
  std::map<std::string, Array> params{{"w", f32({2, 3})}, {"b", f32({3})}};
  auto f = [](const std::map<std::string, Array>& p) {
    Array s = np::sum(p.at("w"), 0);
    Array y = s + p.at("b");
    return std::map<std::string, Array>{{"y", y}, {"s", s}};
  };
  ClosedJaxpr j = make_jaxpr(f)(params);
  CHECK(j.str() == R"({ lambda ; a:f32[3] b:f32[2,3]. let
    c:f32[3] = reduce_sum[axes=(0,) out_sharding=None] b
    d:f32[3] = add c a
  in (c, d) })");
  CHECK(j.in_avals().size() == 2);
  CHECK(j.out_avals().at(1) == ShapedArray{{3}, float32});
}

TEST_CASE("make_jaxpr: JX_PYTREE structs as arguments and results", "[trace]") {
  Dense layer{f32({3, 2}), f32({2})};
  auto f = [](const Dense& d, const Array& x) {
    Array h = np::matmul(x, d.w);
    Array y = h + d.b;
    return Dense{np::tanh(y), d.b};
  };
  ClosedJaxpr j = make_jaxpr(f)(layer, f32({4, 3}));
  REQUIRE(j.in_avals().size() == 3);
  CHECK(j.in_avals()[0] == ShapedArray{{3, 2}, float32});  // w, b, then x
  CHECK(j.in_avals()[1] == ShapedArray{{2}, float32});
  CHECK(j.in_avals()[2] == ShapedArray{{4, 3}, float32});
  REQUIRE(j.out_avals().size() == 2);
  CHECK(j.out_avals()[0] == ShapedArray{{4, 2}, float32});
  CHECK(j.str().find("in (g, b) }") != std::string::npos);  // the struct's fields, in order
}

TEST_CASE("make_jaxpr: scalar and nested-container arguments", "[trace]") {
  // A C++ float is a weak-typed f32[] argument, like a Python float; as in JAX, meeting a
  // strong f32 array converts it to a strong type first.
  auto f = [](const Array& x, const Array& s) { return x * s; };
  ClosedJaxpr j = make_jaxpr(f)(f32({3}), 2.0f);
  CHECK(j.str() == R"({ lambda ; a:f32[3] b:f32[]. let
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    d:f32[3] = mul a c
  in (d,) })");
  CHECK(j.in_avals()[1].weak_type);
  auto g = [](const std::vector<std::pair<Array, Array>>& ps) {
    return std::make_pair(ps[1].first, ps[0].second);
  };
  std::vector<std::pair<Array, Array>> ps{{f32({1}), f32({2})}, {f32({3}), f32({4})}};
  CHECK(make_jaxpr(g)(ps).str() ==
        "{ lambda ; a:f32[1] b:f32[2] c:f32[3] d:f32[4]. let  in (c, b) }");
}

TEST_CASE("make_jaxpr: a captured array becomes one constvar however often it is used", "[trace]") {
  Array c = np::array({1.f, 2.f, 3.f});
  Array other = np::array({4.f, 5.f, 6.f});
  auto f = [&](const Array& x) {
    Array a = x + c;
    Array b = a * c;
    return b - other;
  };
  ClosedJaxpr j = make_jaxpr(f)(f32({3}));
  CHECK(j.str() == R"({ lambda a:f32[3] b:f32[3]; c:f32[3]. let
    d:f32[3] = add c a
    e:f32[3] = mul d a
    f:f32[3] = sub e b
  in (f,) })");
  REQUIRE(j.consts().size() == 2);
  CHECK(j.consts()[0].impl() == c.impl());
  CHECK(j.consts()[1].impl() == other.impl());
  // A captured 0-d array is inlined as a literal, as JAX does.
  Array s = np::array(3.0f);
  auto g = [&](const Array& x) { return x * s; };
  ClosedJaxpr k = make_jaxpr(g)(f32({3}));
  CHECK(k.str() == "{ lambda ; a:f32[3]. let b:f32[3] = mul a 3.0:f32[] in (b,) }");
  CHECK(k.consts().empty());
}

TEST_CASE("make_jaxpr: nested make_jaxpr captures the outer tracer as a constvar", "[trace]") {
  std::string inner_text;
  std::size_t inner_consts = 0;
  bool const_is_tracer = false;
  auto outer = [&](const Array& x) {
    ClosedJaxpr inner = make_jaxpr([&](const Array& y) { return y * x; })(x);
    inner_text = inner.str();
    inner_consts = inner.consts().size();
    const_is_tracer = inner.consts().at(0).is_tracer();
    Array z = inner({x}).at(0);  // evaluating it under the outer trace stages its equations
    return np::sin(z);
  };
  std::string outer_text = make_jaxpr(outer)(f32({3})).str();
  CHECK(inner_text == "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = mul b a in (c,) }");
  CHECK(inner_consts == 1);
  CHECK(const_is_tracer);
  CHECK(outer_text == "{ lambda ; a:f32[3]. let b:f32[3] = mul a a; c:f32[3] = sin b in (c,) }");
}

TEST_CASE("eval_jaxpr of a traced jaxpr equals calling the function eagerly", "[trace]") {
  Array c = np::array({0.5f, -1.f, 2.f});
  auto f = [&](const Array& x, const Array& y) {
    Array a = x * y;
    Array b = np::sin(x);
    Array d = a + b;
    return std::make_pair(np::sum(d), d * c);
  };
  Array x = np::array({1.f, 2.f, 3.f});
  Array y = np::array({4.f, 5.f, 6.f});
  // The oracle: x*y + sin(x) = [4.841470985, 10.909297427, 18.141120008]; its sum; times c.
  std::vector<double> d = {4 + std::sin(1.0), 10 + std::sin(2.0), 18 + std::sin(3.0)};
  double total = d[0] + d[1] + d[2];
  std::vector<double> scaled = {d[0] * 0.5, -d[1], d[2] * 2};

  auto [eager_sum, eager_scaled] = f(x, y);
  ClosedJaxpr j = make_jaxpr(f)(x, y);
  std::vector<Array> traced = j({x, y});
  // The same program read back from its text, with the consts make_jaxpr captured.
  Jaxpr parsed = read_jaxpr(j.str());
  std::vector<Array> reparsed = eval_jaxpr(parsed, j.consts(), {x, y});

  for (const auto* outs : {&traced, &reparsed}) {
    REQUIRE(outs->size() == 2);
    CHECK_FALSE((*outs)[0].is_tracer());
    CHECK((*outs)[0].item<double>() == Approx(total).epsilon(1e-6));
    std::vector<float> v = (*outs)[1].to_vector<float>();
    for (int i = 0; i < 3; ++i) CHECK(v[i] == Approx(scaled[i]).epsilon(1e-6));
    CHECK((*outs)[0].item<float>() == eager_sum.item<float>());
    CHECK((*outs)[1].to_vector<float>() == eager_scaled.to_vector<float>());
  }
}

TEST_CASE("reading a tracer's value is a ConcretizationError naming the fix", "[trace]") {
  auto item = [](const Array& x) { return Array(x.item<float>()); };
  std::string msg = error_of<ConcretizationError>([&] { make_jaxpr(item)(f32({})); });
  CHECK_THAT(msg, Contains("Abstract tracer value encountered where concrete value is expected"));
  CHECK_THAT(msg, Contains("`item()`"));
  CHECK_THAT(msg, Contains("make_jaxpr(f)"));
  CHECK_THAT(msg, Contains("jx::lax::cond"));
  CHECK_THAT(msg, Contains("jx::Static"));

  auto to_vector = [](const Array& x) { return np::array(x.to_vector<float>()); };
  CHECK_THAT(error_of<ConcretizationError>([&] { make_jaxpr(to_vector)(f32({3})); }),
             Contains("`to_vector()`"));

  // Branching on a traced comparison converts it to bool.
  auto branch = [](const Array& x, const Array& y) { return (x < y) ? x : y; };
  std::string b = error_of<ConcretizationError>([&] { make_jaxpr(branch)(f32({}), f32({})); });
  CHECK_THAT(b, Contains("`bool()`"));
  CHECK_THAT(b, Contains("jx::lax::cond"));

  // The failed trace is gone: eager code runs as before.
  CHECK_FALSE(np::sin(np::ones({2})).is_tracer());
}

TEST_CASE("a tracer leaked out of make_jaxpr and used later is a TracerLeakError", "[trace]") {
  Array leaked;
  auto f = [&](const Array& x) {
    leaked = np::sin(x);
    return x;
  };
  make_jaxpr(f)(f32({3}));
  REQUIRE(leaked.is_tracer());
  std::string msg = error_of<TracerLeakError>([&] { leaked + 1.0f; });
  CHECK_THAT(msg, Contains("Encountered an unexpected tracer"));
  CHECK_THAT(msg, Contains("make_jaxpr(f)"));
  CHECK_THAT(msg, Contains("with type f32[3]"));
  CHECK_THAT(msg, Contains("Return the value from the transformed function"));
  CHECK_THAT(error_of<TracerLeakError>([&] { leaked.item<float>(); }),
             Contains("Encountered an unexpected tracer"));
  // Captured into a later trace, it is still a leak, not a constant.
  auto g = [&](const Array& x) { return x + leaked; };
  CHECK_THAT(error_of<TracerLeakError>([&] { make_jaxpr(g)(f32({3})); }),
             Contains("Encountered an unexpected tracer"));
}

TEST_CASE("an empty jx::Array is an error wherever it is used", "[trace]") {
  Array empty;
  CHECK_FALSE(empty.valid());
  std::string msg = error_of<Error>([&] { empty + 1.0f; });
  CHECK_THAT(msg, Contains("empty jx::Array"));
  CHECK_THAT(error_of<Error>([&] { make_jaxpr([](const Array& x) { return x; })(empty); }),
             Contains("empty jx::Array"));
  CHECK_THAT(error_of<Error>([&] { make_jaxpr([&](const Array&) { return empty; })(f32({})); }),
             Contains("empty jx::Array"));
}

}  // namespace
}  // namespace jx
