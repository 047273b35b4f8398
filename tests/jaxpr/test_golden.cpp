// Golden make_jaxpr texts: each raw string is what JAX 0.11.2 prints for the Python function in
// the comment above it, `sharding=None` and `out_sharding=None` included where JAX prints them.
// Where jnp wraps a function in a non-inlined jit (jnp.where), the comment names the lax function
// that prints the same equations without the `jit[...]` wrapper.
// C++ sequences the calls one per statement, because operand evaluation order is unspecified.
#include <catch2/catch.hpp>

#include "jaxpr/jaxpr.hpp"
#include "jx/jx.hpp"

namespace jx {
namespace {

Array f32(const Shape& s) { return np::zeros(s); }

// The text, and that it reads back (jx::parse_jaxpr, with the consts traced) into a program
// that prints it again.
void check_golden(const ClosedJaxpr& j, const std::string& text) {
  CHECK(j.str() == text);
  CHECK(parse_jaxpr(text, j.consts()).str() == text);
}
Array i32(const Shape& s) { return np::zeros(s, int32); }

TEST_CASE("golden: an elementwise function", "[jaxpr][golden]") {
  // jax.make_jaxpr(lambda x: jnp.sin(x))(jnp.zeros(3))
  auto f = [](const Array& x) { return np::sin(x); };
  check_golden(make_jaxpr(f)(f32({3})), R"({ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) })");
}

TEST_CASE("golden: a reduction of a sum of products", "[jaxpr][golden]") {
  // lambda x, y: jnp.sum(x * y + jnp.sin(x))   on f32[3], f32[3]
  auto f = [](const Array& x, const Array& y) {
    Array a = x * y;
    Array b = np::sin(x);
    return np::sum(a + b);
  };
  check_golden(make_jaxpr(f)(f32({3}), f32({3})), R"({ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = mul a b
    d:f32[3] = sin a
    e:f32[3] = add c d
    f:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
  in (f,) })");
}

TEST_CASE("golden: several outputs", "[jaxpr][golden]") {
  // lambda x, y: (x + y, x * y)   on f32[3], f32[3]
  auto f = [](const Array& x, const Array& y) {
    Array s = x + y;
    Array p = x * y;
    return std::make_tuple(s, p);
  };
  check_golden(make_jaxpr(f)(f32({3}), f32({3})), R"({ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = add a b
    d:f32[3] = mul a b
  in (c, d) })");
}

TEST_CASE("golden: a captured array is a constvar", "[jaxpr][golden]") {
  // c = jnp.array([1., 2., 3.]); lambda x: x + c   on f32[3]
  Array c = np::array({1.f, 2.f, 3.f});
  auto f = [c](const Array& x) { return x + c; };
  check_golden(make_jaxpr(f)(f32({3})),
               R"({ lambda a:f32[3]; b:f32[3]. let c:f32[3] = add b a in (c,) })");
}

TEST_CASE("golden: scalar literals", "[jaxpr][golden]") {
  // lambda x: x * 2.0   on f32[3]
  auto f = [](const Array& x) { return x * 2.0f; };
  check_golden(make_jaxpr(f)(f32({3})),
               R"({ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) })");
  // lambda x: x + 1   on i32[3]
  auto g = [](const Array& x) { return x + 1; };
  check_golden(make_jaxpr(g)(i32({3})),
               R"({ lambda ; a:i32[3]. let b:i32[3] = add a 1:i32[] in (b,) })");
}

TEST_CASE("golden: lax.dot_general", "[jaxpr][golden]") {
  // lambda a, b: lax.dot_general(a, b, (([1], [0]), ([], [])))   on f32[2,3], f32[3,4]
  // (JAX's printer drops dot_general's None-valued params and prints dims as lists.)
  auto f = [](const Array& a, const Array& b) {
    return lax::dot_general(a, b, {{1}, {0}, {}, {}});
  };
  check_golden(make_jaxpr(f)(f32({2, 3}), f32({3, 4})), R"({ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b
  in (c,) })");
}

TEST_CASE("golden: jnp.dot", "[jaxpr][golden]") {
  // lambda a, b: jnp.dot(a, b)   on f32[2,3], f32[3,4]   (jnp.dot is an inlined jit)
  auto f = [](const Array& a, const Array& b) { return np::dot(a, b); };
  check_golden(make_jaxpr(f)(f32({2, 3}), f32({3, 4})), R"({ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) })");
}

TEST_CASE("golden: broadcast_in_dim from numpy broadcasting", "[jaxpr][golden]") {
  // lambda y: jnp.broadcast_to(y, (2, 3))   on f32[3]
  auto f = [](const Array& y) { return np::broadcast_to(y, {2, 3}); };
  check_golden(make_jaxpr(f)(f32({3})), R"({ lambda ; a:f32[3]. let
    b:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a
  in (b,) })");
}

TEST_CASE("golden: convert_element_type from type promotion", "[jaxpr][golden]") {
  // lambda x, y: x + y   on i32[3], f32[3]
  auto f = [](const Array& x, const Array& y) { return x + y; };
  check_golden(make_jaxpr(f)(i32({3}), f32({3})), R"({ lambda ; a:i32[3] b:f32[3]. let
    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a
    d:f32[3] = add c b
  in (d,) })");
}

TEST_CASE("golden: reshape", "[jaxpr][golden]") {
  // lambda x: jnp.reshape(x, (3, 2))   on f32[2,3]
  auto f = [](const Array& x) { return np::reshape(x, {3, 2}); };
  check_golden(make_jaxpr(f)(f32({2, 3})), R"({ lambda ; a:f32[2,3]. let
    b:f32[3,2] = reshape[dimensions=None new_sizes=(3, 2) sharding=None] a
  in (b,) })");
}

TEST_CASE("golden: transpose", "[jaxpr][golden]") {
  // lambda x: jnp.transpose(x)   on f32[2,3]
  // 82 characters on one line: JAX's fit test leaves out the closing " }".
  auto f = [](const Array& x) { return np::transpose(x); };
  check_golden(
      make_jaxpr(f)(f32({2, 3})),
      R"({ lambda ; a:f32[2,3]. let b:f32[3,2] = transpose[permutation=(1, 0)] a in (b,) })");
}

TEST_CASE("golden: select_n from where", "[jaxpr][golden]") {
  // lambda x, y: lax.select(x > 0, x, y)   on f32[3], f32[3]
  // (jnp.where(x > 0, x, y) stages the same equations inside a `jit[name=_where]` equation.)
  auto f = [](const Array& x, const Array& y) {
    Array c = x > 0;
    return np::where(c, x, y);
  };
  check_golden(make_jaxpr(f)(f32({3}), f32({3})), R"({ lambda ; a:f32[3] b:f32[3]. let
    c:bool[3] = gt a 0.0:f32[]
    d:f32[3] = select_n c b a
  in (d,) })");
}

TEST_CASE("golden: argmax and reduce_max", "[jaxpr][golden]") {
  // lambda x: jnp.argmax(x, axis=1)   on f32[2,3]
  auto f = [](const Array& x) { return np::argmax(x, 1); };
  check_golden(make_jaxpr(f)(f32({2, 3})), R"({ lambda ; a:f32[2,3]. let
    b:i32[2] = argmax[axes=(1,) index_dtype=int32] a
  in (b,) })");
  // lambda x: jnp.max(x, axis=0)   on f32[2,3]
  auto g = [](const Array& x) { return np::max(x, 0); };
  check_golden(make_jaxpr(g)(f32({2, 3})),
               R"({ lambda ; a:f32[2,3]. let b:f32[3] = reduce_max[axes=(0,)] a in (b,) })");
}

TEST_CASE("golden: a longer function prints one equation per line", "[jaxpr][golden]") {
  // def f(x, y):
  //   e = jnp.exp(x) - jnp.log(y)
  //   return jnp.maximum(jnp.tanh(e) / y, 0.0), e      on f32[3], f32[3]
  auto f = [](const Array& x, const Array& y) {
    Array c = np::exp(x);
    Array d = np::log(y);
    Array e = c - d;
    Array t = np::tanh(e);
    Array g = t / y;
    return std::make_pair(np::maximum(g, 0.0f), e);
  };
  check_golden(make_jaxpr(f)(f32({3}), f32({3})), R"({ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = exp a
    d:f32[3] = log b
    e:f32[3] = sub c d
    f:f32[3] = tanh e
    g:f32[3] = div f b
    h:f32[3] = max g 0.0:f32[]
  in (h, e) })");
}

TEST_CASE("golden: the identity has an empty equation list", "[jaxpr][golden]") {
  // lambda x: x   on f32[3]
  auto f = [](const Array& x) { return x; };
  check_golden(make_jaxpr(f)(f32({3})), R"({ lambda ; a:f32[3]. let  in (a,) })");
}

TEST_CASE("golden: texts parse back to the same text", "[jaxpr][golden]") {
  auto f = [](const Array& x, const Array& y) {
    Array a = x * y;
    Array b = np::sin(x);
    Array c = x > 0;
    return std::make_tuple(np::sum(a + b), np::where(c, x, y), np::reshape(x, {3, 1}));
  };
  std::string text = make_jaxpr(f)(f32({3}), f32({3})).str();
  CHECK(to_string(read_jaxpr(text)) == text);
}

}  // namespace
}  // namespace jx
