// What the windowed families share: windowed.cpp (reduce_window_sum, reduce_window_max,
// reduce_window_min) and windowed_select.cpp (select_and_gather_add, select_and_scatter_add,
// max-pool's derivatives): their window params as JAX names them, JAX's shape rule, and the
// select that picks a window's element.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/primitive.hpp"
#include "hlo/window.hpp"
#include "jx/lax.hpp"

namespace jx::windowed {

using Ints = std::vector<std::int64_t>;

// JAX's params: per operand dim a window size, stride, (low, high) padding and base and window
// dilations. select_and_scatter_add has no dilations: its `dilations` is false and they are 1.
struct WindowParams {
  Ints dimensions, strides;
  PadPairs padding;
  Ints base_dilation, window_dilation;
  bool dilations = true;
};

WindowParams window_params(const Params& params);
Params params_of(const WindowParams& w);
// The same window with a dim of size 1 (no stride, padding or dilation) inserted at `axis`: the
// batch dim of a vmapped operand.
WindowParams with_unit_dim(WindowParams w, int axis);
hlo::Window hlo_window(const WindowParams& w);
bool has_window_dilation(const WindowParams& w);

// JAX's _common_reduce_window_shape_rule (its TypeErrors, named after `op`), then the output
// dims: how many windows fit in the base-dilated, padded operand at the stride.
Shape window_shape_rule(const std::string& op, const ShapedArray& operand, const WindowParams& w);

// The select of max-pool's derivatives: `ge` for a max, `le` for a min. A window's element is
// its first tap, replaced by each later tap for which select(current, tap) fails (XLA's
// select-and-scatter), so the first of equal maxima wins.
lax::SelectPrim select_of(const Params& params);
Param select_param(lax::SelectPrim select);

// lax::ge or lax::le applied to two arrays.
Array select_holds(lax::SelectPrim select, const Array& current, const Array& candidate);

}  // namespace jx::windowed
