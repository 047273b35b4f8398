// jx::np — NumPy's API on jx arrays: broadcasting and JAX's type promotion, built on jx::lax.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "jx/array.hpp"
#include "jx/detail/call_site.hpp"
#include "jx/lax.hpp"  // lax::Precision

namespace jx::np {

// An `axis` argument: all axes (the default), one axis, or several. Negative axes count from
// the end.
class Axes {
 public:
  Axes() = default;
  Axes(int axis) : axes_(std::vector<int>{axis}) {}        // NOLINT: implicit, like numpy's axis=0
  Axes(std::vector<int> axes) : axes_(std::move(axes)) {}  // NOLINT
  Axes(std::initializer_list<int> axes) : axes_(std::vector<int>(axes)) {}
  const std::optional<std::vector<int>>& get() const { return axes_; }

 private:
  std::optional<std::vector<int>> axes_;
};

// ---- creation --------------------------------------------------------------------------------
Array array(const Array& x);  // a strong-typed copy of x: np::array(3.0f) is f32[]
template <Element T>
Array array(std::initializer_list<T> values);
template <Element T>
Array array(const std::vector<T>& values, const Shape& shape);
template <Element T>
Array array(const std::vector<T>& values) {
  return array(values, Shape{static_cast<std::int64_t>(values.size())});
}
Array asarray(const Array& x, std::optional<DType> dtype = std::nullopt);
// Default dtypes are the mode's (jx/dtype.hpp): float32, or float64 with --enable_x64.
Array zeros(const Shape& shape, DType dtype = default_float_dtype());
Array ones(const Shape& shape, DType dtype = default_float_dtype());
Array full(const Shape& shape, const Array& fill_value, std::optional<DType> dtype = std::nullopt);
Array zeros_like(const Array& x, std::optional<DType> dtype = std::nullopt);
Array ones_like(const Array& x, std::optional<DType> dtype = std::nullopt);
Array full_like(const Array& x, const Array& fill_value, std::optional<DType> dtype = std::nullopt);
// The default int dtype for whole numbers, else the default float dtype.
Array arange(double stop, std::optional<DType> dtype = std::nullopt);
Array arange(double start, double stop, double step = 1, std::optional<DType> dtype = std::nullopt);
Array linspace(double start, double stop, std::int64_t num = 50, bool endpoint = true,
               DType dtype = default_float_dtype());
Array eye(std::int64_t n, std::optional<std::int64_t> m = std::nullopt, std::int64_t k = 0,
          DType dtype = default_float_dtype());

// ---- elementwise -----------------------------------------------------------------------------
// Those that make NaNs or infinities from finite inputs take the caller's location, which
// --debug_nans names (detail/call_site.hpp).
Array negative(const Array& x);
Array positive(const Array& x);
Array exp(const Array& x, std::source_location at = std::source_location::current());
Array exp2(const Array& x);
Array log(const Array& x, std::source_location at = std::source_location::current());
Array log2(const Array& x, std::source_location at = std::source_location::current());
Array log10(const Array& x, std::source_location at = std::source_location::current());
Array log1p(const Array& x, std::source_location at = std::source_location::current());
Array expm1(const Array& x);
Array sin(const Array& x);
Array cos(const Array& x);
Array tan(const Array& x);
Array arcsin(const Array& x, std::source_location at = std::source_location::current());
Array arccos(const Array& x, std::source_location at = std::source_location::current());
Array arctan(const Array& x);
Array sinh(const Array& x);
Array cosh(const Array& x);
Array tanh(const Array& x);
Array arcsinh(const Array& x);
Array arccosh(const Array& x, std::source_location at = std::source_location::current());
Array arctanh(const Array& x, std::source_location at = std::source_location::current());
Array sqrt(const Array& x, std::source_location at = std::source_location::current());
Array cbrt(const Array& x);
Array square(const Array& x);
Array reciprocal(const Array& x, std::source_location at = std::source_location::current());
Array abs(const Array& x);
Array sign(const Array& x);
Array floor(const Array& x);
Array ceil(const Array& x);
Array round(const Array& x);  // half to even, as numpy
Array logical_not(const Array& x);
Array bitwise_not(const Array& x);
Array isfinite(const Array& x);  // bool; integers and bools are always finite
Array isinf(const Array& x);
Array isnan(const Array& x);

Array add(const Array& x, const Array& y);
Array subtract(const Array& x, const Array& y);
Array multiply(const Array& x, const Array& y);
Array divide(const Array& x, const Array& y,
             std::source_location at = std::source_location::current());  // true division
Array true_divide(const Array& x, const Array& y,
                  std::source_location at = std::source_location::current());
Array floor_divide(const Array& x, const Array& y,
                   std::source_location at = std::source_location::current());
Array remainder(const Array& x, const Array& y,
                std::source_location at =
                    std::source_location::current());  // sign of the divisor, as Python's %
Array mod(const Array& x, const Array& y);
Array power(const Array& x, const Array& y,
            std::source_location at = std::source_location::current());
Array maximum(const Array& x, const Array& y);
Array minimum(const Array& x, const Array& y);
Array arctan2(const Array& x, const Array& y);
Array logaddexp(const Array& x, const Array& y);
Array equal(const Array& x, const Array& y);
Array not_equal(const Array& x, const Array& y);
Array less(const Array& x, const Array& y);
Array less_equal(const Array& x, const Array& y);
Array greater(const Array& x, const Array& y);
Array greater_equal(const Array& x, const Array& y);
Array logical_and(const Array& x, const Array& y);
Array logical_or(const Array& x, const Array& y);
Array bitwise_and(const Array& x, const Array& y);
Array bitwise_or(const Array& x, const Array& y);
Array bitwise_xor(const Array& x, const Array& y);
Array left_shift(const Array& x, const Array& y);
Array right_shift(const Array& x, const Array& y);  // arithmetic for signed, logical for unsigned
Array where(const Array& condition, const Array& x, const Array& y);
Array clip(const Array& x, const std::optional<Array>& lo, const std::optional<Array>& hi);
// x, through which no gradient flows (lax.stop_gradient); integer and bool arrays pass as they are.
Array stop_gradient(const Array& x);

// ---- reductions ------------------------------------------------------------------------------
Array sum(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array prod(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array max(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array min(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array mean(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array var(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array std(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array all(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array any(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array argmax(const Array& x, std::optional<int> axis = std::nullopt, bool keepdims = false);
Array argmin(const Array& x, std::optional<int> axis = std::nullopt, bool keepdims = false);
// Stable, ascending along `axis`; NaNs last. argsort gives int32 indices.
Array sort(const Array& x, int axis = -1);
Array argsort(const Array& x, int axis = -1);

// ---- cumulative reductions and flip (numpy_cumulative.cpp) ----------------------------------
// Along `axis`, or along the flattened array when none is given (jnp.cumsum's axis=None). bool
// computes in the default int; cumsum and cumprod also widen integers narrower than it (unsigned
// ones to the unsigned int of its width), as jnp's do.
Array cumsum(const Array& x, std::optional<int> axis = std::nullopt);
Array cumprod(const Array& x, std::optional<int> axis = std::nullopt);
Array cummax(const Array& x, std::optional<int> axis = std::nullopt);
Array cummin(const Array& x, std::optional<int> axis = std::nullopt);
// x reversed along `axis` (default: every axis); negative axes count from the end (jnp.flip).
Array flip(const Array& x, const Axes& axis = {});

// ---- shapes ----------------------------------------------------------------------------------
Array reshape(const Array& x, const Shape& shape);  // one -1 entry is inferred
Array ravel(const Array& x);
Array transpose(const Array& x, std::optional<std::vector<int>> axes = std::nullopt);
Array swapaxes(const Array& x, int axis1, int axis2);
Array expand_dims(const Array& x, const Axes& axis);
Array squeeze(const Array& x, const Axes& axis = {});
Array broadcast_to(const Array& x, const Shape& shape);
Array concatenate(const std::vector<Array>& xs, int axis = 0);
Array stack(const std::vector<Array>& xs, int axis = 0);
Shape broadcast_shapes(const Shape& a, const Shape& b);

// ---- indexing (numpy_indexing.cpp) --------------------------------------------------------------
// Elements of `a` at `indices` along `axis` (no axis: of a flattened), as jnp.take: the result
// has indices' shape where the axis was. Negative indices count from the end; out-of-range ones
// give NaN for inexact dtypes (the lowest value for signed, the highest for unsigned, true),
// or `fill_value`; under kClip they clamp.
Array take(const Array& a, const Array& indices, std::optional<int> axis = std::nullopt,
           std::optional<lax::GatherScatterMode> mode = std::nullopt,
           std::optional<double> fill_value = std::nullopt);
// out[..., j, ...] = a[..., indices[..., j, ...], ...] along `axis`: indices has a's rank, and
// their other dims broadcast against a's. Out of range as take.
Array take_along_axis(const Array& a, const Array& indices, int axis,
                      std::optional<lax::GatherScatterMode> mode = std::nullopt,
                      std::optional<double> fill_value = std::nullopt);

// ---- linear algebra --------------------------------------------------------------------------
// Batch dims broadcast; 1-d operands as numpy. `precision` as lax::dot_general's.
Array matmul(const Array& a, const Array& b,
             std::optional<lax::Precision> precision = std::nullopt);
Array dot(const Array& a, const Array& b);
Array outer(const Array& a, const Array& b);

// ---- rearranging, triangles and diagonals, contractions, searching -------------------------
// (numpy_rearrange.cpp, numpy_diagonals.cpp, numpy_einsum.cpp, numpy_searching.cpp)
// roll: each shift rotates its axis; shifts and axes pair up as numpy broadcasts them (an axis may
// repeat). No axis: the flattened array rolls and takes a's shape back.
Array roll(const Array& a, int shift, const Axes& axis = {});
Array roll(const Array& a, const std::vector<int>& shift, const Axes& axis = {});
// tile: reps shorter than a's rank repeat the trailing axes; longer ones add leading axes.
Array tile(const Array& a, std::int64_t reps);
Array tile(const Array& a, const std::vector<std::int64_t>& reps);
// repeat: every element `repeats` times, or element i repeats[i] times (static counts). No
// axis: the flattened array.
Array repeat(const Array& a, std::int64_t repeats, std::optional<int> axis = std::nullopt);
Array repeat(const Array& a, const std::vector<std::int64_t>& repeats,
             std::optional<int> axis = std::nullopt);
// split into `sections` equal parts, or at increasing indices: split(x, {2, 5}) is x[:2],
// x[2:5], x[5:] (a braced list is always indices, as a Python list is).
std::vector<Array> split(const Array& a, std::int64_t sections, int axis = 0);
std::vector<Array> split(const Array& a, const std::vector<std::int64_t>& indices, int axis = 0);
std::vector<Array> split(const Array& a, std::initializer_list<std::int64_t> indices, int axis = 0);
// The lower (tril) or upper (triu) triangle of the last two axes from diagonal k; zeros elsewhere.
Array tril(const Array& m, int k = 0);
Array triu(const Array& m, int k = 0);
// The diagonal of the (axis1, axis2) matrices, as a new last axis; trace sums it.
Array diagonal(const Array& a, int offset = 0, int axis1 = 0, int axis2 = 1);
Array trace(const Array& a, int offset = 0, int axis1 = 0, int axis2 = 1);
// einsum("ij,jk->ik", {a, b}): explicit or implicit output, "..." for broadcast dims, any number
// of operands, contracted pairwise by dot_general in opt_einsum's greedy order.
Array einsum(const std::string& subscripts, const std::vector<Array>& operands,
             std::optional<lax::Precision> precision = std::nullopt);
// tensordot: a's last `axes` axes against b's first, or a_axes[i] against b_axes[i].
Array tensordot(const Array& a, const Array& b, int axes = 2);
Array tensordot(const Array& a, const Array& b, const std::vector<int>& a_axes,
                const std::vector<int>& b_axes);
// Where v's elements would go in the sorted 1-d a (int32 indices): before equal elements
// ("left") or after them ("right"). NaNs sort last, as in np::sort.
Array searchsorted(const Array& a, const Array& v, const std::string& side = "left");

}  // namespace jx::np
