// np::take, np::take_along_axis, x[i] and x.at[i] against explicit loops over fixed indices.
#include <catch2/catch.hpp>

#include <cmath>

#include <jx/jx.hpp>

#include "core/array_impl.hpp"

namespace jx {
namespace {

using V = std::vector<double>;

V values(const Array& x) { return x.to_vector<double>(); }
Array ints(std::vector<std::int32_t> v, Shape shape) {
  return np::reshape(np::array(v), std::move(shape));
}
// 0, 1, ..., n-1 as float32 of `shape`.
Array counting(Shape shape) {
  return np::reshape(np::arange(0, static_cast<double>(shape_size(shape)), 1, float32), shape);
}

TEST_CASE("np::take: along an axis, flattened, negative and out-of-range indices",
          "[numpy_indexing]") {
  Array x = counting({3, 4});
  Array ids = ints({2, -1, 0}, {3});
  // Along axis 1: out[i, j] = x[i, ids'[j]] with -1 → 3.
  V want;
  for (int i = 0; i < 3; ++i)
    for (int j : {2, 3, 0}) want.push_back(i * 4 + j);
  CHECK(values(np::take(x, ids, 1)) == want);
  CHECK(np::take(x, ints({1, 2, 0, 1}, {2, 2}), 0).shape() == Shape{2, 2, 4});
  CHECK(values(np::take(x, ints({5, -12, 11}, {3}))) == V{5, 0, 11});  // flattened
  V filled = values(np::take(x, ints({4, 0}, {2}), 0));                // row 4 is out of range
  CHECK(std::all_of(filled.begin(), filled.begin() + 4, [](double v) { return std::isnan(v); }));
  CHECK(V(filled.begin() + 4, filled.end()) == V{0, 1, 2, 3});
  CHECK(values(np::take(x, ints({4, 0}, {2}), 0, lax::GatherScatterMode::kClip)) ==
        V{8, 9, 10, 11, 0, 1, 2, 3});
  CHECK(values(np::take(np::arange(0, 5, 1, int32), ints({7}, {1}))) ==
        V{static_cast<double>(std::numeric_limits<std::int32_t>::lowest())});
  auto f = jx::jit([](const Array& a, const Array& i) { return np::take(a, i, 1); });
  CHECK(values(f(x, ids)) == want);
}

TEST_CASE("np::take_along_axis picks one element per row, broadcasting the other dims",
          "[numpy_indexing]") {
  Array x = counting({3, 4});
  Array ids = ints({3, 0, -2}, {3, 1});
  CHECK(values(np::take_along_axis(x, ids, 1)) == V{3, 4, 10});
  CHECK(values(np::take_along_axis(x, ints({2, 1, 0, 2}, {1, 4}), 0)) == V{8, 5, 2, 11});
  // indices [1, 2] against a [3, 4]: the indices' row repeats for every row of x.
  CHECK(values(np::take_along_axis(x, ints({1, 2}, {1, 2}), 1)) == V{1, 2, 5, 6, 9, 10});
  CHECK_THROWS_MATCHES(np::take_along_axis(x, ints({1}, {1}), 1), ValueError,
                       Catch::Message("indices and arr must have the same number of dimensions; "
                                      "1 vs. 2"));
  auto g = jx::grad([](const Array& a) {
    return np::sum(np::take_along_axis(a, ints({3, 0, 3}, {3, 1}), 1) * 2.0f);
  });
  CHECK(values(g(x)) == V{0, 0, 0, 2, 2, 0, 0, 0, 0, 0, 0, 2});
}

TEST_CASE("x[i]: an int or an integer array along axis 0", "[numpy_indexing]") {
  Array x = counting({3, 2});
  CHECK(values(x[1]) == V{2, 3});
  CHECK(values(x[-1]) == V{4, 5});
  CHECK(values(x[ints({2, 0, -3, 7}, {2, 2})]) == V{4, 5, 0, 1, 0, 1, 4, 5});  // 7 clamps to 2
  CHECK(x[ints({2, 0, 1, 1}, {2, 2})].shape() == Shape{2, 2, 2});
  CHECK_THROWS_MATCHES(x[3], IndexError,
                       Catch::Message("index 3 is out of bounds for axis 0 with size 3"));
  CHECK_THROWS_MATCHES(np::array(1.0f)[0], TypeError,
                       Catch::Message("Too many indices: 0-dimensional array indexed with 1 "
                                      "regular index."));
  CHECK_THROWS_MATCHES(x[np::array(std::vector<float>{1})], TypeError,
                       Catch::Message("Indexer must have integer type, got indexer with type "
                                      "float32"));
  auto f = jx::jit([](const Array& a, const Array& i) { return a[i]; });
  CHECK(values(f(x, ints({2, 0}, {2}))) == V{4, 5, 0, 1});
}

TEST_CASE("x.at(i): functional updates with JAX's rules for repeats and out-of-range indices",
          "[numpy_indexing]") {
  Array x = np::zeros({4}, float32);
  Array ids = ints({1, 3, 1, 9, -1}, {5});  // 1 twice, 9 dropped, -1 is 3
  Array v = np::array(std::vector<float>{1, 2, 3, 4, 5});
  CHECK(values(x.at(ids).add(v)) == V{0, 4, 0, 7});
  CHECK(values(x.at(ids).add(1)) == V{0, 2, 0, 2});  // a scalar broadcasts
  CHECK(values(x.at(2).set(7)) == V{0, 0, 7, 0});
  CHECK(values(x) == V{0, 0, 0, 0});  // unchanged
  CHECK(values(np::ones({4}, float32).at(ids).multiply(v)) == V{1, 3, 1, 10});
  CHECK(values(x.at(ids).max(v)) == V{0, 3, 0, 5});
  CHECK(values(x.at(ids).min(-v)) == V{0, -3, 0, -5});
  CHECK(values(x.at(ids).get()) == V{0, 0, 0, 0, 0});
  // Rows of a matrix; an int value casts to the array's dtype.
  Array m = counting({3, 2});
  CHECK(values(m.at(ints({0, 2}, {2})).set(-1)) == V{-1, -1, 2, 3, -1, -1});
  // Under jit with x donated, the update works in place on x's buffer: one scatter kernel, no
  // copy, and the output is the donated buffer.
  jx::JitOptions options;
  options.donate_argnums = {0};
  auto f = jx::jit([](const Array& a, const Array& i) { return a.at(i).add(1.0f); }, options);
  Array y = np::zeros({4}, float32);
  std::string thunks = f.lower(y, ids).compile().thunk_sequence();
  INFO(thunks);
  CHECK_THAT(thunks, Catch::Contains("scatter"));
  CHECK_THAT(thunks, !Catch::Contains("copy"));
  const void* before = concrete_buffer(y, "test").data();
  Array updated = f(y, ids);
  CHECK(values(updated) == V{0, 2, 0, 2});
  CHECK(y.is_deleted());
  CHECK(concrete_buffer(updated, "test").data() == before);
  // Without donation the scatter works on a copy, and x keeps its values.
  auto g0 = jx::jit([](const Array& a, const Array& i) { return a.at(i).add(1.0f); });
  Array z = np::zeros({4}, float32);
  CHECK_THAT(g0.lower(z, ids).compile().thunk_sequence(), Catch::Contains("copy"));
  CHECK(values(g0(z, ids)) == V{0, 2, 0, 2});
  CHECK(values(z) == V{0, 0, 0, 0});
  // The gradient of an add-update with respect to the values: ones where they landed.
  auto g = jx::grad([&](const Array& u) { return np::sum(x.at(ids).add(u) * 2.0f); });
  CHECK(values(g(v)) == V{2, 2, 2, 0, 2});
}

// x[{...}] against NumPy's rules, written as loops over a [2, 3, 4] array of 0..23.
double at3(std::int64_t i, std::int64_t j, std::int64_t k) {
  return static_cast<double>(i * 12 + j * 4 + k);
}

TEST_CASE("x[{...}]: ints, slices, newaxis and ellipsis", "[numpy_indexing]") {
  Array x = counting({2, 3, 4});
  Array r = x[{1, jx::slice(0, 2)}];  // x[1, 0:2] → [2, 4]
  CHECK(r.shape() == Shape{2, 4});
  V want;
  for (int j = 0; j < 2; ++j)
    for (int k = 0; k < 4; ++k) want.push_back(at3(1, j, k));
  CHECK(values(r) == want);
  // x[..., ::-2]: the last axis backwards by 2.
  want.clear();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k : {3, 1}) want.push_back(at3(i, j, k));
  CHECK(values(x[{jx::ellipsis, jx::slice(std::nullopt, std::nullopt, -2)}]) == want);
  // x[:, newaxis, 2, 1:] → [2, 1, 3]
  Array n = x[{jx::slice(), jx::newaxis, 2, jx::slice(1)}];
  CHECK(n.shape() == Shape{2, 1, 3});
  want.clear();
  for (int i = 0; i < 2; ++i)
    for (int k = 1; k < 4; ++k) want.push_back(at3(i, 2, k));
  CHECK(values(n) == want);
  // Only ints and unit steps: one slice and a reshape, no index arrays staged.
  std::string text = jx::make_jaxpr([](const Array& a) { return a[{1, jx::slice(1)}]; })(x).str();
  INFO(text);
  CHECK_THAT(text, Catch::Contains("slice["));
  CHECK_THAT(text, !Catch::Contains("gather") && !Catch::Contains("concatenate"));
  CHECK(x[{-1, -1, -1}].shape() == Shape{});
  CHECK(values(x[{-1, -1, -1}]) == V{23});
  CHECK(x[{jx::slice(5, 9)}].shape() == Shape{0, 3, 4});  // slices clamp, as Python's
  CHECK_THROWS_MATCHES((x[{0, 0, 0, 0}]), IndexError,
                       Catch::Message("Too many indices: 3-dimensional array indexed with 4 "
                                      "regular indices."));
  CHECK_THROWS_MATCHES((x[{jx::ellipsis, 0, jx::ellipsis}]), IndexError,
                       Catch::Message("an index can only have a single ellipsis ('...')"));
  CHECK_THROWS_MATCHES((x[{0, 3}]), IndexError,
                       Catch::Message("index 3 is out of bounds for axis 1 with size 3"));
  CHECK_THROWS_MATCHES((x[{jx::slice(0, 2, 0)}]), ValueError,
                       Catch::Message("slice step cannot be zero"));
}

TEST_CASE("x[{...}] with integer arrays: NumPy's placement of the advanced dims",
          "[numpy_indexing]") {
  Array x = counting({2, 3, 4});
  Array j = ints({2, 0}, {2}), k = ints({1, 3}, {2});
  // Adjacent advanced indices: their dims stand where they were. x[:, j, k] → [2, 2]
  Array a = x[{jx::slice(), j, k}];
  CHECK(a.shape() == Shape{2, 2});
  V want;
  for (int i = 0; i < 2; ++i)
    for (int p = 0; p < 2; ++p) want.push_back(at3(i, p ? 0 : 2, p ? 3 : 1));
  CHECK(values(a) == want);
  // Separated by a slice: the advanced dims go first. x[j', :, k] with j' = [1, 0] → [2, 3]
  Array b = x[{ints({1, 0}, {2}), jx::slice(), k}];
  CHECK(b.shape() == Shape{2, 3});
  want.clear();
  for (int p = 0; p < 2; ++p)
    for (int jj = 0; jj < 3; ++jj) want.push_back(at3(p ? 0 : 1, jj, p ? 3 : 1));
  CHECK(values(b) == want);
  // Broadcasting arrays: a [2, 1] against a [2] gives a [2, 2] block; an int joins them.
  Array c = x[{1, ints({0, 2}, {2, 1}), k}];
  CHECK(c.shape() == Shape{2, 2});
  CHECK(values(c) == V{at3(1, 0, 1), at3(1, 0, 3), at3(1, 2, 1), at3(1, 2, 3)});
  // With a strided slice among them, under jit.
  auto f = jx::jit([](const Array& v, const Array& idx) {
    return v[{jx::slice(std::nullopt, std::nullopt, -1), idx}];
  });
  Array d = f(x, j);  // x[::-1, j] → [2, 2, 4]
  CHECK(d.shape() == Shape{2, 2, 4});
  want.clear();
  for (int i : {1, 0})
    for (int jj : {2, 0})
      for (int kk = 0; kk < 4; ++kk) want.push_back(at3(i, jj, kk));
  CHECK(values(d) == want);
}

TEST_CASE("x.at({...}) updates what x[{...}] reads", "[numpy_indexing]") {
  Array x = np::zeros({3, 4}, float32);
  // x.at[1:, ::2].add(1): rows 1 and 2, columns 0 and 2.
  CHECK(values(x.at({jx::slice(1), jx::slice(std::nullopt, std::nullopt, 2)}).add(1)) ==
        V{0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0});
  // x.at[rows, cols].add(v) with a repeated pair accumulates; an out-of-range pair is dropped.
  Array rows = ints({0, 2, 0, 5}, {4}), cols = ints({1, 3, 1, 0}, {4});
  Array v = np::array(std::vector<float>{1, 2, 3, 4});
  CHECK(values(x.at({rows, cols}).add(v)) == V{0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2});
  CHECK(values(x.at({jx::ellipsis, 3}).set(7)) == V{0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0, 7});
  CHECK(values(x.at({1, jx::slice()}).get()) == V{0, 0, 0, 0});
}

TEST_CASE("x.at(...).set differentiates with repeated indices: the update that won",
          "[numpy_indexing]") {
  Array x = np::zeros({4}, float32), ids = ints({1, 3, 1}, {3});
  Array v = np::array(std::vector<float>{1, 2, 3}), w = np::array(std::vector<float>{1, 2, 3, 4});
  auto loss = [&](const Array& a, const Array& u) { return np::sum(a.at(ids).set(u) * w); };
  // In update order the last of the two updates of element 1 wins: [0, 3, 0, 2].
  CHECK(values(x.at(ids).set(v)) == V{0, 3, 0, 2});
  CHECK(values(jx::grad(loss)(x, v)) == V{1, 0, 3, 0});  // elements no update reached
  CHECK(values(jx::grad([&](const Array& u) { return loss(x, u); })(v)) == V{0, 4, 2});
  auto g = jx::jit(jx::grad([&](const Array& u) { return loss(x, u); }));
  CHECK(values(g(v)) == V{0, 4, 2});
}

TEST_CASE("indices of a narrow dtype index long axes; updates into empty dims are dropped",
          "[numpy_indexing]") {
  Array x = np::arange(0, 300, 1, float32);
  Array ids = np::array(std::vector<std::int8_t>{100, -1});
  CHECK(values(np::take(x, ids)) == V{100, 299});
  CHECK(values(jx::jit([](const Array& a, const Array& i) { return np::take(a, i); })(x, ids)) ==
        V{100, 299});
  Array clip = lax::scatter_add(x, np::reshape(np::array(std::vector<std::int8_t>{120}), {1, 1}),
                                np::ones({1}, float32), {{}, {0}, {0}}, false, false,
                                lax::GatherScatterMode::kClip);
  CHECK(values(clip)[120] == 121);
  // An update window larger than the operand's dim has nowhere to go, clamped or not.
  Array empty = np::zeros({0, 3}, float32), one = ints({0}, {1, 1});
  for (auto mode : {lax::GatherScatterMode::kClip, lax::GatherScatterMode::kFillOrDrop}) {
    CHECK(
        lax::scatter_add(empty, one, np::ones({1, 3}, float32), {{1}, {0}, {0}}, false, false, mode)
            .shape() == Shape{0, 3});
    auto f = jx::jit([mode](const Array& a, const Array& i) {
      return lax::scatter_add(a, i, np::ones({1, 3}, float32), {{1}, {0}, {0}}, false, false, mode);
    });
    CHECK(f(empty, one).shape() == Shape{0, 3});
  }
}

TEST_CASE("64-bit and uint32 indices out of int32's range stay out of bounds", "[numpy_indexing]") {
  // Start indices are int32 for these shapes; a plain conversion would wrap 2^32 + 1 to 1 and
  // 2^32 - 1 to -1, into range.
  Array x = np::array(std::vector<float>{10, 20, 30});
  Array far = np::array(std::vector<std::int64_t>{(std::int64_t{1} << 32) + 1});
  Array far_back = np::array(std::vector<std::int64_t>{-(std::int64_t{1} << 32) - 1});
  Array top = np::array(std::vector<std::uint32_t>{4294967295u});
  for (const Array& i : {far, top}) {
    CHECK(values(x[i]) == V{30});
    CHECK(values(x.at(i).get()) == V{30});
    CHECK(values(x.at(i).add(1.0f)) == V{10, 20, 30});  // dropped
    CHECK(values(x.at(i).set(0.0f)) == V{10, 20, 30});
  }
  CHECK(values(x.at(far_back).get()) == V{10});
  CHECK(values(x.at(far_back).add(1.0f)) == V{10, 20, 30});
  CHECK(std::isnan(values(np::take(x, far))[0]));  // filled
  Array m = counting({2, 3});
  CHECK(values(m[{0, far}]) == V{2});
  CHECK(values(m[{0, top}]) == V{2});
  auto add = jx::jit([](const Array& a, const Array& i) { return a.at(i).add(1.0f); });
  CHECK(values(add(x, far)) == V{10, 20, 30});
  CHECK(values(add(x, np::array(std::vector<std::int64_t>{-1}))) == V{10, 20, 31});
}

TEST_CASE("np::take in clip mode clamps negative indices instead of counting from the end",
          "[numpy_indexing]") {
  Array x = counting({5});
  Array ids = ints({-1, -7, 9, 2}, {4});
  CHECK(values(np::take(x, ids, 0, lax::GatherScatterMode::kClip)) == V{0, 0, 4, 2});
  V filled = values(np::take(x, ids, 0));  // fill mode counts -1 from the end
  CHECK(filled[0] == 4);
  CHECK(std::isnan(filled[1]));
  CHECK(std::isnan(filled[2]));
}

TEST_CASE("Indexing that selects nothing from an empty axis gives an empty result",
          "[numpy_indexing]") {
  Array e = np::zeros({0, 3}, float32), none = np::zeros({0}, int32);
  CHECK(e[none].shape() == Shape{0, 3});
  CHECK(np::zeros({0}, float32)[none].shape() == Shape{0});
  CHECK(e.at(none).get().shape() == Shape{0, 3});
  CHECK(np::take(e, none, 0).shape() == Shape{0, 3});
  CHECK(np::take(e, np::zeros({2, 0}, int32), 0).shape() == Shape{2, 0, 3});
  CHECK(np::take_along_axis(np::zeros({0}, float32), none, 0).shape() == Shape{0});
  CHECK(e.at(none).set(1.0f).shape() == Shape{0, 3});
  auto get = jx::jit([](const Array& a, const Array& i) { return a[i]; });
  CHECK(get(e, none).shape() == Shape{0, 3});
  // Selecting nothing from a non-empty axis too.
  CHECK(counting({3, 2})[none].shape() == Shape{0, 2});
  Array weak = np::broadcast_to(Array(1.0), {0});  // the zeros keep dtype and weak type
  CHECK(weak[none].weak_type());
  CHECK(np::take(np::zeros({0}, int32), none).dtype() == int32);
  CHECK_THROWS_MATCHES(np::take(e, ints({0}, {1}), 0), IndexError,
                       Catch::Message("Cannot do a non-empty take() from an empty axis."));
}

}  // namespace
}  // namespace jx
