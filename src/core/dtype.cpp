// DType names and JAX's promotion lattice.
#include "jx/dtype.hpp"

#include <array>
#include <bitset>

#include "support/check.hpp"

namespace jx {

std::string_view dtype_name(DType d) {
  switch (d) {
    case bool_: return "bool";
    case int32: return "int32";
    case int64: return "int64";
    case uint32: return "uint32";
    case float32: return "float32";
    case float64: return "float64";
  }
  return "?";
}

std::string_view dtype_short_name(DType d) {
  switch (d) {
    case bool_: return "bool";
    case int32: return "i32";
    case int64: return "i64";
    case uint32: return "u32";
    case float32: return "f32";
    case float64: return "f64";
  }
  return "?";
}

std::size_t itemsize(DType d) {
  switch (d) {
    case bool_: return 1;
    case int32: case uint32: case float32: return 4;
    case int64: case float64: return 8;
  }
  return 0;
}

bool is_floating(DType d) { return d == float32 || d == float64; }
bool is_integral(DType d) { return d == int32 || d == int64 || d == uint32; }
bool is_unsigned(DType d) { return d == uint32; }

namespace {

// Lattice nodes. kIntWeak (i*) and kFloatWeak (f*) stand for weak-typed scalars.
enum Node { kBool, kIntWeak, kFloatWeak, kU32, kI32, kI64, kF32, kF64, kNumNodes };

// Direct successors, as in JAX's lattice restricted to jx's dtypes. u32 and i32 both lead to i64
// (the smallest type holding both); i64 leads to f* so that any float wins over any integer.
constexpr std::array<std::initializer_list<Node>, kNumNodes> kEdges = {{
    /*kBool*/ {kIntWeak},
    /*kIntWeak*/ {kU32, kI32},
    /*kFloatWeak*/ {kF32},
    /*kU32*/ {kI64},
    /*kI32*/ {kI64},
    /*kI64*/ {kFloatWeak},
    /*kF32*/ {kF64},
    /*kF64*/ {},
}};

using NodeSet = std::bitset<kNumNodes>;

NodeSet upper_bounds(Node n) {
  NodeSet s;
  s.set(n);
  for (Node m : kEdges[n]) s |= upper_bounds(m);
  return s;
}

Node node_of(TypeInfo t) {
  if (t.weak_type && is_floating(t.dtype)) return kFloatWeak;
  if (t.weak_type && !is_unsigned(t.dtype) && t.dtype != bool_) return kIntWeak;
  switch (t.dtype) {
    case bool_: return kBool;
    case uint32: return kU32;
    case int32: return kI32;
    case int64: return kI64;
    case float32: return kF32;
    case float64: return kF64;
  }
  return kBool;
}

}  // namespace

TypeInfo promote_types(TypeInfo a, TypeInfo b) {
  NodeSet common = upper_bounds(node_of(a)) & upper_bounds(node_of(b));
  // The join is the common upper bound that every other common upper bound is above.
  for (int n = 0; n < kNumNodes; ++n) {
    if (!common.test(n) || (upper_bounds(static_cast<Node>(n)) & common) != common) continue;
    switch (static_cast<Node>(n)) {
      case kIntWeak:
      case kFloatWeak: {
        // Weak result: keep the weak operands' own width (a C++ double stays float64).
        DType d = a.weak_type && b.weak_type ? promote_types(a.dtype, b.dtype)
                  : a.weak_type              ? a.dtype
                                             : b.dtype;
        if (n == kFloatWeak && !is_floating(d)) d = float32;
        if (n == kIntWeak && !is_integral(d)) d = int32;
        return {d, true};
      }
      case kBool: return {bool_, false};
      case kU32: return {uint32, false};
      case kI32: return {int32, false};
      case kI64: return {int64, false};
      case kF32: return {float32, false};
      case kF64: return {float64, false};
      default: break;
    }
  }
  JX_CHECK(false, "promotion lattice has no join");
}

}  // namespace jx
