// Reductions: reduce_sum reduce_max reduce_min reduce_prod over a set of axes, and argmax argmin
// along one axis. def_reduce and def_arg fill each one's evaluation, lowering and batch rules; its
// derivative follows it.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "hlo/scalar_ops.hpp"
#include "jx/lax.hpp"
#include "primitives/elementwise.hpp"
#include "primitives/indexing.hpp"
#include "primitives/layout.hpp"
#include "support/format.hpp"
#include "trace/tracer.hpp"
#include "transforms/ad_rules.hpp"

namespace jx {

Primitive reduce_sum_p("reduce_sum"), reduce_max_p("reduce_max"), reduce_min_p("reduce_min"),
    reduce_prod_p("reduce_prod"), argmax_p("argmax"), argmin_p("argmin");

namespace {

using hlo::Opcode;
using layout::Identity;
using layout::identity_of;
using layout::identity_value;
using layout::is_nan;
using trace::bind1;
using Ints = std::vector<std::int64_t>;

void check_arity(const Primitive& p, std::span<const ShapedArray> in) {
  if (in.size() != 1)
    throw TypeError(p.name + " takes 1 operand, got " + std::to_string(in.size()));
}

// Which dims of x the axes reduce; the axes must be unique and in range (JAX's checks, in order).
std::vector<bool> reduced_dims(const ShapedArray& x, const std::vector<std::int64_t>& axes) {
  std::vector<std::int64_t> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw ShapeError("duplicate value in 'axes' of reduction: " + detail::tuple_str(axes));
  std::vector<bool> mask(x.shape.size(), false);
  for (std::int64_t a : axes) {
    if (a < 0 || a >= x.ndim())
      throw ShapeError("reduction axes " + detail::tuple_str(axes) +
                       " contains out-of-bounds indices for " + x.str() + ".");
    mask[static_cast<std::size_t>(a)] = true;
  }
  return mask;
}

// The reduced axes (and argmax's axis) shift past the batch axis.
void def_reduce_batch(Primitive& p) {
  p.batch = [&p](std::span<const Array> args, std::span<const BatchDim> dims,
                 const Params& params) {
    int bdim = *dims[0];
    Params shifted = params;
    Ints axes;
    int below = 0;  // reduced axes before the batch axis: the output's batch axis moves down
    for (auto a : params.get("axes").as_ints()) {
      axes.push_back(batching::shift(a, bdim));
      below += a < bdim;
    }
    shifted.set("axes", Param::ints(axes));
    return BatchResult{trace::bind(p, {args[0]}, shifted), {bdim - below}};
  };
}

// Fills a reduction's rules, all but its derivative. out[j] folds `combine` over every input
// element that maps to j, starting from the identity, so a reduction over 0-sized axes gives the
// identity. The lowering is an HLO reduce with that init and one binary opcode as its combiner
// (`bool_combiner` on bool, where max and min are or and and).
template <class Combine>
void def_reduce(Primitive& p, DTypeSet accepted, Identity identity, Opcode combiner,
                Opcode bool_combiner, Combine combine) {
  p.abstract_eval = [&p, accepted](std::span<const ShapedArray> in, const Params& params) {
    check_arity(p, in);
    check_dtype(p.name, in[0].dtype, accepted);
    std::vector<bool> mask = reduced_dims(in[0], params.get("axes").as_ints());
    Shape out;
    for (std::size_t d = 0; d < mask.size(); ++d)
      if (!mask[d]) out.push_back(in[0].shape[d]);
    return std::vector<ShapedArray>{{out, in[0].dtype, in[0].weak_type}};
  };
  p.impl = [identity, combine](std::span<const Array> in, const Params& params,
                               std::span<const ShapedArray> out) {
    const Array& x = in[0];
    std::vector<bool> mask = reduced_dims(x.aval(), params.get("axes").as_ints());
    // Each input dim's stride in the output: 0 for reduced dims, which fold into one element.
    std::vector<std::int64_t> to_out(mask.size(), 0), out_strides = strides(out[0].shape);
    for (std::size_t d = 0, k = 0; d < mask.size(); ++d)
      if (!mask[d]) to_out[d] = out_strides[k++];
    Array r = make_array(out[0]);
    const Buffer& xb = concrete_buffer(x, "impl");
    dispatch(x.dtype(), [&]<class T>() {
      const T* src = xb.as<T>();
      T* dst = r.impl()->buffer->as<T>();
      std::fill(dst, dst + out[0].size(), identity_value<T>(identity));
      std::int64_t i = 0;  // for_each_index walks x in row-major order
      for_each_index(x.shape(), [&](const std::vector<std::int64_t>& index) {
        T& acc = dst[offset_of(index, to_out)];
        acc = combine(acc, src[i++]);
      });
    });
    return std::vector<Array>{r};
  };
  p.lower = [=](hlo::Builder& b, std::span<hlo::Instruction* const> ops, const Params& params,
                std::span<const ShapedArray>) {
    DType d = ops[0]->shape.dtype;
    hlo::Instruction* init = b.constant(identity_of(identity, d));
    return std::vector<hlo::Instruction*>{b.reduce(ops[0], init, params.get("axes").as_ints(),
                                                   d == bool_ ? bool_combiner : combiner)};
  };
  def_reduce_batch(p);
}

// Fills argmax's (kMax) or argmin's rules, all but the derivative: the first NaN's index if any,
// else the first extremal index. Each lowers to its one HLO instruction.
template <bool kMax>
void def_arg(Primitive& p) {
  p.abstract_eval = [&p](std::span<const ShapedArray> in, const Params& params) {
    check_arity(p, in);
    std::vector<std::int64_t> axes = params.get("axes").as_ints();
    DType index_dtype = params.get("index_dtype").as_dtype();
    const Shape& s = in[0].shape;
    if (axes.size() != 1)
      throw ShapeError(p.name + " reduces exactly one axis, got axes " + detail::tuple_str(axes));
    std::int64_t axis = axes[0];
    if (axis < 0 || axis >= in[0].ndim())
      throw ShapeError("Invalid axis " + std::to_string(axis) + " for operand shape " +
                       shape_str(s));
    if (s[static_cast<std::size_t>(axis)] < 1)
      throw ShapeError("argmin and argmax require non-empty reduced dimension. operand.shape=" +
                       shape_str(s) + " axis=" + std::to_string(axis));
    if (index_dtype != int32 && index_dtype != int64)
      throw TypeError(p.name + " index_dtype must be int32 or int64, got " +
                      std::string(dtype_name(index_dtype)));
    Shape out = s;
    out.erase(out.begin() + axis);
    return std::vector<ShapedArray>{{out, index_dtype, false}};
  };
  p.impl = [](std::span<const Array> in, const Params& params, std::span<const ShapedArray> out) {
    const Array& x = in[0];
    const Shape& s = x.shape();
    auto axis = static_cast<std::size_t>(params.get("axes").as_ints()[0]);
    // x seen as [outer, n, inner]: out[o, i] is the best k of x[o, k, i].
    std::int64_t outer = 1, n = s[axis], inner = 1;
    for (std::size_t d = 0; d < axis; ++d) outer *= s[d];
    for (std::size_t d = axis + 1; d < s.size(); ++d) inner *= s[d];
    Array r = make_array(out[0]);
    Buffer& rb = *r.impl()->buffer;
    auto store = [&](std::int64_t j, std::int64_t k) {
      if (out[0].dtype == int32)
        rb.as<std::int32_t>()[j] = static_cast<std::int32_t>(k);
      else
        rb.as<std::int64_t>()[j] = k;
    };
    const Buffer& xb = concrete_buffer(x, "impl");
    dispatch(x.dtype(), [&]<class T>() {
      const T* src = xb.as<T>();
      for (std::int64_t o = 0; o < outer; ++o) {
        for (std::int64_t i = 0; i < inner; ++i) {
          const T* row = src + o * n * inner + i;
          T best = row[0];
          std::int64_t best_k = 0;
          for (std::int64_t k = 1; k < n && !is_nan(best); ++k) {
            T v = row[k * inner];
            if (is_nan(v) || (kMax ? best < v : v < best)) {
              best = v;
              best_k = k;
            }
          }
          store(o * inner + i, best_k);
        }
      }
    });
    return std::vector<Array>{r};
  };
  p.lower = [](hlo::Builder& b, std::span<hlo::Instruction* const> ops, const Params& params,
               std::span<const ShapedArray> out) {
    hlo::Attrs attrs;
    attrs.set("dimensions", params.get("axes").as_ints());
    return std::vector<hlo::Instruction*>{b.op(kMax ? Opcode::kArgMax : Opcode::kArgMin,
                                               hlo::HloShape::array(out[0].dtype, out[0].shape),
                                               {ops[0]}, std::move(attrs))};
  };
  def_reduce_batch(p);
}

// The dims a reduction keeps: broadcasting its result back over them undoes the reduction's shape.
Ints kept_dims(std::int64_t ndim, const Ints& axes) {
  Ints kept;
  for (std::int64_t d = 0; d < ndim; ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) kept.push_back(d);
  return kept;
}

Array broadcast_back(const Array& reduced, const ShapedArray& operand, const Ints& axes) {
  return lax::broadcast_in_dim(reduced, operand.shape, kept_dims(operand.ndim(), axes));
}

// prod: the product tree of JAX's rule, which stays exact where elements are zero. The reduced
// axes move to the front and flatten into one; each step multiplies the two halves, padding the
// second with the product's identity when the length is odd.
JvpResult prod_jvp(std::span<const Array> primals, std::span<const Array> tangents,
                   const Params& params) {
  const Array& x = primals[0];
  Ints axes = params.get("axes").as_ints(), kept = kept_dims(x.ndim(), axes), perm = axes;
  perm.insert(perm.end(), kept.begin(), kept.end());
  Shape shape{1};
  for (auto a : axes) shape[0] *= x.shape()[static_cast<std::size_t>(a)];
  for (auto d : kept) shape.push_back(x.shape()[static_cast<std::size_t>(d)]);
  auto flat = [&](const Array& v) { return lax::reshape(lax::transpose(v, perm), shape); };
  Array p = flat(x), t = flat(tangents[0]);
  auto rows = [](const Array& v, std::int64_t from, std::int64_t to) {
    Ints start(static_cast<std::size_t>(v.ndim()), 0), limit = v.shape();
    start[0] = from;
    limit[0] = to;
    return lax::slice(v, start, limit);
  };
  auto pad_row = [](const Array& v, double fill) {
    lax::PaddingConfig config(static_cast<std::size_t>(v.ndim()), {0, 0, 0});
    config[0] = {0, 1, 0};
    return lax::pad(v, make_scalar(fill, v.dtype()), config);
  };
  Array ans = trace::bind1(reduce_prod_p, {x}, params);
  if (shape[0] == 0) return {{ans}, {ad::zeros(ans.aval())}};
  while (p.shape()[0] > 1) {
    std::int64_t n = p.shape()[0], n1 = (n + 1) / 2;
    Array p1 = rows(p, 0, n1), p2 = rows(p, n1, n), t1 = rows(t, 0, n1), t2 = rows(t, n1, n);
    if (n - n1 < n1) {
      p2 = pad_row(p2, 1);
      t2 = pad_row(t2, 0);
    }
    t = lax::add(lax::mul(t1, p2), lax::mul(p1, t2));
    p = lax::mul(p1, p2);
  }
  return {{ans}, {lax::reshape(t, ans.shape())}};
}

// max/min: the tangent of the chosen element; where several tie, their mean (JAX's rule).
JvpResult chooser_jvp(const Primitive& p, std::span<const Array> primals,
                      std::span<const Array> tangents, const Params& params) {
  const Array& x = primals[0];
  Ints axes = params.get("axes").as_ints();
  Array ans = trace::bind1(p, {x}, params);
  Array chosen =
      lax::convert_element_type(lax::eq(x, broadcast_back(ans, x.aval(), axes)), x.dtype());
  Array counts = lax::reduce_sum(chosen, axes);
  return {{ans}, {lax::div(lax::reduce_sum(lax::mul(tangents[0], chosen), axes), counts)}};
}

const bool kRegistered = [] {
  def_reduce(reduce_sum_p, kNumeric, Identity::kZero, Opcode::kAdd, Opcode::kOr,
             hlo::Scalar<Opcode::kAdd>{});
  ad::def_linear(reduce_sum_p);
  reduce_sum_p.transpose = [](std::span<const Array> cts, std::span<const LinearOperand> ops,
                              const Params& params) {
    return std::vector<Array>{broadcast_back(cts[0], ops[0].aval, params.get("axes").as_ints())};
  };

  def_reduce(reduce_prod_p, kNumeric, Identity::kOne, Opcode::kMultiply, Opcode::kAnd,
             hlo::Scalar<Opcode::kMultiply>{});
  reduce_prod_p.jvp = prod_jvp;

  def_reduce(reduce_max_p, kAnyDType, Identity::kLowest, Opcode::kMaximum, Opcode::kOr,
             layout::FoldMax{});
  reduce_max_p.jvp = [](auto primals, auto tangents, const Params& params) {
    return chooser_jvp(reduce_max_p, primals, tangents, params);
  };

  def_reduce(reduce_min_p, kAnyDType, Identity::kHighest, Opcode::kMinimum, Opcode::kAnd,
             layout::FoldMin{});
  reduce_min_p.jvp = [](auto primals, auto tangents, const Params& params) {
    return chooser_jvp(reduce_min_p, primals, tangents, params);
  };

  def_arg<true>(argmax_p);
  ad::def_zero_jvp(argmax_p);

  def_arg<false>(argmin_p);
  ad::def_zero_jvp(argmin_p);
  return true;
}();

// Axes are stored sorted, so equal reductions have equal params.
Params axes_params(std::vector<std::int64_t> axes) {
  std::sort(axes.begin(), axes.end());
  return {{"axes", Param::ints(axes)}};
}

Params arg_params(std::int64_t axis, DType index_dtype) {
  return {{"axes", Param::ints({axis})}, {"index_dtype", Param::dtype(index_dtype)}};
}

}  // namespace

namespace lax {

Array reduce_sum(const Array& x, const std::vector<std::int64_t>& axes) {
  Params params = axes_params(axes);
  params.set("out_sharding", Param());  // JAX 0.11's reduce_sum has one, and prints it
  return bind1(reduce_sum_p, {x}, params);
}
Array reduce_max(const Array& x, const std::vector<std::int64_t>& axes) {
  return bind1(reduce_max_p, {x}, axes_params(axes));
}
Array reduce_min(const Array& x, const std::vector<std::int64_t>& axes) {
  return bind1(reduce_min_p, {x}, axes_params(axes));
}
Array reduce_prod(const Array& x, const std::vector<std::int64_t>& axes) {
  return bind1(reduce_prod_p, {x}, axes_params(axes));
}
Array argmax(const Array& x, std::int64_t axis, DType index_dtype) {
  return bind1(argmax_p, {x}, arg_params(axis, index_dtype));
}
Array argmin(const Array& x, std::int64_t axis, DType index_dtype) {
  return bind1(argmin_p, {x}, arg_params(axis, index_dtype));
}

}  // namespace lax
}  // namespace jx
