// jnp's take and take_along_axis, x[i] and x.at[i] along axis 0: index normalization as JAX's,
// then one lax.gather or lax.scatter*.
#include "jx/lax.hpp"
#include "jx/numpy.hpp"
#include "library/numpy_support.hpp"

namespace jx {
namespace {

using Ints = std::vector<std::int64_t>;
using Mode = lax::GatherScatterMode;

// Integer indices with negative entries counted from the end of an axis of n elements.
Array normalized(const Array& indices, std::int64_t n) {
  if (!is_integral(indices.dtype()))
    throw TypeError("Indexer must have integer type, got indexer with type " +
                    std::string(dtype_name(indices.dtype())));
  if (is_unsigned(indices.dtype())) return indices;
  Array end = lax::convert_element_type(Array(static_cast<double>(n)), indices.dtype());
  return lax::select_n(lax::lt(indices, lax::convert_element_type(Array(0), indices.dtype())),
                       {indices, lax::add(indices, end)});
}

// The indices as start vectors of length 1: a trailing dim of 1.
Array as_starts(const Array& indices) {
  Shape s = indices.shape();
  s.push_back(1);
  return lax::reshape(indices, s);
}

// Gathers x's slices at `indices` along `axis`: the result has indices' dims where axis was.
Array take_along(const Array& x, const Array& indices, std::int64_t axis, Mode mode,
                 std::optional<double> fill) {
  Array idx = as_starts(normalized(indices, x.shape()[static_cast<std::size_t>(axis)]));
  Ints offset, sizes = x.shape();
  sizes[static_cast<std::size_t>(axis)] = 1;
  for (std::int64_t d = 0; d < x.ndim(); ++d)
    if (d != axis) offset.push_back(d < axis ? d : d + indices.ndim() - 1);
  return lax::gather(x, idx, {offset, {axis}, {axis}}, sizes, false, false, mode, fill);
}

// Where x.at[indices] writes: updates of x[indices]'s shape, each row of them into the row of
// x its index names; out-of-bounds rows are dropped.
Array scatter_rows(const Array& x, const Array& indices, const Array& v,
                   decltype(&lax::scatter_add) op) {
  if (x.ndim() == 0)
    throw TypeError("Too many indices: 0-dimensional array indexed with 1 regular index.");
  Array idx = as_starts(normalized(indices, x.shape()[0]));
  Shape shape = indices.shape();
  shape.insert(shape.end(), x.shape().begin() + 1, x.shape().end());
  Array updates = np::broadcast_to(lax::convert_element_type(v, x.dtype()), shape);
  Ints window;
  for (std::int64_t d = indices.ndim(); d < static_cast<std::int64_t>(shape.size()); ++d)
    window.push_back(d);
  return op(x, idx, updates, {window, {0}, {0}}, false, false, Mode::kFillOrDrop);
}

}  // namespace

namespace np {

Array take(const Array& a, const Array& indices, std::optional<int> axis,
           std::optional<lax::GatherScatterMode> mode, std::optional<double> fill_value) {
  Array x = axis ? a : ravel(a);
  std::int64_t ax = axis ? np::detail::canonical_axis(*axis, x.ndim()) : 0;
  return take_along(x, indices, ax, mode.value_or(Mode::kFillOrDrop), fill_value);
}

// The non-axis dims broadcast (NumPy's rule); then each position of the indices is a batching
// dim paired with the same position of a.
Array take_along_axis(const Array& a, const Array& indices, int axis,
                      std::optional<lax::GatherScatterMode> mode,
                      std::optional<double> fill_value) {
  if (indices.ndim() != a.ndim())
    throw ValueError("indices and arr must have the same number of dimensions; " +
                     std::to_string(indices.ndim()) + " vs. " + std::to_string(a.ndim()));
  auto ax = static_cast<std::size_t>(np::detail::canonical_axis(axis, a.ndim()));
  Shape xs = a.shape(), is = indices.shape();
  Ints batch;
  for (std::size_t d = 0; d < xs.size(); ++d) {
    if (d == ax) continue;
    batch.push_back(static_cast<std::int64_t>(d));
    if (xs[d] != is[d] && xs[d] != 1 && is[d] != 1)
      throw ValueError("Incompatible shapes for broadcasting: " + shape_str(a.shape()) + " and " +
                       shape_str(indices.shape()));
    xs[d] = is[d] = std::max(xs[d], is[d]);
    if (a.shape()[d] == 0 || indices.shape()[d] == 0) xs[d] = is[d] = 0;
  }
  Array x = broadcast_to(a, xs);
  Array idx = as_starts(normalized(broadcast_to(indices, is), xs[ax]));
  auto k = static_cast<std::int64_t>(ax);
  Ints sizes(xs.size(), 1);
  lax::GatherDimensionNumbers d{Ints{}, Ints{k}, Ints{k}, batch, batch};
  return lax::gather(x, idx, d, sizes, false, false,
                     mode.value_or(Mode::kFillOrDrop), fill_value);
}

}  // namespace np

Array Array::operator[](std::int64_t i) const {
  if (ndim() == 0)
    throw TypeError("Too many indices: 0-dimensional array indexed with 1 regular index.");
  std::int64_t n = shape()[0];
  if (i < -n || i >= n)
    throw IndexError("index " + std::to_string(i) + " is out of bounds for axis 0 with size " +
                     std::to_string(n));
  if (i < 0) i += n;
  Ints start(static_cast<std::size_t>(ndim()), 0), limit = shape();
  start[0] = i;
  limit[0] = i + 1;
  return lax::squeeze(lax::slice(*this, start, limit), {0});
}

Array Array::operator[](const Array& indices) const {
  if (ndim() == 0)
    throw TypeError("Too many indices: 0-dimensional array indexed with 1 regular index.");
  return take_along(*this, indices, 0, Mode::kPromiseInBounds, std::nullopt);
}

At Array::at(const Array& indices) const { return At(*this, indices); }

Array At::get() const { return x_[indices_]; }
Array At::set(const Array& v) const { return scatter_rows(x_, indices_, v, lax::scatter); }
Array At::add(const Array& v) const { return scatter_rows(x_, indices_, v, lax::scatter_add); }
Array At::multiply(const Array& v) const {
  return scatter_rows(x_, indices_, v, lax::scatter_mul);
}
Array At::min(const Array& v) const { return scatter_rows(x_, indices_, v, lax::scatter_min); }
Array At::max(const Array& v) const { return scatter_rows(x_, indices_, v, lax::scatter_max); }

}  // namespace jx
