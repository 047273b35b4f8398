// Array handle: scalars and their weak types, reading values, conversion, NumPy-style printing.
#include <catch2/catch.hpp>

#include "support/config_guard.hpp"

#include <sstream>

#include <jx/jx.hpp>

namespace jx {
namespace {

namespace np = jx::np;

std::string repr(const Array& x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

}  // namespace

TEST_CASE("C++ scalars become 0-d arrays; signed and floating scalars are weak", "[array]") {
  CHECK(Array(2.0f).aval() == ShapedArray{{}, float32, true});
  CHECK(Array(2.0).aval() == ShapedArray{{}, float32, true});  // JAX's default mode
  CHECK(Array(2).aval() == ShapedArray{{}, int32, true});
  CHECK(Array(std::int64_t{2}).aval() == ShapedArray{{}, int64, true});
  CHECK(Array(true).aval() == ShapedArray{{}, bool_, false});
  CHECK(Array(2u).aval() == ShapedArray{{}, uint32, false});
  CHECK(Array(-7).item<int>() == -7);
  CHECK(Array(0.1).item<double>() == static_cast<double>(0.1f));
}

TEST_CASE("C++ doubles meet a dtype from their exact value, as JAX's Python floats", "[array]") {
  // A weak float32 that meets float64 converts from the double, not from its float32 copy.
  Array x = np::array(std::vector<double>{1.0, 3.0});
  CHECK((x * 0.1).to_vector<double>() == std::vector<double>{0.1, 3.0 * 0.1});
  CHECK((x * 0.1).dtype() == float64);
  CHECK(Array(0.1).astype(float64).item<double>() == 0.1);
  CHECK(jit([](const Array& a) { return a + 1e-300; })(x).to_vector<double>() ==
        std::vector<double>{1.0 + 1e-300, 3.0});
  CHECK(jit([](const Array& a) { return a * 1e-300; })(x).to_vector<double>() ==
        std::vector<double>{1e-300, 3e-300});
  // Meeting bfloat16, the double rounds once: 1 + 2^-8 + 2^-30 is just above a tie, so it rounds
  // up to 0x3F81, where its float32 copy (1 + 2^-8, the tie) would round to even, 0x3F80.
  Array b = np::array(std::vector<double>{0.0}).astype(bfloat16);
  CHECK((b + (1.0 + 0x1p-8 + 0x1p-30)).to_vector<BFloat16>()[0].bits == 0x3F81);
}

TEST_CASE("A C++ double reshaped is an ordinary weak float32 array", "[array]") {
  Array d = np::reshape(Array(0.1), {1});
  CHECK(d.weak_type());
  CHECK(d.astype(float32).shape() == Shape{1});
  CHECK(np::sum(d, 0).item<float>() == 0.1f);
  CHECK(np::expand_dims(Array(0.1), 0).astype(float64).shape() == Shape{1});
  // It meets float64 from its float32 value, eagerly as under jit.
  Array y = np::array(std::vector<double>{1.0});
  double want = 1.0 + static_cast<double>(0.1f);
  CHECK((d + y).to_vector<double>()[0] == want);
  CHECK(jit([](const Array& a, const Array& b) { return a + b; })(d, y).to_vector<double>()[0] ==
        want);
}

TEST_CASE("to_vector and item in an array's own dtype give its bits, NaN payloads included",
          "[array]") {
  std::vector<BFloat16> in{BFloat16::from_bits(0x7FC1), BFloat16::from_bits(0xFF81),
                           BFloat16::from_bits(0x0001)};
  Array x = np::array(in);
  std::vector<BFloat16> out = x.to_vector<BFloat16>();
  for (std::size_t i = 0; i < in.size(); ++i) CHECK(out[i].bits == in[i].bits);
  CHECK(x.astype(bfloat16).to_vector<BFloat16>()[0].bits == 0x7FC1);
  Array h = np::array(std::vector<Float16>{Float16::from_bits(0x7E01)});
  CHECK(h.item<Float16>().bits == 0x7E01);
}

TEST_CASE("x64 mode (--enable_x64): C++ ints and doubles are weak int64 and float64, np 64-bit",
          "[array]") {
  testing::ConfigGuard guard;
  config().enable_x64 = true;
  CHECK(Array(2.0).aval() == ShapedArray{{}, float64, true});
  CHECK(Array(2).aval() == ShapedArray{{}, int64, true});
  CHECK(Array(0.1).item<double>() == 0.1);
  CHECK(np::array({1, 2}).dtype() == int64);
  CHECK(np::arange(3).dtype() == int64);
  CHECK((np::arange(3) * 0.5).aval() == ShapedArray{{3}, float64, true});
  CHECK(np::zeros({2}).dtype() == float64);
  CHECK(np::mean(np::array({1, 2})).dtype() == float64);
  CHECK(np::sum(np::array(std::vector<std::uint8_t>{200, 100})).dtype() == uint64);
  Array v = np::array({1.0, 3.0, 2.0});
  CHECK(np::argmax(v).aval() == ShapedArray{{}, int64, false});
  CHECK(np::argmin(v).item<std::int64_t>() == 0);
  CHECK(np::argsort(v).dtype() == int64);
  CHECK(np::argsort(v).to_vector<std::int64_t>() == std::vector<std::int64_t>{0, 2, 1});
  CHECK(nn::one_hot(np::array({1}), 2).dtype() == float64);
}

TEST_CASE("JAX's default mode: int32 + 1.5 is float32, reductions widen as JAX's", "[array]") {
  // int32 and a weak float meet at JAX's weak float node: a weak float32.
  CHECK((np::array({1, 2}) + 1.5).aval() == ShapedArray{{2}, float32, true});
  CHECK((Array(1) + 1.5).aval() == ShapedArray{{}, float32, true});
  CHECK((np::arange(3) * 0.5).aval() == ShapedArray{{3}, float32, true});
  CHECK((np::arange(3) * 0.5).to_vector<float>() == std::vector<float>{0, 0.5f, 1});
  // sum widens narrow integers to the default int of their signedness: no uint8 overflow.
  Array u8 = np::array(std::vector<std::uint8_t>{200, 100, 255});
  CHECK(np::sum(u8).dtype() == uint32);
  CHECK(np::sum(u8).item<std::uint32_t>() == 555u);
  CHECK(np::sum(np::array(std::vector<std::int8_t>{-128, -128})).item<std::int32_t>() == -256);
  CHECK(np::mean(u8).aval() == ShapedArray{{}, float32, false});
  CHECK(np::mean(u8).item<float>() == 185.0f);
  // bfloat16 stays bfloat16, summed in float32: 256 ones and a 1 make 257, which rounds to 256
  // once; accumulating in bfloat16 would stick at 256 after the first 256 and never round.
  Array ones = np::ones({257}, bfloat16);
  CHECK(np::mean(ones).dtype() == bfloat16);
  CHECK(np::mean(ones).item<float>() == 1.0f);
  Array halves = np::full({1000}, 0.01, bfloat16);  // bf16(0.01) = 0.010009765625
  CHECK(np::sum(halves).dtype() == bfloat16);
  // 1000 x 0.010009765625 = 10.009765625 in float32, rounded once to bfloat16: 10.0.
  CHECK(np::sum(halves).item<float>() == 10.0f);
  CHECK(jit([](const Array& a) { return np::sum(a); })(halves).item<float>() == 10.0f);
}

TEST_CASE("np::array builds typed arrays from C++ data", "[array]") {
  Array x = np::array({1.f, 2.f, 3.f});
  CHECK(x.shape() == Shape{3});
  CHECK(x.dtype() == float32);
  CHECK_FALSE(x.weak_type());
  CHECK(x.ndim() == 1);
  CHECK(x.size() == 3);
  CHECK(np::array({1, 2}).dtype() == int32);
  CHECK(np::array({1.0, 2.0}).dtype() == float64);
  Array m = np::array(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(m.shape() == Shape{2, 3});
  CHECK(m.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(m.to_vector<int>() == std::vector<int>{1, 2, 3, 4, 5, 6});
  CHECK(np::zeros({2, 0}).size() == 0);
  CHECK(np::ones({2}, int64).to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 1});
  CHECK_THROWS_MATCHES(np::array(std::vector<float>{1, 2, 3}, {2, 2}), ShapeError,
                       Catch::Message("array got 3 values for shape (2, 2) of size 4"));
}

TEST_CASE("astype converts with XLA's rules", "[array]") {
  Array x = np::array({-1.5f, 0.f, 2.7f});
  CHECK(x.astype(int32).to_vector<int>() == std::vector<int>{-1, 0, 2});
  CHECK(x.astype(bool_).to_vector<bool>() == std::vector<bool>{true, false, true});
  CHECK(x.astype(float64).dtype() == float64);
  CHECK_FALSE(Array(2.0f).astype(float32).weak_type());
}

TEST_CASE("item and bool need exactly one element", "[array][errors]") {
  CHECK(np::array({4.5f}).item<float>() == 4.5f);
  CHECK(static_cast<bool>(Array(true)));
  CHECK_FALSE(static_cast<bool>(np::array({0})));
  CHECK_THROWS_MATCHES(np::array({1, 2}).item<int>(), TypeError,
                       Catch::Message("item() needs an array of size 1, got shape (2,)"));
  CHECK_THROWS_MATCHES(static_cast<bool>(np::array({1, 2})), TypeError,
                       Catch::Message("The truth value of an array with more than one element is "
                                      "ambiguous, got shape (2,). Use np::any or np::all."));
  CHECK_THROWS_MATCHES(Array().shape(), Error,
                       Catch::Message("use of an empty jx::Array (default-constructed, never "
                                      "assigned)"));
}

TEST_CASE("printing follows numpy's repr", "[array]") {
  CHECK(repr(np::array({1.f, 2.f, 3.f})) == "Array([1., 2., 3.], dtype=float32)");
  CHECK(repr(np::array({1.5f, 2.f, 3.25f})) == "Array([1.5 , 2.  , 3.25], dtype=float32)");
  CHECK(repr(np::array({-1.5, 2.0})) == "Array([-1.5,  2. ], dtype=float64)");
  CHECK(repr(np::array({-1, 2, 30})) == "Array([-1,  2, 30], dtype=int32)");
  CHECK(repr(np::array({true, false})) == "Array([ True, False], dtype=bool)");
  CHECK(repr(np::array(std::vector<float>{1, 2, 3, 4}, {2, 2})) ==
        "Array([[1., 2.],\n       [3., 4.]], dtype=float32)");
  CHECK(repr(np::array(std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2})) ==
        "Array([[[0, 1],\n        [2, 3]],\n\n       [[4, 5],\n        [6, 7]]], dtype=int32)");
  CHECK(repr(Array(3.0f)) == "Array(3., dtype=float32, weak_type=True)");
  CHECK(repr(np::array({0.1f})) == "Array([0.1], dtype=float32)");
  CHECK(repr(np::zeros({0})) == "Array([], shape=(0,), dtype=float32)");
  CHECK(repr(np::array({1e-5f, 1.f})) == "Array([1.e-05, 1.e+00], dtype=float32)");
  std::vector<float> big(2000, 0.f);
  CHECK(repr(np::array(big)) == "Array([0., 0., 0., ..., 0., 0., 0.], dtype=float32)");
}

}  // namespace jx

namespace jx {

// 2^32 × 2^32 elements overflow int64 (as the element count wrapped to 0, ones() once returned
// an empty array); the bytes of 2^31 × 2^31 float32 do too, though its element count fits.
TEST_CASE("arrays too big to address are a ValueError eagerly and under a trace",
          "[array][errors]") {
  const Shape huge{std::int64_t{1} << 32, std::int64_t{1} << 32};
  auto too_big = [](const std::string& shape, const std::string& dtype) {
    return Catch::Message("array is too big; `arr.size * arr.dtype.itemsize` is larger than the "
                          "maximum possible size: shape " + shape + ", dtype " + dtype);
  };
  CHECK_THROWS_MATCHES(np::ones(huge), ValueError, too_big("(4294967296, 4294967296)", "float32"));
  CHECK_THROWS_MATCHES(np::zeros({std::int64_t{1} << 31, std::int64_t{1} << 31}), ValueError,
                       too_big("(2147483648, 2147483648)", "float32"));
  CHECK_THROWS_MATCHES(lax::broadcast_in_dim(np::array(1), huge, {}), ValueError,
                       too_big("(4294967296, 4294967296)", "int32"));
  auto broadcast = jit([&](const Array& x) { return np::broadcast_to(x, huge); });
  CHECK_THROWS_MATCHES(broadcast(np::array(1.0f)), ValueError,
                       too_big("(4294967296, 4294967296)", "float32"));
  CHECK_THROWS_MATCHES(make_jaxpr([&](const Array& x) {
                         return lax::broadcast_in_dim(x, huge, {});
                       })(np::array(1)),
                       ValueError, too_big("(4294967296, 4294967296)", "int32"));
  // Addressable, but more than any machine maps (256 TiB): an error, not std::bad_alloc.
  CHECK_THROWS_MATCHES(np::zeros({std::int64_t{1} << 46}), Error,
                       Catch::Message("out of host memory allocating 281474976710656 bytes"));
  CHECK_THROWS_MATCHES(lax::pad(np::ones({5}), Array(0.0f), {{std::int64_t{1} << 46, 0, 0}}), Error,
                       Catch::Message("out of host memory allocating 281474976710676 bytes"));
  // Empty arrays hold no bytes, whatever their other dims.
  CHECK(np::zeros({0, std::int64_t{1} << 62, std::int64_t{1} << 62}).size() == 0);
  // The largest float64 vector that int64 bytes can count is fine as an abstract value.
  CHECK_NOTHROW(make_jaxpr([](const Array& x) {
    return np::broadcast_to(x, {std::numeric_limits<std::int64_t>::max() / 8});
  })(np::array(1.0)));
}

}  // namespace jx
