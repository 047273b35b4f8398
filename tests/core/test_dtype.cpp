// DType names, sizes and kinds, and weak scalars of explicit widths in the lattice (JAX's whole
// table is tests/core/test_promotion.cpp).
#include <catch2/catch.hpp>

#include <jx/jx.hpp>

namespace jx {

TEST_CASE("weak scalars keep their own width until they meet a strong type", "[dtype]") {
  const TypeInfo weak_f64{float64, true}, weak_i64{int64, true};
  CHECK(promote_types(weak_f64, {float32, false}) == TypeInfo{float32, false});
  CHECK(promote_types(weak_f64, {int32, false}) == TypeInfo{float64, true});
  CHECK(promote_types(weak_i64, {int32, false}) == TypeInfo{int32, false});
  CHECK(promote_types(weak_i64, {float32, true}) == TypeInfo{float32, true});
  CHECK(promote_types(weak_f64, weak_i64) == TypeInfo{float64, true});
  CHECK(promote_types(uint32, int32) == int64);
  CHECK(promote_types(int64, float32) == float32);
}

TEST_CASE("dtype names, short names and sizes", "[dtype]") {
  CHECK(dtype_name(float32) == "float32");
  CHECK(dtype_short_name(float64) == "f64");
  CHECK(dtype_short_name(bool_) == "bool");
  CHECK(dtype_short_name(uint32) == "u32");
  CHECK(itemsize(bool_) == 1);
  CHECK(itemsize(int64) == 8);
  CHECK(itemsize(uint32) == 4);
  CHECK(dtype_of<float>() == float32);
  CHECK(dtype_of<long>() == int64);
  CHECK(is_floating(float64));
  CHECK_FALSE(is_integral(bool_));
  CHECK(is_unsigned(uint32));
  // The narrow and 16-bit dtypes, as JAX names them.
  CHECK(dtype_name(bfloat16) == "bfloat16");
  CHECK(dtype_short_name(bfloat16) == "bf16");
  CHECK(dtype_short_name(float16) == "f16");
  CHECK(dtype_short_name(int8) == "i8");
  CHECK(dtype_short_name(uint64) == "u64");
  CHECK(itemsize(bfloat16) == 2);
  CHECK(itemsize(float16) == 2);
  CHECK(itemsize(int8) == 1);
  CHECK(itemsize(uint16) == 2);
  CHECK(dtype_of<BFloat16>() == bfloat16);
  CHECK(dtype_of<std::uint8_t>() == uint8);
  CHECK(is_floating(bfloat16));
  CHECK(is_floating(float16));
  CHECK(is_signed_integral(int8));
  CHECK(is_unsigned(uint64));
  CHECK_FALSE(is_unsigned(int16));
}

}  // namespace jx
