#include "hlo/window.hpp"

namespace jx::hlo {

std::vector<std::int64_t> window_attr(const Window& window) {
  std::vector<std::int64_t> out;
  for (const WindowDim& w : window)
    out.insert(out.end(),
               {w.size, w.stride, w.pad_lo, w.pad_hi, w.base_dilation, w.window_dilation});
  return out;
}

Window window_from_attr(const std::vector<std::int64_t>& attr) {
  Window window;
  for (std::size_t k = 0; k + kWindowFields <= attr.size(); k += kWindowFields)
    window.push_back({attr[k], attr[k + 1], attr[k + 2], attr[k + 3], attr[k + 4], attr[k + 5]});
  return window;
}

Window window_of(const Instruction& inst) {
  auto fail = [&](const std::string& what) -> Window {
    throw CompileError("reduce-window " + inst.name + ": " + what);
  };
  const AttrValue* attr = inst.attrs.find("window");
  const auto* ints = attr ? std::get_if<std::vector<std::int64_t>>(attr) : nullptr;
  if (!ints) return fail("missing attribute 'window'");
  if (inst.operands.empty() || !inst.operands[0] ||
      ints->size() != kWindowFields * inst.operands[0]->shape.dims.size())
    return fail("the window needs six integers per operand dimension");
  Window window = window_from_attr(*ints);
  for (const WindowDim& w : window)
    if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1)
      return fail("window sizes, strides and dilations must be at least 1");
  return window;
}

Shape window_output_dims(const Shape& operand, const Window& window) {
  Shape out;
  for (std::size_t d = 0; d < operand.size() && d < window.size(); ++d) {
    const WindowDim& w = window[d];
    std::int64_t dilated = operand[d] == 0 ? 0 : (operand[d] - 1) * w.base_dilation + 1;
    std::int64_t padded = dilated + w.pad_lo + w.pad_hi;
    std::int64_t span = (w.size - 1) * w.window_dilation + 1;
    out.push_back(padded < span ? 0 : (padded - span) / w.stride + 1);
  }
  return out;
}

Window prefix_scan_window(const Shape& dims, int axis, bool reverse) {
  Window window(dims.size());
  std::int64_t n = dims[static_cast<std::size_t>(axis)];
  WindowDim& w = window[static_cast<std::size_t>(axis)];
  w.size = n;
  (reverse ? w.pad_hi : w.pad_lo) = n - 1;
  return window;
}

std::optional<PrefixScan> as_prefix_scan(const Instruction& inst) {
  if (inst.opcode != Opcode::kReduceWindow || inst.operands.size() != 2 ||
      inst.called.size() != 1 || inst.shape.is_tuple || !inst.operands[0] || !inst.operands[1])
    return std::nullopt;
  const Shape& dims = inst.operands[0]->shape.dims;
  if (inst.shape.dims != dims) return std::nullopt;
  const AttrValue* attr = inst.attrs.find("window");
  const auto* ints = attr ? std::get_if<std::vector<std::int64_t>>(attr) : nullptr;
  if (!ints || ints->size() != kWindowFields * dims.size()) return std::nullopt;
  Window window = window_from_attr(*ints);
  for (std::size_t a = 0; a < dims.size(); ++a) {
    if (dims[a] < 2) continue;
    for (bool reverse : {false, true}) {
      if (window == prefix_scan_window(dims, static_cast<int>(a), reverse))
        return PrefixScan{static_cast<int>(a), reverse};
    }
  }
  return std::nullopt;
}

}  // namespace jx::hlo
