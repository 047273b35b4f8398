// DType names and the promotion lattice: every pair, weak and strong, against JAX's table.
#include <catch2/catch.hpp>

#include <jx/jx.hpp>

namespace jx {
namespace {

// Rows/columns: bool, i* (weak int), f* (weak float), uint32, int32, int64, float32, float64.
// Entries copied from the type promotion table of jax.numpy (x64 enabled), restricted to the
// dtypes jx has; a starred entry is a weak result.
const TypeInfo kTypes[] = {{bool_, false}, {int32, true}, {float32, true}, {uint32, false},
                           {int32, false}, {int64, false}, {float32, false}, {float64, false}};
const char* kTable[8][8] = {
    /* b1  */ {"b1", "i*", "f*", "u32", "i32", "i64", "f32", "f64"},
    /* i*  */ {"i*", "i*", "f*", "u32", "i32", "i64", "f32", "f64"},
    /* f*  */ {"f*", "f*", "f*", "f*", "f*", "f*", "f32", "f64"},
    /* u32 */ {"u32", "u32", "f*", "u32", "i64", "i64", "f32", "f64"},
    /* i32 */ {"i32", "i32", "f*", "i64", "i32", "i64", "f32", "f64"},
    /* i64 */ {"i64", "i64", "f*", "i64", "i64", "i64", "f32", "f64"},
    /* f32 */ {"f32", "f32", "f32", "f32", "f32", "f32", "f32", "f64"},
    /* f64 */ {"f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64"},
};

std::string code(TypeInfo t) {
  if (t.weak_type) return is_floating(t.dtype) ? "f*" : "i*";
  return t.dtype == bool_ ? "b1" : std::string(dtype_short_name(t.dtype));
}

}  // namespace

TEST_CASE("promote_types matches JAX's table for every pair", "[dtype]") {
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      TypeInfo got = promote_types(kTypes[i], kTypes[j]);
      INFO(code(kTypes[i]) << " + " << code(kTypes[j]));
      CHECK(code(got) == kTable[i][j]);
      // Weak results take the default width of their kind when both sides are 32-bit.
      if (got.weak_type) CHECK((got.dtype == int32 || got.dtype == float32));
    }
  }
}

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
}

}  // namespace jx
