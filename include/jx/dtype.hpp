// Element types, their names and JAX's type-promotion lattice (weak types included).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "jx/float16.hpp"

namespace jx {

// Every dtype: its C++ element type, its name, the short name jaxprs print and HLO's name. The
// one list that the enum, the names, the element-type dispatch and the explicit instantiations
// of Array's templates expand.
#define JX_FOR_EACH_DTYPE(X)                              \
  X(bool_, bool, "bool", "bool", "pred")                  \
  X(int8, std::int8_t, "int8", "i8", "s8")                \
  X(int16, std::int16_t, "int16", "i16", "s16")           \
  X(int32, std::int32_t, "int32", "i32", "s32")           \
  X(int64, std::int64_t, "int64", "i64", "s64")           \
  X(uint8, std::uint8_t, "uint8", "u8", "u8")             \
  X(uint16, std::uint16_t, "uint16", "u16", "u16")        \
  X(uint32, std::uint32_t, "uint32", "u32", "u32")        \
  X(uint64, std::uint64_t, "uint64", "u64", "u64")        \
  X(bfloat16, BFloat16, "bfloat16", "bf16", "bf16")       \
  X(float16, Float16, "float16", "f16", "f16")            \
  X(float32, float, "float32", "f32", "f32")              \
  X(float64, double, "float64", "f64", "f64")

enum class DType : std::uint8_t {
#define JX_DTYPE_ENUM(name, ...) name,
  JX_FOR_EACH_DTYPE(JX_DTYPE_ENUM)
#undef JX_DTYPE_ENUM
};

#define JX_DTYPE_CONSTANT(name, ...) inline constexpr DType name = DType::name;
JX_FOR_EACH_DTYPE(JX_DTYPE_CONSTANT)
#undef JX_DTYPE_CONSTANT

inline constexpr DType kAllDTypes[] = {
#define JX_DTYPE_VALUE(name, ...) DType::name,
    JX_FOR_EACH_DTYPE(JX_DTYPE_VALUE)
#undef JX_DTYPE_VALUE
};

std::string_view dtype_name(DType d);        // "float32"
std::string_view dtype_short_name(DType d);  // "f32", as jaxprs print it
std::size_t itemsize(DType d);
bool is_floating(DType d);
bool is_integral(DType d);  // signed and unsigned integers, not bool
bool is_unsigned(DType d);
bool is_signed_integral(DType d);

// The dtype of a C++ element type: float → float32, double → float64, int → int32, ...; a
// signed or unsigned integer by its width.
template <class T>
constexpr DType dtype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>) return bool_;
  else if constexpr (std::is_same_v<U, float>) return float32;
  else if constexpr (std::is_same_v<U, double>) return float64;
  else if constexpr (std::is_same_v<U, BFloat16>) return bfloat16;
  else if constexpr (std::is_same_v<U, Float16>) return float16;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U>)
    return sizeof(U) == 1 ? int8 : sizeof(U) == 2 ? int16 : sizeof(U) == 4 ? int32 : int64;
  else if constexpr (std::is_integral_v<U> && std::is_unsigned_v<U> && sizeof(U) <= 8)
    return sizeof(U) == 1 ? uint8 : sizeof(U) == 2 ? uint16 : sizeof(U) == 4 ? uint32 : uint64;
  else static_assert(sizeof(U) == 0, "jx has no dtype for this C++ type");
}

// A dtype with its weak-type flag: the type of a C++ scalar is weak, so it defers to the array.
struct TypeInfo {
  DType dtype;
  bool weak_type = false;
  friend bool operator==(const TypeInfo&, const TypeInfo&) = default;
};

// The dtypes of C++ int and double scalars, of integer literal arrays and of np's floats:
// int32 and float32 (JAX's default mode), int64 and float64 with --enable_x64 (JAX's x64 mode).
DType default_int_dtype();
DType default_float_dtype();

// jax.numpy.promote_types / result_type semantics: the least upper bound in JAX's lattice, where
// i* and f* are the weak types (bool < i* < {u8, i8}; u8 < {i16, u16}; ...; {i64, u64} < f*;
// f* < {bf16, f16} < f32 < f64). A weak result takes the mode's default dtype of its kind.
TypeInfo promote_types(TypeInfo a, TypeInfo b);
inline DType promote_types(DType a, DType b) { return promote_types({a, false}, {b, false}).dtype; }

}  // namespace jx
