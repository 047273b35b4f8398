// What the layout families (shape_ops.cpp, slicing.cpp) share: their messages' formatting and
// checks, the eager element mover, and the helpers of their lowering, transpose and batch rules;
// and, with reduce.cpp, the identities that folds start from.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "core/primitive.hpp"
#include "hlo/builder.hpp"
#include "transforms/batch_rules.hpp"
#include "primitives/indexing.hpp"
#include "support/format.hpp"

namespace jx::layout {

using Ints = std::vector<std::int64_t>;
using Avals = std::span<const ShapedArray>;
using Outs = std::vector<ShapedArray>;
using Ins = std::span<const Array>;
using Operands = std::span<hlo::Instruction* const>;
using Cts = std::span<const Array>;
using LinearOps = std::span<const LinearOperand>;
using BDims = std::span<const BatchDim>;
using batching::batch_at;
using batching::shift;

inline std::string tup(const Ints& v) { return detail::tuple_str(v); }

template <class E, class... A>
[[noreturn]] void fail(const A&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw E(os.str());
}

// Operands listed for messages, each shown by f: "(2, 3), (4,)", "int32, float32".
template <class F>
std::string list(Avals in, F f) {
  std::vector<std::string> s;
  for (const auto& a : in) s.push_back(f(a));
  return detail::join(s, ", ");
}
inline std::string shapes_str(Avals in) {
  return list(in, [](auto& a) { return shape_str(a.shape); });
}
inline std::string dtypes_str(Avals in) {
  return list(in, [](auto& a) { return std::string(dtype_name(a.dtype)); });
}
// "(i32[], f32[2])": index operands, shown by their types.
inline std::string avals_str(Avals in) {
  return "(" + list(in, [](auto& a) { return a.str(); }) + (in.size() == 1 ? ",)" : ")");
}

// Whether pred(i) holds for some i in [0, n): most rules check every dim or every operand.
template <class P>
bool any_of_n(std::size_t n, P pred) {
  for (std::size_t i = 0; i < n; ++i)
    if (pred(i)) return true;
  return false;
}

// Parsed jaxprs can hand a rule any operand count; the wrappers never do.
inline void check_arity(const Primitive& p, Avals in, std::size_t n, bool or_more = false) {
  if (in.size() == n || (or_more && in.size() > n)) return;
  fail<TypeError>(p.name, " takes ", or_more ? "at least " : "", n, " operand(s), got ", in.size(),
                  ".");
}

// JAX's _check_shapelike: every entry of a shape-like param is >= 0 (> 0 for strides).
inline void check_shapelike(const std::string& op, const char* what, const Ints& v,
                            bool positive = false) {
  if (std::any_of(v.begin(), v.end(), [&](auto d) { return d < (positive ? 1 : 0); }))
    fail<ShapeError>(op, " ", what, " must have every element be ",
                     positive ? "strictly positive" : "nonnegative", ", got ", tup(v), ".");
}

// Sizes computed from user params must not overflow: signed overflow is UB.
inline std::int64_t add_checked(const std::string& op, std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail<ShapeError>(op, " result size overflows int64.");
  return r;
}
inline std::int64_t mul_checked(const std::string& op, std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail<ShapeError>(op, " result size overflows int64.");
  return r;
}

// The single result of a rule (Primitive::output_avals checks that its bytes can be counted).
inline Outs result(Shape shape, DType dtype, bool weak) {
  return {ShapedArray{std::move(shape), dtype, weak}};
}

inline Ints ints(const Params& params, const char* name) { return params.get(name).as_ints(); }

inline void check_same_dtypes(const std::string& op, Avals in) {
  if (any_of_n(in.size(), [&](auto i) { return in[i].dtype != in[0].dtype; }))
    fail<TypeError>(op, " requires arguments to have the same dtypes, got ", dtypes_str(in), ".");
}

// Where one output element comes from: operand `arg`, flat element offset `at`.
struct Source {
  std::size_t arg;
  std::int64_t at;
};

// Builds `out` by copying, for every output index, the element src(index) names. Layout ops
// only move elements, so copying bytes serves every dtype.
template <class F>
std::vector<Array> assemble(Ins in, const ShapedArray& out, F src) {
  Array r = make_array(out);
  std::vector<const std::byte*> base;
  for (const Array& a : in)
    base.push_back(static_cast<const std::byte*>(concrete_buffer(a, "impl").data()));
  auto* o = static_cast<std::byte*>(r.impl()->buffer->data());
  const std::size_t w = itemsize(out.dtype);
  std::size_t k = 0;
  for_each_index(out.shape, [&](const Ints& index) {
    Source s = src(index);
    std::memcpy(o + w * k++, base[s.arg] + w * static_cast<std::size_t>(s.at), w);
  });
  return {r};
}

// ---- lowering: each primitive is one HLO layout instruction ----
inline hlo::HloShape out_shape(Avals out) {
  return hlo::HloShape::array(out[0].dtype, out[0].shape);
}
inline hlo::Attrs attrs_of(const std::string& name, hlo::AttrValue value) {
  hlo::Attrs a;
  a.set(name, std::move(value));
  return a;
}

// ---- transposition ----
template <class F>
TransposeRule unary_transpose(F f) {
  return [f](Cts cts, LinearOps ops, const Params& params) {
    return std::vector<Array>{f(cts[0], ops[0].aval, params)};
  };
}

// ---- batching: the batch axis is one more operand dim; rules leave it where it is unless the
// op needs it elsewhere, and report where it lands ----
inline BatchResult one(Array out, std::int64_t dim) {
  return {{std::move(out)}, {static_cast<int>(dim)}};
}

inline Ints inserted(Ints v, std::int64_t at, std::int64_t value) {
  v.insert(v.begin() + at, value);
  return v;
}

// ---- identities: where a reduction's fold starts (reduce.cpp), and the floor of slicing.cpp's
// masked max. Lowest and highest are -inf and +inf where the type has them (integers: their
// extremes; bool: false and true) ----
enum class Identity { kZero, kOne, kLowest, kHighest };

template <class T>
T identity_value(Identity kind) {
  using L = std::numeric_limits<T>;
  T v = kind == Identity::kZero ? T(0) : T(1);
  if (kind == Identity::kLowest) v = L::has_infinity ? -L::infinity() : L::lowest();
  if (kind == Identity::kHighest) v = L::has_infinity ? L::infinity() : L::max();
  return v;
}

// max and min as folds (reduce.cpp, windowed.cpp): NaN stays, and ties keep the accumulator, so
// they are not hlo::Scalar<kMaximum> and <kMinimum>, which return their second operand: the max
// of [0., -0.] is 0.
template <class T>
bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return x != x;
  else
    return false;
}
struct FoldMax {
  template <class T>
  T operator()(T a, T b) const {
    return is_nan(a) ? a : is_nan(b) ? b : a < b ? b : a;
  }
};
struct FoldMin {
  template <class T>
  T operator()(T a, T b) const {
    return is_nan(a) ? a : is_nan(b) ? b : b < a ? b : a;
  }
};

// The identity as a typed 0-d constant: integer extremes must not pass through a double.
inline Array identity_of(Identity kind, DType d) {
  Array out = make_scalar(0, d);
  dispatch(d, [&]<class T>() { *out.impl()->buffer->as<T>() = identity_value<T>(kind); });
  return out;
}

}  // namespace jx::layout
