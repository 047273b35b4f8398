// np functions that rearrange whole blocks of an array: roll, tile, repeat and split, each made of
// slices, concatenations, broadcasts and reshapes (static sizes, so every one jits and
// differentiates through those primitives' rules).
#include <numeric>

#include "library/numpy_support.hpp"

namespace jx::np {
namespace {

using Ints = std::vector<std::int64_t>;

// x[start:limit] along `axis`.
Array slice_along(const Array& x, std::int64_t axis, std::int64_t start, std::int64_t limit) {
  Ints begin(static_cast<std::size_t>(x.ndim()), 0), end = x.shape();
  begin[static_cast<std::size_t>(axis)] = start;
  end[static_cast<std::size_t>(axis)] = limit;
  return lax::slice(x, begin, end);
}

std::string list_str(const Ints& v) { return "[" + jx::detail::join(v, ", ") + "]"; }

// Each element along `axis` repeated r times, as JAX's fast path: a new axis of size r after
// `axis`, merged into it.
Array repeat_each(const Array& x, std::int64_t axis, std::int64_t r) {
  Shape wide = x.shape(), out = x.shape();
  wide.insert(wide.begin() + axis + 1, r);
  out[static_cast<std::size_t>(axis)] *= r;
  Ints dims;
  for (std::int64_t d = 0; d <= x.ndim(); ++d)
    if (d != axis + 1) dims.push_back(d);
  return lax::reshape(lax::broadcast_in_dim(x, wide, dims), out);
}

}  // namespace

// numpy's roll: shifts and axes pair up as numpy broadcasts them (one shift for every axis, or
// one axis for every shift; an axis may repeat), each a rotation made of two slices; no axis
// rolls the flattened array.
Array roll(const Array& a, const std::vector<int>& shift, const Axes& axis) {
  if (!axis.get()) return reshape(roll(ravel(a), shift, 0), a.shape());
  const std::vector<int>& axes = *axis.get();
  if (axes.size() != shift.size() && axes.size() != 1 && shift.size() != 1)
    throw ValueError(
        "shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is between arg "
        "0 with shape (" +
        std::to_string(axes.size()) + ",) and arg 1 with shape (" + std::to_string(shift.size()) +
        ",).");
  std::size_t n = axes.size() == 1 ? shift.size() : axes.size();
  Array out = a;
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t ax = detail::canonical_axis(axes[axes.size() == 1 ? 0 : i], a.ndim());
    std::int64_t size = a.shape()[static_cast<std::size_t>(ax)];
    if (size == 0) continue;
    std::int64_t s = shift[shift.size() == 1 ? 0 : i];
    std::int64_t start = ((-s) % size + size) % size;  // Python's (-s) % size
    if (start == 0) continue;
    out = lax::concatenate({slice_along(out, ax, start, size), slice_along(out, ax, 0, start)}, ax);
  }
  return out;
}

Array roll(const Array& a, int shift, const Axes& axis) {
  return roll(a, std::vector<int>{shift}, axis);
}

// numpy's tile: reps shorter than a's rank are padded with 1s in front, longer ones give a new
// leading unit dims; a broadcast to (r0, d0, r1, d1, ...) then merges each pair (lax.tile's
// lowering).
Array tile(const Array& a, const std::vector<std::int64_t>& reps) {
  for (std::int64_t r : reps)
    if (r < 0) throw ValueError("negative dimensions are not allowed");
  Ints r(static_cast<std::size_t>(std::max<std::int64_t>(0, a.ndim() - std::ssize(reps))), 1);
  r.insert(r.end(), reps.begin(), reps.end());
  Shape dims(r.size() - static_cast<std::size_t>(a.ndim()), 1);
  dims.insert(dims.end(), a.shape().begin(), a.shape().end());
  Shape wide, out;
  Ints where;
  for (std::size_t i = 0; i < r.size(); ++i) {
    wide.insert(wide.end(), {r[i], dims[i]});
    where.push_back(static_cast<std::int64_t>(2 * i + 1));
    out.push_back(r[i] * dims[i]);
  }
  if (out == a.shape()) return a;
  Array x = dims == a.shape() ? a : lax::reshape(a, dims);
  return lax::reshape(lax::broadcast_in_dim(x, wide, where), out);
}

Array tile(const Array& a, std::int64_t reps) { return tile(a, std::vector<std::int64_t>{reps}); }

// numpy's repeat with static repeats: one count for every element, or one per element along the
// axis (a single count broadcasts). Runs of equal counts are one slice repeated at once, so the
// jaxpr grows with the number of runs, not of elements (no gather is needed).
Array repeat(const Array& a, const std::vector<std::int64_t>& repeats, std::optional<int> axis) {
  if (!axis) return repeat(ravel(a), repeats, 0);
  std::int64_t ax = detail::canonical_axis(*axis, a.ndim());
  std::int64_t n = a.shape()[static_cast<std::size_t>(ax)];
  for (std::int64_t r : repeats)
    if (r < 0) throw ValueError("repeats may not contain negative values.");
  if (repeats.size() == 1) return repeat_each(a, ax, repeats[0]);
  if (std::ssize(repeats) != n)
    throw ValueError(
        "operands could not be broadcast together with remapped shapes "
        "[original->remapped]: (" +
        std::to_string(repeats.size()) + ",) and requested shape (" + std::to_string(n) + ",)");
  std::vector<Array> pieces;
  for (std::int64_t i = 0; i < n;) {
    std::int64_t j = i;
    while (j < n && repeats[static_cast<std::size_t>(j)] == repeats[static_cast<std::size_t>(i)])
      ++j;
    if (repeats[static_cast<std::size_t>(i)] > 0)
      pieces.push_back(
          repeat_each(slice_along(a, ax, i, j), ax, repeats[static_cast<std::size_t>(i)]));
    i = j;
  }
  if (pieces.empty()) return slice_along(a, ax, 0, 0);
  return pieces.size() == 1 ? pieces[0] : lax::concatenate(pieces, ax);
}

Array repeat(const Array& a, std::int64_t repeats, std::optional<int> axis) {
  return repeat(a, std::vector<std::int64_t>{repeats}, axis);
}

// numpy's split into equal sections (JAX's error when they are not), or at indices, as JAX
// takes them: increasing and within the axis.
std::vector<Array> split(const Array& a, std::int64_t sections, int axis) {
  std::int64_t ax = detail::canonical_axis(axis, a.ndim());
  std::int64_t size = a.shape()[static_cast<std::size_t>(ax)];
  if (sections <= 0) throw ValueError("number sections must be larger than 0.");
  if (size % sections != 0)
    throw ValueError("array split does not result in an equal division: rest is " +
                     std::to_string(size % sections));
  Ints indices;
  for (std::int64_t i = 1; i < sections; ++i) indices.push_back(i * (size / sections));
  return split(a, indices, axis);
}

std::vector<Array> split(const Array& a, const std::vector<std::int64_t>& indices, int axis) {
  std::int64_t ax = detail::canonical_axis(axis, a.ndim());
  Ints bounds{0};
  bounds.insert(bounds.end(), indices.begin(), indices.end());
  bounds.push_back(a.shape()[static_cast<std::size_t>(ax)]);
  Ints sizes;
  for (std::size_t i = 1; i < bounds.size(); ++i) sizes.push_back(bounds[i] - bounds[i - 1]);
  if (std::any_of(sizes.begin(), sizes.end(), [](std::int64_t s) { return s < 0; }))
    throw ValueError("Sizes passed to split must be nonnegative, got " + list_str(sizes));
  std::vector<Array> out;
  for (std::size_t i = 1; i < bounds.size(); ++i)
    out.push_back(slice_along(a, ax, bounds[i - 1], bounds[i]));
  return out;
}

std::vector<Array> split(const Array& a, std::initializer_list<std::int64_t> indices, int axis) {
  return split(a, std::vector<std::int64_t>(indices), axis);
}

}  // namespace jx::np
