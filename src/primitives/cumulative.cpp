// Cumulative reductions: cumsum cumprod cummax cummin cumlogsumexp, along one axis, from its
// start or (reverse) from its end, as JAX's lax.cumsum and friends. Each is its combine function
// twice: written with lax ops (its lowering traces it into the to_apply computation of an HLO
// reduce-window over the whole axis, XLA's lowering, which codegen scans in one pass; its jvp is
// the jvp of lax::associative_scan of it, as JAX's) and as the scalar functor the eager impl
// folds along the axis. cumsum is linear: its transpose is the reversed cumsum.
#include <cmath>
#include <tuple>

#include "hlo/scalar_ops.hpp"
#include "jx/lax.hpp"
#include "jx/numpy.hpp"
#include "jx/transforms.hpp"
#include "lower/lower.hpp"
#include "primitives/elementwise.hpp"
#include "primitives/layout.hpp"
#include "trace/staging.hpp"
#include "trace/tracer.hpp"
#include "transforms/ad_rules.hpp"

namespace jx {

Primitive cumsum_p("cumsum"), cumprod_p("cumprod"), cummax_p("cummax"), cummin_p("cummin"),
    cumlogsumexp_p("cumlogsumexp");

namespace {

using namespace layout;
using hlo::Opcode;
using trace::bind1;
using Combine = Array (*)(const Array&, const Array&);

// logaddexp on one compute-type element, np::logaddexp's formula: max(a, b) + log1p(exp(-|a - b|)),
// or a + b where a - b is NaN (a NaN, or infinities of one sign).
struct LogAddExp {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      C delta = a - b;
      if (std::isnan(delta)) return a + b;
      return hlo::Scalar<Opcode::kMaximum>{}(a, b) + std::log1p(std::exp(-std::abs(delta)));
    } else {
      return a;  // cumlogsumexp takes floats only
    }
  }
};

Array logaddexp(const Array& a, const Array& b) { return np::logaddexp(a, b); }

std::int64_t axis_of(const Params& params) { return params.get("axis").as_int(); }
bool reverse_of(const Params& params) { return params.get("reverse").as_bool(); }

// JAX's shape rule (a ValueError), then its dtype rule.
Outs cumulative_abstract_eval(const Primitive& p, DTypeSet accepted, Avals in,
                              const Params& params) {
  check_arity(p, in, 1);
  std::int64_t axis = axis_of(params);
  if (axis < 0 || axis >= in[0].ndim())
    fail<ValueError>("axis ", axis, " is out of bounds for array of shape ",
                     shape_str(in[0].shape));
  check_dtype(p.name, in[0].dtype, accepted);
  return result(in[0].shape, in[0].dtype, in[0].weak_type);
}

// x seen as [outer, n, inner]: each (outer, inner) row folds f from the identity, in order along
// the axis (from its end when reversed), in the compute type; each output rounds once.
template <class F>
std::vector<Array> cumulative_impl(Identity identity, F f, Ins in, const Params& params,
                                   Avals out) {
  const Array& x = in[0];
  const Shape& s = x.shape();
  auto axis = static_cast<std::size_t>(axis_of(params));
  bool reverse = reverse_of(params);
  std::int64_t outer = 1, n = s[axis], inner = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= s[d];
  for (std::size_t d = axis + 1; d < s.size(); ++d) inner *= s[d];
  Array r = make_array(out[0]);
  const Buffer& xb = concrete_buffer(x, "impl");
  dispatch(x.dtype(), [&]<class T>() {
    using C = compute_t<T>;
    const T* src = xb.as<T>();
    T* dst = r.impl()->buffer->as<T>();
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i = 0; i < inner; ++i) {
        C acc = identity_value<C>(identity);
        for (std::int64_t k = 0; k < n; ++k) {
          std::int64_t at = (o * n + (reverse ? n - 1 - k : k)) * inner + i;
          acc = f(acc, static_cast<C>(src[at]));
          dst[at] = convert_element<T>(acc);
        }
      }
  });
  return {r};
}

// A reduce-window of the whole axis, padded by n-1 before it (after it, reversed), from the
// identity, folding with `combine` traced on two scalars (JAX's cumred_reduce_window_impl).
std::vector<hlo::Instruction*> cumulative_lower(const Primitive& p, Identity identity,
                                                Combine combine, hlo::Builder& b, Operands ops,
                                                const Params& params) {
  hlo::Instruction* x = ops[0];
  const Shape& dims = x->shape.dims;
  auto axis = static_cast<int>(axis_of(params));
  if (dims[static_cast<std::size_t>(axis)] == 0) return {x};
  DType d = x->shape.dtype;
  ShapedArray scalar{{}, d, false};
  ClosedJaxprData f = trace::trace_to_jaxpr(
      [combine](const std::vector<Array>& a) { return std::vector<Array>{combine(a[0], a[1])}; },
      {scalar, scalar}, p.name);
  hlo::Computation* region =
      lower_jaxpr_computation(*b.computation()->module(), f, "region", /*tuple_root=*/false);
  hlo::Instruction* init = b.constant(identity_of(identity, d));
  return {
      b.reduce_window(x, init, hlo::prefix_scan_window(dims, axis, reverse_of(params)), region)};
}

// The axis shifts past the batch axis (JAX's _cumred_batch_rule).
BatchResult cumulative_batch(const Primitive& p, Ins args, BDims dims, const Params& params) {
  int b = *dims[0];
  Params shifted = params;
  shifted.set("axis", Param::integer(shift(axis_of(params), b)));
  return one(bind1(p, {args[0]}, shifted), b);
}

// JAX's _cumulative_jvp_rule: the tangent of lax::associative_scan(combine) along the axis (an
// O(log n)-deep tree of slices, pads and combines, which differentiates again); the primal is
// the primitive's.
JvpResult cumulative_jvp(const Primitive& p, Combine combine, std::span<const Array> primals,
                         std::span<const Array> tangents, const Params& params) {
  std::int64_t axis = axis_of(params);
  bool reverse = reverse_of(params);
  auto scan = [combine, axis, reverse](const Array& x) {
    return lax::associative_scan(combine, x, axis, reverse);
  };
  Array tangent = jx::jvp(scan, std::tuple{primals[0]}, std::tuple{tangents[0]}).second;
  return {{bind1(p, {primals[0]}, params)}, {tangent}};
}

template <class F>
void def_cumulative(Primitive& p, DTypeSet accepted, Identity identity, Combine combine, F f) {
  p.abstract_eval = [&p, accepted](Avals in, const Params& params) {
    return cumulative_abstract_eval(p, accepted, in, params);
  };
  p.impl = [identity, f](Ins in, const Params& params, Avals out) {
    return cumulative_impl(identity, f, in, params, out);
  };
  p.lower = [&p, identity, combine](hlo::Builder& b, Operands ops, const Params& params, Avals) {
    return cumulative_lower(p, identity, combine, b, ops, params);
  };
  p.batch = [&p](Ins args, BDims dims, const Params& params) {
    return cumulative_batch(p, args, dims, params);
  };
}

void def_scan_jvp(Primitive& p, Combine combine) {
  p.jvp = [&p, combine](std::span<const Array> primals, std::span<const Array> tangents,
                        const Params& params) {
    return cumulative_jvp(p, combine, primals, tangents, params);
  };
}

const bool kRegistered = [] {
  def_cumulative(cumsum_p, kNumeric, Identity::kZero, lax::add, hlo::Scalar<Opcode::kAdd>{});
  ad::def_linear(cumsum_p);
  cumsum_p.transpose =
      unary_transpose([](const Array& ct, const ShapedArray&, const Params& params) {
        return lax::cumsum(ct, axis_of(params), !reverse_of(params));
      });

  def_cumulative(cumprod_p, kNumeric, Identity::kOne, lax::mul, hlo::Scalar<Opcode::kMultiply>{});
  def_scan_jvp(cumprod_p, lax::mul);

  def_cumulative(cummax_p, kNumeric, Identity::kLowest, lax::max, hlo::Scalar<Opcode::kMaximum>{});
  def_scan_jvp(cummax_p, lax::max);

  def_cumulative(cummin_p, kNumeric, Identity::kHighest, lax::min, hlo::Scalar<Opcode::kMinimum>{});
  def_scan_jvp(cummin_p, lax::min);

  // JAX's dtype rule takes any number, but logaddexp computes on floats only.
  def_cumulative(cumlogsumexp_p, kFloating, Identity::kLowest, logaddexp, LogAddExp{});
  def_scan_jvp(cumlogsumexp_p, logaddexp);
  return true;
}();

Params cumulative_params(std::int64_t axis, bool reverse) {
  return {{"axis", Param::integer(axis)}, {"reverse", Param::boolean(reverse)}};
}

}  // namespace

namespace lax {

Array cumsum(const Array& x, std::int64_t axis, bool reverse) {
  return bind1(cumsum_p, {x}, cumulative_params(axis, reverse));
}
Array cumprod(const Array& x, std::int64_t axis, bool reverse) {
  return bind1(cumprod_p, {x}, cumulative_params(axis, reverse));
}
Array cummax(const Array& x, std::int64_t axis, bool reverse) {
  return bind1(cummax_p, {x}, cumulative_params(axis, reverse));
}
Array cummin(const Array& x, std::int64_t axis, bool reverse) {
  return bind1(cummin_p, {x}, cumulative_params(axis, reverse));
}
Array cumlogsumexp(const Array& x, std::int64_t axis, bool reverse) {
  return bind1(cumlogsumexp_p, {x}, cumulative_params(axis, reverse));
}

}  // namespace lax
}  // namespace jx
