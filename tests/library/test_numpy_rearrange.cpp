// np roll, tile, repeat and split against loops over indices written here: negative axes and
// shifts, 0-sized dims, jit, derivatives by finite differences, and every error message.
#include "library/numpy_testing.hpp"
#include "support/check_grads.hpp"

namespace jx {
namespace {

using namespace np_testing;
using Arrays = std::vector<Array>;
using Position = std::vector<std::int64_t>;

// Row-major helpers for the loop oracles.
std::int64_t flat_of(const Position& index, const Shape& shape) {
  std::int64_t f = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + index[d];
  return f;
}
template <class F>
void each_index(const Shape& shape, F f) {
  Position index(shape.size(), 0);
  for (std::int64_t flat = 0; flat < shape_size(shape); ++flat) {
    std::int64_t r = flat;
    for (std::size_t d = shape.size(); d-- > 0;) {
      index[d] = r % shape[d];
      r /= shape[d];
    }
    f(index);
  }
}
// The values of `out_shape` whose element at index i is x[src(i)].
template <class F>
std::vector<double> gather_loop(const Array& x, const Shape& out_shape, F src) {
  std::vector<double> v = x.to_vector<double>(), out;
  each_index(out_shape, [&](const Position& i) { out.push_back(v[flat_of(src(i), x.shape())]); });
  return out;
}

std::int64_t mod(std::int64_t a, std::int64_t n) { return ((a % n) + n) % n; }

// Deterministic float64 values with no repeats.
Array values_of(const Shape& shape) {
  std::vector<double> v(static_cast<std::size_t>(shape_size(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.3 + 1.7 * static_cast<double>(i));
  return np::array(v, shape);
}

void check_same(const Array& a, const Array& b) {
  CHECK(a.aval() == b.aval());
  CHECK(a.to_vector<double>() == b.to_vector<double>());
}

}  // namespace

// ---- roll ------------------------------------------------------------------------------------

TEST_CASE("roll shifts elements along an axis, wrapping around", "[numpy][roll]") {
  Array a = iota_i32({6});
  CHECK(np::roll(a, 2).to_vector<int>() == std::vector<int>{4, 5, 0, 1, 2, 3});
  CHECK(np::roll(a, -1).to_vector<int>() == std::vector<int>{1, 2, 3, 4, 5, 0});
  CHECK(np::roll(a, 8, 0).to_vector<int>() == std::vector<int>{4, 5, 0, 1, 2, 3});
  CHECK(np::roll(a, 6).to_vector<int>() == a.to_vector<int>());
  CHECK(np::roll(a, 2).dtype() == int32);
  // JAX's docstring: roll(a, [2, 3], axis=[0, 1]) of arange(12).reshape(3, 4).
  Array m = iota_i32({3, 4});
  CHECK(np::roll(m, {2, 3}, {0, 1}).to_vector<int>() ==
        std::vector<int>{5, 6, 7, 4, 9, 10, 11, 8, 1, 2, 3, 0});
  CHECK(np::roll(m, 1, 0).to_vector<int>() ==
        std::vector<int>{8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6, 7});
  // No axis: the flattened array rolls, keeping the shape.
  Array f = np::roll(m, 1);
  CHECK(f.shape() == Shape{3, 4});
  CHECK(f.to_vector<int>() == std::vector<int>{11, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
}

TEST_CASE("roll over several axes matches a loop; shifts and axes broadcast", "[numpy][roll]") {
  Array x = values_of({3, 4, 5});
  Shape s = x.shape();
  // out[i, j, k] = x[i - 2, j, k + 1] (mod the dims).
  std::vector<double> want = gather_loop(x, s, [](const Position& i) {
    return Position{mod(i[0] - 2, 3), i[1], mod(i[2] + 1, 5)};
  });
  CHECK(np::roll(x, {2, -1}, {0, -1}).to_vector<double>() == want);
  CHECK(jit([](const Array& a) {
          return np::roll(a, {2, -1}, {0, -1});
        })(x)
            .to_vector<double>() == want);
  // One shift for two axes; one axis named twice rolls twice.
  std::vector<double> both = gather_loop(x, s, [](const Position& i) {
    return Position{i[0], mod(i[1] - 3, 4), mod(i[2] - 3, 5)};
  });
  CHECK(np::roll(x, 3, {1, 2}).to_vector<double>() == both);
  std::vector<double> twice = gather_loop(x, s, [](const Position& i) {
    return Position{i[0], mod(i[1] - 3, 4), i[2]};
  });
  CHECK(np::roll(x, {1, 2}, {1, 1}).to_vector<double>() == twice);
  CHECK(np::roll(x, {1, 2}, 1).to_vector<double>() == twice);
  // No axis and several shifts: each rolls the flattened array.
  std::vector<double> flat =
      gather_loop(np::ravel(x), {60}, [](const Position& i) { return Position{mod(i[0] - 7, 60)}; });
  CHECK(np::roll(x, {3, 4}).to_vector<double>() == flat);
}

TEST_CASE("roll of 0-sized and 0-d arrays", "[numpy][roll]") {
  check_same(np::roll(np::zeros({0, 3}), 2, 0), np::zeros({0, 3}));
  check_same(np::roll(np::zeros({2, 0}), {1, 5}, {0, 1}), np::zeros({2, 0}));
  CHECK(np::roll(np::array(3.f), 5).item<float>() == 3.f);
}

TEST_CASE("roll derivatives match finite differences", "[numpy][roll][autodiff]") {
  testing::check_grads(
      [](const Arrays& a) {
        return np::roll(a[0], {1, -2}, {0, 2});
      },
      {values_of({3, 2, 4})}, 2);
  testing::check_grads([](const Arrays& a) { return np::roll(a[0], 5); }, {values_of({2, 3})}, 1);
}

TEST_CASE("roll with shifts and axes of different lengths is a ValueError", "[numpy][roll]") {
  CHECK_THROWS_MATCHES(
      np::roll(values_of({2, 3, 4}), {1, 2, 3}, {0, 1}), ValueError,
      Catch::Message("shape mismatch: objects cannot be broadcast to a single shape.  Mismatch "
                     "is between arg 0 with shape (2,) and arg 1 with shape (3,)."));
}

TEST_CASE("roll along an axis out of range is a ShapeError", "[numpy][roll]") {
  CHECK_THROWS_MATCHES(np::roll(values_of({2, 3}), 1, 2), ShapeError,
                       Catch::Message("axis 2 is out of bounds for array of dimension 2"));
}

// ---- tile ------------------------------------------------------------------------------------

TEST_CASE("tile repeats the whole array along each axis", "[numpy][tile]") {
  Array a = iota_i32({3});
  CHECK(np::tile(a, 2).to_vector<int>() == std::vector<int>{0, 1, 2, 0, 1, 2});
  Array m = iota_i32({2, 2});
  Array t = np::tile(m, {2, 1});
  CHECK(t.shape() == Shape{4, 2});
  CHECK(t.to_vector<int>() == std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3});
  // Shorter reps tile the trailing axes; longer ones add leading axes.
  CHECK(np::tile(m, 2).shape() == Shape{2, 4});
  CHECK(np::tile(m, 2).to_vector<int>() == std::vector<int>{0, 1, 0, 1, 2, 3, 2, 3});
  CHECK(np::tile(a, {2, 1, 2}).shape() == Shape{2, 1, 6});
  CHECK(np::tile(np::array(5), {3}).to_vector<int>() == std::vector<int>{5, 5, 5});
}

TEST_CASE("tile matches a loop, eager and jit", "[numpy][tile]") {
  // reps longer than the rank: x is seen as (1, 2, 3, 1), tiled to (2, 4, 9, 2).
  Array x = values_of({2, 3, 1});
  std::vector<std::int64_t> reps{2, 2, 3, 2};
  Shape out{2, 4, 9, 2};
  std::vector<double> want = gather_loop(x, out, [](const Position& i) {
    return Position{i[1] % 2, i[2] % 3, 0};
  });
  CHECK(np::tile(x, reps).shape() == out);
  CHECK(np::tile(x, reps).to_vector<double>() == want);
  CHECK(jit([&](const Array& a) { return np::tile(a, reps); })(x).to_vector<double>() == want);
  // Zero repetitions give a 0-sized axis; tiling a 0-sized array stays 0-sized.
  CHECK(np::tile(x, {0, 1, 1}).shape() == Shape{0, 3, 1});
  CHECK(np::tile(np::zeros({0, 2}), 3).shape() == Shape{0, 6});
  // reps of all 1s return the array as it is.
  check_same(np::tile(x, {1, 1}), x);
}

TEST_CASE("tile derivatives match finite differences", "[numpy][tile][autodiff]") {
  testing::check_grads(
      [](const Arrays& a) {
        return np::tile(a[0], {2, 1, 3});
      },
      {values_of({2, 3})}, 2);
}

TEST_CASE("tile with negative reps is a ValueError", "[numpy][tile]") {
  CHECK_THROWS_MATCHES(np::tile(values_of({2}), {2, -1}), ValueError,
                       Catch::Message("negative dimensions are not allowed"));
}

// ---- repeat ----------------------------------------------------------------------------------

TEST_CASE("repeat repeats elements, flattened without an axis", "[numpy][repeat]") {
  Array m = iota_i32({2, 2});
  CHECK(np::repeat(m, 2).to_vector<int>() == std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3});
  Array r = np::repeat(m, 2, -1);
  CHECK(r.shape() == Shape{2, 4});
  CHECK(r.to_vector<int>() == std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(np::repeat(m, 3, 0).to_vector<int>() ==
        std::vector<int>{0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3});
  // JAX's docstring: per-element counts along the last axis.
  Array p = np::repeat(m, {2, 3}, 1);
  CHECK(p.shape() == Shape{2, 5});
  CHECK(p.to_vector<int>() == std::vector<int>{0, 0, 1, 1, 1, 2, 2, 3, 3, 3});
  CHECK(np::repeat(np::array(7), 3).to_vector<int>() == std::vector<int>{7, 7, 7});
}

TEST_CASE("repeat with per-element counts matches a loop, eager and jit", "[numpy][repeat]") {
  Array x = values_of({3, 6});
  std::vector<std::int64_t> counts{1, 0, 2, 2, 2, 3};
  std::vector<std::int64_t> source;  // output column → input column
  for (std::size_t j = 0; j < counts.size(); ++j)
    source.insert(source.end(), static_cast<std::size_t>(counts[j]), static_cast<std::int64_t>(j));
  Shape out{3, static_cast<std::int64_t>(source.size())};
  std::vector<double> want = gather_loop(x, out, [&](const Position& i) {
    return Position{i[0], source[static_cast<std::size_t>(i[1])]};
  });
  CHECK(np::repeat(x, counts, 1).to_vector<double>() == want);
  CHECK(np::repeat(x, counts, -1).shape() == out);
  CHECK(jit([&](const Array& a) { return np::repeat(a, counts, 1); })(x).to_vector<double>() ==
        want);
  // Without an axis: the flattened array, one count per element (or one for all).
  std::vector<std::int64_t> per(18, 0);
  per[4] = 3;
  per[17] = 1;
  std::vector<double> xv = x.to_vector<double>();
  CHECK(np::repeat(x, per).to_vector<double>() == std::vector<double>{xv[4], xv[4], xv[4], xv[17]});
  // Zero counts and 0-sized axes.
  CHECK(np::repeat(x, 0, 1).shape() == Shape{3, 0});
  CHECK(np::repeat(x, {0, 0, 0}, 0).shape() == Shape{0, 6});
  CHECK(np::repeat(np::zeros({0, 2}), 4, 0).shape() == Shape{0, 2});
  CHECK(np::repeat(np::zeros({2, 0}), 4, 1).shape() == Shape{2, 0});
}

TEST_CASE("repeat derivatives match finite differences", "[numpy][repeat][autodiff]") {
  testing::check_grads(
      [](const Arrays& a) {
        return np::repeat(a[0], {2, 0, 1}, 0);
      },
      {values_of({3, 2})}, 2);
  testing::check_grads([](const Arrays& a) { return np::repeat(a[0], 2); }, {values_of({2, 2})}, 2);
}

TEST_CASE("repeat with a negative count is a ValueError", "[numpy][repeat]") {
  CHECK_THROWS_MATCHES(np::repeat(values_of({3}), -1), ValueError,
                       Catch::Message("repeats may not contain negative values."));
  CHECK_THROWS_MATCHES(np::repeat(values_of({3}), {1, -1, 1}, 0), ValueError,
                       Catch::Message("repeats may not contain negative values."));
}

TEST_CASE("repeat with a count per element of another length is a ValueError", "[numpy][repeat]") {
  CHECK_THROWS_MATCHES(np::repeat(values_of({3, 2}), {1, 2}, 0), ValueError,
                       Catch::Message("operands could not be broadcast together with remapped "
                                      "shapes [original->remapped]: (2,) and requested shape "
                                      "(3,)"));
}

// ---- split -----------------------------------------------------------------------------------

TEST_CASE("split into equal sections or at indices", "[numpy][split]") {
  Array x = iota_i32({9});
  Arrays three = np::split(x, 3);
  REQUIRE(three.size() == 3);
  CHECK(three[0].to_vector<int>() == std::vector<int>{0, 1, 2});
  CHECK(three[2].to_vector<int>() == std::vector<int>{6, 7, 8});
  // JAX's docstring: split(x, [2, 7]) is x[:2], x[2:7], x[7:]; a braced list is indices.
  Arrays at = np::split(x, {2, 7});
  REQUIRE(at.size() == 3);
  CHECK(at[0].to_vector<int>() == std::vector<int>{0, 1});
  CHECK(at[1].to_vector<int>() == std::vector<int>{2, 3, 4, 5, 6});
  CHECK(at[2].to_vector<int>() == std::vector<int>{7, 8});
  Arrays one_index = np::split(x, {4});
  REQUIRE(one_index.size() == 2);
  CHECK(one_index[1].to_vector<int>() == std::vector<int>{4, 5, 6, 7, 8});
  // Equal indices give an empty piece.
  Arrays empty = np::split(x, std::vector<std::int64_t>{3, 3});
  CHECK(empty[1].shape() == Shape{0});
}

TEST_CASE("split along a negative axis matches a loop, eager and jit", "[numpy][split]") {
  Array x = values_of({2, 6, 3});
  std::vector<std::int64_t> bounds{0, 1, 4, 6};
  auto check = [&](const Arrays& pieces) {
    REQUIRE(pieces.size() == 3);
    for (std::size_t p = 0; p < 3; ++p) {
      Shape s{2, bounds[p + 1] - bounds[p], 3};
      CHECK(pieces[p].shape() == s);
      CHECK(pieces[p].to_vector<double>() == gather_loop(x, s, [&](const Position& i) {
              return Position{i[0], i[1] + bounds[p], i[2]};
            }));
    }
  };
  check(np::split(x, {1, 4}, -2));
  check(jit([](const Array& a) { return np::split(a, {1, 4}, -2); })(x));
  // Sections of a 0-sized axis; a split of a 0-sized axis at 0.
  Arrays zero = np::split(np::zeros({0, 2}), 4);
  REQUIRE(zero.size() == 4);
  CHECK(zero[3].shape() == Shape{0, 2});
  CHECK(np::split(np::zeros({3, 0}), 3, 1).size() == 3);
}

TEST_CASE("split derivatives match finite differences", "[numpy][split][autodiff]") {
  testing::check_grads(
      [](const Arrays& a) {
        Arrays p = np::split(a[0], {1, 3}, 1);
        return np::concatenate({p[2] * 3.0, p[0] * 2.0, p[1]}, 1);
      },
      {values_of({2, 5})}, 2);
}

TEST_CASE("split into unequal sections is a ValueError", "[numpy][split]") {
  CHECK_THROWS_MATCHES(
      np::split(values_of({7}), 3), ValueError,
      Catch::Message("array split does not result in an equal division: rest is 1"));
}

TEST_CASE("split into zero sections is a ValueError", "[numpy][split]") {
  CHECK_THROWS_MATCHES(np::split(values_of({6}), 0), ValueError,
                       Catch::Message("number sections must be larger than 0."));
}

TEST_CASE("split at decreasing or out-of-range indices is a ValueError", "[numpy][split]") {
  CHECK_THROWS_MATCHES(np::split(values_of({6}), {4, 2}), ValueError,
                       Catch::Message("Sizes passed to split must be nonnegative, got [4, -2, 4]"));
  CHECK_THROWS_MATCHES(np::split(values_of({6}), {8}), ValueError,
                       Catch::Message("Sizes passed to split must be nonnegative, got [8, -2]"));
}

TEST_CASE("split along an axis out of range is a ShapeError", "[numpy][split]") {
  CHECK_THROWS_MATCHES(np::split(values_of({2, 6}), 2, 2), ShapeError,
                       Catch::Message("axis 2 is out of bounds for array of dimension 2"));
}

}  // namespace jx
