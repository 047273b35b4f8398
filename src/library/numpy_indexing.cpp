// jnp's take and take_along_axis, x[i] and x.at[i] along axis 0: index normalization as JAX's,
// then one lax.gather or lax.scatter*.
#include <limits>

#include "jx/lax.hpp"
#include "jx/numpy.hpp"
#include "library/numpy_support.hpp"

namespace jx {
namespace {

using Ints = std::vector<std::int64_t>;
using Mode = lax::GatherScatterMode;

// What start indices into x are: int32, or int64 where an axis is longer than int32 reaches
// (JAX's int_dtype_for_shape).
DType index_dtype(const Shape& shape) {
  bool long_axis = std::any_of(shape.begin(), shape.end(), [](std::int64_t n) {
    return n > std::numeric_limits<std::int32_t>::max();
  });
  return long_axis ? int64 : int32;
}

// Integer indices into an axis of n elements as `to`, negative entries counted from the end
// unless `from_end` is false. Narrower ints first widen, as JAX's indexing does, so that counting
// from the end cannot wrap. Entries `to` cannot hold (int64, uint32) first clamp to -1 or n: out
// of bounds still, where a plain conversion would wrap them into range.
Array as_indices(const Array& indices, std::int64_t n, DType to, bool from_end = true) {
  if (!is_integral(indices.dtype()))
    throw TypeError("Indexer must have integer type, got indexer with type " +
                    std::string(dtype_name(indices.dtype())));
  Array i =
      itemsize(indices.dtype()) < itemsize(to) ? lax::convert_element_type(indices, to) : indices;
  auto constant = [&](std::int64_t v) {
    return lax::convert_element_type(Array(static_cast<double>(v)), i.dtype());
  };
  bool is_signed = !is_unsigned(i.dtype());
  if (is_signed && from_end)
    i = lax::select_n(lax::lt(i, constant(0)), {i, lax::add(i, constant(n))});
  if (i.dtype() == to) return i;
  if (is_signed) i = lax::max(i, constant(-1));
  return lax::convert_element_type(lax::min(i, constant(n)), to);
}

// The indices as start vectors of length 1: a trailing dim of 1.
Array as_starts(const Array& indices) {
  Shape s = indices.shape();
  s.push_back(1);
  return lax::reshape(indices, s);
}

// Zeros of x's dtype and weak type in `shape`: what gathering an empty result gives, as JAX's
// indexing returns rather than gather from an empty axis.
Array zeros_of(const Array& x, const Shape& shape) {
  return lax::broadcast_in_dim(lax::convert_element_type(Array(0), x.dtype(), x.weak_type()), shape,
                               {});
}

// Gathers x's slices at `indices` along `axis`: the result has indices' dims where axis was.
Array take_along(const Array& x, const Array& indices, std::int64_t axis, Mode mode,
                 std::optional<double> fill) {
  auto ax = static_cast<std::size_t>(axis);
  Array idx =
      as_starts(as_indices(indices, x.shape()[ax], index_dtype(x.shape()), mode != Mode::kClip));
  Shape out = x.shape();
  out.erase(out.begin() + axis);
  out.insert(out.begin() + axis, indices.shape().begin(), indices.shape().end());
  if (shape_size(out) == 0) return zeros_of(x, out);
  Ints offset, sizes = x.shape();
  sizes[ax] = 1;
  for (std::int64_t d = 0; d < x.ndim(); ++d)
    if (d != axis) offset.push_back(d < axis ? d : d + indices.ndim() - 1);
  return lax::gather(x, idx, {offset, {axis}, {axis}}, sizes, false, false, mode, fill);
}

// ---- NumPy's indexing as one gather or scatter --------------------------------------------------
// An index resolves to XLA dimension numbers over x (with its newaxis dims inserted): unit-step
// slices are windows (offset dims) starting at a constant; ints and integer arrays are advanced
// indices (collapsed dims whose starts the arrays give); other slices walk their dim by a
// constant arange. The result's dims: the windows' and the strided slices' in place, the
// advanced block (the arrays' broadcast shape) where the arrays stand if they are adjacent, else
// first. The start vectors are built by broadcasting each indexed dim's starts over the
// result's batch dims (every dim but the windows').
struct IndexPlan {
  Array x;       // the operand, newaxis dims inserted
  Array starts;  // [batch dims..., K]
  lax::GatherDimensionNumbers dims;
  Ints slice_sizes;   // the window per operand dim
  Shape shape;        // of x[index]
  bool basic = true;  // only ints and unit-step slices: a lax slice does
  Ints window_start;  // per operand dim: the window's constant start (an int's value)
};

// Python's slice semantics on an axis of n: (start, step, length).
struct SliceRange {
  std::int64_t start, step, length;
};
SliceRange slice_range(const Slice& s, std::int64_t n) {
  if (s.step == 0) throw ValueError("slice step cannot be zero");
  auto norm = [n](std::int64_t v, std::int64_t lo, std::int64_t hi) {
    return std::clamp(v < 0 ? v + n : v, lo, hi);
  };
  if (s.step > 0) {
    std::int64_t start = s.start ? norm(*s.start, 0, n) : 0;
    std::int64_t stop = s.stop ? norm(*s.stop, 0, n) : n;
    return {start, s.step, stop > start ? (stop - start + s.step - 1) / s.step : 0};
  }
  std::int64_t start = s.start ? norm(*s.start, -1, n - 1) : n - 1;
  std::int64_t stop = s.stop ? norm(*s.stop, -1, n - 1) : -1;
  return {start, s.step, start > stop ? (start - stop - s.step - 1) / -s.step : 0};
}

// `for_scatter`: the start vectors are wanted even where a slice would do (a get leaves them
// unbuilt then, so that x[1, 2:] stages no index arrays).
IndexPlan plan_index(const Array& x_in, const std::vector<Index>& index, bool for_scatter) {
  // Count the entries that consume a dim; expand the ellipsis; insert newaxis dims.
  std::size_t regular = 0, ellipses = 0;
  for (const Index& i : index) {
    if (std::holds_alternative<Ellipsis>(i.value()))
      ++ellipses;
    else if (!std::holds_alternative<NewAxis>(i.value()))
      ++regular;
  }
  auto rank = static_cast<std::size_t>(x_in.ndim());
  if (ellipses > 1) throw IndexError("an index can only have a single ellipsis ('...')");
  if (regular > rank)
    throw IndexError("Too many indices: " + std::to_string(rank) +
                     "-dimensional array indexed with " + std::to_string(regular) +
                     " regular indices.");
  std::vector<Index> items;
  Shape xs;
  std::size_t d = 0;
  for (const Index& i : index) {
    if (std::holds_alternative<Ellipsis>(i.value())) {
      for (std::size_t k = 0; k < rank - regular; ++k)
        items.push_back(slice()), xs.push_back(x_in.shape()[d++]);
    } else if (std::holds_alternative<NewAxis>(i.value())) {
      items.push_back(slice());
      xs.push_back(1);
    } else {
      items.push_back(i);
      xs.push_back(x_in.shape()[d++]);
    }
  }
  while (d < rank) items.push_back(slice()), xs.push_back(x_in.shape()[d++]);
  IndexPlan p;
  p.x = lax::reshape(x_in, xs);
  DType to = index_dtype(xs);

  // What each dim is: a window, a strided walk, or advanced.
  enum class Kind { kWindow, kStrided, kAdvanced };
  std::vector<Kind> kind(xs.size());
  std::vector<SliceRange> ranges(xs.size());
  std::vector<Array> advanced;
  std::vector<std::size_t> advanced_dims;
  Ints int_at(xs.size(), 0);  // an int entry's value, normalized
  for (std::size_t k = 0; k < xs.size(); ++k) {
    const auto& v = items[k].value();
    if (const auto* s = std::get_if<Slice>(&v)) {
      ranges[k] = slice_range(*s, xs[k]);
      kind[k] = ranges[k].step == 1 || ranges[k].length <= 1 ? Kind::kWindow : Kind::kStrided;
      if (ranges[k].length == 0) ranges[k].start = 0;
      continue;
    }
    kind[k] = Kind::kAdvanced;
    advanced_dims.push_back(k);
    if (const auto* i = std::get_if<std::int64_t>(&v)) {
      if (*i < -xs[k] || *i >= xs[k])
        throw IndexError("index " + std::to_string(*i) + " is out of bounds for axis " +
                         std::to_string(k) + " with size " + std::to_string(xs[k]));
      int_at[k] = *i < 0 ? *i + xs[k] : *i;
      advanced.push_back(lax::convert_element_type(Array(int_at[k]), to));
      continue;
    }
    const Array& a = std::get<Array>(v);
    if (a.dtype() == bool_)
      throw TypeError(
          "Array boolean indices must be concrete and are not supported by jx's "
          "indexing; use np::where");
    advanced.push_back(as_indices(a, xs[k], to));
    p.basic = false;
  }
  for (Kind k : kind) p.basic = p.basic && k != Kind::kStrided;

  // The advanced block's shape, and where it goes: before the result dim of the first advanced
  // dim when the advanced dims are adjacent, else first.
  Shape block;
  for (const Array& a : advanced) block = np::broadcast_shapes(block, a.shape());
  bool adjacent = advanced_dims.empty() ||
                  advanced_dims.back() - advanced_dims.front() + 1 == advanced_dims.size();
  std::size_t block_at = adjacent && !advanced_dims.empty() ? advanced_dims.front() : 0;

  // The result's dims in order; every one but the windows' is a batch dim of the start vectors.
  std::vector<std::size_t> rest;  // the operand dims that are not advanced
  for (std::size_t k = 0; k < xs.size(); ++k)
    if (kind[k] != Kind::kAdvanced) rest.push_back(k);
  Shape grid;                                         // the batch dims' sizes
  std::vector<std::int64_t> batch_of(xs.size(), -1);  // of each strided dim
  std::int64_t block_batch = 0;
  for (std::size_t j = 0; j <= rest.size(); ++j) {
    if (!advanced_dims.empty() && j == block_at) {
      block_batch = static_cast<std::int64_t>(grid.size());
      grid.insert(grid.end(), block.begin(), block.end());
      p.shape.insert(p.shape.end(), block.begin(), block.end());
    }
    if (j == rest.size()) break;
    std::size_t k = rest[j];
    if (kind[k] == Kind::kWindow) {
      p.dims.offset_dims.push_back(static_cast<std::int64_t>(p.shape.size()));
    } else {
      batch_of[k] = static_cast<std::int64_t>(grid.size());
      grid.push_back(ranges[k].length);
    }
    p.shape.push_back(ranges[k].length);
  }

  // The window per dim, and the starts of each dim that has them, broadcast over the grid.
  std::vector<Array> components;
  const bool build = for_scatter || !p.basic;
  auto starts_of = [&](const Array& v, const Ints& at) {
    if (build)
      components.push_back(lax::broadcast_in_dim(lax::convert_element_type(v, to), grid, at));
  };
  for (std::size_t k = 0; k < xs.size(); ++k) {
    auto dim = static_cast<std::int64_t>(k);
    if (kind[k] == Kind::kWindow) {
      p.slice_sizes.push_back(ranges[k].length);
      p.window_start.push_back(ranges[k].start);
      if (ranges[k].length == xs[k]) continue;  // the whole dim: no start to give
      p.dims.start_index_map.push_back(dim);
      starts_of(Array(ranges[k].start), {});
      continue;
    }
    p.slice_sizes.push_back(1);
    p.window_start.push_back(int_at[k]);
    p.dims.collapsed_slice_dims.push_back(dim);
    p.dims.start_index_map.push_back(dim);
    if (kind[k] == Kind::kStrided) {
      const SliceRange& r = ranges[k];
      starts_of(lax::add(lax::mul(lax::iota(to, {r.length}, 0),
                                  lax::convert_element_type(Array(r.step), to)),
                         lax::convert_element_type(Array(r.start), to)),
                {batch_of[k]});
      continue;
    }
    auto a = static_cast<std::size_t>(std::find(advanced_dims.begin(), advanced_dims.end(), k) -
                                      advanced_dims.begin());
    Ints at;  // the array's dims, right-aligned in the block (NumPy's broadcasting)
    for (std::int64_t r = 0; r < advanced[a].ndim(); ++r)
      at.push_back(block_batch + static_cast<std::int64_t>(block.size()) - advanced[a].ndim() + r);
    starts_of(advanced[a], at);
  }
  if (!build) return p;
  auto vector_dim = static_cast<std::int64_t>(grid.size());
  for (Array& c : components) c = lax::expand_dims(c, {vector_dim});
  Shape none = grid;
  none.push_back(0);
  p.starts = components.empty() ? np::zeros(none, to) : lax::concatenate(components, vector_dim);
  return p;
}

// x[index] with only ints and unit-step slices: a slice, and a reshape dropping the ints' dims.
Array basic_get(const IndexPlan& p) {
  Ints limit;
  for (std::size_t k = 0; k < p.window_start.size(); ++k)
    limit.push_back(p.window_start[k] + p.slice_sizes[k]);
  return lax::reshape(lax::slice(p.x, p.window_start, limit), p.shape);
}

Array get(const Array& x, const std::vector<Index>& index) {
  IndexPlan p = plan_index(x, index, false);
  if (p.basic) return basic_get(p);
  if (shape_size(p.shape) == 0) return zeros_of(x, p.shape);
  return lax::gather(p.x, p.starts, p.dims, p.slice_sizes, false, false, Mode::kPromiseInBounds);
}

// x.at[index] combined with v through `op`: updates of x[index]'s shape; out-of-bounds dropped.
Array update(const Array& x, const std::vector<Index>& index, const Array& v,
             decltype(&lax::scatter_add) op) {
  IndexPlan p = plan_index(x, index, true);
  Array updates = np::broadcast_to(lax::convert_element_type(v, x.dtype()), p.shape);
  if (shape_size(p.shape) == 0) return x;
  lax::ScatterDimensionNumbers d{p.dims.offset_dims, p.dims.collapsed_slice_dims,
                                 p.dims.start_index_map};
  return lax::reshape(op(p.x, p.starts, updates, d, false, false, Mode::kFillOrDrop), x.shape());
}

}  // namespace

namespace np {

Array take(const Array& a, const Array& indices, std::optional<int> axis,
           std::optional<lax::GatherScatterMode> mode, std::optional<double> fill_value) {
  Array x = axis ? a : ravel(a);
  std::int64_t ax = axis ? np::detail::canonical_axis(*axis, x.ndim()) : 0;
  if (x.shape()[static_cast<std::size_t>(ax)] == 0 && indices.size() != 0)
    throw IndexError("Cannot do a non-empty take() from an empty axis.");
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
  Array idx = as_starts(as_indices(broadcast_to(indices, is), xs[ax], index_dtype(xs)));
  if (xs[ax] == 0 || shape_size(is) == 0) return zeros_of(x, is);
  auto k = static_cast<std::int64_t>(ax);
  Ints sizes(xs.size(), 1);
  lax::GatherDimensionNumbers d{Ints{}, Ints{k}, Ints{k}, batch, batch};
  return lax::gather(x, idx, d, sizes, false, false, mode.value_or(Mode::kFillOrDrop), fill_value);
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

Array Array::operator[](const std::vector<Index>& index) const { return get(*this, index); }

At Array::at(const Array& indices) const { return At(*this, {indices}); }
At Array::at(const std::vector<Index>& index) const { return At(*this, index); }

Array At::get() const { return jx::get(x_, index_); }
Array At::set(const Array& v) const { return update(x_, index_, v, lax::scatter); }
Array At::add(const Array& v) const { return update(x_, index_, v, lax::scatter_add); }
Array At::multiply(const Array& v) const { return update(x_, index_, v, lax::scatter_mul); }
Array At::min(const Array& v) const { return update(x_, index_, v, lax::scatter_min); }
Array At::max(const Array& v) const { return update(x_, index_, v, lax::scatter_max); }

}  // namespace jx
