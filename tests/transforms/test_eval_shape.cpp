// eval_shape: a function's result types without computing it, as jax.eval_shape.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "jx/jx.hpp"

namespace jx {
namespace {

TEST_CASE("eval_shape: result shapes, dtypes and weak types in the result's structure",
          "[transforms][eval_shape]") {
  auto f = [](const Array& x, const Array& w) {
    Array h = np::matmul(x, w);
    return std::make_tuple(
        h, std::map<std::string, Array>{{"sum", np::sum(h, 1)}, {"count", np::argmax(h, 0)}},
        std::vector<Array>{x * 2, Array(1.5f) + 0.5f});
  };
  auto [h, stats, rest] = eval_shape(f)(np::ones({8, 3}), np::ones({3, 5}));
  CHECK(h == ShapedArray{{8, 5}, float32, false});
  CHECK(stats.at("sum") == ShapedArray{{8}, float32, false});
  CHECK(stats.at("count") == ShapedArray{{5}, int32, false});
  REQUIRE(rest.size() == 2);
  CHECK(rest[0] == ShapedArray{{8, 3}, float32, false});
  CHECK(rest[1] == ShapedArray{{}, float32, true});
}

TEST_CASE("eval_shape: ShapedArray arguments are never allocated", "[transforms][eval_shape]") {
  // 2^40 floats (4 TiB): computing anything of it would fail.
  ShapedArray huge{{1 << 20, 1 << 20}, bfloat16, false};
  int calls = 0;
  ShapedArray out = eval_shape([&](const Array& x, const Array& y) {
    ++calls;
    return np::sum(x.astype(float32) * y, 0);
  })(huge, np::ones({1 << 20}));
  CHECK(out == ShapedArray{{1 << 20}, float32, false});
  CHECK(calls == 1);
}

TEST_CASE("eval_shape: a shape error is the traced function's", "[transforms][eval_shape]") {
  auto bad = [](const Array& a, const Array& b) { return np::matmul(a, b); };
  CHECK_THROWS_WITH(eval_shape(bad)(ShapedArray{{2, 3}, float32, false}, np::ones({4, 5})),
                    "dot_general requires contracting dimensions to have the same shape, got "
                    "(3,) and (4,).");
}

}  // namespace
}  // namespace jx
