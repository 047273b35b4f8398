// np shape functions: reshape, ravel, transpose, swapaxes, expand_dims, squeeze, broadcasting,
// concatenate and stack.
#include <numeric>

#include "library/numpy_support.hpp"

namespace jx::np {
namespace {

using jx::detail::tuple_str;

// The product of dims, or nullopt on int64 overflow.
std::optional<std::int64_t> checked_size(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
  return n;
}

std::vector<std::int64_t> iota(int n) {
  std::vector<std::int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// lax::transpose, or x itself for the identity permutation (as JAX skips it).
Array permute(const Array& x, const std::vector<std::int64_t>& perm) {
  return perm == iota(x.ndim()) ? x : lax::transpose(x, perm);
}

}  // namespace

Array reshape(const Array& x, const Shape& shape) {
  std::string prefix = "cannot reshape array of shape " + shape_str(x.shape()) + " (size " +
                       std::to_string(x.size()) + ") into shape " + shape_str(shape);
  Shape out = shape;
  std::optional<std::size_t> unknown;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] >= 0) continue;
    if (out[i] != -1) throw ShapeError(prefix);
    if (unknown) throw ShapeError("can only specify one unknown dimension");
    unknown = i;
  }
  if (unknown) {
    out[*unknown] = 1;
    std::optional<std::int64_t> known = checked_size(out);
    if (!known || *known == 0 || x.size() % *known != 0) throw ShapeError(prefix);
    out[*unknown] = x.size() / *known;
  }
  std::optional<std::int64_t> size = checked_size(out);
  if (!size) throw ShapeError(prefix);
  if (*size != x.size()) throw ShapeError(prefix + " (size " + std::to_string(*size) + ")");
  return out == x.shape() ? x : lax::reshape(x, out);
}

Array ravel(const Array& x) { return reshape(x, {x.size()}); }

Array transpose(const Array& x, std::optional<std::vector<int>> axes) {
  std::vector<std::int64_t> perm = iota(x.ndim());
  if (!axes) {
    std::reverse(perm.begin(), perm.end());
    return permute(x, perm);
  }
  perm.clear();
  for (int a : *axes) perm.push_back(detail::canonical_axis(a, x.ndim()));
  std::vector<std::int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != iota(x.ndim()))
    throw ShapeError(
        "transpose permutation isn't a permutation of operand dimensions, got "
        "permutation " +
        tuple_str(perm) + " for operand shape " + shape_str(x.shape()));
  return permute(x, perm);
}

Array swapaxes(const Array& x, int axis1, int axis2) {
  std::vector<std::int64_t> perm = iota(x.ndim());
  std::swap(perm[detail::canonical_axis(axis1, x.ndim())],
            perm[detail::canonical_axis(axis2, x.ndim())]);
  return permute(x, perm);
}

// Axes index the result, so they are checked against ndim + the number of new axes.
Array expand_dims(const Array& x, const Axes& axis) {
  if (!axis.get()) throw ShapeError("expand_dims requires an axis");
  int out_ndim = x.ndim() + static_cast<int>(axis.get()->size());
  std::vector<std::int64_t> dims = detail::canonical_axes(axis, out_ndim);
  if (dims.empty()) return x;
  std::sort(dims.begin(), dims.end());
  return lax::expand_dims(x, dims);
}

Array squeeze(const Array& x, const Axes& axis) {
  std::vector<std::int64_t> dims;
  if (!axis.get()) {
    for (int i = 0; i < x.ndim(); ++i)
      if (x.shape()[i] == 1) dims.push_back(i);
  } else {
    dims = detail::canonical_axes(axis, x.ndim());
    std::sort(dims.begin(), dims.end());
    for (std::int64_t d : dims)
      if (x.shape()[d] != 1)
        throw ShapeError(
            "cannot select an axis to squeeze out which has size not equal to one, "
            "got shape=" +
            shape_str(x.shape()) + " and dimensions=" + tuple_str(dims));
  }
  return dims.empty() ? x : lax::squeeze(x, dims);
}

Array broadcast_to(const Array& x, const Shape& shape) {
  for (std::int64_t d : shape)
    if (d < 0) throw ShapeError("all elements of broadcast shape must be non-negative");
  if (shape.size() < x.shape().size())
    throw ShapeError("Cannot broadcast to shape with fewer dimensions: arr_shape=" +
                     shape_str(x.shape()) + " shape=" + shape_str(shape));
  std::size_t lead = shape.size() - x.shape().size();
  for (std::size_t i = 0; i < x.shape().size(); ++i)
    if (x.shape()[i] != 1 && x.shape()[i] != shape[lead + i])
      throw ShapeError("Incompatible shapes for broadcasting: " + shape_str(x.shape()) +
                       " and requested shape " + shape_str(shape));
  return detail::broadcast_to_shape(x, shape);
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  std::optional<Shape> out = detail::try_broadcast_shapes({a, b});
  if (!out)
    throw ShapeError("Incompatible shapes for broadcasting: shapes=[" + detail::shapes_str({a, b}) +
                     "]");
  return *out;
}

Array concatenate(const std::vector<Array>& xs, int axis) {
  if (xs.empty()) throw ShapeError("Need at least one array to concatenate");
  if (xs[0].ndim() == 0) throw ShapeError("Zero-dimensional arrays cannot be concatenated");
  std::int64_t dim = detail::canonical_axis(axis, xs[0].ndim());
  std::vector<Array> promoted = detail::promote(xs);
  return promoted.size() == 1 ? promoted[0] : lax::concatenate(promoted, dim);
}

Array stack(const std::vector<Array>& xs, int axis) {
  if (xs.empty()) throw ShapeError("Need at least one array to stack");
  std::int64_t dim = detail::canonical_axis(axis, xs[0].ndim() + 1);
  std::vector<Array> expanded;
  for (const Array& x : xs) {
    if (x.shape() != xs[0].shape()) throw ShapeError("All input arrays must have the same shape");
    expanded.push_back(lax::expand_dims(x, {dim}));
  }
  return concatenate(expanded, static_cast<int>(dim));
}

}  // namespace jx::np
