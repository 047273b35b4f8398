#include "primitives/control_flow/loops.hpp"

#include <algorithm>

#include "jx/lax.hpp"
#include "lower/lower.hpp"
#include "transforms/ad_rules.hpp"
#include "primitives/sub_jaxprs.hpp"
#include "transforms/jvp.hpp"
#include "transforms/partial_eval.hpp"

namespace jx {

void check_cond_signature(const Jaxpr& cond, const std::vector<ShapedArray>& in) {
  if (!sub::same_types(cond.in_avals(), in))
    throw TypeError("while cond_jaxpr takes " + sub::avals_str(cond.in_avals()) +
                    " but its operands are " + sub::avals_str(in) + ".");
  std::vector<ShapedArray> pred = cond.out_avals();
  if (pred.size() != 1 || pred[0].dtype != bool_ || !pred[0].shape.empty())
    throw TypeError("cond_fun must return a boolean scalar, but got output type(s) " +
                    sub::avals_str(pred) + ".");
}

void check_body_signature(const Jaxpr& body, const std::vector<ShapedArray>& in,
                          const std::vector<ShapedArray>& carry, const char* who) {
  if (!sub::same_types(body.in_avals(), in))
    throw TypeError(std::string(who) + " takes " + sub::avals_str(body.in_avals()) +
                    " but its operands are " + sub::avals_str(in) + ".");
  std::vector<ShapedArray> out = body.out_avals();
  if (out.size() < carry.size() || !sub::same_types(sub::slice(out, 0, carry.size()), carry))
    throw TypeError(std::string(who) +
                    " output and input must have identical types, got the input carry " +
                    sub::avals_str(carry) + " and the output carry " +
                    sub::avals_str(sub::slice(out, 0, std::min(out.size(), carry.size()))) + ".");
}

bool promote_weak_carry(std::vector<Array>& init, const std::vector<ShapedArray>& next) {
  bool changed = false;
  for (std::size_t k = 0; k < init.size() && k < next.size(); ++k) {
    if (!init[k].weak_type()) continue;
    if (init[k].dtype() != next[k].dtype) {
      // JAX's _promote_weak_typed_inputs: a weak init whose next value has another dtype (a
      // weak float32 `0.0` accumulating float64 or bfloat16 values) becomes the promoted dtype.
      DType to =
          promote_types(TypeInfo{init[k].dtype(), true}, TypeInfo{next[k].dtype, next[k].weak_type})
              .dtype;
      init[k] = lax::convert_element_type(init[k], to);
      changed = true;
    } else if (!next[k].weak_type) {
      init[k] = lax::convert_element_type(init[k], init[k].dtype());
      changed = true;
    }
  }
  return changed;
}

Reach data_flow(const Jaxpr& body) {
  return [&body](const std::vector<bool>& in) { return sub::dependent_outputs(body, in); };
}

Reach unknowns(const ClosedJaxprData& body) {
  return [&body](const std::vector<bool>& in) {
    return partial_eval_jaxpr(body, in, std::vector<bool>(body.jaxpr.outvars.size(), false))
        .out_unknowns;
  };
}

std::vector<bool> carry_fixed_point(const Reach& reach, const std::vector<bool>& consts,
                                    std::vector<bool> carry,
                                    const std::vector<ShapedArray>& carry_avals,
                                    const std::vector<bool>& xs) {
  for (bool changed = true; changed;) {
    std::vector<bool> reached = reach(sub::concat(sub::concat(consts, carry), xs));
    changed = false;
    for (std::size_t k = 0; k < carry.size(); ++k) {
      bool counts = carry_avals.empty() || ad::has_tangent(carry_avals[k].dtype);
      if (reached[k] && counts && !carry[k]) carry[k] = changed = true;
    }
  }
  return carry;
}

JvpLoopBody jvp_loop_body(const ClosedJaxprData& body, const std::vector<bool>& consts_nz,
                          const std::vector<bool>& carry_nz, std::size_t num_xs,
                          const std::vector<bool>& xs_nz) {
  std::size_t c = consts_nz.size(), n = carry_nz.size(), x = num_xs;
  std::vector<bool> xnz = xs_nz;
  xnz.resize(x, false);
  std::vector<bool> nz = sub::concat(sub::concat(consts_nz, carry_nz), xnz);
  auto count = [](const std::vector<bool>& v) {
    return static_cast<std::size_t>(std::count(v.begin(), v.end(), true));
  };
  std::size_t tc = count(consts_nz), tn = count(carry_nz), tx = count(xnz);
  std::size_t t0 = c + n + x;  // where jvp_jaxpr puts the tangents
  std::vector<std::size_t> in = sub::range(0, c);
  for (auto part : {sub::range(t0, tc), sub::range(c, n), sub::range(t0 + tc, tn),
                    sub::range(c + n, x), sub::range(t0 + tc + tn, tx)})
    in.insert(in.end(), part.begin(), part.end());

  std::vector<ShapedArray> outs = body.jaxpr.out_avals();
  std::size_t m = outs.size() - n;
  std::vector<bool> reached = sub::dependent_outputs(body.jaxpr, nz);
  JvpLoopBody r;
  std::vector<std::size_t> out = sub::range(0, n);
  for (std::size_t i = 0; i < n; ++i)
    if (carry_nz[i]) out.push_back(n + m + i);
  for (std::size_t j = 0; j < m; ++j) out.push_back(n + j);
  for (std::size_t j = 0; j < m; ++j) {
    r.ys_nz.push_back(reached[n + j] && ad::has_tangent(outs[n + j].dtype));
    if (r.ys_nz.back()) out.push_back(2 * n + m + j);
  }
  r.body = sub::select_outputs(sub::permute_inputs(jvp_jaxpr(body, nz), in), out);
  return r;
}

std::vector<hlo::Instruction*> lower_loop(hlo::Builder& b, std::span<hlo::Instruction* const> ops,
                                          const ClosedJaxprData& cond, std::size_t nc,
                                          const ClosedJaxprData& body, std::size_t nb,
                                          std::optional<std::int64_t> trip_count) {
  std::vector<ShapedArray> avals;
  for (hlo::Instruction* op : ops) avals.push_back(ShapedArray{op->shape.dims, op->shape.dtype});
  ClosedJaxprData c = sub::with_unused_inputs(cond, nc, sub::slice(avals, nc, nb));
  ClosedJaxprData bd = sub::with_unused_inputs(body, 0, sub::slice(avals, 0, nc));
  // The body passes the consts through unchanged.
  std::vector<Atom> passed(bd.jaxpr.invars.begin(),
                           bd.jaxpr.invars.begin() + static_cast<std::ptrdiff_t>(nc + nb));
  bd.jaxpr.outvars.insert(bd.jaxpr.outvars.begin(), passed.begin(), passed.end());
  hlo::Module& module = *b.computation()->module();
  hlo::Instruction* loop =
      b.while_loop(std::vector<hlo::Instruction*>(ops.begin(), ops.end()),
                   lower_jaxpr_computation(module, c, "while_cond", /*tuple_root=*/false),
                   lower_jaxpr_computation(module, bd, "while_body"));
  if (trip_count) loop->attrs.set("known_trip_count", *trip_count);
  std::vector<hlo::Instruction*> results;
  for (std::size_t i = 0; i < ops.size(); ++i)
    results.push_back(b.get_tuple_element(loop, static_cast<int>(i)));
  return results;
}

}  // namespace jx
