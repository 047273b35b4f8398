// jx::np's cumulative reductions (jnp.cumsum and jnp.cumprod; cummax and cummin on lax's) and
// flip, on lax's cumulative primitives and rev.
#include "library/numpy_support.hpp"

namespace jx::np {
namespace {

using CumulativeFn = Array (*)(const Array&, std::int64_t, bool);

// jnp's _cumulative_reduction: without an axis the flattened array; bool (for every reduction)
// and, where `promote_integers`, integers narrower than the default int compute in the default
// int (unsigned ones in the unsigned int of its width); the result is strongly typed.
Array cumulative(CumulativeFn f, const Array& x, std::optional<int> axis, bool promote_integers) {
  bool flatten = (!axis || x.ndim() == 0) && x.shape() != Shape{x.size()};
  Array a = flatten ? lax::reshape(x, {x.size()}) : x;
  std::int64_t ax = detail::canonical_axis(axis.value_or(0), a.ndim());
  DType t = a.dtype(), wide = default_int_dtype();
  if (t == bool_)
    t = wide;
  else if (promote_integers && is_integral(t) && itemsize(t) < itemsize(wide))
    t = is_unsigned(t) ? (wide == int64 ? uint64 : uint32) : wide;
  return f(detail::convert(a, {t, false}), ax, false);
}

}  // namespace

Array cumsum(const Array& x, std::optional<int> axis) {
  return cumulative(lax::cumsum, x, axis, /*promote_integers=*/true);
}
Array cumprod(const Array& x, std::optional<int> axis) {
  return cumulative(lax::cumprod, x, axis, /*promote_integers=*/true);
}
Array cummax(const Array& x, std::optional<int> axis) {
  return cumulative(lax::cummax, x, axis, /*promote_integers=*/false);
}
Array cummin(const Array& x, std::optional<int> axis) {
  return cumulative(lax::cummin, x, axis, /*promote_integers=*/false);
}

// jnp.flip: every axis by default; each axis canonicalized, repeats left for rev to reject.
Array flip(const Array& x, const Axes& axis) {
  std::vector<std::int64_t> dims;
  if (!axis.get())
    for (int d = 0; d < x.ndim(); ++d) dims.push_back(d);
  else
    for (int a : *axis.get()) dims.push_back(detail::canonical_axis(a, x.ndim()));
  return lax::rev(x, dims);
}

}  // namespace jx::np
