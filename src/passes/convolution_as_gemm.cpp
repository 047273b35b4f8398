#include "passes/convolution_as_gemm.hpp"

#include <numeric>

#include "core/array_impl.hpp"
#include "hlo/builder.hpp"
#include "hlo/convolution.hpp"

namespace jx::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using Ints = std::vector<std::int64_t>;

std::int64_t product(const Ints& v) {
  return std::accumulate(v.begin(), v.end(), std::int64_t{1}, std::multiplies<>());
}

class Rewriter {
 public:
  Rewriter(hlo::Builder& b, const Instruction& conv)
      : b_(b), conv_(conv), g_(hlo::convolution_geometry(conv)), dtype_(conv.shape.dtype) {}

  Instruction* rewrite() {
    const Shape &lhs = conv_.operands[0]->shape.dims, &rhs = conv_.operands[1]->shape.dims;
    std::size_t n = g_.spatial();
    batch_ = lhs[g_.lhs_spec[0]], features_ = lhs[g_.lhs_spec[1]];
    in_features_ = rhs[g_.rhs_spec[1]], out_features_ = rhs[g_.rhs_spec[0]];
    for (std::size_t d = 0; d < n; ++d) {
      window_.push_back(rhs[g_.rhs_spec[d + 2]]);
      out_spatial_.push_back(conv_.shape.dims[g_.out_spec[d + 2]]);
    }
    taps_ = product(window_), positions_ = product(out_spatial_);
    if (conv_.shape.size() == 0 || taps_ * in_features_ == 0) return zeros();
    return to_out_layout(products(patches(), kernel()));
  }

 private:
  Instruction* transpose(Instruction* x, const Ints& perm) {
    Ints iota(perm.size());
    std::iota(iota.begin(), iota.end(), 0);
    if (perm == iota) return x;
    Shape dims;
    for (std::int64_t p : perm) dims.push_back(x->shape.dims[p]);
    hlo::Attrs a;
    a.set("dimensions", perm);
    return b_.op(Opcode::kTranspose, hlo::HloShape::array(dtype_, dims), {x}, std::move(a));
  }

  Instruction* zeros() {
    return b_.broadcast(b_.constant(make_scalar(0, dtype_)), conv_.shape.dims, {});
  }

  // lhs as [batch, spatial..., features], padded and dilated.
  Instruction* padded_input() {
    Ints perm = {g_.lhs_spec[0]};
    perm.insert(perm.end(), g_.lhs_spec.begin() + 2, g_.lhs_spec.end());
    perm.push_back(g_.lhs_spec[1]);
    Instruction* x = transpose(conv_.operands[0], perm);
    Ints config = {0, 0, 0};
    Shape dims = {batch_};
    bool any = false;
    for (std::size_t d = 0; d < g_.spatial(); ++d) {
      auto [lo, hi] = g_.padding[d];
      std::int64_t interior = g_.lhs_dilation[d] - 1, size = x->shape.dims[d + 1];
      config.insert(config.end(), {lo, hi, interior});
      dims.push_back(lo + hi + dilate_dim(size, g_.lhs_dilation[d]));
      any = any || lo || hi || interior;
    }
    config.insert(config.end(), {0, 0, 0});
    dims.push_back(features_);
    if (!any) return x;
    hlo::Attrs a;
    a.set("padding", config);
    return b_.op(Opcode::kPad, hlo::HloShape::array(dtype_, dims),
                 {x, b_.constant(make_scalar(0, dtype_))}, std::move(a));
  }

  // [batch · positions, taps · features]: row (b, o...) holds, tap by tap, the features under
  // tap k of window o (row-major over o and k, as the kernel's rows are).
  Instruction* patches() {
    Instruction* x = padded_input();
    const Shape& padded = x->shape.dims;
    Ints spatial(padded.begin() + 1, padded.end() - 1);
    bool direct = true;
    for (std::size_t d = 0; d < g_.spatial(); ++d)
      direct = direct && window_[d] == 1 && g_.strides[d] == 1 && spatial[d] == out_spatial_[d];
    if (direct) return b_.reshape(x, {batch_ * positions_, features_});
    std::int64_t points = product(spatial);
    x = b_.reshape(x, {batch_, points, features_});
    // The flat padded position of tap k of window o: Σ_d (o_d · stride + k_d · dilation) · step_d.
    DType index_type = points <= std::numeric_limits<std::int32_t>::max() ? int32 : int64;
    Array table = make_array(ShapedArray{{positions_ * taps_, 1}, index_type, false});
    Ints step(spatial.size(), 1);
    for (std::size_t d = spatial.size(); d-- > 1;) step[d - 1] = step[d] * spatial[d];
    Ints grid = out_spatial_;
    grid.insert(grid.end(), window_.begin(), window_.end());
    std::int64_t k = 0;
    Ints at(grid.size(), 0);
    for (std::int64_t flat = 0; flat < positions_ * taps_; ++flat) {
      std::int64_t offset = 0;
      for (std::size_t d = 0; d < g_.spatial(); ++d)
        offset += (at[d] * g_.strides[d] + at[d + g_.spatial()] * g_.rhs_dilation[d]) * step[d];
      if (index_type == int32)
        table.impl()->buffer->as<std::int32_t>()[k++] = static_cast<std::int32_t>(offset);
      else
        table.impl()->buffer->as<std::int64_t>()[k++] = offset;
      for (std::size_t d = grid.size(); d-- > 0;) {
        if (++at[d] < grid[d]) break;
        at[d] = 0;
      }
    }
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

  // The kernel as [taps · in features, out features].
  Instruction* kernel() {
    Ints perm(g_.rhs_spec.begin() + 2, g_.rhs_spec.end());
    perm.push_back(g_.rhs_spec[1]);
    perm.push_back(g_.rhs_spec[0]);
    return b_.reshape(transpose(conv_.operands[1], perm), {taps_ * in_features_, out_features_});
  }

  Instruction* dot(Instruction* lhs, Instruction* rhs, Shape dims, bool batched) {
    hlo::Attrs a;
    a.set("lhs_batch_dims", batched ? Ints{0} : Ints{});
    a.set("rhs_batch_dims", batched ? Ints{0} : Ints{});
    a.set("lhs_contracting_dims", Ints{batched ? 2 : 1});
    a.set("rhs_contracting_dims", Ints{batched ? 1 : 0});
    if (conv_.attrs.has("operand_precision"))
      a.set("operand_precision", conv_.attrs.get_string("operand_precision"));
    return b_.op(Opcode::kDot, hlo::HloShape::array(dtype_, std::move(dims)), {lhs, rhs},
                 std::move(a));
  }

  // [out batch · positions, out features]: one dot, or one per group as a dot batch dim.
  Instruction* products(Instruction* patches, Instruction* kernel) {
    std::int64_t rows = batch_ * positions_;
    if (g_.feature_group_count == 1 && g_.batch_group_count == 1)
      return dot(patches, kernel, {rows, out_features_}, false);
    std::int64_t groups = std::max(g_.feature_group_count, g_.batch_group_count);
    std::int64_t per_group = out_features_ / groups;
    // kernel [taps · in, groups · per_group] → [groups, taps · in, per_group]
    kernel = b_.reshape(kernel, {taps_ * in_features_, groups, per_group});
    kernel = transpose(kernel, {1, 0, 2});
    if (g_.feature_group_count > 1) {
      // patches [rows, taps, groups, in] → [groups, rows, taps · in]
      patches = b_.reshape(patches, {rows, taps_, groups, in_features_});
      patches = transpose(patches, {2, 0, 1, 3});
      patches = b_.reshape(patches, {groups, rows, taps_ * in_features_});
    } else {
      // The lhs batch is group-major: patches [groups · rows', taps · in] → [groups, rows', ...]
      rows /= groups;
      patches = b_.reshape(patches, {groups, rows, taps_ * in_features_});
    }
    Instruction* out = dot(patches, kernel, {groups, rows, per_group}, true);
    return b_.reshape(transpose(out, {1, 0, 2}), {rows, out_features_});
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
    return transpose(b_.reshape(rows, canonical), perm);
  }

  hlo::Builder& b_;
  const Instruction& conv_;
  ConvGeometry g_;
  DType dtype_;
  std::int64_t batch_ = 0, features_ = 0, in_features_ = 0, out_features_ = 0;
  std::int64_t taps_ = 0, positions_ = 0;
  Ints window_, out_spatial_;
};

}  // namespace

bool ConvolutionAsGemm::run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* c : module.computations()) {
    hlo::Builder b(c);
    bool here = false;
    for (Instruction* conv : c->instructions()) {
      if (conv->opcode != Opcode::kConvolution) continue;
      c->replace_all_uses(conv, Rewriter(b, *conv).rewrite());
      here = true;
    }
    if (here) c->remove_unreachable();
    changed = changed || here;
  }
  return changed;
}

}  // namespace jx::passes
