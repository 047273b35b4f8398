// np cumulative reductions and flip: jnp's axis=None flattening, its integer promotion, negative
// axes, and the axis errors; oracles are explicit loops.
#include "library/numpy_testing.hpp"

namespace jx {
namespace {

using namespace np_testing;

// Running sums of a (2, 3) row-major array along `axis`.
std::vector<double> running_sums(const std::vector<double>& v, int axis) {
  std::vector<double> out(v);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      if (axis == 0 && i > 0) out[i * 3 + j] += out[(i - 1) * 3 + j];
      if (axis == 1 && j > 0) out[i * 3 + j] += out[i * 3 + j - 1];
    }
  return out;
}

TEST_CASE("np cumsum and cumprod: axes, flattening, jnp's integer promotion", "[numpy]") {
  Array x = iota_f32({2, 3}, 1);  // 1 ... 6
  std::vector<double> v = x.to_vector<double>();
  check_aval(np::cumsum(x, 0), {2, 3}, float32);
  check_values(np::cumsum(x, 0), running_sums(v, 0));
  check_values(np::cumsum(x, 1), running_sums(v, 1));
  check_values(np::cumsum(x, -1), running_sums(v, 1));
  check_aval(np::cumsum(x), {6}, float32);  // axis=None: the flattened array
  check_values(np::cumsum(x), {1, 3, 6, 10, 15, 21});
  check_values(np::cumprod(x), {1, 2, 6, 24, 120, 720});
  check_values(np::cumprod(x, 0), {1, 2, 3, 4, 10, 18});
  check_aval(np::cumsum(np::array(2.0f)), {1}, float32);  // a 0-d array flattens to (1,)

  // bool and narrow integers accumulate in the default int, unsigned in the unsigned int.
  check_aval(np::cumsum(np::array({true, true, false})), {3}, int32);
  check_values(np::cumsum(np::array({true, true, false})), {1, 2, 2});
  Array small = np::array({100, 100, 100}).astype(int8);
  check_aval(np::cumsum(small), {3}, int32);
  check_values(np::cumsum(small), {100, 200, 300});  // no int8 wrap
  check_aval(np::cumprod(small.astype(uint8)), {3}, uint32);
  check_aval(np::cumsum(np::array({1, 2}).astype(int64)), {2}, int64);
  // A weak scalar's result is strongly typed, as jnp's convert_element_type makes it.
  CHECK_FALSE(np::cumsum(lax::broadcast_in_dim(Array(1.0f), {3}, {})).weak_type());
}

TEST_CASE("np cummax and cummin keep integer dtypes; bool becomes the default int", "[numpy]") {
  Array x = np::array({3, 1, 4, 1, 5, 9, 2, 6}).astype(int8);
  check_aval(np::cummax(x), {8}, int8);
  check_values(np::cummax(x), {3, 3, 4, 4, 5, 9, 9, 9});
  check_values(np::cummin(x), {3, 1, 1, 1, 1, 1, 1, 1});
  check_aval(np::cummax(np::array({false, true, false})), {3}, int32);
  check_values(np::cummin(np::reshape(x, {2, 4}), 1), {3, 1, 1, 1, 5, 5, 2, 2});
}

TEST_CASE("np flip: every axis, some, negative ones", "[numpy]") {
  Array x = iota_i32({2, 3});  // 0 ... 5
  check_values(np::flip(x), {5, 4, 3, 2, 1, 0});
  check_values(np::flip(x, 0), {3, 4, 5, 0, 1, 2});
  check_values(np::flip(x, -1), {2, 1, 0, 5, 4, 3});
  check_values(np::flip(x, {1, 0}), {5, 4, 3, 2, 1, 0});
  check_values(np::flip(np::array(7.0f)), {7});
  check_aval(np::flip(x), {2, 3}, int32);
}

TEST_CASE("np cumulative reductions and flip: axis errors", "[numpy][errors]") {
  Array x = iota_f32({2, 3});
  CHECK_THROWS_MATCHES(np::cumsum(x, 2), ShapeError,
                       Catch::Message("axis 2 is out of bounds for array of dimension 2"));
  CHECK_THROWS_MATCHES(np::cummin(x, -3), ShapeError,
                       Catch::Message("axis -3 is out of bounds for array of dimension 2"));
  CHECK_THROWS_MATCHES(np::flip(x, 2), ShapeError,
                       Catch::Message("axis 2 is out of bounds for array of dimension 2"));
  CHECK_THROWS_MATCHES(np::flip(x, {0, -2}), ShapeError,
                       Catch::Message("rev dimensions must be unique, got (0, 0)."));
}

TEST_CASE("np cumsum stages jnp's conversion, then lax's primitive", "[numpy]") {
  auto text =
      make_jaxpr([](const Array& a) { return np::cumsum(a); })(np::array({1, 2, 3}).astype(int8))
          .str();
  CHECK_THAT(text, Catch::Contains("convert_element_type[new_dtype=int32 weak_type=False] a") &&
                       Catch::Contains("cumsum[axis=0 reverse=False] b"));
}

}  // namespace
}  // namespace jx
