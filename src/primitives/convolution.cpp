// conv_general_dilated: JAX's general convolution, lowered to an HLO convolution (which
// passes/convolution_as_gemm.cpp turns into patches and a dot). Its sums are core/conv_map.hpp's;
// its transposes and batching are JAX's, expressed as other convolutions.
#include <numeric>

#include "core/conv_map.hpp"
#include "hlo/convolution.hpp"
#include "jx/lax.hpp"
#include "jx/numpy.hpp"
#include "primitives/contraction.hpp"
#include "primitives/elementwise.hpp"
#include "primitives/layout.hpp"
#include "trace/tracer.hpp"
#include "transforms/ad_rules.hpp"

namespace jx {

Primitive conv_general_dilated_p("conv_general_dilated");

namespace {

using namespace layout;
using trace::bind1;
constexpr const char* kName = "conv_general_dilated";

// ---- params, as JAX names and prints them ----

Param pairs_param(const PadPairs& pads) {
  std::vector<Param> items;
  for (auto [lo, hi] : pads) items.push_back(Param::ints({lo, hi}));
  return Param::tuple(std::move(items));
}

PadPairs pairs_of(const Param& p) {
  PadPairs out;
  for (const Param& pair : p.items()) {
    Ints v = pair.as_ints();
    out.emplace_back(v.at(0), v.at(1));
  }
  return out;
}

Params conv_params(const ConvGeometry& g, Param precision, Param preferred) {
  return {{"window_strides", Param::ints(g.strides)},
          {"padding", pairs_param(g.padding)},
          {"lhs_dilation", Param::ints(g.lhs_dilation)},
          {"rhs_dilation", Param::ints(g.rhs_dilation)},
          {"dimension_numbers",
           Param::record("ConvDimensionNumbers", {{"lhs_spec", Param::ints(g.lhs_spec)},
                                                  {"rhs_spec", Param::ints(g.rhs_spec)},
                                                  {"out_spec", Param::ints(g.out_spec)}})},
          {"feature_group_count", Param::integer(g.feature_group_count)},
          {"batch_group_count", Param::integer(g.batch_group_count)},
          {"precision", std::move(precision)},
          {"preferred_element_type", std::move(preferred)},
          {"out_sharding", Param()}};
}

ConvGeometry geometry_of(const Params& params) {
  const Param& dn = params.get("dimension_numbers");
  return {dn.field("lhs_spec").as_ints(),          dn.field("rhs_spec").as_ints(),
          dn.field("out_spec").as_ints(),          params.get("window_strides").as_ints(),
          params.get("lhs_dilation").as_ints(),    params.get("rhs_dilation").as_ints(),
          pairs_of(params.get("padding")),         params.get("feature_group_count").as_int(),
          params.get("batch_group_count").as_int()};
}

std::optional<lax::Precision> precision_of(const Params& params) {
  return contraction::precision_of(kName, params);
}
std::optional<DType> preferred_of(const Params& params) {
  const Param& p = params.get("preferred_element_type");
  return p.is_none() ? std::nullopt : std::optional<DType>(p.as_dtype());
}

Array conv_with(const Array& lhs, const Array& rhs, const ConvGeometry& g, const Params& params) {
  return lax::conv_general_dilated(lhs, rhs, g.strides, g.padding, g.lhs_dilation, g.rhs_dilation,
                                   {g.lhs_spec, g.rhs_spec, g.out_spec}, g.feature_group_count,
                                   g.batch_group_count, precision_of(params), preferred_of(params));
}

Ints take(const Shape& s, const Ints& dims, std::size_t from = 0) {
  Ints out;
  for (std::size_t k = from; k < dims.size(); ++k)
    out.push_back(s[static_cast<std::size_t>(dims[k])]);
  return out;
}

bool is_permutation(const Ints& spec, std::size_t ndim) {
  Ints sorted = spec;
  std::sort(sorted.begin(), sorted.end());
  Ints iota(ndim);
  std::iota(iota.begin(), iota.end(), 0);
  return sorted == iota;
}

// ---- abstract eval: JAX's shape rule, in its order and words, then its dtype rule ----

void check_positive(const Ints& v, const char* what) {
  for (std::int64_t x : v)
    if (x < 1) fail<ValueError>(kName, " ", what, " must be positive, got ", tup(v), ".");
}

Outs conv_abstract_eval(Avals in, const Params& params) {
  check_arity(conv_general_dilated_p, in, 2);
  const ShapedArray &lhs = in[0], &rhs = in[1];
  ConvGeometry g = geometry_of(params);
  if (lhs.ndim() != rhs.ndim())
    fail<ValueError>(kName, " lhs and rhs must have the same number of dimensions, but got ",
                     shape_str(lhs.shape), " and ", shape_str(rhs.shape), ".");
  auto ndim = static_cast<std::size_t>(lhs.ndim());
  if (ndim < 2 || !is_permutation(g.lhs_spec, ndim) || !is_permutation(g.rhs_spec, ndim) ||
      !is_permutation(g.out_spec, ndim))
    fail<TypeError>(kName, " dimension_numbers must each list all ", ndim,
                    " dimensions of the operands (batch, feature, then spatial), got lhs_spec=",
                    tup(g.lhs_spec), ", rhs_spec=", tup(g.rhs_spec), ", out_spec=", tup(g.out_spec),
                    ".");
  std::int64_t fgc = g.feature_group_count, bgc = g.batch_group_count;
  if (fgc < 1)
    fail<ValueError>(kName, " feature_group_count must be a positive integer, got ", fgc, ".");
  std::int64_t lhs_features = lhs.shape[g.lhs_spec[1]], rhs_in = rhs.shape[g.rhs_spec[1]];
  std::int64_t rhs_out = rhs.shape[g.rhs_spec[0]];
  if (lhs_features % fgc)
    fail<ValueError>(kName, " feature_group_count must divide lhs feature dimension size, but ",
                     fgc, " does not divide ", lhs_features, ".");
  if (lhs_features / fgc != rhs_in)
    fail<ValueError>(kName,
                     " lhs feature dimension size divided by feature_group_count must equal the "
                     "rhs input feature dimension size, but ",
                     lhs_features, " // ", fgc, " != ", rhs_in, ".");
  if (rhs_out % fgc)
    fail<ValueError>(kName,
                     " rhs output feature dimension size must be a multiple of "
                     "feature_group_count, but ",
                     rhs_out, " is not a multiple of ", fgc, ".");
  if (bgc < 1)
    fail<ValueError>(kName, " batch_group_count must be a positive integer, got ", bgc, ".");
  std::int64_t lhs_batch = lhs.shape[g.lhs_spec[0]];
  if (bgc > 1 && lhs_batch % bgc)
    fail<ValueError>(kName, " batch_group_count must divide lhs batch dimension size, but ", bgc,
                     " does not divide ", lhs_batch, ".");
  if (rhs_out % bgc)
    fail<ValueError>(kName,
                     " rhs output feature dimension size must be a multiple of "
                     "batch_group_count, but ",
                     rhs_out, " is not a multiple of ", bgc, ".");
  if (bgc > 1 && fgc > 1)
    fail<ValueError>(
        "At most one of batch_group_count and feature_group_count may be > 1, got "
        "batch_group_count=",
        bgc, " and feature_group_count=", fgc);
  std::size_t spatial = ndim - 2;
  if (spatial != g.strides.size())
    fail<ValueError>(kName,
                     " window and window_strides must have the same number of dimensions, but "
                     "got ",
                     spatial, " and ", g.strides.size());
  check_positive(g.strides, "window_strides");
  for (auto [dilation, what] :
       {std::pair{&g.lhs_dilation, "lhs_dilation"}, std::pair{&g.rhs_dilation, "rhs_dilation"}}) {
    if (dilation->size() != spatial)
      fail<ValueError>(kName, " ", what, " must have one entry per spatial dimension (", spatial,
                       "), got ", tup(*dilation), ".");
    for (std::int64_t d : *dilation)
      if (d < 1) fail<TypeError>("All dilations must be positive, got ", tup(*dilation), ".");
  }
  if (g.padding.size() != spatial)
    fail<TypeError>("Wrong number of explicit pads for convolution: expected ", spatial, ", got ",
                    g.padding.size(), ".");
  for (std::size_t d = 0; d < spatial; ++d) {
    std::int64_t dilated = dilate_dim(lhs.shape[g.lhs_spec[d + 2]], g.lhs_dilation[d]);
    if (dilated + g.padding[d].first + g.padding[d].second < 0) {
      Ints dims;
      for (std::size_t k = 0; k < spatial; ++k)
        dims.push_back(dilate_dim(lhs.shape[g.lhs_spec[k + 2]], g.lhs_dilation[k]));
      fail<ValueError>(
          "Negative padding is larger than the size of the corresponding dimension: got "
          "padding=",
          params.get("padding").str(), " for lhs_shape[2:]=", tup(dims));
    }
  }
  DType dtype =
      contraction::out_dtype(kName, lhs.dtype, rhs.dtype, params.get("preferred_element_type"));
  precision_of(params);  // checks it
  return result(conv_output_shape(g, lhs.shape, rhs.shape), dtype, lhs.weak_type && rhs.weak_type);
}

// ---- impl and lowering: in the output's dtype (operands converted first, exactly) ----

std::vector<Array> conv_impl(Ins in, const Params& params, Avals out) {
  ConvGeometry g = geometry_of(params);
  DType d = out[0].dtype;
  Array lhs = in[0].dtype() == d ? in[0] : lax::convert_element_type(in[0], d);
  Array rhs = in[1].dtype() == d ? in[1] : lax::convert_element_type(in[1], d);
  Array r = make_array(out[0]);
  dispatch(d, [&]<class T>() {
    convolve<T, T>(g, lhs.shape(), concrete_buffer(lhs, "impl").as<T>(), rhs.shape(),
                   concrete_buffer(rhs, "impl").as<T>(), out[0].shape, r.impl()->buffer->as<T>());
  });
  return {r};
}

std::vector<hlo::Instruction*> conv_lower(hlo::Builder& b, Operands ops, const Params& params,
                                          Avals out) {
  ConvGeometry g = geometry_of(params);
  hlo::Attrs attrs = hlo::convolution_attrs(g, ops[1]->shape.dims);
  if (std::optional<lax::Precision> p = precision_of(params))
    attrs.set("operand_precision", std::string(contraction::precision_word(*p)));
  DType d = out[0].dtype;
  return {b.op(hlo::Opcode::kConvolution, hlo::HloShape::array(d, out[0].shape),
               {b.convert(ops[0], d), b.convert(ops[1], d)}, std::move(attrs))};
}

// ---- transposes (JAX's _conv_general_dilated_transpose_lhs and _rhs) ----

// x's dim `src` folded into dim `dst` (numbered after src's removal), src's index outermost.
Array reshape_axis_into(std::int64_t src, std::int64_t dst, const Array& x) {
  Ints perm;
  for (std::int64_t d = 0; d < x.ndim(); ++d)
    if (d != src) perm.push_back(d);
  perm.insert(perm.begin() + dst, src);
  Shape shape;
  for (std::int64_t d : perm)
    if (d != src) shape.push_back(x.shape()[static_cast<std::size_t>(d)]);
  shape[static_cast<std::size_t>(dst)] *= x.shape()[static_cast<std::size_t>(src)];
  return lax::reshape(lax::transpose(x, perm), shape);
}

// x's dim `src` split into (size1, rest).
Array reshape_axis_out_of(std::int64_t src, std::int64_t size1, const Array& x) {
  Shape shape = x.shape();
  auto at = static_cast<std::size_t>(src);
  std::int64_t size2 = shape[at] / size1;
  shape[at] = size2;
  shape.insert(shape.begin() + src, size1);
  return lax::reshape(x, shape);
}

Ints swap_first_two(Ints spec) {
  std::swap(spec[0], spec[1]);
  return spec;
}

Ints dilate_shape(const Ints& dims, const Ints& dilation) {
  Ints out;
  for (std::size_t k = 0; k < dims.size(); ++k) out.push_back(dilate_dim(dims[k], dilation[k]));
  return out;
}

// The spatial sizes of lhs, rhs and the output, each dilated (the output by the strides): what
// JAX's _conv_general_vjp_lhs_padding and _rhs_padding compute the transposes' padding from.
struct Dilated {
  Ints lhs, rhs, out;
};
Dilated dilated(const ConvGeometry& g, const Shape& lhs, const Shape& rhs, const Shape& out) {
  return {dilate_shape(take(lhs, g.lhs_spec, 2), g.lhs_dilation),
          dilate_shape(take(rhs, g.rhs_spec, 2), g.rhs_dilation),
          dilate_shape(take(out, g.out_spec, 2), g.strides)};
}

Array conv_transpose_lhs(const Array& ct, const ShapedArray& lhs, Array rhs, const Params& params) {
  ConvGeometry g = geometry_of(params);
  Shape rhs_shape = rhs.shape();
  std::int64_t groups = g.feature_group_count;
  if (g.feature_group_count > 1 || g.batch_group_count > 1) {
    std::int64_t count = std::max(g.feature_group_count, g.batch_group_count);
    rhs = reshape_axis_out_of(g.rhs_spec[0], count, rhs);
    rhs = reshape_axis_into(g.rhs_spec[0], g.rhs_spec[1], rhs);
    groups = count;
  }
  Dilated s = dilated(g, lhs.shape, rhs_shape, ct.shape());
  PadPairs pads;
  for (std::size_t d = 0; d < s.lhs.size(); ++d) {
    std::int64_t before = s.rhs[d] - g.padding[d].first - 1;
    pads.emplace_back(before, s.lhs[d] + s.rhs[d] - 1 - s.out[d] - before);
  }
  Ints spatial(g.rhs_spec.begin() + 2, g.rhs_spec.end());
  Array flipped = lax::rev(rhs, spatial);
  if (flipped.dtype() != ct.dtype()) flipped = lax::convert_element_type(flipped, ct.dtype());
  ConvGeometry t{g.out_spec, swap_first_two(g.rhs_spec),
                 g.lhs_spec, g.lhs_dilation,
                 g.strides,  g.rhs_dilation,
                 pads,       groups,
                 1};
  Array r = conv_with(ct, flipped, t, params);
  if (r.dtype() != lhs.dtype) r = lax::convert_element_type(r, lhs.dtype);
  if (g.batch_group_count > 1) {
    r = reshape_axis_out_of(g.lhs_spec[1], g.batch_group_count, r);
    r = reshape_axis_into(g.lhs_spec[1], g.lhs_spec[0], r);
  }
  return r;
}

Array conv_transpose_rhs(const Array& ct, Array lhs, const ShapedArray& rhs, const Params& params) {
  ConvGeometry g = geometry_of(params);
  if (ct.size() == 0) return np::zeros(rhs.shape, rhs.dtype);
  Dilated s = dilated(g, lhs.shape(), rhs.shape, ct.shape());
  PadPairs pads;
  for (std::size_t d = 0; d < s.lhs.size(); ++d) {
    std::int64_t lo = g.padding[d].first;
    pads.emplace_back(lo, s.out[d] - s.lhs[d] + s.rhs[d] - lo - 1);
  }
  if (lhs.dtype() != ct.dtype()) lhs = lax::convert_element_type(lhs, ct.dtype());
  // Feature groups become batch groups and back.
  ConvGeometry t{swap_first_two(g.lhs_spec),
                 swap_first_two(g.out_spec),
                 swap_first_two(g.rhs_spec),
                 g.rhs_dilation,
                 g.lhs_dilation,
                 g.strides,
                 pads,
                 g.batch_group_count,
                 g.feature_group_count};
  Array r = conv_with(lhs, ct, t, params);
  if (r.dtype() != rhs.dtype) r = lax::convert_element_type(r, rhs.dtype);
  return r;
}

// ---- batching (JAX's _conv_general_dilated_batch_rule): the batch folds into lhs's batch or
// features, or rhs's output features, as groups where groups are in play ----
BatchResult conv_batch(Ins args, BDims dims, const Params& params) {
  ConvGeometry g = geometry_of(params);
  const Array &lhs = args[0], &rhs = args[1];
  const Ints &ls = g.lhs_spec, &rs = g.rhs_spec, &os = g.out_spec;
  std::int64_t n = batching::batch_size(args, dims);
  if (n == 0) {
    ShapedArray unbatched[2] = {lhs.aval(), rhs.aval()};
    for (int k = 0; k < 2; ++k)
      if (dims[k]) unbatched[k].shape.erase(unbatched[k].shape.begin() + *dims[k]);
    ShapedArray out = conv_abstract_eval(unbatched, params)[0];
    out.shape.insert(out.shape.begin(), 0);
    return one(np::zeros(out.shape, out.dtype), 0);
  }
  if (dims[0] && dims[1]) {
    ConvGeometry t = g;
    Array new_lhs;
    if (g.batch_group_count > 1) {
      new_lhs = reshape_axis_into(*dims[0], ls[0], lhs);
      t.batch_group_count *= n;
    } else {
      new_lhs = reshape_axis_into(*dims[0], ls[1], lhs);
      t.feature_group_count *= n;
    }
    Array out = conv_with(new_lhs, reshape_axis_into(*dims[1], rs[0], rhs), t, params);
    return one(reshape_axis_out_of(os[1], n, out), os[1]);
  }
  if (dims[0]) {
    std::int64_t b = *dims[0];
    if (g.batch_group_count == 1) {
      Array out = conv_with(reshape_axis_into(b, ls[0], lhs), rhs, g, params);
      return one(reshape_axis_out_of(os[0], n, out), os[0]);
    }
    Array new_lhs = reshape_axis_out_of(ls[0] + (b <= ls[0]), g.batch_group_count, lhs);
    new_lhs = reshape_axis_into(b + (ls[0] < b), ls[0] + 1, new_lhs);
    new_lhs = reshape_axis_into(ls[0], ls[0], new_lhs);
    Array out = conv_with(new_lhs, rhs, g, params);
    return one(reshape_axis_out_of(os[0], n, out), os[0]);
  }
  std::int64_t b = *dims[1];
  if (g.feature_group_count == 1 && g.batch_group_count == 1) {
    Array out = conv_with(lhs, reshape_axis_into(b, rs[0], rhs), g, params);
    return one(reshape_axis_out_of(os[1], n, out), os[1]);
  }
  // Groups stay outermost in rhs's output features: factor them out, fold the batch in after
  // them, and undo the same on the output.
  std::int64_t groups = std::max(g.feature_group_count, g.batch_group_count);
  Array new_rhs = reshape_axis_out_of(rs[0] + (b <= rs[0]), groups, rhs);
  new_rhs = reshape_axis_into(b + (rs[0] < b), rs[0] + 1, new_rhs);
  new_rhs = reshape_axis_into(rs[0], rs[0], new_rhs);
  Array out = conv_with(lhs, new_rhs, g, params);
  out = reshape_axis_out_of(os[1], groups, out);
  out = reshape_axis_out_of(os[1] + 1, n, out);
  return one(reshape_axis_into(os[1], os[1] + 1, out), os[1]);
}

const bool kRegistered = [] {
  Primitive& p = conv_general_dilated_p;
  p.abstract_eval = conv_abstract_eval;
  p.impl = conv_impl;
  p.lower = conv_lower;
  ad::def_bilinear(p);
  p.transpose = [](Cts cts, LinearOps ops, const Params& params) {
    JX_CHECK(ops[0].is_linear() != ops[1].is_linear(), "a convolution is linear in one operand");
    std::vector<Array> out(2);
    if (ad::is_zero(cts[0])) return out;
    if (ops[0].is_linear())
      out[0] = conv_transpose_lhs(cts[0], ops[0].aval, ops[1].value, params);
    else
      out[1] = conv_transpose_rhs(cts[0], ops[0].value, ops[1].aval, params);
    return out;
  };
  p.batch = conv_batch;
  return true;
}();

}  // namespace

namespace lax {

Array conv_general_dilated(const Array& lhs, const Array& rhs, const Ints& window_strides,
                           const Padding& padding, const Ints& lhs_dilation,
                           const Ints& rhs_dilation, const ConvDimensionNumbers& dimension_numbers,
                           std::int64_t feature_group_count, std::int64_t batch_group_count,
                           std::optional<Precision> precision,
                           std::optional<DType> preferred_element_type) {
  ConvDimensionNumbers dn = dimension_numbers.resolved(lhs.shape(), rhs.shape());
  std::size_t spatial = lhs.ndim() >= 2 ? static_cast<std::size_t>(lhs.ndim()) - 2 : 0;
  Ints ones(spatial, 1);
  bool string_padding = padding.kind() != Padding::Kind::kExplicit;
  if (string_padding && !lhs_dilation.empty() &&
      std::any_of(lhs_dilation.begin(), lhs_dilation.end(), [](auto d) { return d != 1; }))
    throw ValueError(
        "String padding is not implemented for transposed convolution using this op. Please "
        "either exactly specify the required padding or use conv_transpose.");
  ConvGeometry g{dn.lhs_spec,
                 dn.rhs_spec,
                 dn.out_spec,
                 window_strides,
                 lhs_dilation.empty() ? ones : lhs_dilation,
                 rhs_dilation.empty() ? ones : rhs_dilation,
                 {},
                 feature_group_count,
                 batch_group_count};
  if (string_padding && is_permutation(dn.lhs_spec, lhs.shape().size()) &&
      is_permutation(dn.rhs_spec, rhs.shape().size()) && g.rhs_dilation.size() == spatial) {
    Ints window = dilate_shape(take(rhs.shape(), dn.rhs_spec, 2), g.rhs_dilation);
    g.padding = padding.pads(take(lhs.shape(), dn.lhs_spec, 2), window, window_strides);
  } else {
    g.padding = padding.pads({}, {}, {});
  }
  if (!precision) precision = contraction::default_precision();
  return bind1(
      conv_general_dilated_p, {lhs, rhs},
      conv_params(g, precision ? contraction::precision_param(*precision) : Param(),
                  preferred_element_type ? Param::dtype(*preferred_element_type) : Param()));
}

Array conv(const Array& lhs, const Array& rhs, const Ints& window_strides, const Padding& padding,
           std::optional<Precision> precision, std::optional<DType> preferred_element_type) {
  return conv_general_dilated(lhs, rhs, window_strides, padding, {}, {}, {}, 1, 1, precision,
                              preferred_element_type);
}

}  // namespace lax
}  // namespace jx
