// DType names and kinds (from JX_FOR_EACH_DTYPE), the default dtypes of each mode, and JAX's
// type-promotion lattice.
#include "jx/dtype.hpp"

#include <array>
#include <bitset>

#include "jx/config.hpp"
#include "support/check.hpp"

namespace jx {

std::string_view dtype_name(DType d) {
  switch (d) {
#define JX_DTYPE_NAME(name, type, text, ...) \
  case DType::name:                          \
    return text;
    JX_FOR_EACH_DTYPE(JX_DTYPE_NAME)
#undef JX_DTYPE_NAME
  }
  return "?";
}

std::string_view dtype_short_name(DType d) {
  switch (d) {
#define JX_DTYPE_SHORT_NAME(name, type, text, short_name, ...) \
  case DType::name:                                            \
    return short_name;
    JX_FOR_EACH_DTYPE(JX_DTYPE_SHORT_NAME)
#undef JX_DTYPE_SHORT_NAME
  }
  return "?";
}

std::size_t itemsize(DType d) {
  switch (d) {
#define JX_DTYPE_SIZE(name, type, ...) \
  case DType::name:                    \
    return sizeof(type);
    JX_FOR_EACH_DTYPE(JX_DTYPE_SIZE)
#undef JX_DTYPE_SIZE
  }
  return 0;
}

namespace {

template <class Predicate>
bool kind_is(DType d, Predicate p) {
  switch (d) {
#define JX_DTYPE_KIND(name, type, ...) \
  case DType::name:                    \
    return p.template operator()<type>();
    JX_FOR_EACH_DTYPE(JX_DTYPE_KIND)
#undef JX_DTYPE_KIND
  }
  return false;
}

}  // namespace

bool is_floating(DType d) {
  return kind_is(d, []<class T>() { return is_float_element_v<T>; });
}
bool is_integral(DType d) {
  return kind_is(d, []<class T>() { return std::is_integral_v<T> && !std::is_same_v<T, bool>; });
}
bool is_unsigned(DType d) {
  return kind_is(d, []<class T>() { return std::is_unsigned_v<T> && !std::is_same_v<T, bool>; });
}
bool is_signed_integral(DType d) { return is_integral(d) && !is_unsigned(d); }

DType default_int_dtype() { return config().enable_x64 ? int64 : int32; }
DType default_float_dtype() { return config().enable_x64 ? float64 : float32; }

namespace {

// JAX's lattice ("standard" promotion). i* and f* are the weak types: a C++ integer or float
// scalar, which defers to any array dtype of its kind.
enum Node {
  kBool, kIntWeak, kFloatWeak,
  kU8, kU16, kU32, kU64, kI8, kI16, kI32, kI64, kBF16, kF16, kF32, kF64,
  kNumNodes
};

// Direct successors, as jax._src.dtypes' _type_promotion_lattice: an unsigned type leads to the
// next unsigned type and to the signed type that holds it; every 64-bit integer leads to f*.
constexpr std::array<std::initializer_list<Node>, kNumNodes> kEdges = {{
    /*kBool*/ {kIntWeak},
    /*kIntWeak*/ {kU8, kI8},
    /*kFloatWeak*/ {kBF16, kF16},
    /*kU8*/ {kI16, kU16},
    /*kU16*/ {kI32, kU32},
    /*kU32*/ {kI64, kU64},
    /*kU64*/ {kFloatWeak},
    /*kI8*/ {kI16},
    /*kI16*/ {kI32},
    /*kI32*/ {kI64},
    /*kI64*/ {kFloatWeak},
    /*kBF16*/ {kF32},
    /*kF16*/ {kF32},
    /*kF32*/ {kF64},
    /*kF64*/ {},
}};

constexpr DType kDTypeOf[kNumNodes] = {bool_, int32, float32, uint8,    uint16,  uint32,
                                       uint64, int8, int16,   int32,    int64,   bfloat16,
                                       float16, float32, float64};

using NodeSet = std::bitset<kNumNodes>;

NodeSet upper_bounds(Node n) {
  NodeSet s;
  s.set(n);
  for (Node m : kEdges[n]) s |= upper_bounds(m);
  return s;
}

Node node_of(TypeInfo t) {
  if (t.weak_type && is_floating(t.dtype)) return kFloatWeak;
  if (t.weak_type && is_integral(t.dtype)) return kIntWeak;
  for (int n = kU8; n < kNumNodes; ++n)
    if (kDTypeOf[n] == t.dtype) return static_cast<Node>(n);
  return kBool;
}

}  // namespace

TypeInfo promote_types(TypeInfo a, TypeInfo b) {
  NodeSet common = upper_bounds(node_of(a)) & upper_bounds(node_of(b));
  // The join is the common upper bound that every other common upper bound is above.
  for (int n = 0; n < kNumNodes; ++n) {
    if (!common.test(n) || (upper_bounds(static_cast<Node>(n)) & common) != common) continue;
    // A weak result keeps the weak operands' own width (the mode's default for C++ int and
    // double, jx/array.hpp); two strong 64-bit integers that meet at f* give float64, as in
    // JAX's x64 mode.
    if (n == kIntWeak || n == kFloatWeak) {
      DType d = a.weak_type && b.weak_type ? promote_types(a.dtype, b.dtype)
                : a.weak_type              ? a.dtype
                : b.weak_type              ? b.dtype
                                           : float64;
      if (n == kFloatWeak && !is_floating(d)) d = default_float_dtype();
      if (n == kIntWeak && !is_integral(d)) d = default_int_dtype();
      return {d, true};
    }
    return {kDTypeOf[n], false};
  }
  JX_CHECK(false, "promotion lattice has no join");
}

}  // namespace jx
