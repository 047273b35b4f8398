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
// lhs and out (batch, spatial..., feature) and rhs (spatial..., in, out) in memory order, unit
// strides and dilations, no padding, one group. The product's rows are out's (batch, position)
// and its columns out's features; its contraction runs over (tap, in feature), so the lhs
// element of row r at step p is lhs's feature p % C at r's window origin moved by tap p / C.
struct ImplicitGemm {
  GemmShape shape;            // m = batch · positions, k = taps · channels, n = out features
  std::int64_t channels = 0;  // C, lhs's features (contiguous in lhs)
  Shape in_spatial, out_spatial, window;
};
std::optional<ImplicitGemm> as_implicit_gemm(const Instruction& conv);

// "b01f_01io->b01f" for specs (0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2); and back (nullopt when
// the text is not one).
std::string dim_labels(const ConvGeometry& g);
std::optional<ConvGeometry> parse_dim_labels(const std::string& labels);

}  // namespace jx::hlo
