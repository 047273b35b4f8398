// jx::promote_types against JAX's binary promotion table (docs/type_promotion.rst, "Type
// promotion semantics": the join on JAX's lattice, as jnp.promote_types and
// dtypes._lattice_result_type give it), every pair of the 13 dtypes and the weak types i* and f*
// in both orders, with 64-bit types enabled; then the weak-type rules the same document states.
#include <catch2/catch.hpp>

#include <string>

#include <jx/jx.hpp>

#include "support/config_guard.hpp"

namespace jx::testing {
namespace {

// JAX's names: b1 bool, uN/iN unsigned/signed of N bytes, bf bfloat16, f2/f4/f8 floats of 2, 4
// and 8 bytes; i* and f* are a weakly typed int and float (a Python scalar).
constexpr int kN = 15;
const char* const kNames[kN] = {"b1", "u1", "u2", "u4", "u8", "i1", "i2", "i4",
                                "i8", "bf", "f2", "f4", "f8", "i*", "f*"};

// The table of the document, without its complex rows and columns: kTable[i][j] is the result
// for kNames[i] and kNames[j].
// clang-format off
const char* const kTable[kN][kN] = {
    //        b1    u1    u2    u4    u8    i1    i2    i4    i8    bf    f2    f4    f8    i*    f*
    /* b1 */ {"b1", "u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8", "bf", "f2", "f4", "f8", "i*", "f*"},
    /* u1 */ {"u1", "u1", "u2", "u4", "u8", "i2", "i2", "i4", "i8", "bf", "f2", "f4", "f8", "u1", "f*"},
    /* u2 */ {"u2", "u2", "u2", "u4", "u8", "i4", "i4", "i4", "i8", "bf", "f2", "f4", "f8", "u2", "f*"},
    /* u4 */ {"u4", "u4", "u4", "u4", "u8", "i8", "i8", "i8", "i8", "bf", "f2", "f4", "f8", "u4", "f*"},
    /* u8 */ {"u8", "u8", "u8", "u8", "u8", "f*", "f*", "f*", "f*", "bf", "f2", "f4", "f8", "u8", "f*"},
    /* i1 */ {"i1", "i2", "i4", "i8", "f*", "i1", "i2", "i4", "i8", "bf", "f2", "f4", "f8", "i1", "f*"},
    /* i2 */ {"i2", "i2", "i4", "i8", "f*", "i2", "i2", "i4", "i8", "bf", "f2", "f4", "f8", "i2", "f*"},
    /* i4 */ {"i4", "i4", "i4", "i8", "f*", "i4", "i4", "i4", "i8", "bf", "f2", "f4", "f8", "i4", "f*"},
    /* i8 */ {"i8", "i8", "i8", "i8", "f*", "i8", "i8", "i8", "i8", "bf", "f2", "f4", "f8", "i8", "f*"},
    /* bf */ {"bf", "bf", "bf", "bf", "bf", "bf", "bf", "bf", "bf", "bf", "f4", "f4", "f8", "bf", "bf"},
    /* f2 */ {"f2", "f2", "f2", "f2", "f2", "f2", "f2", "f2", "f2", "f4", "f2", "f4", "f8", "f2", "f2"},
    /* f4 */ {"f4", "f4", "f4", "f4", "f4", "f4", "f4", "f4", "f4", "f4", "f4", "f4", "f8", "f4", "f4"},
    /* f8 */ {"f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8"},
    /* i* */ {"i*", "u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8", "bf", "f2", "f4", "f8", "i*", "f*"},
    /* f* */ {"f*", "f*", "f*", "f*", "f*", "f*", "f*", "f*", "f*", "bf", "f2", "f4", "f8", "f*", "f*"},
};
// clang-format on

// The jx type of each name with 64-bit types enabled: a weak int or float is int64 or float64.
const TypeInfo kTypes[kN] = {
    {bool_, false},   {uint8, false},   {uint16, false},  {uint32, false}, {uint64, false},
    {int8, false},    {int16, false},   {int32, false},   {int64, false},  {bfloat16, false},
    {float16, false}, {float32, false}, {float64, false}, {int64, true},   {float64, true},
};

std::string name_of(TypeInfo t) {
  if (t.weak_type) {
    if (t.dtype == int64) return "i*";
    if (t.dtype == float64) return "f*";
    return "weak " + std::string(dtype_name(t.dtype));  // never a weak type of JAX's x64 mode
  }
  for (int k = 0; k < kN; ++k)
    if (!kTypes[k].weak_type && kTypes[k].dtype == t.dtype) return kNames[k];
  return "?";
}

// The dtype a strongly typed pair's result has: f* (two 64-bit integers of opposite
// signedness) materializes as the default float, float64 with x64.
DType dtype_named(const std::string& name) {
  if (name == "f*") return float64;
  for (int k = 0; k < kN; ++k)
    if (name == kNames[k]) return kTypes[k].dtype;
  FAIL("no dtype named " << name);
  return bool_;
}

}  // namespace

TEST_CASE("promote_types: the table itself is symmetric", "[dtype][promotion]") {
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kN; ++j) {
      INFO(kNames[i] << " + " << kNames[j]);
      CHECK(std::string(kTable[i][j]) == kTable[j][i]);
    }
}

TEST_CASE("promote_types: every pair of dtypes and weak types matches JAX's table (x64)",
          "[dtype][promotion]") {
  ConfigGuard guard;
  config().enable_x64 = true;
  int checked = 0;
  for (int i = 0; i < kN; ++i) {
    for (int j = 0; j < kN; ++j) {
      INFO(kNames[i] << " + " << kNames[j] << ": JAX gives " << kTable[i][j]);
      TypeInfo got = promote_types(kTypes[i], kTypes[j]);
      CHECK(name_of(got) == kTable[i][j]);
      // The order of the operands does not matter.
      CHECK(promote_types(kTypes[j], kTypes[i]) == got);
      // The DType overload: strong types only; f* comes out as float64.
      if (!kTypes[i].weak_type && !kTypes[j].weak_type) {
        CHECK(promote_types(kTypes[i].dtype, kTypes[j].dtype) == dtype_named(kTable[i][j]));
        ++checked;
      }
    }
  }
  CHECK(checked == 13 * 13);
}

TEST_CASE("promote_types: named cells of the table", "[dtype][promotion]") {
  ConfigGuard guard;
  config().enable_x64 = true;
  // Mixed signedness goes to the signed type twice as wide; 64 bits has none, so f*.
  CHECK(promote_types(int8, uint8) == int16);
  CHECK(promote_types(uint16, int8) == int32);
  CHECK(promote_types(uint32, int32) == int64);
  CHECK(promote_types(int64, uint64) == float64);
  CHECK(promote_types(uint64, int8) == float64);
  CHECK(promote_types({uint64, false}, {int8, false}) == TypeInfo{float64, true});
  // The 16-bit floats: each absorbs every integer, and together they make float32.
  CHECK(promote_types(bfloat16, float16) == float32);
  CHECK(promote_types(float16, bfloat16) == float32);
  CHECK(promote_types(bfloat16, int64) == bfloat16);
  CHECK(promote_types(uint64, float16) == float16);
  CHECK(promote_types(bfloat16, float32) == float32);
  CHECK(promote_types(float16, float64) == float64);
  // bool is the bottom: bool + x is x.
  for (DType d : kAllDTypes) {
    INFO(dtype_name(d));
    CHECK(promote_types(bool_, d) == d);
    CHECK(promote_types(d, bool_) == d);
    CHECK(promote_types(d, d) == d);
  }
}

TEST_CASE("promote_types: weak types defer to the array's dtype of their kind",
          "[dtype][promotion]") {
  ConfigGuard guard;
  for (bool x64 : {false, true}) {
    config().enable_x64 = x64;
    INFO("enable_x64 " << x64);
    const TypeInfo weak_int{default_int_dtype(), true}, weak_float{default_float_dtype(), true};
    CHECK(default_int_dtype() == (x64 ? int64 : int32));
    CHECK(default_float_dtype() == (x64 ? float64 : float32));
    // jnp.promote_types('uint8', int) is uint8; jnp.promote_types('float16', float) is float16;
    // jnp.result_type(1.0, jnp.bfloat16(2)) is bfloat16: strong results.
    CHECK(promote_types(weak_int, {uint8, false}) == TypeInfo{uint8, false});
    CHECK(promote_types({int16, false}, weak_int) == TypeInfo{int16, false});
    CHECK(promote_types(weak_int, {uint64, false}) == TypeInfo{uint64, false});
    CHECK(promote_types(weak_float, {float16, false}) == TypeInfo{float16, false});
    CHECK(promote_types(weak_float, {bfloat16, false}) == TypeInfo{bfloat16, false});
    CHECK(promote_types(weak_int, {bfloat16, false}) == TypeInfo{bfloat16, false});
    // A weak float meeting an integer stays f*: the default float dtype, still weak.
    CHECK(promote_types(weak_float, {int8, false}) == TypeInfo{default_float_dtype(), true});
    CHECK(promote_types({uint16, false}, weak_float) == TypeInfo{default_float_dtype(), true});
    CHECK(promote_types(weak_float, {uint64, false}) == TypeInfo{default_float_dtype(), true});
    // Weak with weak, and with bool: the join of the weak types, still weak.
    CHECK(promote_types(weak_int, weak_float) == TypeInfo{default_float_dtype(), true});
    CHECK(promote_types(weak_int, weak_int) == weak_int);
    CHECK(promote_types({bool_, false}, weak_int) == weak_int);
    CHECK(promote_types({bool_, false}, weak_float) == weak_float);
  }
}

TEST_CASE("promote_types: weak scalars in arithmetic keep the array's narrow dtype",
          "[dtype][promotion]") {
  // The document's examples: 2 * x is int8 for an int8 x, jnp.int16(1) + 1 is int16.
  Array x = np::array(std::vector<std::int8_t>{0, 1, 2, 3, 4});
  Array y = 2 * x;
  CHECK(y.dtype() == int8);
  CHECK(!y.weak_type());
  CHECK(y.to_vector<std::int8_t>() == std::vector<std::int8_t>{0, 2, 4, 6, 8});
  Array z = np::array(std::vector<std::int16_t>{1}) + 1;
  CHECK(z.dtype() == int16);
  CHECK(z.item<std::int16_t>() == 2);
  Array h = np::array(std::vector<Float16>{Float16(1.5)}) * 2.0;
  CHECK(h.dtype() == float16);
  CHECK(h.item<double>() == 3.0);
  Array b = 1.0f + np::array(std::vector<BFloat16>{BFloat16(0.5)});
  CHECK(b.dtype() == bfloat16);
  CHECK(b.item<double>() == 1.5);
  // Strong arrays of mixed types promote on the lattice: uint8 + int8 is int16.
  Array m = np::array(std::vector<std::uint8_t>{200}) + np::array(std::vector<std::int8_t>{-100});
  CHECK(m.dtype() == int16);
  CHECK(m.item<std::int16_t>() == 100);
}

}  // namespace jx::testing
