// Element types, their names and JAX's type-promotion lattice (weak types included).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace jx {

// Every dtype with the C++ type of its elements: the one list that the enum, the element-type
// dispatch and the explicit instantiations of Array's templates expand.
#define JX_FOR_EACH_DTYPE(X) \
  X(bool_, bool)             \
  X(int32, std::int32_t)     \
  X(int64, std::int64_t)     \
  X(uint32, std::uint32_t)   \
  X(float32, float)          \
  X(float64, double)

enum class DType : std::uint8_t {
#define JX_DTYPE_ENUM(name, type) name,
  JX_FOR_EACH_DTYPE(JX_DTYPE_ENUM)
#undef JX_DTYPE_ENUM
};

inline constexpr DType bool_ = DType::bool_;
inline constexpr DType int32 = DType::int32;
inline constexpr DType int64 = DType::int64;
inline constexpr DType uint32 = DType::uint32;
inline constexpr DType float32 = DType::float32;
inline constexpr DType float64 = DType::float64;

inline constexpr DType kAllDTypes[] = {
#define JX_DTYPE_VALUE(name, type) DType::name,
    JX_FOR_EACH_DTYPE(JX_DTYPE_VALUE)
#undef JX_DTYPE_VALUE
};

std::string_view dtype_name(DType d);        // "float32"
std::string_view dtype_short_name(DType d);  // "f32", as jaxprs print it
std::size_t itemsize(DType d);
bool is_floating(DType d);
bool is_integral(DType d);  // signed and unsigned integers, not bool
bool is_unsigned(DType d);

// The dtype of a C++ element type: float → float32, double → float64, int → int32, ...
template <class T>
constexpr DType dtype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>) return bool_;
  else if constexpr (std::is_same_v<U, float>) return float32;
  else if constexpr (std::is_same_v<U, double>) return float64;
  else if constexpr (std::is_same_v<U, std::uint32_t>) return uint32;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) <= 4) return int32;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 8) return int64;
  else static_assert(sizeof(U) == 0, "jx has no dtype for this C++ type");
}

// A dtype with its weak-type flag: the type of a C++ scalar is weak, so it defers to the array.
struct TypeInfo {
  DType dtype;
  bool weak_type = false;
  friend bool operator==(const TypeInfo&, const TypeInfo&) = default;
};

// jax.numpy.promote_types / result_type semantics: the least upper bound in JAX's lattice
// (bool < i* < {u32, i32} ...; i64 < f*; f* < f32 < f64), where i* and f* are the weak types.
// A weak result takes the default dtype of its kind (int32 or float32).
TypeInfo promote_types(TypeInfo a, TypeInfo b);
inline DType promote_types(DType a, DType b) { return promote_types({a, false}, {b, false}).dtype; }

}  // namespace jx
