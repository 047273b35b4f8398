// Helpers shared by the jx::np files: JAX's dtype promotion, numpy broadcasting, axis checks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jx/lax.hpp"
#include "jx/numpy.hpp"
#include "support/format.hpp"

namespace jx::np::detail {

inline TypeInfo type_of(const Array& x) { return {x.dtype(), x.weak_type()}; }

// x with dtype and weak flag `t`; x itself (no equation staged) when it already has them.
inline Array convert(const Array& x, TypeInfo t) {
  if (type_of(x) == t) return x;
  return lax::convert_element_type(x, t.dtype, t.weak_type);
}

// A 0-d constant with x's dtype and weak flag: concrete, so it stages as a literal.
inline Array scalar_like(const Array& x, double value) {
  return lax::convert_element_type(Array(value), x.dtype(), x.weak_type());
}
inline Array constant(double value, DType dtype) {
  return lax::convert_element_type(Array(value), dtype, false);
}

// lax.select(pred, on_true, on_false), JAX's argument order.
inline Array select(const Array& pred, const Array& on_true, const Array& on_false) {
  return lax::select_n(pred, {on_false, on_true});
}

// How operands are promoted: to their common type, to a number (bool → the default int), or to
// a float (JAX's to_inexact_dtype: the default float; 64-bit integers, which JAX has only in
// x64 mode, float64).
enum class Promotion { kCommon, kNumeric, kInexact };

inline TypeInfo promoted(TypeInfo t, Promotion p) {
  if (p == Promotion::kNumeric && t.dtype == bool_) return {default_int_dtype(), t.weak_type};
  if (p == Promotion::kInexact && !is_floating(t.dtype))
    return {itemsize(t.dtype) == 8 ? float64 : default_float_dtype(), t.weak_type};
  return t;
}

inline TypeInfo result_type(const std::vector<Array>& xs, Promotion p = Promotion::kCommon) {
  TypeInfo t = type_of(xs.at(0));
  for (std::size_t i = 1; i < xs.size(); ++i) t = promote_types(t, type_of(xs[i]));
  return promoted(t, p);
}

inline std::vector<Array> promote(std::vector<Array> xs, Promotion p = Promotion::kCommon) {
  TypeInfo t = result_type(xs, p);
  for (Array& x : xs) x = convert(x, t);
  return xs;
}

// numpy's broadcasting rule over any number of shapes; nullopt when they do not broadcast.
inline std::optional<Shape> try_broadcast_shapes(const std::vector<Shape>& shapes) {
  std::size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes) {
    for (std::size_t i = 0; i < s.size(); ++i) {
      std::int64_t& o = out[rank - s.size() + i];
      if (s[i] == o || s[i] == 1) continue;
      if (o != 1) return std::nullopt;
      o = s[i];
    }
  }
  return out;
}

inline std::string shapes_str(const std::vector<Shape>& shapes) {
  std::vector<std::string> parts;
  for (const Shape& s : shapes) parts.push_back(shape_str(s));
  return jx::detail::join(parts, ", ");
}

// x broadcast to `shape`, trailing dims aligned as numpy does; x itself when already there.
inline Array broadcast_to_shape(const Array& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  std::vector<std::int64_t> dims(x.ndim());
  for (int i = 0; i < x.ndim(); ++i)
    dims[i] = static_cast<std::int64_t>(shape.size()) - x.ndim() + i;
  return lax::broadcast_in_dim(x, shape, dims);
}

// xs' common shape by numpy's rule; ShapeError naming `op` when they do not broadcast.
inline Shape broadcast_shape(const std::string& op, const std::vector<Array>& xs) {
  std::vector<Shape> shapes;
  for (const Array& x : xs) shapes.push_back(x.shape());
  std::optional<Shape> shape = try_broadcast_shapes(shapes);
  if (!shape)
    throw ShapeError(op + " got incompatible shapes for broadcasting: " + shapes_str(shapes));
  return *shape;
}

// Broadcasts xs, 0-d ones included, to their common shape (for ops that take equal shapes).
inline std::vector<Array> broadcast_all(const std::string& op, std::vector<Array> xs) {
  Shape shape = broadcast_shape(op, xs);
  for (Array& x : xs) x = broadcast_to_shape(x, shape);
  return xs;
}

// JAX's promote_shapes: operands whose shapes broadcast, given the same rank by leading size-1
// dims when their ranks differ (0-d ones aside); lax's binary ops broadcast size-1 dims.
inline std::vector<Array> promote_ranks(const std::string& op, std::vector<Array> xs) {
  std::size_t rank = broadcast_shape(op, xs).size();
  for (Array& x : xs) {
    if (x.ndim() == 0 || static_cast<std::size_t>(x.ndim()) == rank) continue;
    Shape shape(rank - static_cast<std::size_t>(x.ndim()), 1);
    shape.insert(shape.end(), x.shape().begin(), x.shape().end());
    x = broadcast_to_shape(x, shape);
  }
  return xs;
}

// The one path of every binary np function: promote dtypes, then ranks (or, `scalars_too`,
// broadcast every operand to the full shape). `op` is the lax primitive named in errors.
struct Operands {
  Array x, y;
};
inline Operands prepare(const std::string& op, const Array& x, const Array& y,
                        Promotion p = Promotion::kCommon, bool scalars_too = false) {
  std::vector<Array> xs = promote({x, y}, p);
  std::vector<Array> v = scalars_too ? broadcast_all(op, xs) : promote_ranks(op, xs);
  return {v[0], v[1]};
}
inline Array binary(const std::string& op, const Array& x, const Array& y,
                    Array (*f)(const Array&, const Array&), Promotion p = Promotion::kCommon) {
  auto [a, b] = prepare(op, x, y, p);
  return f(a, b);
}

// One dot_general over operands promoted to their common type, computing in that dtype.
inline Array promoted_dot(const Array& a, const Array& b, const lax::DotDimensionNumbers& dn,
                          std::optional<lax::Precision> precision = std::nullopt) {
  TypeInfo t = result_type({a, b});
  Array x = convert(a, t), y = convert(b, t);
  return convert(lax::dot_general(x, y, dn, t.dtype, precision), t);
}

// numpy's axis normalization: negative axes count from the end.
inline std::int64_t canonical_axis(int axis, int ndim) {
  if (axis < -ndim || axis >= ndim)
    throw ShapeError("axis " + std::to_string(axis) + " is out of bounds for array of dimension " +
                     std::to_string(ndim));
  return axis < 0 ? axis + ndim : axis;
}

// The axes of an `axis` argument, canonical and in the order given; every axis when unset.
inline std::vector<std::int64_t> canonical_axes(const Axes& axes, int ndim) {
  std::vector<std::int64_t> out;
  if (!axes.get()) {
    for (int i = 0; i < ndim; ++i) out.push_back(i);
    return out;
  }
  for (int a : *axes.get()) {
    std::int64_t c = canonical_axis(a, ndim);
    if (std::find(out.begin(), out.end(), c) != out.end())
      throw ShapeError("duplicate value in 'axis': " + jx::detail::tuple_str(*axes.get()));
    out.push_back(c);
  }
  return out;
}

}  // namespace jx::np::detail
