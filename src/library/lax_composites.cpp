// jx::lax functions composed of primitives rather than primitives of their own.
#include <functional>

#include "jx/lax.hpp"
#include "jx/numpy.hpp"

namespace jx::lax {
namespace {

// x[start:limit:stride] along `axis`.
Array slice_in_dim(const Array& x, std::int64_t start, std::int64_t limit, std::int64_t stride,
                   std::int64_t axis) {
  std::vector<std::int64_t> starts(static_cast<std::size_t>(x.ndim()), 0),
      limits = x.shape(), strides(static_cast<std::size_t>(x.ndim()), 1);
  auto a = static_cast<std::size_t>(axis);
  starts[a] = start;
  limits[a] = limit;
  strides[a] = stride;
  return slice(x, starts, limits, strides);
}

// a and b alternating along `axis`, a first (a as long as b, or one longer): each padded with
// zeros into the other's places, then added (or-ed, for bool).
Array interleave(const Array& a, const Array& b, std::int64_t axis) {
  auto d = static_cast<std::size_t>(axis);
  bool same = a.shape()[d] == b.shape()[d];
  PaddingConfig pa(static_cast<std::size_t>(a.ndim()), {0, 0, 0}), pb = pa;
  pa[d] = {0, same ? 1 : 0, 1};
  pb[d] = {1, same ? 0 : 1, 1};
  Array zero = convert_element_type(np::array(0), a.dtype());
  Array (*op)(const Array&, const Array&) = a.dtype() == bool_ ? bitwise_or : add;
  return op(pad(a, zero, pa), pad(b, zero, pb));
}

// JAX's _scan: the odd elements of the scan are the scan of adjacent pairs combined; each even
// one combines the odd one before it with its own element.
Array scan_rounds(const std::function<Array(const Array&, const Array&)>& fn, const Array& x,
                  std::int64_t axis) {
  std::int64_t n = x.shape()[static_cast<std::size_t>(axis)];
  if (n < 2) return x;
  Array odd =
      scan_rounds(fn, fn(slice_in_dim(x, 0, n - 1, 2, axis), slice_in_dim(x, 1, n, 2, axis)), axis);
  std::int64_t m = odd.shape()[static_cast<std::size_t>(axis)];
  Array rest = slice_in_dim(x, 2, n, 2, axis);
  Array even = fn(n % 2 == 0 ? slice_in_dim(odd, 0, m - 1, 1, axis) : odd, rest);
  even = concatenate({slice_in_dim(x, 0, 1, 1, axis), even}, axis);
  return interleave(even, odd, axis);
}

}  // namespace

Array associative_scan(const std::function<Array(const Array&, const Array&)>& fn, const Array& x,
                       std::int64_t axis, bool reverse) {
  if (axis < 0) axis += x.ndim();
  if (axis < 0 || axis >= x.ndim())
    throw ShapeError("associative_scan: axis out of bounds for array of shape " +
                     shape_str(x.shape()));
  if (!reverse) return scan_rounds(fn, x, axis);
  return rev(scan_rounds(fn, rev(x, {axis}), axis), {axis});
}

}  // namespace jx::lax
