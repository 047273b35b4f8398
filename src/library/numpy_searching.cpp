// np::searchsorted: insertion indices into a sorted 1-d array, in sort's total order (NaNs last),
// computed without a loop: by counting comparisons (JAX's method="compare_all") up to 2^24 of
// them, else by ranks from sorts (JAX's method="sort").
#include <limits>
#include <numeric>

#include "library/numpy_support.hpp"

namespace jx::np {
namespace {

// Up to this many comparisons (len(a) * len(v)) every pair is compared: jitted, that is one
// fused reduction, faster than the four sorts of len(a) + len(v) elements at every size measured
// up to it (docs/performance.md, bench_searchsorted); past it, the n*m elements an eager
// evaluation materializes would pass 64 MiB per array.
constexpr std::int64_t kMaxComparisons = std::int64_t{1} << 24;

// For each position of y, its place in y sorted stably: the inverse of argsort(y).
Array ranks(const Array& y, DType index) {
  Array iota = lax::iota(index, y.shape());
  Array perm = lax::sort_key_val(y, iota).second;
  return lax::sort_key_val(perm, iota).second;
}

Array slice1(const Array& x, std::int64_t start, std::int64_t limit) {
  return lax::slice(x, {start}, {limit});
}

}  // namespace

// side="left": the first i with v <= a[i] (the count of a[i] < v); "right": the count of
// a[i] <= v. With ranks: v placed before (left) or after (right) the equal elements of a in a
// stable sort of both, less its rank among the queries, is the count of a's elements before it.
Array searchsorted(const Array& a, const Array& v, const std::string& side) {
  if (a.ndim() != 1) throw ValueError("a should be 1-dimensional");
  if (side != "left" && side != "right")
    throw ValueError("invalid argument side='" + side + "', expected 'left' or 'right'");
  std::vector<Array> xs = detail::promote({a, v});
  const Array &sorted = xs[0], &query = xs[1];
  std::int64_t n = sorted.size(), m = query.size();
  DType index = n <= std::numeric_limits<std::int32_t>::max() ? int32 : int64;
  if (n == 0 || m == 0) return lax::broadcast_in_dim(detail::constant(0, index), v.shape(), {});
  bool left = side == "left";
  if (n * m <= kMaxComparisons) {
    // In sort's order a NaN query comes after every number (left) or everything (right);
    // otherwise `<` and `<=` count right, as they are false for NaN elements of a.
    Shape wide{n};
    wide.insert(wide.end(), v.shape().begin(), v.shape().end());
    std::vector<std::int64_t> query_dims(static_cast<std::size_t>(v.ndim()));
    std::iota(query_dims.begin(), query_dims.end(), 1);
    Array s = lax::broadcast_in_dim(sorted, wide, {0});
    Array q = lax::broadcast_in_dim(query, wide, query_dims);
    auto count = [&](const Array& before) {
      return lax::reduce_sum(lax::convert_element_type(before, index), {0});
    };
    Array counts = count(left ? lax::lt(s, q) : lax::le(s, q));
    if (!is_floating(query.dtype())) return counts;
    Array nan_place = left ? count(lax::eq(sorted, sorted)) : detail::constant(double(n), index);
    Array is_nan = lax::ne(query, query);
    return detail::select(is_nan, lax::broadcast_in_dim(nan_place, v.shape(), {}), counts);
  }
  DType work = n + m <= std::numeric_limits<std::int32_t>::max() ? int32 : int64;
  Array flat = ravel(query);
  Array both = lax::concatenate(
      left ? std::vector<Array>{flat, sorted} : std::vector<Array>{sorted, flat}, 0);
  Array placed = left ? slice1(ranks(both, work), 0, m) : slice1(ranks(both, work), n, n + m);
  Array count = lax::sub(placed, ranks(flat, work));
  return reshape(detail::convert(count, {index, false}), v.shape());
}

}  // namespace jx::np
