// np linear algebra: matmul, dot and outer, each one dot_general (or one multiply).
#include "library/numpy_support.hpp"

namespace jx::np {
namespace {

using Dims = std::vector<std::int64_t>;

using detail::promoted_dot;

Shape batch_shape(const Array& x) { return Shape(x.shape().begin(), x.shape().end() - 2); }

Shape concat(Shape a, const Shape& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

// numpy's matmul: a 1-d operand contracts its only axis (the added unit dim never appears);
// stacks of matrices broadcast their batch dims, which become dot_general's batch dims.
Array matmul(const Array& a, const Array& b, std::optional<lax::Precision> precision) {
  for (int i = 0; i < 2; ++i) {
    const Array& x = i == 0 ? a : b;
    if (x.ndim() < 1)
      throw ShapeError("matmul input operand " + std::to_string(i) +
                       " must have ndim at least 1, but it has ndim " + std::to_string(x.ndim()));
  }
  std::int64_t na = a.ndim(), nb = b.ndim();
  if (na == 1 || nb == 1) {
    // A vector has no batch dims; the matrix side's batch dims stay free dims of the result.
    Dims lhs = {na - 1}, rhs = {nb == 1 ? 0 : nb - 2};
    return promoted_dot(a, b, {lhs, rhs, {}, {}}, precision);
  }
  std::optional<Shape> batch = detail::try_broadcast_shapes({batch_shape(a), batch_shape(b)});
  if (!batch)
    throw ShapeError("Incompatible shapes for matmul arguments: " + shape_str(a.shape()) + " and " +
                     shape_str(b.shape()));
  auto last2 = [](const Array& x) { return Shape(x.shape().end() - 2, x.shape().end()); };
  Array x = detail::broadcast_to_shape(a, concat(*batch, last2(a)));
  Array y = detail::broadcast_to_shape(b, concat(*batch, last2(b)));
  auto k = static_cast<std::int64_t>(batch->size());
  Dims batch_dims(k);
  for (std::int64_t i = 0; i < k; ++i) batch_dims[i] = i;
  return promoted_dot(x, y, {{k + 1}, {k}, batch_dims, batch_dims}, precision);
}

// numpy's dot: a scalar scales; otherwise a's last axis meets b's only axis (b 1-d) or b's
// second-to-last axis, and all remaining axes of a, then of b, make the result.
Array dot(const Array& a, const Array& b) {
  std::int64_t na = a.ndim(), nb = b.ndim();
  if (na == 0 || nb == 0) return promoted_dot(a, b, {{}, {}, {}, {}});
  return promoted_dot(a, b, {{na - 1}, {nb == 1 ? 0 : nb - 2}, {}, {}});
}

Array outer(const Array& a, const Array& b) {
  Array x = ravel(a), y = ravel(b);
  Shape shape = {x.size(), y.size()};
  Array column = lax::broadcast_in_dim(x, shape, {0});
  return multiply(column, lax::broadcast_in_dim(y, shape, {1}));
}

}  // namespace jx::np
