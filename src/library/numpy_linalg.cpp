// np linear algebra: matmul, dot and outer, each one dot_general (or one multiply).
#include <algorithm>
#include <numeric>

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

// numpy's matmul as JAX computes it: batch dims both operands have (of one size, or 1 on one
// side) are dot_general's batch dims; a batch dim only one operand has, or of size 1 on the
// other (squeezed there), is a free dim of that operand, so a stack of matrices times one matrix
// is one product of the stacked rows, never the matrix broadcast. The result is transposed to
// numpy's order. A 1-d operand contracts its only axis (the added unit dim never appears).
Array matmul(const Array& a, const Array& b, std::optional<lax::Precision> precision) {
  for (int i = 0; i < 2; ++i) {
    const Array& x = i == 0 ? a : b;
    if (x.ndim() < 1)
      throw ShapeError("matmul input operand " + std::to_string(i) +
                       " must have ndim at least 1, but it has ndim " + std::to_string(x.ndim()));
  }
  const bool a_matrix = a.ndim() > 1, b_matrix = b.ndim() > 1;
  Shape a_batch = a_matrix ? batch_shape(a) : Shape{},
        b_batch = b_matrix ? batch_shape(b) : Shape{};
  const std::size_t n = std::max(a_batch.size(), b_batch.size());
  // Batch dim i of each operand, counted from the right: absent (-1) where it has fewer.
  auto at = [n](const Shape& s, std::size_t i) {
    return i + s.size() < n ? std::int64_t{-1} : s[i + s.size() - n];
  };
  Dims a_squeeze, b_squeeze, a_dims, b_dims, batch, a_other, b_other;
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t sa = at(a_batch, i), sb = at(b_batch, i);
    auto d = static_cast<std::int64_t>(i);
    auto here = [&](const Dims& other, const Dims& squeezed) {
      return static_cast<std::int64_t>(batch.size() + other.size() + squeezed.size());
    };
    if (sa < 0) {
      b_other.push_back(d);
    } else if (sb < 0) {
      a_other.push_back(d);
    } else if (sa == 1) {
      a_squeeze.push_back(here(a_other, a_squeeze));
      b_other.push_back(d);
    } else if (sb == 1) {
      b_squeeze.push_back(here(b_other, b_squeeze));
      a_other.push_back(d);
    } else if (sa == sb) {
      a_dims.push_back(here(a_other, {}));
      b_dims.push_back(here(b_other, {}));
      batch.push_back(d);
    } else {
      throw ShapeError("Incompatible shapes for matmul arguments: " + shape_str(a.shape()) +
                       " and " + shape_str(b.shape()));
    }
  }
  auto nd = static_cast<std::int64_t>(n);
  if (a_matrix) a_other.push_back(nd);
  if (b_matrix) b_other.push_back(nd + (a_matrix ? 1 : 0));
  Dims order = concat(concat(batch, a_other), b_other), perm(order.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](std::int64_t x, std::int64_t y) {
    return order[static_cast<std::size_t>(x)] < order[static_cast<std::size_t>(y)];
  });
  Array x = a_squeeze.empty() ? a : lax::squeeze(a, a_squeeze);
  Array y = b_squeeze.empty() ? b : lax::squeeze(b, b_squeeze);
  Array out = promoted_dot(
      x, y, {{x.ndim() - 1}, {y.ndim() - 1 - (b_matrix ? 1 : 0)}, a_dims, b_dims}, precision);
  Dims identity(perm.size());
  std::iota(identity.begin(), identity.end(), 0);
  return perm == identity ? out : lax::transpose(out, perm);
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
