// Reduce-window's window (XLA's Window): per dimension a size, stride, low and high padding and
// base and window dilations; the output shape it gives; and the windows that are cumulative
// reductions (prefix scans), which codegen computes in one pass instead of a fold per element.
// A window's positions in the padding or between dilated elements hold no element: each output
// folds the elements its window covers, in row-major window order, into init (XLA's evaluator).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hlo/ir.hpp"

namespace jx::hlo {

struct WindowDim {
  std::int64_t size = 1, stride = 1, pad_lo = 0, pad_hi = 0, base_dilation = 1, window_dilation = 1;
  friend bool operator==(const WindowDim&, const WindowDim&) = default;
};
using Window = std::vector<WindowDim>;

// The `window` attribute holds six integers per dimension, in WindowDim's order.
inline constexpr std::size_t kWindowFields = 6;
std::vector<std::int64_t> window_attr(const Window& window);
Window window_from_attr(const std::vector<std::int64_t>& attr);
// The window of a reduce-window; jx::CompileError naming the instruction when the attribute is
// missing, is not six integers per operand dimension, or has a size, stride or dilation below 1.
Window window_of(const Instruction& reduce_window);

// Per dimension, how many windows fit in the operand dilated by base_dilation and padded, at the
// stride: (padded - dilated window) / stride + 1, or 0 when not even one fits.
Shape window_output_dims(const Shape& operand, const Window& window);

// A reduce-window that is a cumulative reduction along `axis` (of length n >= 2): a window of the
// whole axis, stride 1, padded by n-1 before the axis (after it when `reverse`), every other
// dimension a window of 1. Its windows hold x[0..i] (x[i..n-1] reversed), folded into init in
// order, which a running accumulator computes in one pass (XLA leaves the order of a window's
// folds unspecified: the computation is taken to be associative).
struct PrefixScan {
  int axis = 0;
  bool reverse = false;
};
std::optional<PrefixScan> as_prefix_scan(const Instruction& inst);

// The window of a cumulative reduction along `axis` of an operand of shape `dims` (n >= 1).
Window prefix_scan_window(const Shape& dims, int axis, bool reverse);

}  // namespace jx::hlo
