// An HLO convolution's attributes, as XLA prints them: window={size=3x3 pad=1_1x1_1 ...} (the
// kernel's spatial sizes, strides, padding, lhs and rhs dilations), dim_labels=b01f_01io->b01f
// (where the batch, feature and numbered spatial dims of lhs, rhs and out are),
// feature_group_count and batch_group_count; read back as a core/conv_map.hpp ConvGeometry.
#pragma once

#include <string>

#include "core/conv_map.hpp"
#include "hlo/gemm.hpp"
#include "hlo/ir.hpp"

namespace jx::hlo {

Attrs convolution_attrs(const ConvGeometry& g, const Shape& rhs_dims);
// jx::CompileError naming the instruction when an attribute is missing or malformed.
ConvGeometry convolution_geometry(const Instruction& conv);

// A convolution the CPU's matrix kernel computes without patches (an implicit GEMM): float32,
// one group, no lhs dilation (the pass dilates lhs), out's feature dim innermost in out and rhs's
// out-feature dim innermost in rhs; padding (never negative) only where a run is all padding or
// none of it, and runs of adjacent elements (else the pass pads lhs). out is then a product A · R:
// R is rhs as a [k, n] matrix, its rows rhs's other dims in memory order; out's rows are out's
// other dims in memory order. A's element (r, p) lies in lhs at row_offset(r) + step_offset(p),
// each the sum over its index's axes (row-major) of the axis index times the axis's stride in lhs:
// a forward convolution's rows are (image, position...) and its steps (tap..., channel); a kernel
// gradient's rows are (tap..., in feature) and its steps (image, position...), read in lhs's own
// layout either way. The contraction runs along the last step axis in runs.
struct ImplicitGemm {
  struct Axis {
    std::int64_t size = 1, lhs_stride = 0;
  };
  // A padded spatial dim of lhs: element (r, p) lies at position i·stride + j·dilation - lo
  // along it, i its index along rows axis `row`, j along steps axis `step`; outside [0, size) it
  // is padding, a zero. (Its offset still counts -lo·stride in lhs: lhs_origin.)
  struct Bound {
    std::size_t row = 0, step = 0;
    std::int64_t stride = 1, dilation = 1, lo = 0, size = 0;
  };
  GemmShape shape;  // m = Π rows' sizes, k = Π steps' sizes, n = out features
  std::vector<Axis> rows, steps;
  std::vector<Bound> bounds;
  std::int64_t lhs_origin = 0;  // where (0, 0) lies in lhs: before it, with padding
  const Axis& run() const { return steps.back(); }
};
// The implicit GEMM of a convolution of geometry g and those operand and output dims, if it is one.
std::optional<ImplicitGemm> implicit_gemm(const ConvGeometry& g, const Shape& lhs, const Shape& rhs,
                                          const Shape& out);
std::optional<ImplicitGemm> as_implicit_gemm(const Instruction& conv);

// A convolution as a DNN library (cuDNN) computes it: f32 or f64, 2 or 3 spatial dims, one batch
// group, no lhs dilation, the same non-negative padding on both sides of each spatial dim, and
// lhs, rhs and out each in one of the library's layouts, the same for all three: features second
// (lhs and out (batch, feature, spatial...), rhs (out, in, spatial...): NCHW) or features last
// (lhs and out (batch, spatial..., feature), rhs (out, spatial..., in): NHWC).
struct DnnConvolution {
  DType dtype = float32;
  GemmPrecision precision = GemmPrecision::kDefault;
  bool features_last = false;
  // In (batch, feature, spatial...) order for lhs and out, (out, in, spatial...) for rhs,
  // whatever the layout.
  Shape lhs, rhs, out;
  std::vector<std::int64_t> padding, strides, rhs_dilation;  // one per spatial dim
  std::int64_t groups = 1;
};
// The spec of the library's layout for `spatial` dims, the same for lhs, rhs and out: features
// second (0, 1, 2, ...) or last (0, spatial + 1, 1, ..., spatial); element k is where the spec's
// slot k lies among the dims.
std::vector<std::int64_t> dnn_layout(std::size_t spatial, bool features_last);
// Whether a convolution of this geometry, dtype and rank is one the library computes once its
// operands are in its layouts and its padding made even (passes::ConvolutionAsGemm does both).
bool fits_dnn_convolution(const ConvGeometry& g, DType dtype);
std::optional<DnnConvolution> as_dnn_convolution(const Instruction& conv);

// "b01f_01io->b01f" for specs (0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2); and back (nullopt when
// the text is not one).
std::string dim_labels(const ConvGeometry& g);
std::optional<ConvGeometry> parse_dim_labels(const std::string& labels);

}  // namespace jx::hlo
