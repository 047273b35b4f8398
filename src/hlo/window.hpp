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
#include "support/multi_index.hpp"

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

// Calls f(k) for each position of the window of output element `out`, in row-major window order,
// k being the row-major offset of the element it covers in an operand of shape `dims`, or -1
// where it falls in the padding or between base-dilated elements. The one index map of a window
// on host arrays: the evaluator's reduce-window and the windowed primitives' eager impls share it
// (codegen's emit_reduce_window is its IR twin).
template <class F>
void for_each_window_tap(const Window& window, const Shape& dims,
                         const std::vector<std::int64_t>& out, F&& f) {
  Shape sizes;
  for (const WindowDim& w : window) sizes.push_back(w.size);
  for_each_index(sizes, [&](const std::vector<std::int64_t>& tap) {
    std::int64_t k = 0;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      const WindowDim& w = window[d];
      std::int64_t at = out[d] * w.stride + tap[d] * w.window_dilation - w.pad_lo;
      if (at < 0 || at % w.base_dilation != 0 || at / w.base_dilation >= dims[d]) {
        k = -1;
        break;
      }
      k = k * dims[d] + at / w.base_dilation;
    }
    f(k);
  });
}

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
