// jx::nn's Conv layer applied: lax.conv_general_dilated with flax.linen.Conv's NHWC / HWIO
// dimension numbers, for any number of spatial dims, plus the bias.
#include <string>

#include "jx/errors.hpp"
#include "jx/lax.hpp"
#include "jx/nn.hpp"

namespace jx::nn {
namespace {

// Letters for n spatial dims in a conv spec string: none of N, C (the input's batch and
// features) or I, O (the kernel's), ending in the familiar ones: "W", "HW", "DHW", "ZDHW", ...
std::string spatial_letters(std::size_t n) {
  static const std::string kLetters = "ABEFGJKLMPQRSTUVXYZDHW";
  if (n > kLetters.size())
    throw ShapeError("conv: at most " + std::to_string(kLetters.size()) +
                     " spatial dims are supported, got " + std::to_string(n));
  return kLetters.substr(kLetters.size() - n);
}

}  // namespace

Array conv(const Conv& layer, const Array& x, std::vector<std::int64_t> strides,
           const Padding& padding) {
  const Shape& kernel = layer.w.shape();
  if (kernel.size() < 3)
    throw ShapeError(
        "conv: the kernel must be (spatial..., in_features, out_features), got shape " +
        shape_str(kernel));
  const std::size_t spatial = kernel.size() - 2;
  if (x.shape().size() != spatial + 2 || x.shape().back() != kernel[spatial])
    throw ShapeError("conv: input of shape " + shape_str(x.shape()) +
                     " does not fit kernel of shape " + shape_str(kernel) + ": expected (batch, " +
                     std::to_string(spatial) + " spatial dims, " + std::to_string(kernel[spatial]) +
                     " features)");
  if (layer.b.shape() != Shape{kernel.back()})
    throw ShapeError("conv: bias of shape " + shape_str(layer.b.shape()) +
                     " does not match the kernel's " + std::to_string(kernel.back()) +
                     " output features");
  if (strides.empty()) strides.assign(spatial, 1);
  // flax's promote_dtype: input, kernel and bias in their common dtype (uint8 pixels and a
  // float32 kernel convolve in float32).
  DType dtype = promote_types(promote_types(x.dtype(), layer.w.dtype()), layer.b.dtype());
  const std::string s = spatial_letters(spatial);
  const ConvDimensionNumbers nhwc("N" + s + "C", s + "IO", "N" + s + "C");
  Array y = lax::conv_general_dilated(x.astype(dtype), layer.w.astype(dtype), strides, padding, {},
                                      {}, nhwc);
  return y + layer.b.astype(dtype);
}

}  // namespace jx::nn
