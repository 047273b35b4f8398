// What np functions stage under make_jaxpr: JAX's text where JAX's output is known, and the
// "convert only when needed, broadcast only when needed" rule elsewhere.
#include <string>

#include "library/numpy_testing.hpp"

namespace jx {
namespace {

using namespace np_testing;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST_CASE("np functions stage JAX's jaxprs", "[numpy]") {
  CHECK(make_jaxpr([](const Array& x) { return x * 3.0f; })(np::zeros({8})).str() ==
        "{ lambda ; a:f32[8]. let b:f32[8] = mul a 3.0:f32[] in (b,) }");
  CHECK(make_jaxpr([](const Array& x) { return 2 * x; })(np::zeros({8})).str() ==
        "{ lambda ; a:f32[8]. let b:f32[8] = mul 2.0:f32[] a in (b,) }");
  CHECK(make_jaxpr([](const Array& x) { return np::power(x, 2); })(np::zeros({3})).str() ==
        "{ lambda ; a:f32[3]. let b:f32[3] = integer_pow[y=2] a in (b,) }");
  CHECK(make_jaxpr([](const Array& x) { return np::sum(x, 0); })(np::zeros({2, 3})).str() ==
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[3] = reduce_sum[axes=(0,) out_sharding=None] a\n"
        "  in (b,) }");
  CHECK(make_jaxpr([](const Array& x) { return np::transpose(x); })(np::zeros({2, 3})).str() ==
        "{ lambda ; a:f32[2,3]. let b:f32[3,2] = transpose[permutation=(1, 0)] a in (b,) }");
  CHECK(make_jaxpr([](const Array& x) { return np::mean(x); })(np::zeros({2, 3})).str() ==
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a\n"
        "    c:f32[] = div b 6.0:f32[]\n"
        "  in (c,) }");
  CHECK(make_jaxpr([](const Array& x, const Array& y) { return x / y; })(np::zeros({3}, int32),
                                                                         np::zeros({3}, int32))
            .str() ==
        "{ lambda ; a:i32[3] b:i32[3]. let\n"
        "    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a\n"
        "    d:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] b\n"
        "    e:f32[3] = div c d\n"
        "  in (e,) }");
  CHECK(make_jaxpr([](const Array& x) { return np::tanh(x); })(np::zeros({3}, int32)).str() ==
        "{ lambda ; a:i32[3]. let\n"
        "    b:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a\n"
        "    c:f32[3] = tanh b\n"
        "  in (c,) }");
  CHECK(make_jaxpr([](const Array& a, const Array& b) { return np::matmul(a, b); })(
            np::zeros({3, 4}), np::zeros({4, 5}))
            .str() ==
        "{ lambda ; a:f32[3,4] b:f32[4,5]. let\n"
        "    c:f32[3,5] = dot_general[\n"
        "      dimension_numbers=(([1], [0]), ([], []))\n"
        "      preferred_element_type=float32\n"
        "    ] a b\n"
        "  in (c,) }");
  CHECK(make_jaxpr([](const Array& x) {
          return np::full({2, 3}, x);
        })(np::array(1.0f))
            .str() == "{ lambda ; a:f32[]. let b:f32[2,3] = broadcast_in_dim a in (b,) }");
}

TEST_CASE("np stages a convert or a broadcast only where one is needed", "[numpy]") {
  // Same shapes and dtypes: the lax op alone.
  CHECK(make_jaxpr([](const Array& x, const Array& y) { return x - y; })(np::zeros({2}),
                                                                         np::zeros({2}))
            .str() == "{ lambda ; a:f32[2] b:f32[2]. let c:f32[2] = sub a b in (c,) }");
  // (3, 1) + (1, 4): equal ranks, so add broadcasts the size-1 dims itself (JAX 0.11).
  std::string bc = make_jaxpr([](const Array& x, const Array& y) { return x + y; })(
                       np::zeros({3, 1}), np::zeros({1, 4}))
                       .str();
  CHECK(bc == "{ lambda ; a:f32[3,1] b:f32[1,4]. let c:f32[3,4] = add a b in (c,) }");
  // jnp.zeros((2, 3)) + jnp.zeros(3): the lower rank gains a leading size-1 dim, no more.
  auto f = [] {
    Array a = np::zeros({2, 3});  // one per statement: C++ leaves operand order unspecified
    Array b = np::zeros({3});
    return a + b;
  };
  CHECK(make_jaxpr(f)().str() ==
        "{ lambda ; . let\n"
        "    a:f32[2,3] = broadcast_in_dim 0.0:f32[]\n"
        "    b:f32[3] = broadcast_in_dim 0.0:f32[]\n"
        "    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n"
        "    d:f32[2,3] = add a c\n"
        "  in (d,) }");
  // A bool sum counts in int32.
  CHECK(make_jaxpr([](const Array& x) { return np::sum(x); })(np::zeros({3}, bool_)).str() ==
        "{ lambda ; a:bool[3]. let\n"
        "    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
        "    c:i32[] = reduce_sum[axes=(0,) out_sharding=None] b\n"
        "  in (c,) }");
  // A stack of matrices times a matrix (JAX's matmul): the stack's batch dim is a free dim of
  // one dot_general, the matrix never broadcast.
  auto matmul = [](const Array& a, const Array& b) { return np::matmul(a, b); };
  std::string mm = make_jaxpr(matmul)(np::zeros({2, 3, 4}), np::zeros({4, 5})).str();
  INFO(mm);
  CHECK(count(mm, "dot_general") == 1);
  CHECK(count(mm, "broadcast_in_dim") == 0);
  CHECK(count(mm, "dimension_numbers=(([2], [0]), ([], []))") == 1);
  CHECK(count(mm, "transpose") == 0);
  // The other way round, the result's dims come out (3, 2, 5) and are transposed to numpy's.
  std::string mt = make_jaxpr(matmul)(np::zeros({3, 4}), np::zeros({2, 4, 5})).str();
  INFO(mt);
  CHECK(count(mt, "dimension_numbers=(([1], [1]), ([], []))") == 1);
  CHECK(count(mt, "transpose[permutation=(1, 0, 2)]") == 1);
  CHECK(count(mt, "broadcast_in_dim") == 0);
  // keepdims puts the reduced axis back with expand_dims.
  CHECK(make_jaxpr([](const Array& x) { return np::max(x, 1, true); })(np::zeros({2, 3})).str() ==
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[2] = reduce_max[axes=(1,)] a\n"
        "    c:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b\n"
        "  in (c,) }");
}

TEST_CASE("np functions run under a trace and give eager results", "[numpy]") {
  // The traced program evaluates to what eager np computes.
  auto f = [](const Array& x, const Array& y) {
    return np::sum(np::floor_divide(x, y) + x % y * 10, 0) + np::argmax(x, 0);
  };
  Array x = np::array(std::vector<int>{-7, 7, 5, -5, 9, 0}, {2, 3});
  Array y = np::array({2, -3, 4});
  ClosedJaxpr j = make_jaxpr(f)(x, y);
  std::vector<Array> out = j({x, y});
  REQUIRE(out.size() == 1);
  CHECK(out[0].to_vector<int>() == f(x, y).to_vector<int>());
  // By hand with Python's // and %: x // y + x % y * 10 is [[6, -23, 11], [7, -3, 0]]; its
  // column sums are [13, -26, 11]; argmax over axis 0 is [1, 1, 0].
  CHECK(out[0].to_vector<int>() == std::vector<int>{14, -25, 11});
}

}  // namespace
}  // namespace jx
