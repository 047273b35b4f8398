// np functions of matrix diagonals: tril and triu (an iota comparison selects), diagonal (a
// strided slice of the flattened matrix, so no gather is needed) and trace.
#include "library/numpy_support.hpp"

namespace jx::np {
namespace {

using Ints = std::vector<std::int64_t>;

// The (N, M) mask of a's last two dims where col - row ≥ k (or ≤ k when `below`).
Array band(const Array& m, const char* name, int k, bool below) {
  if (m.ndim() < 2)
    throw ValueError(std::string("Argument to jax.numpy.") + name + " must be at least 2D");
  Shape nm(m.shape().end() - 2, m.shape().end());
  DType index = std::max(nm[0], nm[1]) < (std::int64_t{1} << 30) ? int32 : int64;
  Array diff = lax::sub(lax::iota(index, nm, 1), lax::iota(index, nm, 0));
  Array limit = detail::constant(k, index);
  return below ? lax::le(diff, limit) : lax::ge(diff, limit);
}

}  // namespace

Array tril(const Array& m, int k) {
  return where(band(m, "tril", k, true), m, detail::scalar_like(m, 0));
}

Array triu(const Array& m, int k) {
  return where(band(m, "triu", k, false), m, detail::scalar_like(m, 0));
}

// The diagonal of the (axis1, axis2) matrices as a new last axis, as numpy. With those axes moved
// last and flattened to N*M elements, the diagonal starting at (row0, col0) is every (M+1)-th
// element from row0*M + col0.
Array diagonal(const Array& a, int offset, int axis1, int axis2) {
  if (a.ndim() < 2) throw ValueError("diagonal requires an array of at least two dimensions.");
  std::int64_t ax1 = detail::canonical_axis(axis1, a.ndim());
  std::int64_t ax2 = detail::canonical_axis(axis2, a.ndim());
  if (ax1 == ax2) throw ValueError("axis1 and axis2 cannot be the same");
  std::vector<int> perm;
  Shape lead;
  for (int d = 0; d < a.ndim(); ++d) {
    if (d == ax1 || d == ax2) continue;
    perm.push_back(d);
    lead.push_back(a.shape()[static_cast<std::size_t>(d)]);
  }
  perm.insert(perm.end(), {static_cast<int>(ax1), static_cast<int>(ax2)});
  std::int64_t n = a.shape()[static_cast<std::size_t>(ax1)];
  std::int64_t m = a.shape()[static_cast<std::size_t>(ax2)];
  std::int64_t row0 = offset < 0 ? -static_cast<std::int64_t>(offset) : 0;
  std::int64_t col0 = offset > 0 ? offset : 0;
  std::int64_t size = std::max<std::int64_t>(0, std::min(n - row0, m - col0));
  Shape flat = lead;
  flat.push_back(n * m);
  Array x = reshape(transpose(a, perm), flat);
  Ints start(lead.size(), 0), limit = lead, strides(lead.size(), 1);
  std::int64_t first = size == 0 ? 0 : row0 * m + col0;
  start.push_back(first);
  limit.push_back(size == 0 ? 0 : first + (size - 1) * (m + 1) + 1);
  strides.push_back(m + 1);
  return lax::slice(x, start, limit, strides);
}

// The sum of diagonal(a, offset, axis1, axis2): integers and bools sum in the default int, as
// np::sum does.
Array trace(const Array& a, int offset, int axis1, int axis2) {
  if (detail::canonical_axis(axis1, a.ndim()) == detail::canonical_axis(axis2, a.ndim()))
    throw ValueError("axis1 and axis2 can not be same. axis1=" + std::to_string(axis1) +
                     " and axis2=" + std::to_string(axis2));
  return sum(diagonal(a, offset, axis1, axis2), -1);
}

}  // namespace jx::np
