#include "transforms/ad_rules.hpp"

#include <numeric>

#include "core/array_impl.hpp"
#include "jx/lax.hpp"
#include "support/check.hpp"
#include "trace/tracer.hpp"

namespace jx {
extern Primitive add_any_p;
}  // namespace jx

namespace jx::ad {

// A 0-d zero is a literal; others are a broadcast of one, an equation under a trace (JAX's
// zeros_like_aval).
Array zeros(const ShapedArray& aval) {
  Array zero = with_aval(make_scalar(0, aval.dtype), {{}, aval.dtype, aval.weak_type});
  return aval.shape.empty() ? zero : lax::broadcast_in_dim(zero, aval.shape, {});
}

Array instantiate(const Array& t, const ShapedArray& aval) { return is_zero(t) ? zeros(aval) : t; }

Array broadcast_to(const Array& t, const ShapedArray& aval) {
  if (is_zero(t) || t.shape() == aval.shape) return t;
  JX_CHECK(t.ndim() == 0 || t.ndim() == aval.ndim(),
           "cannot broadcast a tangent of shape " << shape_str(t.shape()));
  std::vector<std::int64_t> dims(static_cast<std::size_t>(t.ndim()));
  std::iota(dims.begin(), dims.end(), 0);
  return lax::broadcast_in_dim(t, aval.shape, dims);
}

// JAX sums tangents and cotangents with add_any.
Array add(const Array& a, const Array& b) {
  if (is_zero(a)) return b;
  if (is_zero(b)) return a;
  return trace::bind1(add_any_p, {a, b});
}

// Sums a cotangent over the dims its operand was broadcast along: all of them for a 0-d operand,
// the size-1 ones (kept as size 1) for one of the output's rank.
Array unbroadcast(const Array& ct, const ShapedArray& aval) {
  if (is_zero(ct) || ct.shape() == aval.shape) return ct;
  JX_CHECK(aval.ndim() == 0 || aval.ndim() == ct.ndim(),
           "cotangent " << shape_str(ct.shape()) << " for " << aval.str());
  std::vector<std::int64_t> axes;
  for (std::int64_t d = 0; d < ct.ndim(); ++d)
    if (aval.ndim() == 0 ||
        aval.shape[static_cast<std::size_t>(d)] != ct.shape()[static_cast<std::size_t>(d)])
      axes.push_back(d);
  Array summed = lax::reduce_sum(ct, axes);
  return summed.shape() == aval.shape ? summed : lax::reshape(summed, aval.shape);
}

bool has_tangent(DType d) { return is_floating(d); }

namespace {

std::vector<Array> bind_primal(const Primitive& p, std::span<const Array> primals,
                               const Params& params) {
  return trace::bind(p, {primals.begin(), primals.end()}, params);
}

}  // namespace

void def_linear(Primitive& p, std::function<bool(std::size_t)> linear) {
  p.jvp = [&p, linear](std::span<const Array> primals, std::span<const Array> tangents,
                       const Params& params) {
    JvpResult r{bind_primal(p, primals, params), {}};
    auto is_linear = [&](std::size_t k) { return !linear || linear(k); };
    bool any = false;
    for (std::size_t k = 0; k < tangents.size(); ++k)
      any = any || (is_linear(k) && !is_zero(tangents[k]));
    if (!any) {
      r.tangents.resize(r.primals.size());
      return r;
    }
    std::vector<Array> operands;
    for (std::size_t k = 0; k < primals.size(); ++k)
      operands.push_back(is_linear(k) ? instantiate(tangents[k], primals[k].aval()) : primals[k]);
    r.tangents = trace::bind(p, std::move(operands), params);
    return r;
  };
}

void def_bilinear(Primitive& p) {
  p.jvp = [&p](std::span<const Array> primals, std::span<const Array> tangents,
               const Params& params) {
    const Array &x = primals[0], &y = primals[1];
    JvpResult r{bind_primal(p, primals, params), {Array()}};
    if (!is_zero(tangents[0])) r.tangents[0] = trace::bind1(p, {tangents[0], y}, params);
    if (!is_zero(tangents[1]))
      r.tangents[0] = add(r.tangents[0], trace::bind1(p, {x, tangents[1]}, params));
    return r;
  };
}

void def_zero_jvp(Primitive& p) {
  p.jvp = [&p](std::span<const Array> primals, std::span<const Array>, const Params& params) {
    JvpResult r{bind_primal(p, primals, params), {}};
    r.tangents.resize(r.primals.size());
    return r;
  };
}

void def_elementwise_jvp(Primitive& p, std::vector<TangentTerm> terms) {
  p.jvp = [&p, terms = std::move(terms)](std::span<const Array> primals,
                                         std::span<const Array> tangents, const Params& params) {
    JX_CHECK(primals.size() == terms.size(), p.name);
    JvpResult r{bind_primal(p, primals, params), {Array()}};
    const Array& ans = r.primals[0];
    for (std::size_t k = 0; k < primals.size(); ++k) {
      if (is_zero(tangents[k])) continue;
      Array term = terms[k](tangents[k], primals, ans);
      r.tangents[0] = add(r.tangents[0], broadcast_to(term, ans.aval()));
    }
    return r;
  };
}

}  // namespace jx::ad
