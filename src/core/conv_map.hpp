// A convolution's geometry (XLA's convolution, JAX's conv_general_dilated) and the sums it
// defines, written once: the eager impl and the HLO evaluator compute through convolve(); the
// HLO rewrite into a GEMM (passes/convolution_as_gemm.cpp) builds the same sums from patches.
//
// out[b, o, s...] = Σ over kernel taps k... and input features i of
//   lhs[b', g·I + i, p...] · rhs[o, i, k...],  p_d = (s_d·stride_d + k_d·rhs_dil_d - pad_lo_d) /
//   lhs_dil_d
// where p_d must divide exactly and fall inside lhs (other positions are padding or the zeros
// lhs dilation puts between elements). With feature groups, g = o / (O / G) picks the input
// features; with batch groups, g picks the lhs batch block b' = g·(B / G) + b.
#pragma once

#include <cstdint>
#include <vector>

#include "core/element_convert.hpp"
#include "jx/shape.hpp"
#include "jx/window.hpp"

namespace jx {

struct ConvGeometry {
  // (batch, feature, spatial...) of lhs and out, (out feature, in feature, spatial...) of rhs.
  std::vector<std::int64_t> lhs_spec, rhs_spec, out_spec;
  std::vector<std::int64_t> strides, lhs_dilation, rhs_dilation;  // one per spatial dim
  PadPairs padding;
  std::int64_t feature_group_count = 1, batch_group_count = 1;

  std::size_t spatial() const { return strides.size(); }
  friend bool operator==(const ConvGeometry&, const ConvGeometry&) = default;
};

// (size - 1) · dilation + 1, or 0 for an empty dim (JAX's core.dilate_dim).
inline std::int64_t dilate_dim(std::int64_t size, std::int64_t dilation) {
  return size == 0 ? 0 : (size - 1) * dilation + 1;
}

// The output shape in out_spec's layout; spatial dims may come out 0 (no window fits).
inline Shape conv_output_shape(const ConvGeometry& g, const Shape& lhs, const Shape& rhs) {
  std::vector<std::int64_t> canonical = {lhs[g.lhs_spec[0]] / g.batch_group_count,
                                         rhs[g.rhs_spec[0]]};
  for (std::size_t d = 0; d < g.spatial(); ++d) {
    std::int64_t in = dilate_dim(lhs[g.lhs_spec[d + 2]], g.lhs_dilation[d]) + g.padding[d].first +
                      g.padding[d].second;
    std::int64_t window = dilate_dim(rhs[g.rhs_spec[d + 2]], g.rhs_dilation[d]);
    canonical.push_back(in < window ? 0 : (in - window) / g.strides[d] + 1);
  }
  Shape out(canonical.size());
  for (std::size_t k = 0; k < canonical.size(); ++k) out[g.out_spec[k]] = canonical[k];
  return out;
}

namespace conv_detail {
inline std::vector<std::int64_t> row_major_strides(const Shape& s) {
  std::vector<std::int64_t> st(s.size(), 1);
  for (std::size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}
}  // namespace conv_detail

// out = the convolution of lhs and rhs (row-major buffers of those shapes), each element summed
// in the output's compute type over taps in row-major order, then input features.
template <class T, class O>
void convolve(const ConvGeometry& g, const Shape& lhs_shape, const T* lhs, const Shape& rhs_shape,
              const T* rhs, const Shape& out_shape, O* out) {
  using C = compute_t<O>;
  using conv_detail::row_major_strides;
  const std::size_t n = g.spatial();
  std::vector<std::int64_t> ls = row_major_strides(lhs_shape), rs = row_major_strides(rhs_shape),
                            os = row_major_strides(out_shape);
  auto at = [](const std::vector<std::int64_t>& st, const std::vector<std::int64_t>& spec,
               std::size_t k) { return st[static_cast<std::size_t>(spec[k])]; };
  auto size = [](const Shape& s, const std::vector<std::int64_t>& spec, std::size_t k) {
    return s[static_cast<std::size_t>(spec[k])];
  };
  const std::int64_t out_features = size(out_shape, g.out_spec, 1);
  const std::int64_t in_features = size(rhs_shape, g.rhs_spec, 1);
  const std::int64_t groups = std::max(g.feature_group_count, g.batch_group_count);
  const std::int64_t per_group = out_features / groups;
  const std::int64_t batch_block = size(lhs_shape, g.lhs_spec, 0) / g.batch_group_count;
  Shape window(n), out_spatial(n);
  for (std::size_t d = 0; d < n; ++d) {
    window[d] = size(rhs_shape, g.rhs_spec, d + 2);
    out_spatial[d] = size(out_shape, g.out_spec, d + 2);
  }
  // Walks a multi-index over `dims` in row-major order, calling f for each.
  auto walk = [](const Shape& dims, auto&& f) {
    if (shape_size(dims) == 0) return;
    std::vector<std::int64_t> idx(dims.size(), 0);
    for (;;) {
      f(idx);
      std::size_t d = dims.size();
      while (d > 0 && ++idx[d - 1] == dims[d - 1]) idx[--d] = 0;
      if (d == 0) return;
    }
  };
  Shape outer = {size(out_shape, g.out_spec, 0), out_features};
  outer.insert(outer.end(), out_spatial.begin(), out_spatial.end());
  walk(outer, [&](const std::vector<std::int64_t>& o) {
    std::int64_t b = o[0], f = o[1], group = f / per_group;
    std::int64_t lhs_batch = g.batch_group_count > 1 ? group * batch_block + b : b;
    std::int64_t first_feature = g.feature_group_count > 1 ? group * in_features : 0;
    std::int64_t lhs_base = lhs_batch * at(ls, g.lhs_spec, 0);
    std::int64_t rhs_base = f * at(rs, g.rhs_spec, 0);
    std::int64_t out_at = b * at(os, g.out_spec, 0) + f * at(os, g.out_spec, 1);
    for (std::size_t d = 0; d < n; ++d) out_at += o[d + 2] * at(os, g.out_spec, d + 2);
    C acc = C(0);
    walk(window, [&](const std::vector<std::int64_t>& k) {
      std::int64_t lhs_at = lhs_base, rhs_at = rhs_base;
      for (std::size_t d = 0; d < n; ++d) {
        std::int64_t p = o[d + 2] * g.strides[d] + k[d] * g.rhs_dilation[d] - g.padding[d].first;
        if (p < 0 || p % g.lhs_dilation[d] != 0) return;
        p /= g.lhs_dilation[d];
        if (p >= size(lhs_shape, g.lhs_spec, d + 2)) return;
        lhs_at += p * at(ls, g.lhs_spec, d + 2);
        rhs_at += k[d] * at(rs, g.rhs_spec, d + 2);
      }
      for (std::int64_t i = 0; i < in_features; ++i)
        acc = mul_add(acc,
                      static_cast<C>(static_cast<O>(
                          lhs[lhs_at + (first_feature + i) * at(ls, g.lhs_spec, 1)])),
                      static_cast<C>(static_cast<O>(rhs[rhs_at + i * at(rs, g.rhs_spec, 1)])));
    });
    out[out_at] = convert_element<O>(acc);
  });
}

}  // namespace jx
