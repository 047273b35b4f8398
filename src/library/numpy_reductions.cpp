// np reductions: sum prod max min mean var std all any, argmax/argmin, and sort/argsort.
#include "core/dtype_set.hpp"
#include "library/numpy_support.hpp"

namespace jx::np {
namespace {

using ReduceFn = Array (*)(const Array&, const std::vector<std::int64_t>&);

// The shared path of every reduction: axes, the empty check of ops without an identity, the
// dtype of the result (strong, as JAX converts), the dtype it computes in, and keepdims.
Array reduce(const std::string& name, const Array& x, const Axes& axis, bool keepdims, DType dtype,
             ReduceFn fn, bool has_identity = true) {
  std::vector<std::int64_t> dims = detail::canonical_axes(axis, x.ndim());
  if (!has_identity)
    for (std::int64_t d : dims)
      if (x.shape()[d] == 0)
        throw ShapeError("zero-size array to reduction operation " + name +
                         " which has no identity");
  // 16-bit floats sum in float32 and round once (JAX's upcast_f16_for_computation); max and min
  // are exact in any dtype, so only folds that round take the wider one.
  DType compute = has_identity ? compute_dtype(dtype) : dtype;
  Array out = detail::convert(fn(detail::convert(x, {compute, false}), dims), {dtype, false});
  if (!keepdims || dims.empty()) return out;
  std::sort(dims.begin(), dims.end());
  return lax::expand_dims(out, dims);
}

// Sums and products of bools and of integers narrower than the default int count in the default
// int of their signedness (JAX's promote_integers): sum(uint8) is uint32, sum(int8) int32.
DType accumulation_dtype(DType d) {
  DType wide = default_int_dtype();
  if (d == bool_) return wide;
  if (!is_integral(d) || itemsize(d) >= itemsize(wide)) return d;
  return is_unsigned(d) ? (wide == int64 ? uint64 : uint32) : wide;
}

// The number of elements each output element reduces over: the mean's divisor.
std::int64_t reduced_count(const Array& x, const Axes& axis) {
  std::int64_t n = 1;
  for (std::int64_t d : detail::canonical_axes(axis, x.ndim())) n *= x.shape()[d];
  return n;
}

DType inexact_dtype(DType d) {
  return detail::promoted({d, false}, detail::Promotion::kInexact).dtype;
}

// The mean in `dtype`, summed and divided in its computation dtype and rounded once.
Array mean_as(const Array& x, const Axes& axis, bool keepdims, DType dtype) {
  DType compute = compute_dtype(dtype);
  Array total = reduce("sum", x, axis, keepdims, compute, lax::reduce_sum);
  Array count = detail::constant(static_cast<double>(reduced_count(x, axis)), compute);
  return detail::convert(lax::div(total, count), {dtype, false});
}

using ArgFn = Array (*)(const Array&, std::int64_t, DType);

// argmax/argmin: over the flattened array when no axis is given.
Array arg_reduce(const std::string& name, ArgFn fn, const Array& x, std::optional<int> axis,
                 bool keepdims) {
  Array operand = x;
  std::int64_t ax = 0;
  std::vector<std::int64_t> dims;  // where keepdims puts size-1 axes back
  if (axis) {
    ax = detail::canonical_axis(*axis, x.ndim());
    dims = {ax};
  } else {
    operand = ravel(x);
    for (int i = 0; i < x.ndim(); ++i) dims.push_back(i);
  }
  if (operand.shape()[ax] == 0)
    throw ShapeError("attempt to get " + name + " of an empty sequence");
  Array out = fn(operand, ax, default_int_dtype());
  return keepdims && !dims.empty() ? lax::expand_dims(out, dims) : out;
}

}  // namespace

Array sum(const Array& x, const Axes& axis, bool keepdims) {
  return reduce("sum", x, axis, keepdims, accumulation_dtype(x.dtype()), lax::reduce_sum);
}

Array prod(const Array& x, const Axes& axis, bool keepdims) {
  return reduce("prod", x, axis, keepdims, accumulation_dtype(x.dtype()), lax::reduce_prod);
}

Array max(const Array& x, const Axes& axis, bool keepdims) {
  return reduce("max", x, axis, keepdims, x.dtype(), lax::reduce_max, /*has_identity=*/false);
}

Array min(const Array& x, const Axes& axis, bool keepdims) {
  return reduce("min", x, axis, keepdims, x.dtype(), lax::reduce_min, /*has_identity=*/false);
}

// On bools, min is `and` and max is `or`; both have an identity (True, False).
Array all(const Array& x, const Axes& axis, bool keepdims) {
  return reduce("all", x, axis, keepdims, bool_, lax::reduce_min);
}

Array any(const Array& x, const Axes& axis, bool keepdims) {
  return reduce("any", x, axis, keepdims, bool_, lax::reduce_max);
}

// Integers and bools average in the default float; bfloat16 and float16 stay, averaged in float32.
Array mean(const Array& x, const Axes& axis, bool keepdims) {
  return mean_as(x, axis, keepdims, inexact_dtype(x.dtype()));
}

// Population variance (ddof = 0): mean of squared deviations from the mean.
Array var(const Array& x, const Axes& axis, bool keepdims) {
  DType dtype = inexact_dtype(x.dtype());
  DType compute = compute_dtype(dtype);
  Array a = detail::convert(x, {compute, false});
  Array centered = subtract(a, mean_as(a, axis, /*keepdims=*/true, compute));
  return detail::convert(mean_as(lax::integer_pow(centered, 2), axis, keepdims, compute),
                         {dtype, false});
}

Array std(const Array& x, const Axes& axis, bool keepdims) {
  return lax::sqrt(var(x, axis, keepdims));
}

Array argmax(const Array& x, std::optional<int> axis, bool keepdims) {
  return arg_reduce("argmax", lax::argmax, x, axis, keepdims);
}

Array argmin(const Array& x, std::optional<int> axis, bool keepdims) {
  return arg_reduce("argmin", lax::argmin, x, axis, keepdims);
}

Array sort(const Array& x, int axis) { return lax::sort(x, axis); }

// The positions sorted along with x: an iota as sort_key_val's values.
Array argsort(const Array& x, int axis) {
  std::int64_t ax = detail::canonical_axis(axis, x.ndim());
  return lax::sort_key_val(x, lax::iota(default_int_dtype(), x.shape(), ax), static_cast<int>(ax))
      .second;
}

}  // namespace jx::np
