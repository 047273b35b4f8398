// np shape functions: reshape (-1), ravel, transpose, swapaxes, expand_dims, squeeze,
// broadcast_to/broadcast_shapes, concatenate and stack, with their error messages.
#include "library/numpy_testing.hpp"

namespace jx {
namespace {

using namespace np_testing;

TEST_CASE("reshape infers one -1 and keeps row-major order", "[numpy]") {
  Array x = iota_f32({2, 3});
  Array r = np::reshape(x, {3, -1});
  CHECK(r.shape() == Shape{3, 2});
  check_values(r, {0, 1, 2, 3, 4, 5});
  CHECK(np::reshape(x, {-1}).shape() == Shape{6});
  CHECK(np::reshape(x, {1, -1, 1}).shape() == Shape{1, 6, 1});
  CHECK(np::reshape(x, {6}).shape() == Shape{6});
  CHECK(np::reshape(np::zeros({0, 3}), {3, 0}).shape() == Shape{3, 0});
  CHECK(np::reshape(np::array(2.f), {1, 1}).shape() == Shape{1, 1});
  CHECK(np::ravel(x).shape() == Shape{6});
  CHECK(np::ravel(np::array(2.f)).shape() == Shape{1});
  CHECK_THROWS_MATCHES(
      np::reshape(x, {4}), ShapeError,
      Catch::Message("cannot reshape array of shape (2, 3) (size 6) into shape (4,) (size 4)"));
  CHECK_THROWS_MATCHES(
      np::reshape(x, {4, -1}), ShapeError,
      Catch::Message("cannot reshape array of shape (2, 3) (size 6) into shape (4, -1)"));
  CHECK_THROWS_MATCHES(
      np::reshape(x, {0, -1}), ShapeError,
      Catch::Message("cannot reshape array of shape (2, 3) (size 6) into shape (0, -1)"));
  CHECK_THROWS_MATCHES(np::reshape(x, {-1, -1}), ShapeError,
                       Catch::Message("can only specify one unknown dimension"));
  CHECK_THROWS_MATCHES(
      np::reshape(x, {-2, -3}), ShapeError,
      Catch::Message("cannot reshape array of shape (2, 3) (size 6) into shape (-2, -3)"));
}

TEST_CASE("transpose reverses by default or permutes as asked", "[numpy]") {
  Array x = iota_f32({2, 3, 4});
  Array t = np::transpose(x);
  CHECK(t.shape() == Shape{4, 3, 2});
  std::vector<double> expected;  // t[k][j][i] = x[i][j][k]
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) expected.push_back((i * 3 + j) * 4 + k);
  check_values(t, expected);
  Array p = np::transpose(x, std::vector<int>{1, -1, 0});
  CHECK(p.shape() == Shape{3, 4, 2});
  expected.clear();  // p[j][k][i] = x[i][j][k]
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < 2; ++i) expected.push_back((i * 3 + j) * 4 + k);
  check_values(p, expected);
  Array s = np::swapaxes(x, 0, -1);
  CHECK(s.shape() == Shape{4, 3, 2});
  check_values(s, t.to_vector<double>());
  CHECK(np::transpose(np::array({1.f, 2.f})).shape() == Shape{2});
  CHECK_THROWS_MATCHES(np::transpose(x, std::vector<int>{0, 0, 1}), ShapeError,
                       Catch::Message("transpose permutation isn't a permutation of operand "
                                      "dimensions, got permutation (0, 0, 1) for operand shape "
                                      "(2, 3, 4)"));
  CHECK_THROWS_MATCHES(np::transpose(x, std::vector<int>{1, 0}), ShapeError,
                       Catch::Message("transpose permutation isn't a permutation of operand "
                                      "dimensions, got permutation (1, 0) for operand shape "
                                      "(2, 3, 4)"));
  CHECK_THROWS_MATCHES(np::swapaxes(x, 0, 3), ShapeError,
                       Catch::Message("axis 3 is out of bounds for array of dimension 3"));
}

TEST_CASE("expand_dims and squeeze", "[numpy]") {
  Array x = iota_f32({2, 3});
  CHECK(np::expand_dims(x, 0).shape() == Shape{1, 2, 3});
  CHECK(np::expand_dims(x, -1).shape() == Shape{2, 3, 1});
  CHECK(np::expand_dims(x, {0, 3}).shape() == Shape{1, 2, 3, 1});
  CHECK(np::expand_dims(x, {1, -1}).shape() == Shape{2, 1, 3, 1});
  check_values(np::expand_dims(x, 1), {0, 1, 2, 3, 4, 5});
  CHECK_THROWS_MATCHES(np::expand_dims(x, 3), ShapeError,
                       Catch::Message("axis 3 is out of bounds for array of dimension 3"));
  CHECK_THROWS_MATCHES(np::expand_dims(x, {0, 0}), ShapeError,
                       Catch::Message("duplicate value in 'axis': (0, 0)"));

  Array y = np::zeros({1, 3, 1, 2});
  CHECK(np::squeeze(y).shape() == Shape{3, 2});
  CHECK(np::squeeze(y, 2).shape() == Shape{1, 3, 2});
  CHECK(np::squeeze(y, {-2, 0}).shape() == Shape{3, 2});
  CHECK(np::squeeze(x).shape() == Shape{2, 3});
  check_values(np::squeeze(np::expand_dims(x, 0)), {0, 1, 2, 3, 4, 5});
  CHECK_THROWS_MATCHES(np::squeeze(y, 1), ShapeError,
                       Catch::Message("cannot select an axis to squeeze out which has size not "
                                      "equal to one, got shape=(1, 3, 1, 2) and dimensions=(1,)"));
}

TEST_CASE("broadcast_to and broadcast_shapes follow numpy's rule", "[numpy]") {
  Array v = np::array({1.f, 2.f, 3.f});
  Array b = np::broadcast_to(v, {2, 3});
  CHECK(b.shape() == Shape{2, 3});
  check_values(b, {1, 2, 3, 1, 2, 3});
  Array c = np::broadcast_to(iota_f32({2, 1}), {3, 2, 4});
  CHECK(c.shape() == Shape{3, 2, 4});
  std::vector<double> expected;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 4; ++k) expected.push_back(j);
  check_values(c, expected);
  check_values(np::broadcast_to(np::array(7.f), {2}), {7, 7});
  CHECK(np::broadcast_to(v, {3}).shape() == Shape{3});
  CHECK_THROWS_MATCHES(
      np::broadcast_to(v, {4}), ShapeError,
      Catch::Message("Incompatible shapes for broadcasting: (3,) and requested shape (4,)"));
  CHECK_THROWS_MATCHES(np::broadcast_to(iota_f32({2, 3}), {3}), ShapeError,
                       Catch::Message("Cannot broadcast to shape with fewer dimensions: "
                                      "arr_shape=(2, 3) shape=(3,)"));
  CHECK_THROWS_MATCHES(np::broadcast_to(v, {-1, 3}), ShapeError,
                       Catch::Message("all elements of broadcast shape must be non-negative"));

  CHECK(np::broadcast_shapes({3, 1}, {1, 4}) == Shape{3, 4});
  CHECK(np::broadcast_shapes({2, 1, 5}, {3, 1}) == Shape{2, 3, 5});
  CHECK(np::broadcast_shapes({}, {2}) == Shape{2});
  CHECK(np::broadcast_shapes({0}, {1}) == Shape{0});
  CHECK_THROWS_MATCHES(np::broadcast_shapes({3}, {4}), ShapeError,
                       Catch::Message("Incompatible shapes for broadcasting: shapes=[(3,), (4,)]"));
  CHECK_THROWS_MATCHES(np::broadcast_shapes({0}, {2}), ShapeError,
                       Catch::Message("Incompatible shapes for broadcasting: shapes=[(0,), (2,)]"));
}

TEST_CASE("concatenate and stack promote dtypes first", "[numpy]") {
  Array a = iota_f32({2, 2});
  Array i = iota_i32({2, 1}, 10);
  Array c = np::concatenate({a, i}, 1);
  check_aval(c, {2, 3}, float32);
  check_values(c, {0, 1, 10, 2, 3, 11});
  Array r = np::concatenate({a, iota_f32({1, 2}, 7)}, -2);
  CHECK(r.shape() == Shape{3, 2});
  check_values(r, {0, 1, 2, 3, 7, 8});
  check_values(np::concatenate({np::array({1, 2}), np::array({3})}), {1, 2, 3});
  CHECK(np::concatenate({a}).shape() == Shape{2, 2});

  Array x = np::array({1, 2, 3});
  Array y = np::array({4.0, 5.0, 6.0});
  Array s0 = np::stack({x, y});
  check_aval(s0, {2, 3}, float64);
  check_values(s0, {1, 2, 3, 4, 5, 6});
  Array s1 = np::stack({x, y}, 1);
  CHECK(s1.shape() == Shape{3, 2});
  check_values(s1, {1, 4, 2, 5, 3, 6});
  CHECK(np::stack({x, x, x}, -1).shape() == Shape{3, 3});
  CHECK(np::stack({np::array(1.f), np::array(2.f)}).shape() == Shape{2});

  CHECK_THROWS_MATCHES(np::concatenate({}), ShapeError,
                       Catch::Message("Need at least one array to concatenate"));
  CHECK_THROWS_MATCHES(np::concatenate({np::array(1.f), np::array(2.f)}), ShapeError,
                       Catch::Message("Zero-dimensional arrays cannot be concatenated"));
  CHECK_THROWS_MATCHES(np::concatenate({a, a}, 2), ShapeError,
                       Catch::Message("axis 2 is out of bounds for array of dimension 2"));
  CHECK_THROWS_AS(np::concatenate({a, np::zeros({2, 2, 2})}), ShapeError);
  CHECK_THROWS_AS(np::concatenate({a, np::zeros({3, 3})}, 0), ShapeError);
  CHECK_THROWS_MATCHES(np::stack({}), ShapeError,
                       Catch::Message("Need at least one array to stack"));
  CHECK_THROWS_MATCHES(np::stack({x, np::array({1, 2})}), ShapeError,
                       Catch::Message("All input arrays must have the same shape"));
  CHECK_THROWS_MATCHES(np::stack({x, x}, 2), ShapeError,
                       Catch::Message("axis 2 is out of bounds for array of dimension 2"));
}

}  // namespace
}  // namespace jx
