#include "hlo/convolution.hpp"

#include <algorithm>

#include "hlo/window.hpp"

namespace jx::hlo {
namespace {

// One operand's labels: `first` and `second` at spec[0] and spec[1], spatial dim d's number at
// spec[d + 2].
std::string labels_of(const std::vector<std::int64_t>& spec, char first, char second) {
  std::string s(spec.size(), '?');
  s[static_cast<std::size_t>(spec[0])] = first;
  s[static_cast<std::size_t>(spec[1])] = second;
  for (std::size_t d = 2; d < spec.size(); ++d)
    s[static_cast<std::size_t>(spec[d])] = static_cast<char>('0' + (d - 2));
  return s;
}

std::optional<std::vector<std::int64_t>> spec_of(const std::string& s, char first, char second) {
  std::vector<std::int64_t> spec(s.size(), -1);
  for (std::size_t k = 0; k < s.size(); ++k) {
    std::size_t slot;
    if (s[k] == first)
      slot = 0;
    else if (s[k] == second)
      slot = 1;
    else if (s[k] >= '0' && s[k] <= '9')
      slot = static_cast<std::size_t>(s[k] - '0') + 2;
    else
      return std::nullopt;
    if (slot >= spec.size() || spec[slot] != -1) return std::nullopt;
    spec[slot] = static_cast<std::int64_t>(k);
  }
  return spec;
}

}  // namespace

std::string dim_labels(const ConvGeometry& g) {
  return labels_of(g.lhs_spec, 'b', 'f') + "_" + labels_of(g.rhs_spec, 'o', 'i') + "->" +
         labels_of(g.out_spec, 'b', 'f');
}

std::optional<ConvGeometry> parse_dim_labels(const std::string& labels) {
  std::size_t under = labels.find('_'), arrow = labels.find("->");
  if (under == std::string::npos || arrow == std::string::npos || arrow < under)
    return std::nullopt;
  auto lhs = spec_of(labels.substr(0, under), 'b', 'f');
  auto rhs = spec_of(labels.substr(under + 1, arrow - under - 1), 'o', 'i');
  auto out = spec_of(labels.substr(arrow + 2), 'b', 'f');
  if (!lhs || !rhs || !out || lhs->size() != rhs->size() || rhs->size() != out->size())
    return std::nullopt;
  ConvGeometry g;
  g.lhs_spec = *lhs, g.rhs_spec = *rhs, g.out_spec = *out;
  return g;
}

Attrs convolution_attrs(const ConvGeometry& g, const Shape& rhs_dims) {
  Window window;
  for (std::size_t d = 0; d < g.spatial(); ++d)
    window.push_back({rhs_dims[static_cast<std::size_t>(g.rhs_spec[d + 2])], g.strides[d],
                      g.padding[d].first, g.padding[d].second, g.lhs_dilation[d],
                      g.rhs_dilation[d]});
  Attrs attrs;
  attrs.set("window", window_attr(window));
  attrs.set("dim_labels", dim_labels(g));
  attrs.set("feature_group_count", g.feature_group_count);
  attrs.set("batch_group_count", g.batch_group_count);
  return attrs;
}

ConvGeometry convolution_geometry(const Instruction& conv) {
  auto fail = [&](const std::string& what) -> ConvGeometry {
    throw CompileError("convolution " + conv.name + ": " + what);
  };
  const AttrValue* labels = conv.attrs.find("dim_labels");
  const auto* text = labels ? std::get_if<std::string>(labels) : nullptr;
  if (!text) return fail("missing attribute 'dim_labels'");
  std::optional<ConvGeometry> g = parse_dim_labels(*text);
  if (!g || conv.operands.size() != 2 || g->lhs_spec.size() != conv.shape.dims.size())
    return fail("dim_labels '" + *text + "' do not name every dimension of the operands once");
  const AttrValue* window = conv.attrs.find("window");
  const auto* ints = window ? std::get_if<std::vector<std::int64_t>>(window) : nullptr;
  if (!ints || ints->size() != kWindowFields * (g->lhs_spec.size() - 2))
    return fail("the window needs six integers per spatial dimension");
  const Shape& rhs = conv.operands[1]->shape.dims;
  std::size_t d = 0;
  for (const WindowDim& w : window_from_attr(*ints)) {
    if (w.size != rhs[static_cast<std::size_t>(g->rhs_spec[d + 2])])
      return fail("the window's size differs from the kernel's");
    if (w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1)
      return fail("window strides and dilations must be at least 1");
    g->strides.push_back(w.stride);
    g->padding.emplace_back(w.pad_lo, w.pad_hi);
    g->lhs_dilation.push_back(w.base_dilation);
    g->rhs_dilation.push_back(w.window_dilation);
    ++d;
  }
  g->feature_group_count =
      conv.attrs.has("feature_group_count") ? conv.attrs.get_int("feature_group_count") : 1;
  g->batch_group_count =
      conv.attrs.has("batch_group_count") ? conv.attrs.get_int("batch_group_count") : 1;
  if (g->feature_group_count < 1 || g->batch_group_count < 1)
    return fail("group counts must be at least 1");
  return *g;
}

std::optional<ImplicitGemm> implicit_gemm(const ConvGeometry& g, const Shape& lhs, const Shape& rhs,
                                          const Shape& out) {
  auto last = static_cast<std::int64_t>(lhs.size()) - 1;
  if (g.feature_group_count != 1 || g.batch_group_count != 1 || g.out_spec[1] != last ||
      g.rhs_spec[0] != last)
    return std::nullopt;
  for (std::size_t d = 0; d < g.spatial(); ++d)
    if (g.lhs_dilation[d] != 1 || g.padding[d].first < 0 || g.padding[d].second < 0)
      return std::nullopt;
  std::vector<std::int64_t> lhs_strides(lhs.size(), 1);
  for (std::size_t d = lhs.size(); d-- > 1;) lhs_strides[d - 1] = lhs_strides[d] * lhs[d];
  auto stride_of = [&](std::int64_t lhs_dim) {
    return lhs_strides[static_cast<std::size_t>(lhs_dim)];
  };
  // Where dim `dim` of an operand is in its spec: 0 and 1 (batch and feature, or out and in
  // features), or 2 + d for spatial dim d.
  auto label = [](const std::vector<std::int64_t>& spec, std::int64_t dim) {
    return static_cast<std::size_t>(std::find(spec.begin(), spec.end(), dim) - spec.begin());
  };
  ImplicitGemm c;
  c.shape.n = out.back();
  for (std::int64_t dim = 0; dim < last; ++dim) {
    std::size_t k = label(g.out_spec, dim);
    c.rows.push_back(
        {out[static_cast<std::size_t>(dim)],
         k == 0 ? stride_of(g.lhs_spec[0]) : stride_of(g.lhs_spec[k]) * g.strides[k - 2]});
    k = label(g.rhs_spec, dim);
    c.steps.push_back(
        {rhs[static_cast<std::size_t>(dim)],
         k == 1 ? stride_of(g.lhs_spec[1]) : stride_of(g.lhs_spec[k]) * g.rhs_dilation[k - 2]});
  }
  c.shape.m = c.shape.k = 1;
  for (const ImplicitGemm::Axis& a : c.rows) c.shape.m *= a.size;
  for (const ImplicitGemm::Axis& a : c.steps) c.shape.k *= a.size;
  for (std::size_t d = 0; d < g.spatial(); ++d) {
    auto [lo, hi] = g.padding[d];
    if (lo == 0 && hi == 0) continue;
    ImplicitGemm::Bound bound{static_cast<std::size_t>(g.out_spec[d + 2]),
                              static_cast<std::size_t>(g.rhs_spec[d + 2]),
                              g.strides[d],
                              g.rhs_dilation[d],
                              lo,
                              lhs[static_cast<std::size_t>(g.lhs_spec[d + 2])]};
    // A run along a padded dim would be part padding; one of strided elements would need as
    // many zeros to read instead.
    if (bound.step + 1 == c.steps.size() || c.run().lhs_stride != 1) return std::nullopt;
    c.bounds.push_back(bound);
    c.lhs_origin -= lo * stride_of(g.lhs_spec[d + 2]);
  }
  return c;
}

std::optional<ImplicitGemm> as_implicit_gemm(const Instruction& conv) {
  if (conv.opcode != Opcode::kConvolution || conv.shape.dtype != float32 ||
      conv.operands[0]->shape.dtype != float32 || conv.operands[1]->shape.dtype != float32)
    return std::nullopt;
  return implicit_gemm(convolution_geometry(conv), conv.operands[0]->shape.dims,
                       conv.operands[1]->shape.dims, conv.shape.dims);
}

std::vector<std::int64_t> dnn_layout(std::size_t spatial, bool features_last) {
  std::vector<std::int64_t> spec(spatial + 2);
  for (std::size_t k = 0; k < spec.size(); ++k) spec[k] = static_cast<std::int64_t>(k);
  if (features_last) std::rotate(spec.begin() + 1, spec.end() - 1, spec.end());
  return spec;
}

bool fits_dnn_convolution(const ConvGeometry& g, DType dtype) {
  if ((dtype != float32 && dtype != float64) || g.spatial() < 2 || g.spatial() > 3 ||
      g.batch_group_count != 1)
    return false;
  for (std::size_t d = 0; d < g.spatial(); ++d)
    if (g.lhs_dilation[d] != 1 || g.padding[d].first < 0 || g.padding[d].second < 0) return false;
  return true;
}

std::optional<DnnConvolution> as_dnn_convolution(const Instruction& conv) {
  if (conv.opcode != Opcode::kConvolution) return std::nullopt;
  DType dtype = conv.shape.dtype;
  if (conv.operands[0]->shape.dtype != dtype || conv.operands[1]->shape.dtype != dtype)
    return std::nullopt;
  ConvGeometry g = convolution_geometry(conv);
  if (!fits_dnn_convolution(g, dtype)) return std::nullopt;
  const std::size_t n = g.spatial();
  const bool features_last = g.lhs_spec == dnn_layout(n, true);
  const std::vector<std::int64_t> spec = dnn_layout(n, features_last);
  if (g.lhs_spec != spec || g.rhs_spec != spec || g.out_spec != spec) return std::nullopt;
  DnnConvolution c;
  c.dtype = dtype;
  c.precision = operand_precision(conv);
  c.features_last = features_last;
  c.groups = g.feature_group_count;
  auto canonical = [&](const Shape& dims) {
    Shape out;
    for (std::int64_t dim : spec) out.push_back(dims[static_cast<std::size_t>(dim)]);
    return out;
  };
  c.lhs = canonical(conv.operands[0]->shape.dims);
  c.rhs = canonical(conv.operands[1]->shape.dims);
  c.out = canonical(conv.shape.dims);
  for (std::size_t d = 0; d < n; ++d) {
    if (g.padding[d].first != g.padding[d].second) return std::nullopt;
    c.padding.push_back(g.padding[d].first);
    c.strides.push_back(g.strides[d]);
    c.rhs_dilation.push_back(g.rhs_dilation[d]);
  }
  return c;
}

}  // namespace jx::hlo
