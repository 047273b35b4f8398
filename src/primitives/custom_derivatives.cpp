// Primitives that shape differentiation itself: stop_gradient, custom_jvp_call (a function with
// a user-written jvp rule), custom_vjp_call (a function with user-written forward and backward
// passes) and custom_lin (the linear part of a custom_vjp_call, which only transposes).
#include <sstream>

#include "jaxpr/jaxpr.hpp"
#include "jx/detail/autodiff_impl.hpp"
#include "jx/lax.hpp"
#include "jx/transforms.hpp"
#include "lower/lower.hpp"
#include "transforms/ad_rules.hpp"
#include "primitives/elementwise.hpp"
#include "primitives/sub_jaxprs.hpp"
#include "trace/staging.hpp"
#include "trace/tracer.hpp"
#include "transforms/vmap.hpp"

namespace jx {

Primitive stop_gradient_p("stop_gradient"), custom_jvp_call_p("custom_jvp_call"),
    custom_vjp_call_p("custom_vjp_call"), custom_lin_p("custom_lin");

namespace {

using Avals = std::span<const ShapedArray>;
using Ins = std::span<const Array>;
using Operands = std::span<hlo::Instruction* const>;
using sub::avals_str;
using sub::count_param;
using sub::jaxpr_param;
using sub::same_types;
using sub::size_param;
using sub::trace_converted;

std::vector<Array> slice_of(Ins xs, std::size_t begin, std::size_t n) {
  return {xs.begin() + static_cast<std::ptrdiff_t>(begin),
          xs.begin() + static_cast<std::ptrdiff_t>(begin + n)};
}

// The operands call_jaxpr takes: its closed-over values (the first `num_consts`) and the
// explicit args (after the rules' closed-over values).
template <class T>
std::vector<T> call_operands(std::span<const T> ops, const Params& params) {
  auto nc = static_cast<std::ptrdiff_t>(count_param(params, "num_consts"));
  auto skip = static_cast<std::ptrdiff_t>(count_param(params, "num_rule_consts"));
  std::vector<T> args(ops.begin(), ops.begin() + nc);
  args.insert(args.end(), ops.begin() + nc + skip, ops.end());
  return args;
}

// Both calls run (and lower) as their primal function, `call_jaxpr`.
void def_call(Primitive& p) {
  p.abstract_eval = [](Avals, const Params& params) {
    return jaxpr_param(params, "call_jaxpr").out_avals();
  };
  p.impl = [](Ins in, const Params& params, Avals) {
    return eval_jaxpr(jaxpr_param(params, "call_jaxpr"), {}, call_operands(in, params));
  };
  p.lower = [](hlo::Builder& b, Operands ops, const Params& params, Avals) {
    return lower_jaxpr_inline(b, jaxpr_param(params, "call_jaxpr"), call_operands(ops, params));
  };
}

// A custom rule covers the explicit arguments only; a tangent for a closed-over value has no rule.
void check_consts_not_differentiated(Ins tangents, std::size_t n, const char* kind) {
  for (std::size_t i = 0; i < n; ++i)
    if (!ad::is_zero(tangents[i]))
      throw Error(std::string("Detected differentiation of a ") + kind +
                  " function with respect to a closed-over value. That isn't supported because "
                  "the custom rule only specifies how to differentiate the " +
                  kind +
                  " function with respect to explicit input parameters. Pass the value as an "
                  "argument instead.");
}

const char* const kNoForwardMode =
    "can't apply forward-mode autodiff (jvp) to a custom_vjp function.";

std::vector<Array> instantiate_all(Ins tangents, Ins primals) {
  std::vector<Array> out;
  for (std::size_t i = 0; i < tangents.size(); ++i)
    out.push_back(ad::instantiate(tangents[i], primals[i].aval()));
  return out;
}

// Operands: [call consts, jvp consts, args]; the jvp jaxpr maps [jvp consts, primals, tangents]
// to [outputs, output tangents].
void def_custom_jvp_call(Primitive& p) {
  def_call(p);
  p.jvp = [](Ins primals, Ins tangents, const Params& params) {
    std::size_t nc = count_param(params, "num_consts"), nr = count_param(params, "num_rule_consts");
    check_consts_not_differentiated(tangents, nc + nr, "custom_jvp");
    std::size_t n = primals.size() - nc - nr;
    std::vector<Array> args = sub::concat(slice_of(primals, nc, nr), slice_of(primals, nc + nr, n));
    args = sub::concat(std::move(args),
                       instantiate_all(tangents.subspan(nc + nr), primals.subspan(nc + nr)));
    std::vector<Array> outs = eval_jaxpr(jaxpr_param(params, "jvp_jaxpr"), {}, args);
    std::size_t m = outs.size() / 2;
    return JvpResult{slice_of(outs, 0, m), slice_of(outs, m, m)};
  };
}

// Operands: [call consts, fwd consts, bwd consts, args] (num_rule_consts covers fwd and bwd).
// The jvp runs fwd for the outputs and residuals; the tangents are a custom_lin of them.
void def_custom_vjp_call(Primitive& p) {
  def_call(p);
  p.jvp = [](Ins primals, Ins tangents, const Params& params) {
    std::size_t nc = count_param(params, "num_consts"), nf = count_param(params, "num_fwd_consts");
    std::size_t nr = count_param(params, "num_rule_consts"), nb = nr - nf;
    check_consts_not_differentiated(tangents, nc + nr, "custom_vjp");
    std::size_t first_arg = nc + nr, n = primals.size() - first_arg;
    std::vector<Array> args = slice_of(primals, first_arg, n);
    std::vector<Array> fwd_outs = eval_jaxpr(jaxpr_param(params, "fwd_jaxpr"), {},
                                             sub::concat(slice_of(primals, nc, nf), args));
    const Jaxpr& call = jaxpr_param(params, "call_jaxpr");
    std::size_t m = call.outvars.size();
    std::vector<Array> lin_in = slice_of(primals, nc + nf, nb);
    lin_in = sub::concat(std::move(lin_in), slice_of(fwd_outs, m, fwd_outs.size() - m));
    lin_in = sub::concat(std::move(lin_in), instantiate_all(tangents.subspan(first_arg), args));
    std::vector<Param> out_avals;
    for (const ShapedArray& a : call.out_avals())
      out_avals.push_back(Param::tuple({Param::ints(a.shape), Param::dtype(a.dtype)}));
    Params lin_params{
        {"bwd_jaxpr", params.get("bwd_jaxpr")},
        {"num_res", Param::integer(static_cast<std::int64_t>(nb + fwd_outs.size() - m))},
        {"out_avals", Param::tuple(std::move(out_avals))}};
    return JvpResult{slice_of(fwd_outs, 0, m),
                     trace::bind(custom_lin_p, std::move(lin_in), lin_params)};
  };
}

// custom_lin: operands [bwd consts and residuals (num_res), tangents]; linear in the tangents.
void def_custom_lin(Primitive& p) {
  p.abstract_eval = [](Avals, const Params& params) {
    std::vector<ShapedArray> out;
    for (const Param& a : params.get("out_avals").items())
      out.push_back({a.items()[0].as_ints(), a.items()[1].as_dtype(), false});
    return out;
  };
  p.impl = [](Ins, const Params&, Avals) -> std::vector<Array> { throw Error(kNoForwardMode); };
  p.jvp = [](Ins, Ins, const Params&) -> JvpResult { throw Error(kNoForwardMode); };
  // Batched only as forward mode's tangents are (jacfwd maps the jvp over a basis).
  p.batch = [](Ins, std::span<const BatchDim>, const Params&) -> BatchResult {
    throw Error(kNoForwardMode);
  };
  p.lower = [](hlo::Builder&, Operands, const Params&, Avals) -> std::vector<hlo::Instruction*> {
    throw Error(kNoForwardMode);
  };
  p.transpose = [](std::span<const Array> cts, std::span<const LinearOperand> operands,
                   const Params& params) {
    std::size_t nres = count_param(params, "num_res");
    const Jaxpr& bwd = jaxpr_param(params, "bwd_jaxpr");
    std::vector<Array> args;
    for (std::size_t i = 0; i < nres; ++i) args.push_back(operands[i].value);
    std::vector<ShapedArray> out_avals = bwd.in_avals();
    for (std::size_t i = 0; i < cts.size(); ++i)
      args.push_back(ad::instantiate(cts[i], out_avals[args.size()]));
    std::vector<Array> in_cts = eval_jaxpr(bwd, {}, args);
    in_cts.insert(in_cts.begin(), nres, Array());
    return in_cts;
  };
}

void def_stop_gradient(Primitive& p) {
  p.abstract_eval = [&p](Avals in, const Params&) {
    check_arity(p.name, in.size(), 1);
    return std::vector<ShapedArray>{in[0]};
  };
  p.impl = [](Ins in, const Params&, Avals) { return std::vector<Array>{in[0]}; };
  ad::def_zero_jvp(p);
  batching::def_elementwise_batch(p);
  p.lower = [](hlo::Builder&, Operands ops, const Params&, Avals) {
    return std::vector<hlo::Instruction*>{ops[0]};
  };
}

// ---- batching: the call stays a custom call, its jaxprs batched ----
// The explicit args all get the batch axis in front (an unbatched one is broadcast), so every
// rule input and output derived from them is batched at axis 0; closed-over values keep theirs.
struct BatchedCall {
  std::vector<Array> operands;
  std::vector<BatchDim> dims;  // per operand
  std::int64_t size;
};

BatchedCall batch_operands(std::span<const Array> args, std::span<const BatchDim> dims,
                           std::size_t num_closed) {
  BatchedCall c{{}, {}, batching::batch_size(args, dims)};
  for (std::size_t k = 0; k < args.size(); ++k) {
    bool explicit_arg = k >= num_closed;
    c.operands.push_back(explicit_arg ? batching::batch_at(args[k], dims[k], c.size, 0)
                         : dims[k]    ? batching::move_axis(args[k], *dims[k], 0)
                                      : args[k]);
    c.dims.push_back(explicit_arg || dims[k] ? BatchDim(0) : BatchDim());
  }
  return c;
}

// The jaxpr param `name`, batched: its invars are the operands in `positions` (repeated for a
// jvp rule's tangents); every output is batched at axis 0.
Param batched_jaxpr(const Params& params, const char* name, const BatchedCall& c,
                    const std::vector<std::size_t>& positions) {
  const ClosedJaxprData& j = *params.get(name).as_jaxpr();
  std::vector<BatchDim> in_dims;
  for (std::size_t k : positions) in_dims.push_back(c.dims[k]);
  std::vector<BatchDim> out_dims(j.jaxpr.outvars.size(), 0);
  return Param::jaxpr(
      std::make_shared<const ClosedJaxprData>(vmap_jaxpr(j, in_dims, c.size, out_dims)));
}

std::vector<std::size_t> positions(std::size_t begin, std::size_t n) {
  std::vector<std::size_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = begin + i;
  return v;
}
std::vector<std::size_t> join(std::vector<std::size_t> a, const std::vector<std::size_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void def_custom_call_batch(Primitive& p, bool vjp) {
  p.batch = [&p, vjp](std::span<const Array> args, std::span<const BatchDim> dims,
                      const Params& params) {
    std::size_t nc = count_param(params, "num_consts"), nr = count_param(params, "num_rule_consts");
    std::size_t first_arg = nc + nr, n = args.size() - first_arg;
    BatchedCall c = batch_operands(args, dims, first_arg);
    std::vector<std::size_t> arg_pos = positions(first_arg, n);
    Params batched = params;
    batched.set("call_jaxpr",
                batched_jaxpr(params, "call_jaxpr", c, join(positions(0, nc), arg_pos)));
    if (!vjp) {
      batched.set("jvp_jaxpr", batched_jaxpr(params, "jvp_jaxpr", c,
                                             join(join(positions(nc, nr), arg_pos), arg_pos)));
    } else {
      std::size_t nf = count_param(params, "num_fwd_consts"), nb = nr - nf;
      batched.set("fwd_jaxpr",
                  batched_jaxpr(params, "fwd_jaxpr", c, join(positions(nc, nf), arg_pos)));
      // bwd reads its consts, then residuals and cotangents: fwd's outputs, all batched at 0.
      const Jaxpr& bwd = jaxpr_param(params, "bwd_jaxpr");
      BatchedCall b = c;
      std::vector<std::size_t> bwd_pos = positions(nc + nf, nb);
      for (std::size_t i = nb; i < bwd.invars.size(); ++i) {
        bwd_pos.push_back(b.dims.size());
        b.dims.push_back(0);
      }
      batched.set("bwd_jaxpr", batched_jaxpr(params, "bwd_jaxpr", b, bwd_pos));
    }
    std::vector<Array> outs = trace::bind(p, c.operands, batched);
    return BatchResult{outs, std::vector<BatchDim>(outs.size(), 0)};
  };
}

const bool kRegistered =
    (def_stop_gradient(stop_gradient_p), def_custom_jvp_call(custom_jvp_call_p),
     def_custom_vjp_call(custom_vjp_call_p), def_custom_lin(custom_lin_p),
     def_custom_call_batch(custom_jvp_call_p, false),
     def_custom_call_batch(custom_vjp_call_p, true), true);

}  // namespace

namespace lax {

Array stop_gradient(const Array& x) { return trace::bind1(stop_gradient_p, {x}); }

}  // namespace lax

namespace detail {

std::vector<Array> custom_jvp_call(const FlatFn& f, const FlatFn& jvp,
                                   const std::vector<Array>& args) {
  std::vector<ShapedArray> avals = avals_of(args), out_avals, rule_avals;
  std::vector<Array> operands;
  std::size_t nc = 0, nr = 0;
  Param call = trace_converted(f, avals, "custom_jvp", operands, nc, &out_avals);
  std::vector<ShapedArray> jvp_in = avals;
  jvp_in.insert(jvp_in.end(), avals.begin(), avals.end());
  Param rule = trace_converted(jvp, jvp_in, "custom_jvp rule", operands, nr, &rule_avals);
  std::size_t m = out_avals.size();
  if (rule_avals.size() != 2 * m || !same_types(sub::slice(rule_avals, 0, m), out_avals))
    throw TypeError(
        "Custom JVP rule must produce primal outputs with the same shapes and dtypes "
        "as the primal function: the function gives " +
        avals_str(out_avals) + " and the rule " +
        avals_str(sub::slice(rule_avals, 0, rule_avals.size() / 2)) + ".");
  if (!same_types(sub::slice(rule_avals, m, m), out_avals))
    throw TypeError(
        "Custom JVP rule must produce primal and tangent outputs with equal shapes and "
        "dtypes, but got primal " +
        avals_str(out_avals) + " and tangent " + avals_str(sub::slice(rule_avals, m, m)) + ".");
  operands.insert(operands.end(), args.begin(), args.end());
  return trace::bind(custom_jvp_call_p, std::move(operands),
                     {{"call_jaxpr", call},
                      {"jvp_jaxpr", rule},
                      {"num_consts", size_param(nc)},
                      {"num_rule_consts", size_param(nr)}});
}

std::vector<Array> custom_vjp_call(const FlatFn& f, const FlatFn& fwd, const FlatFn& bwd,
                                   const std::vector<Array>& args) {
  std::vector<ShapedArray> avals = avals_of(args), out_avals, fwd_avals, bwd_avals;
  std::vector<Array> operands;
  std::size_t nc = 0, nf = 0, nb = 0;
  Param call = trace_converted(f, avals, "custom_vjp", operands, nc, &out_avals);
  Param fwd_j = trace_converted(fwd, avals, "custom_vjp fwd", operands, nf, &fwd_avals);
  std::size_t m = out_avals.size();
  if (fwd_avals.size() < m || !same_types(sub::slice(fwd_avals, 0, m), out_avals))
    throw TypeError(
        "Custom VJP fwd rule must produce outputs with the same shapes and dtypes as "
        "the primal function: the function gives " +
        avals_str(out_avals) + " and fwd " +
        avals_str(sub::slice(fwd_avals, 0, std::min(m, fwd_avals.size()))) + ".");
  std::vector<ShapedArray> bwd_in = sub::slice(fwd_avals, m, fwd_avals.size() - m);
  bwd_in.insert(bwd_in.end(), out_avals.begin(), out_avals.end());
  Param bwd_j = trace_converted(bwd, bwd_in, "custom_vjp bwd", operands, nb, &bwd_avals);
  if (!same_types(bwd_avals, avals))
    throw TypeError(
        "Custom VJP bwd rule must produce an output with the same shapes and dtypes as "
        "the args tuple of the primal function: the args are " +
        avals_str(avals) + " and bwd gives " + avals_str(bwd_avals) + ".");
  operands.insert(operands.end(), args.begin(), args.end());
  return trace::bind(custom_vjp_call_p, std::move(operands),
                     {{"bwd_jaxpr", bwd_j},
                      {"call_jaxpr", call},
                      {"fwd_jaxpr", fwd_j},
                      {"num_consts", size_param(nc)},
                      {"num_fwd_consts", size_param(nf)},
                      {"num_rule_consts", size_param(nf + nb)}});
}

}  // namespace detail
}  // namespace jx
