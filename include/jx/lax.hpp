// jx::lax — one thin wrapper per primitive. Operands must already agree in dtype and shape
// (a 0-d operand of an elementwise op broadcasts); jx::np does promotion and broadcasting.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "jx/array.hpp"
#include "jx/window.hpp"

namespace jx::lax {

// unary.cpp — elementwise maps.
Array neg(const Array& x);
Array exp(const Array& x);
Array exp2(const Array& x);
Array log(const Array& x);
Array log1p(const Array& x);
Array expm1(const Array& x);
Array sin(const Array& x);
Array cos(const Array& x);
Array tan(const Array& x);
Array asin(const Array& x);
Array acos(const Array& x);
Array atan(const Array& x);
Array sinh(const Array& x);
Array cosh(const Array& x);
Array tanh(const Array& x);
Array asinh(const Array& x);
Array acosh(const Array& x);
Array atanh(const Array& x);
Array logistic(const Array& x);
Array sqrt(const Array& x);
Array rsqrt(const Array& x);
Array cbrt(const Array& x);
Array abs(const Array& x);
Array sign(const Array& x);
Array floor(const Array& x);
Array ceil(const Array& x);
enum class RoundingMethod : int { kAwayFromZero = 0, kToNearestEven = 1 };
Array round(const Array& x, RoundingMethod method = RoundingMethod::kAwayFromZero);
Array erf(const Array& x);
// The inverse error function on (-1, 1), ±inf at ±1: float32 as XLA's ErfInv (Giles' single-
// precision approximation), float64 that refined by two Newton steps on erf. Accuracy:
// docs/math_accuracy.md.
Array erf_inv(const Array& x);
Array is_finite(const Array& x);  // bool: neither inf nor NaN
Array integer_pow(const Array& x, int y);
Array bitwise_not(const Array& x);  // the primitive `not`

// binary.cpp — elementwise arithmetic.
Array add(const Array& x, const Array& y);
Array sub(const Array& x, const Array& y);
Array mul(const Array& x, const Array& y);
Array div(const Array& x, const Array& y);  // integers round toward zero, as C++ and XLA do
Array rem(const Array& x, const Array& y);  // sign of the dividend, as C++ fmod and XLA do
Array pow(const Array& x, const Array& y);
Array max(const Array& x, const Array& y);
Array min(const Array& x, const Array& y);
Array atan2(const Array& x, const Array& y);
Array bitwise_and(const Array& x, const Array& y);  // the primitive `and`
Array bitwise_or(const Array& x, const Array& y);   // the primitive `or`
Array bitwise_xor(const Array& x, const Array& y);  // the primitive `xor`
// Integer shifts: the amount is read as unsigned; by the bit width or more, everything shifts
// out (the arithmetic shift leaves the sign bit everywhere).
Array shift_left(const Array& x, const Array& y);
Array shift_right_logical(const Array& x, const Array& y);
Array shift_right_arithmetic(const Array& x, const Array& y);

// compare_select.cpp — comparisons give bool; selection picks among cases.
Array eq(const Array& x, const Array& y);
Array ne(const Array& x, const Array& y);
Array lt(const Array& x, const Array& y);
Array le(const Array& x, const Array& y);
Array gt(const Array& x, const Array& y);
Array ge(const Array& x, const Array& y);
// cases[which]: `which` is bool (two cases) or int32 with values in [0, cases.size()).
Array select_n(const Array& which, const std::vector<Array>& cases);
Array clamp(const Array& lo, const Array& x, const Array& hi);

// convert.cpp
Array convert_element_type(const Array& x, DType new_dtype, bool weak_type = false);

// shape_ops.cpp — layout changes; no arithmetic.
Array broadcast_in_dim(const Array& x, const Shape& shape,
                       const std::vector<std::int64_t>& broadcast_dimensions);
Array reshape(const Array& x, const Shape& new_sizes);
Array transpose(const Array& x, const std::vector<std::int64_t>& permutation);
Array squeeze(const Array& x, const std::vector<std::int64_t>& dimensions);
Array expand_dims(const Array& x, const std::vector<std::int64_t>& dimensions);
Array iota(DType dtype, const Shape& shape, std::int64_t dimension = 0);
// Reverses x along each of `dimensions` (lax.rev).
Array rev(const Array& x, const std::vector<std::int64_t>& dimensions);

// slicing.cpp — cutting out, writing into, joining and padding arrays; no arithmetic.
Array slice(const Array& x, const std::vector<std::int64_t>& start_indices,
            const std::vector<std::int64_t>& limit_indices,
            const std::vector<std::int64_t>& strides = {});
// Start indices are 0-d integer arrays, clamped so the slice stays in bounds (as XLA does).
Array dynamic_slice(const Array& x, const std::vector<Array>& start_indices,
                    const std::vector<std::int64_t>& slice_sizes);
Array dynamic_update_slice(const Array& x, const Array& update,
                           const std::vector<Array>& start_indices);
Array concatenate(const std::vector<Array>& xs, std::int64_t dimension);
using PaddingConfig = std::vector<std::array<std::int64_t, 3>>;  // (low, high, interior) per dim
Array pad(const Array& x, const Array& padding_value, const PaddingConfig& padding_config);

// reduce.cpp
Array reduce_sum(const Array& x, const std::vector<std::int64_t>& axes);
Array reduce_max(const Array& x, const std::vector<std::int64_t>& axes);
Array reduce_min(const Array& x, const std::vector<std::int64_t>& axes);
Array reduce_prod(const Array& x, const std::vector<std::int64_t>& axes);
Array argmax(const Array& x, std::int64_t axis, DType index_dtype = int32);
Array argmin(const Array& x, std::int64_t axis, DType index_dtype = int32);

// cumulative.cpp — cumulative reductions along `axis` (JAX's lax.cumsum, ...): out[i] folds
// x[0..i] along it, or x[i..n-1] when `reverse`. cumlogsumexp takes floats, the others numbers.
Array cumsum(const Array& x, std::int64_t axis = 0, bool reverse = false);
Array cumprod(const Array& x, std::int64_t axis = 0, bool reverse = false);
Array cummax(const Array& x, std::int64_t axis = 0, bool reverse = false);
Array cummin(const Array& x, std::int64_t axis = 0, bool reverse = false);
Array cumlogsumexp(const Array& x, std::int64_t axis = 0, bool reverse = false);

// windowed.cpp — windowed reductions (JAX's reduce_window_sum, _max, _min): each output element
// folds one window of the operand. Per operand dim: the window's size, its stride, (low, high)
// padding (negative crops), base dilation (d - 1 holes between operand elements) and window
// dilation (d - 1 skipped elements between taps); empty dilations are 1s. Padding and holes
// hold nothing: a window folds the operand elements it covers into the identity.
Array reduce_window_sum(const Array& operand, const std::vector<std::int64_t>& window_dimensions,
                        const std::vector<std::int64_t>& window_strides, const PadPairs& padding,
                        const std::vector<std::int64_t>& base_dilation = {},
                        const std::vector<std::int64_t>& window_dilation = {});
Array reduce_window_max(const Array& operand, const std::vector<std::int64_t>& window_dimensions,
                        const std::vector<std::int64_t>& window_strides, const PadPairs& padding,
                        const std::vector<std::int64_t>& base_dilation = {},
                        const std::vector<std::int64_t>& window_dilation = {});
Array reduce_window_min(const Array& operand, const std::vector<std::int64_t>& window_dimensions,
                        const std::vector<std::int64_t>& window_strides, const PadPairs& padding,
                        const std::vector<std::int64_t>& base_dilation = {},
                        const std::vector<std::int64_t>& window_dilation = {});
// lax.reduce_window with `computation` lax::add, lax::max or lax::min (another is a
// jx::ValueError); empty strides are 1s. As XLA defines it, padding and holes hold init_value and
// each window folds init_value in once more; an init that is the computation's identity (0,
// lowest, highest) binds the primitive above directly.
using WindowComputation = Array (*)(const Array&, const Array&);
Array reduce_window(const Array& operand, const Array& init_value, WindowComputation computation,
                    const std::vector<std::int64_t>& window_dimensions,
                    const std::vector<std::int64_t>& window_strides, const Padding& padding,
                    const std::vector<std::int64_t>& base_dilation = {},
                    const std::vector<std::int64_t>& window_dilation = {});

// windowed_select.cpp — max-pool's derivatives. Each window's element is chosen by `select`
// (kGe: the max, kLe: the min): its first tap, replaced by each later tap where select(current,
// tap) fails, so the first of equal maxima wins and NaNs lose to the element after them (XLA's
// select-and-scatter). Padding and holes hold the select's identity (lowest, highest).
enum class SelectPrim { kGe, kLe };
// Per window of `operand`, the element of `tangents` (operand's shape) at the chosen position.
Array select_and_gather_add(const Array& tangents, const Array& operand, SelectPrim select,
                            const std::vector<std::int64_t>& window_dimensions,
                            const std::vector<std::int64_t>& window_strides,
                            const PadPairs& padding,
                            const std::vector<std::int64_t>& base_dilation = {},
                            const std::vector<std::int64_t>& window_dilation = {});
// Each window's element of `source` (one per window) added at the operand position chosen in
// that window; the result has operand's shape, zero where nothing was chosen.
Array select_and_scatter_add(const Array& source, const Array& operand, SelectPrim select,
                             const std::vector<std::int64_t>& window_dimensions,
                             const std::vector<std::int64_t>& window_strides,
                             const PadPairs& padding);

// dot.cpp
struct DotDimensionNumbers {
  std::vector<std::int64_t> lhs_contracting, rhs_contracting;
  std::vector<std::int64_t> lhs_batch, rhs_batch;
};
// JAX's lax.Precision. On the GPU, f32 products below kHighest may round their operands to TF32
// (as XLA does; kDefault is what a dot gets without one); the CPU always computes in full.
enum class Precision { kDefault, kHigh, kHighest };
// Output dims: batch, then lhs free, then rhs free (XLA's order). Without `precision`,
// --default_matmul_precision's, when set.
Array dot_general(const Array& lhs, const Array& rhs, const DotDimensionNumbers& dimension_numbers,
                  std::optional<DType> preferred_element_type = std::nullopt,
                  std::optional<Precision> precision = std::nullopt);

// convolution.cpp — JAX's lax.conv_general_dilated: windows of `rhs` (the kernel) slid over
// `lhs` at `window_strides`, each output element contracting one window with the kernel over the
// window and the input features. `lhs_dilation` puts d - 1 zeros between input elements (a
// transposed convolution), `rhs_dilation` between kernel taps (an atrous one); groups split the
// features (or the batch) into independent convolutions. Any number of spatial dims (1-D to
// 3-D and beyond); `dimension_numbers` says where they are. Output dtype: the operands', or
// `preferred_element_type`.
Array conv_general_dilated(const Array& lhs, const Array& rhs,
                           const std::vector<std::int64_t>& window_strides, const Padding& padding,
                           const std::vector<std::int64_t>& lhs_dilation = {},
                           const std::vector<std::int64_t>& rhs_dilation = {},
                           const ConvDimensionNumbers& dimension_numbers = {},
                           std::int64_t feature_group_count = 1, std::int64_t batch_group_count = 1,
                           std::optional<Precision> precision = std::nullopt,
                           std::optional<DType> preferred_element_type = std::nullopt);
// lax.conv: NCHW lhs, OIHW rhs, no dilation or groups.
Array conv(const Array& lhs, const Array& rhs, const std::vector<std::int64_t>& window_strides,
           const Padding& padding, std::optional<Precision> precision = std::nullopt,
           std::optional<DType> preferred_element_type = std::nullopt);

// custom_derivatives.cpp — the identity, with a zero derivative (JAX's lax.stop_gradient).
Array stop_gradient(const Array& x);

// random.cpp — Threefry-2x32 (20 rounds) of the counter words (x0, x1) under the key words
// (k0, k1); all uint32, of one shape or 0-d. What jx::random builds on.
std::pair<Array, Array> threefry2x32(const Array& k0, const Array& k1, const Array& x0,
                                     const Array& x1);

// sorting.cpp — ascending and stable, along `dimension`, in a total order: -0.0 equals 0.0,
// NaNs (all equal) come after +inf. Several operands sort by the first num_keys, the first
// primary; the others follow the same permutation.
Array sort(const Array& x, int dimension = -1, bool is_stable = true);
std::vector<Array> sort(const std::vector<Array>& operands, int dimension = -1,
                        bool is_stable = true, int num_keys = 1);
std::pair<Array, Array> sort_key_val(const Array& keys, const Array& values, int dimension = -1,
                                     bool is_stable = true);
// The k largest entries along the last axis, largest first, and their int32 indices: sort's
// order reversed (NaNs above +inf); among equal values the lower index comes first.
std::pair<Array, Array> top_k(const Array& x, int k);

// gather.cpp, scatter.cpp — XLA's gather and scatter, as JAX's lax.gather / lax.scatter*.
// `start_indices` / `indices` hold, along their last dim, one start vector per slice; the other
// dims are its batch dims. A gather's result has the batch dims where `offset_dims` leaves room
// and the slice's dims (less the collapsed ones) at `offset_dims`; a scatter's `updates` have
// the window's dims at `update_window_dims`. Batching dims pair an operand dim with an index
// batch dim (the slice of example b reads operand row b).
struct GatherDimensionNumbers {
  std::vector<std::int64_t> offset_dims, collapsed_slice_dims, start_index_map,
      operand_batching_dims = {}, start_indices_batching_dims = {};
  friend bool operator==(const GatherDimensionNumbers&, const GatherDimensionNumbers&) = default;
};
struct ScatterDimensionNumbers {
  std::vector<std::int64_t> update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
      operand_batching_dims = {}, scatter_indices_batching_dims = {};
  friend bool operator==(const ScatterDimensionNumbers&, const ScatterDimensionNumbers&) = default;
};
// Out-of-bounds indices (JAX's GatherScatterMode): kClip clamps them into range; kFillOrDrop
// gives `fill_value` for a gather slice that leaves the operand (NaN for inexact dtypes, the
// lowest value for signed, the highest for unsigned, true for bool, as JAX) and drops a scatter
// update that would; kPromiseInBounds leaves them to the implementation (XLA clamps gathers
// and drops scatters). Without a mode, kFillOrDrop, as JAX.
enum class GatherScatterMode { kClip, kFillOrDrop, kPromiseInBounds };
Array gather(const Array& operand, const Array& start_indices,
             const GatherDimensionNumbers& dimension_numbers,
             const std::vector<std::int64_t>& slice_sizes, bool indices_are_sorted = false,
             bool unique_indices = false, std::optional<GatherScatterMode> mode = std::nullopt,
             std::optional<double> fill_value = std::nullopt);
// Each update combines with the operand element it lands on, in update order (repeated indices
// accumulate); `scatter` replaces (with repeated indices, one of the updates wins).
Array scatter(const Array& operand, const Array& indices, const Array& updates,
              const ScatterDimensionNumbers& dimension_numbers, bool indices_are_sorted = false,
              bool unique_indices = false, std::optional<GatherScatterMode> mode = std::nullopt);
Array scatter_add(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  bool indices_are_sorted = false, bool unique_indices = false,
                  std::optional<GatherScatterMode> mode = std::nullopt);
Array scatter_mul(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  bool indices_are_sorted = false, bool unique_indices = false,
                  std::optional<GatherScatterMode> mode = std::nullopt);
Array scatter_min(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  bool indices_are_sorted = false, bool unique_indices = false,
                  std::optional<GatherScatterMode> mode = std::nullopt);
Array scatter_max(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterDimensionNumbers& dimension_numbers,
                  bool indices_are_sorted = false, bool unique_indices = false,
                  std::optional<GatherScatterMode> mode = std::nullopt);

// Composed of the primitives above, not primitives of their own.
// lax.associative_scan of one array: the inclusive scan of `fn` (associative) along `axis`, from
// its end when `reverse`, in O(log n) rounds of strided slices, pads and concatenations
// (Blelloch's recursion, as JAX writes it). The cumulative reductions differentiate through it.
Array associative_scan(const std::function<Array(const Array&, const Array&)>& fn, const Array& x,
                       std::int64_t axis = 0, bool reverse = false);

}  // namespace jx::lax
