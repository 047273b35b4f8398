// while: carry = body(carry) while cond(carry), JAX's primitive behind lax.while_loop and
// fori_loop with traced bounds. Operands: cond_jaxpr's closed-over values (cond_nconsts), then
// body_jaxpr's (body_nconsts), then the initial carry.
#include <algorithm>

#include "core/array_impl.hpp"
#include "hlo/builder.hpp"
#include "jx/control_flow.hpp"
#include "jx/lax.hpp"
#include "lower/lower.hpp"
#include "primitives/control_flow/loops.hpp"
#include "primitives/sub_jaxprs.hpp"
#include "trace/staging.hpp"
#include "trace/tracer.hpp"
#include "transforms/ad_rules.hpp"
#include "transforms/batch_rules.hpp"
#include "transforms/jvp.hpp"
#include "transforms/partial_eval.hpp"
#include "transforms/vmap.hpp"

namespace jx {

Primitive while_p("while");

namespace {

using Avals = std::span<const ShapedArray>;
using Ins = std::span<const Array>;
using sub::ClosedPtr;

struct WhileParams {
  ClosedPtr cond, body;
  std::size_t nc, nb;
  explicit WhileParams(const Params& p)
      : cond(p.get("cond_jaxpr").as_jaxpr()),
        body(p.get("body_jaxpr").as_jaxpr()),
        nc(sub::count_param(p, "cond_nconsts")),
        nb(sub::count_param(p, "body_nconsts")) {}
};

std::vector<ShapedArray> while_abstract_eval(Avals in, const Params& params) {
  WhileParams w(params);
  std::vector<ShapedArray> all(in.begin(), in.end());
  std::vector<ShapedArray> carry = sub::slice(all, w.nc + w.nb, all.size() - w.nc - w.nb);
  check_cond_signature(w.cond->jaxpr, sub::concat(sub::slice(all, 0, w.nc), carry));
  check_body_signature(w.body->jaxpr, sub::concat(sub::slice(all, w.nc, w.nb), carry), carry,
                       "body_fun");
  return carry;
}

std::vector<Array> while_impl(Ins in, const Params& params, Avals out) {
  WhileParams w(params);
  std::vector<Array> all(in.begin(), in.end());
  std::vector<Array> cconsts = sub::slice(all, 0, w.nc), bconsts = sub::slice(all, w.nc, w.nb);
  std::vector<Array> carry = sub::slice(all, w.nc + w.nb, all.size() - w.nc - w.nb);
  while (eval_jaxpr(w.cond->jaxpr, w.cond->consts, sub::concat(cconsts, carry))[0].item<bool>())
    carry = eval_jaxpr(w.body->jaxpr, w.body->consts, sub::concat(bconsts, carry));
  return sub::with_weak_types(std::move(carry), out);
}

std::vector<hlo::Instruction*> lower_while(hlo::Builder& b, std::span<hlo::Instruction* const> ops,
                                           const Params& params, Avals out) {
  WhileParams w(params);
  std::vector<hlo::Instruction*> all = lower_loop(b, ops, *w.cond, w.nc, *w.body, w.nb);
  return sub::slice(all, w.nc + w.nb, out.size());
}

// Forward mode: the carry's tangents join the carry. Which carries have tangents is a fixed
// point: a tangent the body gives a carry element makes it nonzero on every iteration.
JvpResult while_jvp(Ins primals, Ins tangents, const Params& params) {
  WhileParams w(params);
  std::size_t n = primals.size() - w.nc - w.nb;
  std::vector<bool> bconst_nz, carry_nz;
  for (std::size_t k = 0; k < w.nb; ++k) bconst_nz.push_back(!ad::is_zero(tangents[w.nc + k]));
  for (std::size_t k = 0; k < n; ++k) carry_nz.push_back(!ad::is_zero(tangents[w.nc + w.nb + k]));
  std::vector<ShapedArray> carry_avals = w.body->jaxpr.out_avals();
  carry_nz = carry_fixed_point(data_flow(w.body->jaxpr), bconst_nz, carry_nz, carry_avals);

  JvpLoopBody jb = jvp_loop_body(*w.body, bconst_nz, carry_nz, 0);
  std::vector<Array> cconsts(primals.begin(), primals.begin() + static_cast<std::ptrdiff_t>(w.nc));
  std::vector<Array> bconsts, carry, carry_t;
  for (std::size_t k = 0; k < w.nb; ++k) bconsts.push_back(primals[w.nc + k]);
  for (std::size_t k = 0; k < w.nb; ++k)
    if (bconst_nz[k]) bconsts.push_back(tangents[w.nc + k]);
  for (std::size_t k = 0; k < n; ++k) carry.push_back(primals[w.nc + w.nb + k]);
  for (std::size_t k = 0; k < n; ++k)
    if (carry_nz[k]) carry_t.push_back(ad::instantiate(tangents[w.nc + w.nb + k], carry_avals[k]));
  ClosedJaxprData cond = sub::with_unused_inputs(*w.cond, w.nc + n, detail::avals_of(carry_t));
  std::vector<Array> outs = bind_while(std::move(cond), cconsts, std::move(jb.body), bconsts,
                                       sub::concat(carry, carry_t));
  JvpResult r{sub::slice(outs, 0, n), std::vector<Array>(n)};
  for (std::size_t k = 0, t = n; k < n; ++k)
    if (carry_nz[k]) r.tangents[k] = outs[t++];
  return r;
}

// Reverse mode, first half: the carry elements that stay known (no unknown input reaches them)
// run in a known while; the unknown while is the whole loop again, primal and tangent, and has
// no transpose (JAX's behaviour). A predicate that reads an unknown value makes all unknown.
PartialEvalSplit while_partial_eval(const Eqn& eqn, const std::vector<bool>& unknown_inputs) {
  WhileParams w(eqn.params);
  std::size_t n = eqn.outvars.size();
  std::vector<bool> bconsts_u = sub::slice(unknown_inputs, w.nc, w.nb);
  std::vector<bool> carry_u = carry_fixed_point(unknowns(*w.body), bconsts_u,
                                                sub::slice(unknown_inputs, w.nc + w.nb, n), {});
  std::vector<bool> cond_u = sub::concat(sub::slice(unknown_inputs, 0, w.nc), carry_u);
  if (unknowns(*w.cond)(cond_u)[0]) return {{}, {eqn}, std::vector<bool>(n, true)};

  // The known parts of cond and body: they read only the known inputs.
  std::size_t known_n = static_cast<std::size_t>(std::count(carry_u.begin(), carry_u.end(), false));
  ClosedJaxprData cond = partial_eval_jaxpr(*w.cond, cond_u, {false}).known;
  ClosedJaxprData body =
      partial_eval_jaxpr(*w.body, sub::concat(bconsts_u, carry_u), carry_u).known;
  Eqn known{&while_p, {}, eqn.params, {}}, unknown = eqn;
  known.params.set("cond_jaxpr", Param::jaxpr(std::make_shared<const ClosedJaxprData>(
                                     sub::select_outputs(std::move(cond), {0}))));
  known.params.set("body_jaxpr",
                   Param::jaxpr(std::make_shared<const ClosedJaxprData>(
                       sub::select_outputs(std::move(body), sub::range(0, known_n)))));
  known.params.set("body_nconsts", sub::size_param(static_cast<std::size_t>(
                                       std::count(bconsts_u.begin(), bconsts_u.end(), false))));
  known.params.set(
      "cond_nconsts",
      sub::size_param(static_cast<std::size_t>(
          std::count(cond_u.begin(), cond_u.begin() + static_cast<std::ptrdiff_t>(w.nc), false))));
  for (std::size_t k = 0; k < eqn.inputs.size(); ++k)
    if (!(k < w.nc + w.nb ? unknown_inputs[k] : carry_u[k - w.nc - w.nb]))
      known.inputs.push_back(eqn.inputs[k]);
  for (std::size_t k = 0; k < n; ++k) {
    if (!carry_u[k]) {
      known.outvars.push_back(eqn.outvars[k]);
      unknown.outvars[k] = new_var(eqn.outvars[k]->aval);
      unknown.outvars[k]->dropped = true;
    }
  }
  bool any_unknown = known.outvars.size() < n;
  PartialEvalSplit split{{}, {}, carry_u};
  if (!known.outvars.empty()) split.known.push_back(std::move(known));
  if (any_unknown) split.unknown.push_back(std::move(unknown));
  return split;
}

// vmap: a batched predicate batches every carry element, runs while any example's predicate
// holds, and keeps the carry of finished examples as it was (JAX's semantics).
BatchResult while_batch(Ins args, std::span<const BatchDim> dims, const Params& params) {
  WhileParams w(params);
  std::size_t n = args.size() - w.nc - w.nb;
  std::int64_t size = batching::batch_size(args, dims);
  std::vector<BatchDim> all_dims(dims.begin(), dims.end());
  std::vector<bool> batched;
  for (const BatchDim& d : dims) batched.push_back(d.has_value());
  std::vector<bool> carry_b =
      carry_fixed_point(data_flow(w.body->jaxpr), sub::slice(batched, w.nc, w.nb),
                        sub::slice(batched, w.nc + w.nb, n), {});
  bool pred_b =
      sub::dependent_outputs(w.cond->jaxpr, sub::concat(sub::slice(batched, 0, w.nc), carry_b))[0];
  if (pred_b) carry_b.assign(n, true);

  std::vector<Array> all(args.begin(), args.end());
  std::vector<BatchDim> carry_dims(n);
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t at = w.nc + w.nb + k;
    if (carry_b[k]) {
      all[at] = batching::batch_at(all[at], all_dims[at], size, 0);
      carry_dims[k] = 0;
    }
  }
  std::vector<Array> cconsts = sub::slice(all, 0, w.nc), bconsts = sub::slice(all, w.nc, w.nb);
  std::vector<Array> carry = sub::slice(all, w.nc + w.nb, n);
  std::vector<BatchDim> cdims = sub::concat(sub::slice(all_dims, 0, w.nc), carry_dims);
  std::vector<BatchDim> bdims = sub::concat(sub::slice(all_dims, w.nc, w.nb), carry_dims);
  ClosedJaxprData cond = vmap_jaxpr(*w.cond, cdims, size, {pred_b ? BatchDim(0) : std::nullopt});
  ClosedJaxprData body = vmap_jaxpr(*w.body, bdims, size, carry_dims);
  if (!pred_b)
    return {bind_while(std::move(cond), cconsts, std::move(body), bconsts, carry), carry_dims};

  std::vector<ShapedArray> cavals = detail::avals_of(sub::concat(cconsts, carry));
  ClosedJaxprData any = trace::trace_to_jaxpr(
      [&](const std::vector<Array>& xs) {
        Array pred = eval_jaxpr(cond.jaxpr, cond.consts, xs)[0];
        return std::vector<Array>{lax::gt(
            lax::reduce_max(lax::convert_element_type(pred, int32), {0}), make_scalar(0, int32))};
      },
      cavals, "while cond (batched)");
  std::vector<ShapedArray> bavals =
      detail::avals_of(sub::concat(sub::concat(cconsts, bconsts), carry));
  ClosedJaxprData masked = trace::trace_to_jaxpr(
      [&](const std::vector<Array>& xs) {
        std::vector<Array> c = sub::slice(xs, 0, w.nc), bc = sub::slice(xs, w.nc, w.nb);
        std::vector<Array> old = sub::slice(xs, w.nc + w.nb, n);
        Array pred = eval_jaxpr(cond.jaxpr, cond.consts, sub::concat(c, old))[0];
        std::vector<Array> next = eval_jaxpr(body.jaxpr, body.consts, sub::concat(bc, old));
        for (std::size_t k = 0; k < n; ++k)
          next[k] =
              lax::select_n(lax::broadcast_in_dim(pred, old[k].shape(), {0}), {old[k], next[k]});
        return next;
      },
      bavals, "while body (batched)");
  return {
      bind_while(std::move(any), cconsts, std::move(masked), sub::concat(cconsts, bconsts), carry),
      carry_dims};
}

const bool kRegistered = [] {
  while_p.abstract_eval = while_abstract_eval;
  while_p.impl = while_impl;
  while_p.lower = lower_while;
  while_p.jvp = while_jvp;
  while_p.partial_eval = while_partial_eval;
  while_p.transpose = [](Ins, std::span<const LinearOperand>, const Params&) -> std::vector<Array> {
    throw ValueError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
        "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
        "start/stop.");
  };
  while_p.batch = while_batch;
  return true;
}();

}  // namespace

std::vector<Array> bind_while(ClosedJaxprData cond, std::vector<Array> cconsts,
                              ClosedJaxprData body, std::vector<Array> bconsts,
                              const std::vector<Array>& carry) {
  std::size_t nc = 0, nb = 0;
  std::vector<Array> ins;
  Param c = sub::closed_over(std::move(cond), ins, nc);
  ins.insert(ins.end(), cconsts.begin(), cconsts.end());
  Param b = sub::closed_over(std::move(body), ins, nb);
  ins.insert(ins.end(), bconsts.begin(), bconsts.end());
  ins.insert(ins.end(), carry.begin(), carry.end());
  return trace::bind(while_p, std::move(ins),
                     {{"body_jaxpr", b},
                      {"body_nconsts", sub::size_param(nb + bconsts.size())},
                      {"cond_jaxpr", c},
                      {"cond_nconsts", sub::size_param(nc + cconsts.size())}});
}

namespace detail {

std::vector<Array> while_flat(const FlatFn& cond_fn, const FlatFn& body_fn,
                              const std::vector<Array>& init) {
  std::vector<Array> carry = init;
  ClosedJaxprData body = trace::trace_to_jaxpr(body_fn, avals_of(carry), "while_loop body_fun");
  if (promote_weak_carry(carry, body.jaxpr.out_avals()))
    body = trace::trace_to_jaxpr(body_fn, avals_of(carry), "while_loop body_fun");
  std::vector<ShapedArray> avals = avals_of(carry);
  ClosedJaxprData cond = trace::trace_to_jaxpr(cond_fn, avals, "while_loop cond_fun");
  check_cond_signature(cond.jaxpr, avals);
  if (!sub::same_types(body.jaxpr.out_avals(), avals))
    throw TypeError("body_fun output and input must have identical types, got the input " +
                    sub::avals_str(avals) + " and the output " +
                    sub::avals_str(body.jaxpr.out_avals()) + ".");
  return bind_while(std::move(cond), {}, std::move(body), {}, carry);
}

Array fori_start(std::int64_t lower) {
  return lax::convert_element_type(Array(lower), default_int_dtype(), /*weak_type=*/true);
}

std::pair<Array, Array> fori_bounds(const Array& lower, const Array& upper) {
  DType lo = lower.dtype(), hi = upper.dtype(), dtype = lo;
  if (lo != hi) {
    // JAX allows one mix: a weak and a strong signed integer (a C++ int beside an int64 array).
    bool both_signed = is_signed_integral(lo) && is_signed_integral(hi);
    if (both_signed && lower.weak_type() && !upper.weak_type())
      dtype = hi;
    else if (!(both_signed && !lower.weak_type() && upper.weak_type()))
      throw TypeError("lower and upper arguments to fori_loop must have equal types, got " +
                      std::string(dtype_name(lo)) + " and " + std::string(dtype_name(hi)));
  }
  auto to = [&](const Array& x) {
    return x.dtype() == dtype ? x : lax::convert_element_type(x, dtype);
  };
  return {to(lower), to(upper)};
}

}  // namespace detail
}  // namespace jx
