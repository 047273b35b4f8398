#include "passes/convolution_as_gemm.hpp"

#include <algorithm>
#include <numeric>

#include "core/array_impl.hpp"
#include "hlo/builder.hpp"
#include "hlo/convolution.hpp"
#include "support/multi_index.hpp"

namespace jx::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using Ints = std::vector<std::int64_t>;

// Above this many pieces on both sides, patches come from one gather, not a concatenation.
constexpr std::int64_t kMaxSlices = 64;
// Implicit GEMMs (hlo::as_implicit_gemm) for at least this many input features, and runs of
// at least kMinRun steps: each run is an inner loop of the matrix kernel, after a computation of
// where it starts.
constexpr std::int64_t kMinImplicitChannels = 16, kMinRun = 8;

class Rewriter {
 public:
  Rewriter(hlo::Builder& b, Instruction& conv, bool implicit_gemms, bool dnn_library)
      : b_(b),
        conv_(conv),
        g_(hlo::convolution_geometry(conv)),
        dtype_(conv.shape.dtype),
        implicit_gemms_(implicit_gemms),
        dnn_library_(dnn_library) {}

  Instruction* rewrite() {
    const Shape &lhs = conv_.operands[0]->shape.dims, &rhs = conv_.operands[1]->shape.dims;
    std::size_t n = g_.spatial();
    batch_ = lhs[g_.lhs_spec[0]], features_ = lhs[g_.lhs_spec[1]];
    in_features_ = rhs[g_.rhs_spec[1]], out_features_ = rhs[g_.rhs_spec[0]];
    for (std::size_t d = 0; d < n; ++d) {
      window_.push_back(rhs[g_.rhs_spec[d + 2]]);
      out_spatial_.push_back(conv_.shape.dims[g_.out_spec[d + 2]]);
    }
    taps_ = shape_size(window_), positions_ = shape_size(out_spatial_);
    if (conv_.shape.size() == 0 || taps_ * in_features_ == 0) return zeros();
    // One the DNN library computes stays a convolution, in its layouts; but not one whose window
    // is larger than its output: a kernel gradient, whose window is the image, is one GEMM of the
    // patches of its few windows.
    if (dnn_library_ && hlo::fits_dnn_convolution(g_, dtype_) && taps_ <= positions_)
      return hlo::as_dnn_convolution(conv_) ? &conv_ : dnn_convolution();
    // One already in that form stays.
    if (implicit_gemms_ && fits_implicit_gemm()) {
      std::optional<hlo::ImplicitGemm> already = hlo::as_implicit_gemm(conv_);
      if (already && already->run().size >= kMinRun) return &conv_;
      if (Instruction* in_place = implicit_gemm()) return in_place;
    }
    transposed_ = batch_innermost();
    return to_out_layout(products(patches(), kernel()));
  }

 private:
  // Whether lhs keeps its batch dim after its spatial dims in memory and its feature dim before
  // them, as a kernel gradient of an NHWC convolution does (batch C, features N). Its patches
  // are then laid out transposed, [features · taps, positions · batch], and contracted along
  // their rows, so reading lhs and writing the patches both walk memory in order.
  bool batch_innermost() const {
    if (g_.feature_group_count > 1 || g_.batch_group_count > 1) return false;
    if (std::min(taps_, positions_) > kMaxSlices) return false;
    for (std::size_t d = 2; d < g_.lhs_spec.size(); ++d)
      if (g_.lhs_spec[d] > g_.lhs_spec[0] || g_.lhs_spec[d] < g_.lhs_spec[1]) return false;
    return g_.lhs_spec[1] < g_.lhs_spec[0];
  }

  // Whether the convolution could be an implicit GEMM worth computing as one: float32, one
  // group, enough input features (implicit_gemm() checks its runs).
  bool fits_implicit_gemm() const {
    if (dtype_ != float32 || g_.feature_group_count > 1 || g_.batch_group_count > 1 ||
        in_features_ < kMinImplicitChannels)
      return false;
    for (std::size_t d = 0; d < g_.spatial(); ++d)
      if (g_.padding[d].first < 0 || g_.padding[d].second < 0) return false;
    return true;
  }

  // The convolution the matrix kernel computes in place (hlo::implicit_gemm): lhs padded in its
  // own layout (or its padding left to the kernel, where hlo::ImplicitGemm's bounds allow), rhs
  // and out with their out features innermost (rhs, when it is not, as (spatial..., in, out)),
  // then out put back in its layout. nullptr when its runs would be shorter than kMinRun steps.
  Instruction* implicit_gemm() {
    auto rank = static_cast<std::int64_t>(g_.lhs_spec.size());
    std::size_t n = g_.spatial();
    ConvGeometry c = g_;
    Ints rhs_perm(static_cast<std::size_t>(rank));
    std::iota(rhs_perm.begin(), rhs_perm.end(), 0);
    if (g_.rhs_spec[0] != rank - 1) {  // (spatial..., in, out)
      rhs_perm.assign(g_.rhs_spec.begin() + 2, g_.rhs_spec.end());
      rhs_perm.insert(rhs_perm.end(), {g_.rhs_spec[1], g_.rhs_spec[0]});
    }
    Ints out_perm;  // the product's dims, as out's
    for (std::int64_t dim = 0; dim < rank; ++dim)
      if (dim != g_.out_spec[1]) out_perm.push_back(dim);
    out_perm.push_back(g_.out_spec[1]);
    auto position = [](const Ints& perm, std::int64_t dim) {
      return static_cast<std::int64_t>(std::find(perm.begin(), perm.end(), dim) - perm.begin());
    };
    for (std::size_t k = 0; k < g_.rhs_spec.size(); ++k) {
      c.rhs_spec[k] = position(rhs_perm, g_.rhs_spec[k]);
      c.out_spec[k] = position(out_perm, g_.out_spec[k]);
    }
    Shape rhs_dims = permuted(conv_.operands[1]->shape.dims, rhs_perm);
    Shape out_dims = permuted(conv_.shape.dims, out_perm);
    Instruction* x = conv_.operands[0];
    std::optional<hlo::ImplicitGemm> gemm =
        hlo::implicit_gemm(c, x->shape.dims, rhs_dims, out_dims);
    const bool pad_lhs = !gemm;
    if (pad_lhs) {
      c.padding = PadPairs(n, {0, 0});
      c.lhs_dilation = Ints(n, 1);
      gemm = hlo::implicit_gemm(c, padded_dims(x->shape.dims, g_.lhs_spec), rhs_dims, out_dims);
    }
    if (!gemm || gemm->run().size < kMinRun) return nullptr;
    if (pad_lhs) x = padded(x, g_.lhs_spec);
    Instruction* out = convolution(c, x, b_.transpose(conv_.operands[1], rhs_perm), out_dims);
    Ints back;
    for (std::int64_t dim = 0; dim < rank; ++dim) back.push_back(position(out_perm, dim));
    return b_.transpose(out, back);
  }

  // The convolution in the DNN library's layouts (hlo::DnnConvolution), with the features where
  // lhs has them: last when they follow its spatial dims, else second. The even part of the
  // padding is the library's; lhs is padded by what is left on one side.
  Instruction* dnn_convolution() {
    const std::size_t n = g_.spatial();
    const bool last = std::all_of(g_.lhs_spec.begin() + 2, g_.lhs_spec.end(),
                                  [&](std::int64_t dim) { return dim < g_.lhs_spec[1]; });
    const Ints layout = hlo::dnn_layout(n, last);
    auto perm = [&](const Ints& spec) {  // an operand's dims in the layout's order
      Ints out(n + 2);
      for (std::size_t k = 0; k < n + 2; ++k) out[static_cast<std::size_t>(layout[k])] = spec[k];
      return out;
    };
    ConvGeometry c = g_;
    c.lhs_spec = c.rhs_spec = c.out_spec = layout;
    PadPairs uneven(n);
    for (std::size_t d = 0; d < n; ++d) {
      auto [lo, hi] = g_.padding[d];
      c.padding[d] = {std::min(lo, hi), std::min(lo, hi)};
      uneven[d] = {lo - c.padding[d].first, hi - c.padding[d].second};
    }
    Instruction* x = padded(b_.transpose(conv_.operands[0], perm(g_.lhs_spec)), c.lhs_spec, uneven,
                            g_.lhs_dilation);
    Instruction* w = b_.transpose(conv_.operands[1], perm(g_.rhs_spec));
    Ints out_perm = perm(g_.out_spec);
    Instruction* out = convolution(c, x, w, permuted(conv_.shape.dims, out_perm));
    return b_.transpose(out, inverse(out_perm));
  }

  // A convolution of geometry c, dims `out`, in the convolution's dtype and precision.
  Instruction* convolution(const ConvGeometry& c, Instruction* x, Instruction* w, Shape out) {
    hlo::Attrs a = hlo::convolution_attrs(c, w->shape.dims);
    keep_precision(a);
    return b_.op(Opcode::kConvolution, hlo::HloShape::array(dtype_, std::move(out)), {x, w},
                 std::move(a));
  }

  // The convolution's lax.Precision, on what replaces it.
  void keep_precision(hlo::Attrs& a) const {
    if (conv_.attrs.has("operand_precision"))
      a.set("operand_precision", conv_.attrs.get_string("operand_precision"));
  }

  static Ints inverse(const Ints& perm) {
    Ints out(perm.size());
    for (std::size_t k = 0; k < perm.size(); ++k)
      out[static_cast<std::size_t>(perm[k])] = static_cast<std::int64_t>(k);
    return out;
  }

  static Shape permuted(const Shape& dims, const Ints& perm) {
    Shape out;
    for (std::int64_t p : perm) out.push_back(dims[static_cast<std::size_t>(p)]);
    return out;
  }

  Instruction* zeros() {
    return b_.broadcast(b_.constant(make_scalar(0, dtype_)), conv_.shape.dims, {});
  }

  // lhs as [batch, spatial..., features] ([features, spatial..., batch] when transposed),
  // padded and dilated.
  Instruction* padded_input() {
    std::int64_t lead = g_.lhs_spec[transposed_ ? 1 : 0], trail = g_.lhs_spec[transposed_ ? 0 : 1];
    Ints perm = {lead};
    perm.insert(perm.end(), g_.lhs_spec.begin() + 2, g_.lhs_spec.end());
    perm.push_back(trail);
    Ints spec(perm.size());  // where the transposed lhs has its batch, feature and spatial dims
    std::iota(spec.begin() + 2, spec.end(), 1);
    spec[0] = transposed_ ? static_cast<std::int64_t>(perm.size()) - 1 : 0;
    spec[1] = transposed_ ? 0 : static_cast<std::int64_t>(perm.size()) - 1;
    return padded(b_.transpose(conv_.operands[0], perm), spec);
  }

  // The dims of an lhs of `dims` whose spatial dims are where spec says, dilated and padded:
  // by the convolution's lhs dilation and padding unless others are given.
  Shape padded_dims(Shape dims, const Ints& spec) const {
    return padded_dims(std::move(dims), spec, g_.padding, g_.lhs_dilation);
  }
  static Shape padded_dims(Shape dims, const Ints& spec, const PadPairs& pads,
                           const Ints& dilation) {
    for (std::size_t d = 0; d < pads.size(); ++d) {
      auto& size = dims[static_cast<std::size_t>(spec[d + 2])];
      size = pads[d].first + pads[d].second + dilate_dim(size, dilation[d]);
    }
    return dims;
  }

  // x, an lhs whose spatial dims are where spec says, dilated and padded.
  Instruction* padded(Instruction* x, const Ints& spec) {
    return padded(x, spec, g_.padding, g_.lhs_dilation);
  }
  Instruction* padded(Instruction* x, const Ints& spec, const PadPairs& pads,
                      const Ints& dilation) {
    Ints config(3 * x->shape.dims.size(), 0);
    bool any = false;
    for (std::size_t d = 0; d < pads.size(); ++d) {
      auto at = 3 * static_cast<std::size_t>(spec[d + 2]);
      config[at] = pads[d].first, config[at + 1] = pads[d].second;
      config[at + 2] = dilation[d] - 1;
      any = any || config[at] || config[at + 1] || config[at + 2];
    }
    if (!any) return x;
    hlo::Attrs a;
    a.set("padding", config);
    return b_.op(Opcode::kPad,
                 hlo::HloShape::array(dtype_, padded_dims(x->shape.dims, spec, pads, dilation)),
                 {x, b_.constant(make_scalar(0, dtype_))}, std::move(a));
  }

  // The patch matrix. Element (window o, tap k) of a row sits at o · stride + k · dilation in
  // the padded input. Rows are (batch, o...) and columns (k..., features): each row holds, tap
  // by tap, the features under its window (im2col); transposed, rows are (features, k...) and
  // columns (o..., batch). Strided slices build it: one per column group covering every row, or
  // one per row group covering every column, whichever are fewer (a forward convolution has few
  // taps, a kernel gradient few windows), concatenated.
  Instruction* patches() {
    Instruction* x = padded_input();
    std::int64_t lead = x->shape.dims.front(), trail = x->shape.dims.back();
    Ints spatial(x->shape.dims.begin() + 1, x->shape.dims.end() - 1);
    bool direct = true;
    for (std::size_t d = 0; d < g_.spatial(); ++d)
      direct = direct && window_[d] == 1 && g_.strides[d] == 1 && spatial[d] == out_spatial_[d];
    const Ints& row_grid = transposed_ ? window_ : out_spatial_;
    const Ints& col_grid = transposed_ ? out_spatial_ : window_;
    const Ints& row_step = transposed_ ? g_.rhs_dilation : g_.strides;
    const Ints& col_step = transposed_ ? g_.strides : g_.rhs_dilation;
    std::int64_t rows = shape_size(row_grid), cols = shape_size(col_grid);
    if (direct) return b_.reshape(x, {lead * rows, cols * trail});
    if (std::min(taps_, positions_) > kMaxSlices) return gathered_patches(x, spatial);
    bool by_columns = cols <= rows;
    const Ints& grid = by_columns ? col_grid : row_grid;
    const Ints& span = by_columns ? row_grid : col_grid;
    const Ints& offset = by_columns ? col_step : row_step;
    const Ints& step = by_columns ? row_step : col_step;
    std::vector<Instruction*> pieces;
    for_each_index(grid, [&](const Ints& at) {
      Ints slice = {0, lead, 1};
      Shape dims = {lead};
      for (std::size_t d = 0; d < at.size(); ++d) {
        std::int64_t start = at[d] * offset[d];
        slice.insert(slice.end(), {start, start + (span[d] - 1) * step[d] + 1, step[d]});
        dims.push_back(span[d]);
      }
      slice.insert(slice.end(), {0, trail, 1});
      dims.push_back(trail);
      hlo::Attrs a;
      a.set("slice", slice);
      Instruction* piece = b_.op(Opcode::kSlice, hlo::HloShape::array(dtype_, dims), {x}, a);
      // A column group's piece is a block of columns of the matrix, [lead, span..., trail]:
      // the matrix is their concatenation along the last dim, which keeps the row's dims so
      // that no kernel splits a flat row index into them again. A row group's piece holds
      // every lead-th row.
      pieces.push_back(by_columns ? piece : b_.reshape(piece, {lead, 1, cols, trail}));
    });
    if (pieces.size() == 1) return b_.reshape(pieces[0], {lead * rows, cols * trail});
    Shape joined = {lead, rows, cols, trail};
    if (by_columns) {
      joined = pieces[0]->shape.dims;
      joined.back() = cols * trail;
    }
    hlo::Attrs a;
    a.set("dimensions", Ints{by_columns ? static_cast<std::int64_t>(joined.size()) - 1 : 1});
    return b_.reshape(
        b_.op(Opcode::kConcatenate, hlo::HloShape::array(dtype_, joined), pieces, std::move(a)),
        {lead * rows, cols * trail});
  }

  // The (untransposed) matrix as one gather whose indices are a constant table: for windows of
  // many taps at many positions, where a concatenation of slices would have too many operands.
  Instruction* gathered_patches(Instruction* x, const Ints& spatial) {
    std::int64_t points = shape_size(spatial);
    x = b_.reshape(x, {batch_, points, features_});
    // The flat padded position of tap k of window o: Σ_d (o_d · stride + k_d · dilation) · step_d.
    DType index_type = points <= std::numeric_limits<std::int32_t>::max() ? int32 : int64;
    Array table = make_array(ShapedArray{{positions_ * taps_, 1}, index_type, false});
    Ints step(spatial.size(), 1);
    for (std::size_t d = spatial.size(); d-- > 1;) step[d - 1] = step[d] * spatial[d];
    Ints grid = out_spatial_;
    grid.insert(grid.end(), window_.begin(), window_.end());
    std::int64_t k = 0;
    for_each_index(grid, [&](const Ints& at) {
      std::int64_t offset = 0;
      for (std::size_t d = 0; d < g_.spatial(); ++d)
        offset += (at[d] * g_.strides[d] + at[d + g_.spatial()] * g_.rhs_dilation[d]) * step[d];
      if (index_type == int32)
        table.impl()->buffer->as<std::int32_t>()[k++] = static_cast<std::int32_t>(offset);
      else
        table.impl()->buffer->as<std::int64_t>()[k++] = offset;
    });
    hlo::Attrs a;
    a.set("offset_dims", Ints{0, 2});
    a.set("collapsed_slice_dims", Ints{1});
    a.set("start_index_map", Ints{1});
    a.set("operand_batching_dims", Ints{});
    a.set("start_indices_batching_dims", Ints{});
    a.set("index_vector_dim", std::int64_t{1});
    a.set("slice_sizes", Ints{batch_, 1, features_});
    Instruction* gathered = b_.op(
        Opcode::kGather, hlo::HloShape::array(dtype_, {batch_, positions_ * taps_, features_}),
        {x, b_.constant(table)}, std::move(a));
    return b_.reshape(gathered, {batch_ * positions_, taps_ * features_});
  }

  // The kernel as [taps · in features, out features] ([in features · taps, ...] transposed).
  Instruction* kernel() {
    Ints perm(g_.rhs_spec.begin() + 2, g_.rhs_spec.end());
    perm.insert(transposed_ ? perm.begin() : perm.end(), g_.rhs_spec[1]);
    perm.push_back(g_.rhs_spec[0]);
    return b_.reshape(b_.transpose(conv_.operands[1], perm), {taps_ * in_features_, out_features_});
  }

  Instruction* dot(Instruction* lhs, Instruction* rhs, Shape dims, bool batched,
                   std::int64_t lhs_contracting) {
    hlo::Attrs a;
    a.set("lhs_batch_dims", batched ? Ints{0} : Ints{});
    a.set("rhs_batch_dims", batched ? Ints{0} : Ints{});
    a.set("lhs_contracting_dims", Ints{lhs_contracting});
    a.set("rhs_contracting_dims", Ints{batched ? 1 : 0});
    keep_precision(a);
    return b_.op(Opcode::kDot, hlo::HloShape::array(dtype_, std::move(dims)), {lhs, rhs},
                 std::move(a));
  }

  // [out batch · positions, out features]: one dot, or one per group as a dot batch dim.
  Instruction* products(Instruction* patches, Instruction* kernel) {
    std::int64_t rows = batch_ * positions_;
    if (transposed_) {  // [positions · batch, out features], rows back to (batch, positions)
      Instruction* out = dot(patches, kernel, {rows, out_features_}, false, 0);
      out = b_.reshape(out, {positions_, batch_, out_features_});
      return b_.reshape(b_.transpose(out, {1, 0, 2}), {rows, out_features_});
    }
    if (g_.feature_group_count == 1 && g_.batch_group_count == 1)
      return dot(patches, kernel, {rows, out_features_}, false, 1);
    std::int64_t groups = std::max(g_.feature_group_count, g_.batch_group_count);
    std::int64_t per_group = out_features_ / groups;
    // kernel [taps · in, groups · per_group] → [groups, taps · in, per_group]
    kernel = b_.reshape(kernel, {taps_ * in_features_, groups, per_group});
    kernel = b_.transpose(kernel, {1, 0, 2});
    if (g_.feature_group_count > 1) {
      // patches [rows, taps, groups, in] → [groups, rows, taps · in]
      patches = b_.reshape(patches, {rows, taps_, groups, in_features_});
      patches = b_.transpose(patches, {2, 0, 1, 3});
      patches = b_.reshape(patches, {groups, rows, taps_ * in_features_});
    } else {
      // The lhs batch is group-major: patches [groups · rows', taps · in] → [groups, rows', ...]
      rows /= groups;
      patches = b_.reshape(patches, {groups, rows, taps_ * in_features_});
    }
    Instruction* out = dot(patches, kernel, {groups, rows, per_group}, true, 2);
    return b_.reshape(b_.transpose(out, {1, 0, 2}), {rows, out_features_});
  }

  Instruction* to_out_layout(Instruction* rows) {
    std::size_t n = g_.spatial();
    Shape canonical = {batch_ / g_.batch_group_count};
    canonical.insert(canonical.end(), out_spatial_.begin(), out_spatial_.end());
    canonical.push_back(out_features_);
    Ints perm(n + 2);
    perm[g_.out_spec[0]] = 0;
    perm[g_.out_spec[1]] = static_cast<std::int64_t>(n + 1);
    for (std::size_t d = 0; d < n; ++d) perm[g_.out_spec[d + 2]] = static_cast<std::int64_t>(d + 1);
    return b_.transpose(b_.reshape(rows, canonical), perm);
  }

  hlo::Builder& b_;
  Instruction& conv_;
  ConvGeometry g_;
  DType dtype_;
  std::int64_t batch_ = 0, features_ = 0, in_features_ = 0, out_features_ = 0;
  std::int64_t taps_ = 0, positions_ = 0;
  Ints window_, out_spatial_;
  bool transposed_ = false;
  bool implicit_gemms_, dnn_library_;
};

}  // namespace

bool ConvolutionAsGemm::run(hlo::Module& module) {
  return replace_each(module, Opcode::kConvolution, [&](hlo::Builder& b, Instruction& conv) {
    return Rewriter(b, conv, implicit_gemms_, dnn_library_).rewrite();
  });
}

}  // namespace jx::passes
