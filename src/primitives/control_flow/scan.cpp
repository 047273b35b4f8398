// scan: a loop over the leading axis of xs with a carry, JAX's primitive behind lax.scan and
// fori_loop with static bounds. Operands: consts (num_consts: closed-over values first), the
// initial carry (num_carry), xs. Outputs: the final carry, then the ys stacked along axis 0.
#include "hlo/builder.hpp"
#include "jx/control_flow.hpp"
#include "jx/lax.hpp"
#include "transforms/ad_rules.hpp"
#include "transforms/batch_rules.hpp"
#include "primitives/control_flow/loops.hpp"
#include "primitives/sub_jaxprs.hpp"
#include "trace/staging.hpp"
#include "trace/tracer.hpp"
#include "transforms/partial_eval.hpp"
#include "transforms/transpose.hpp"
#include "transforms/vmap.hpp"

namespace jx {

Primitive scan_p("scan");

namespace {

using Avals = std::span<const ShapedArray>;
using Ins = std::span<const Array>;
using sub::ClosedPtr;

struct ScanParams {
  ClosedPtr body;
  std::int64_t length;
  std::size_t nc, nn;  // consts, carry
  bool reverse;
  explicit ScanParams(const Params& p)
      : body(p.get("jaxpr").as_jaxpr()),
        length(p.get("length").as_int()),
        nc(p.get("ft_in").items().at(0).items().size()),
        nn(p.get("ft_in").items().at(1).items().size()),
        reverse(p.get("reverse").as_bool()) {}
  std::size_t num_xs(std::size_t operands) const { return operands - nc - nn; }
};

ShapedArray unstacked(const ShapedArray& a) {
  return {Shape(a.shape.begin() + 1, a.shape.end()), a.dtype, a.weak_type};
}
ShapedArray stacked(const ShapedArray& a, std::int64_t length) {
  Shape s{length};
  s.insert(s.end(), a.shape.begin(), a.shape.end());
  return {s, a.dtype, a.weak_type};
}

// JAX 0.11's params of a scan. Its operands' and results' groups are trees: ft_in holds one
// None per const, carry and xs operand, ft_out one per carry and ys result (a ys one is
// RightsOnly(Right(None)), as JAX's flat trees print a kept stacked result).
Params scan_params(ClosedJaxprData body, std::int64_t length, std::size_t num_consts,
                   std::size_t num_carry, bool reverse) {
  auto nones = [](std::size_t n, const Param& item = Param()) {
    return Param::tuple(std::vector<Param>(n, item));
  };
  std::size_t num_xs = body.jaxpr.invars.size() - num_consts - num_carry;
  std::size_t num_ys = body.jaxpr.outvars.size() - num_carry;
  Param kept_ys = Param::record("RightsOnly", {{"", Param::record("Right", {{"", Param()}})}});
  return {{"ft_in", Param::tuple({nones(num_consts), nones(num_carry), nones(num_xs)})},
          {"ft_out", Param::tuple({nones(num_carry), nones(num_ys, kept_ys)})},
          {"jaxpr", Param::jaxpr(std::make_shared<const ClosedJaxprData>(std::move(body)))},
          {"length", Param::integer(length)},
          {"reverse", Param::boolean(reverse)},
          {"unroll", Param::integer(1)}};
}

std::vector<Array> bind_scan(ClosedJaxprData body, const std::vector<Array>& consts,
                             const std::vector<Array>& carry, const std::vector<Array>& xs,
                             std::int64_t length, bool reverse) {
  std::vector<Array> ins;  // the body's own consts lead
  body = convert_constvars(std::move(body), ins);
  std::size_t own = ins.size();
  for (const auto* part : {&consts, &carry, &xs}) ins.insert(ins.end(), part->begin(), part->end());
  return trace::bind(
      scan_p, std::move(ins),
      scan_params(std::move(body), length, own + consts.size(), carry.size(), reverse));
}

std::vector<ShapedArray> scan_abstract_eval(Avals in, const Params& params) {
  ScanParams s(params);
  if (s.length < 0)
    throw ValueError("scan got `length` argument of " + std::to_string(s.length) +
                     ", which must be non-negative.");
  std::vector<ShapedArray> all(in.begin(), in.end()), body_in = sub::slice(all, 0, s.nc + s.nn);
  for (std::size_t k = s.nc + s.nn; k < all.size(); ++k) {
    if (all[k].shape.empty() || all[k].shape[0] != s.length)
      throw ShapeError("scan: xs " + all[k].str() + " has no leading axis of the length " +
                       std::to_string(s.length) + ".");
    body_in.push_back(unstacked(all[k]));
  }
  std::vector<ShapedArray> carry = sub::slice(all, s.nc, s.nn);
  check_body_signature(s.body->jaxpr, body_in, carry, "scan body function");
  std::vector<ShapedArray> out = s.body->jaxpr.out_avals();
  for (std::size_t j = s.nn; j < out.size(); ++j) carry.push_back(stacked(out[j], s.length));
  return carry;
}

std::vector<Array> scan_impl(Ins in, const Params& params, Avals out) {
  ScanParams s(params);
  std::vector<Array> all(in.begin(), in.end()), consts = sub::slice(all, 0, s.nc);
  std::vector<Array> carry = sub::slice(all, s.nc, s.nn),
                     xs = sub::slice(all, s.nc + s.nn, s.num_xs(all.size()));
  std::size_t m = out.size() - s.nn;
  std::vector<std::vector<Array>> ys(m, std::vector<Array>(static_cast<std::size_t>(s.length)));
  for (std::int64_t t = 0; t < s.length; ++t) {
    std::int64_t i = s.reverse ? s.length - 1 - t : t;
    std::vector<Array> x;
    for (const Array& v : xs) {
      std::vector<std::int64_t> lo(v.shape().size(), 0), hi = v.shape();
      lo[0] = i;
      hi[0] = i + 1;
      x.push_back(lax::squeeze(lax::slice(v, lo, hi), {0}));
    }
    std::vector<Array> r =
        eval_jaxpr(s.body->jaxpr, s.body->consts, sub::concat(sub::concat(consts, carry), x));
    carry = sub::slice(r, 0, s.nn);
    for (std::size_t j = 0; j < m; ++j)
      ys[j][static_cast<std::size_t>(i)] = lax::expand_dims(r[s.nn + j], {0});
  }
  for (std::size_t j = 0; j < m; ++j)
    carry.push_back(s.length == 0 ? ad::zeros(out[s.nn + j]) : lax::concatenate(ys[j], 0));
  return sub::with_weak_types(std::move(carry), out);
}

// A while over (i, carry, ys) whose body slices x_i out of xs and writes y_i into ys.
std::vector<hlo::Instruction*> lower_scan(hlo::Builder& b, std::span<hlo::Instruction* const> ops,
                                          const Params& params, Avals out) {
  ScanParams s(params);
  std::size_t nx = s.num_xs(ops.size()), m = out.size() - s.nn;
  auto zeros = [&](const ShapedArray& y) {
    return b.broadcast(b.constant(lax::convert_element_type(Array(0), y.dtype)), y.shape, {});
  };
  if (s.length == 0) {  // no trip: the init carry and empty ys
    std::vector<hlo::Instruction*> r(ops.begin() + static_cast<std::ptrdiff_t>(s.nc),
                                     ops.begin() + static_cast<std::ptrdiff_t>(s.nc + s.nn));
    for (std::size_t j = 0; j < m; ++j) r.push_back(zeros(out[s.nn + j]));
    return r;
  }
  std::vector<ShapedArray> avals;
  for (hlo::Instruction* op : ops) avals.push_back(ShapedArray{op->shape.dims, op->shape.dtype});
  std::vector<ShapedArray> loop_avals{ShapedArray{{}, int32}};
  for (std::size_t k = 0; k < s.nn; ++k) loop_avals.push_back(avals[s.nc + k]);
  for (std::size_t j = 0; j < m; ++j) loop_avals.push_back(out[s.nn + j]);
  auto position = [&](const Array& i) {
    return s.reverse ? Array(static_cast<std::int32_t>(s.length - 1)) - i : i;
  };
  ClosedJaxprData cond = trace::trace_to_jaxpr(
      [&](const std::vector<Array>& xs) {
        return std::vector<Array>{xs[0] < Array(static_cast<std::int32_t>(s.length))};
      },
      loop_avals, "scan cond");
  std::vector<ShapedArray> invariant =
      sub::concat(sub::slice(avals, 0, s.nc), sub::slice(avals, s.nc + s.nn, nx));
  ClosedJaxprData body = trace::trace_to_jaxpr(
      [&](const std::vector<Array>& in) {
        std::vector<Array> consts = sub::slice(in, 0, s.nc), xs = sub::slice(in, s.nc, nx);
        Array i = in[s.nc + nx], at = position(i);
        std::vector<Array> body_in = sub::concat(consts, sub::slice(in, s.nc + nx + 1, s.nn));
        for (const Array& x : xs) {
          std::vector<Array> starts(x.shape().size(), Array(0));
          starts[0] = at;
          Shape sizes = x.shape();
          sizes[0] = 1;
          body_in.push_back(lax::squeeze(lax::dynamic_slice(x, starts, sizes), {0}));
        }
        std::vector<Array> r = eval_jaxpr(s.body->jaxpr, s.body->consts, body_in);
        std::vector<Array> next{i + 1};
        for (std::size_t k = 0; k < s.nn; ++k) next.push_back(r[k]);
        for (std::size_t j = 0; j < m; ++j) {
          Array ys = in[s.nc + nx + 1 + s.nn + j];
          std::vector<Array> starts(ys.shape().size(), Array(0));
          starts[0] = at;
          next.push_back(lax::dynamic_update_slice(ys, lax::expand_dims(r[s.nn + j], {0}), starts));
        }
        return next;
      },
      sub::concat(invariant, loop_avals), "scan body");
  std::vector<hlo::Instruction*> loop_ops(ops.begin(),
                                          ops.begin() + static_cast<std::ptrdiff_t>(s.nc));
  loop_ops.insert(loop_ops.end(), ops.begin() + static_cast<std::ptrdiff_t>(s.nc + s.nn),
                  ops.end());
  loop_ops.push_back(b.constant(Array(std::int32_t{0})));
  loop_ops.insert(loop_ops.end(), ops.begin() + static_cast<std::ptrdiff_t>(s.nc),
                  ops.begin() + static_cast<std::ptrdiff_t>(s.nc + s.nn));
  for (std::size_t j = 0; j < m; ++j) loop_ops.push_back(zeros(out[s.nn + j]));
  std::vector<hlo::Instruction*> all = lower_loop(b, loop_ops, cond, 0, body, s.nc + nx, s.length);
  return sub::slice(all, s.nc + nx + 1, s.nn + m);
}

// Forward mode: consts', carry's and xs' tangents join them; the carry's tangents are a fixed
// point, as in while.
JvpResult scan_jvp(Ins primals, Ins tangents, const Params& params) {
  ScanParams s(params);
  std::vector<Array> p(primals.begin(), primals.end()), t(tangents.begin(), tangents.end());
  std::size_t nx = s.num_xs(p.size());
  auto nonzero = [&](std::size_t begin, std::size_t n) {
    std::vector<bool> nz;
    for (std::size_t k = begin; k < begin + n; ++k) nz.push_back(!ad::is_zero(t[k]));
    return nz;
  };
  std::vector<bool> consts_nz = nonzero(0, s.nc), xs_nz = nonzero(s.nc + s.nn, nx);
  std::vector<ShapedArray> carry_avals = detail::avals_of(sub::slice(p, s.nc, s.nn));
  std::vector<bool> carry_nz = carry_fixed_point(data_flow(s.body->jaxpr), consts_nz,
                                                 nonzero(s.nc, s.nn), carry_avals, xs_nz);
  JvpLoopBody jb = jvp_loop_body(*s.body, consts_nz, carry_nz, nx, xs_nz);
  auto with_tangents = [&](std::size_t begin, const std::vector<bool>& nz, bool instantiate) {
    std::vector<Array> v = sub::slice(p, begin, nz.size());
    for (std::size_t k = 0; k < nz.size(); ++k)
      if (nz[k])
        v.push_back(instantiate ? ad::instantiate(t[begin + k], p[begin + k].aval())
                                : t[begin + k]);
    return v;
  };
  std::vector<Array> carry = with_tangents(s.nc, carry_nz, true);
  std::vector<Array> outs =
      bind_scan(std::move(jb.body), with_tangents(0, consts_nz, false), carry,
                with_tangents(s.nc + s.nn, xs_nz, false), s.length, s.reverse);
  std::size_t m = jb.ys_nz.size(), tn = carry.size() - s.nn;
  JvpResult r{sub::slice(outs, 0, s.nn), std::vector<Array>(s.nn + m)};
  for (std::size_t k = 0, at = s.nn; k < s.nn; ++k)
    if (carry_nz[k]) r.tangents[k] = outs[at++];
  for (std::size_t j = 0; j < m; ++j) r.primals.push_back(outs[s.nn + tn + j]);
  for (std::size_t j = 0, at = s.nn + tn + m; j < m; ++j)
    if (jb.ys_nz[j]) r.tangents[s.nn + j] = outs[at++];
  return r;
}

// Reverse mode, first half: the body split into a known scan, which also stacks the residuals
// of every iteration (a residual that is a const is passed as it is), and an unknown scan that
// reads them as xs.
PartialEvalSplit scan_partial_eval(const Eqn& eqn, const std::vector<bool>& unknown_inputs) {
  ScanParams s(eqn.params);
  std::size_t nx = s.num_xs(eqn.inputs.size()), m = eqn.outvars.size() - s.nn;
  std::vector<bool> consts_u = sub::slice(unknown_inputs, 0, s.nc),
                    xs_u = sub::slice(unknown_inputs, s.nc + s.nn, nx);
  std::vector<bool> carry_u = carry_fixed_point(unknowns(*s.body), consts_u,
                                                sub::slice(unknown_inputs, s.nc, s.nn), {}, xs_u);
  std::vector<bool> in_u = sub::concat(sub::concat(consts_u, carry_u), xs_u);
  std::vector<bool> instantiate = carry_u;
  instantiate.resize(s.nn + m, false);
  PartialEval pe = partial_eval_jaxpr(*s.body, in_u, instantiate);

  std::vector<Atom> known_in[3], unknown_in[3];  // consts, carry, xs
  for (std::size_t k = 0; k < eqn.inputs.size(); ++k) {
    int part = k < s.nc ? 0 : k < s.nc + s.nn ? 1 : 2;
    (in_u[k] ? unknown_in : known_in)[part].push_back(eqn.inputs[k]);
  }
  // Residuals: the known body's outputs after its known outputs.
  std::size_t num_known_out = pe.known.jaxpr.outvars.size() - pe.num_residuals;
  std::vector<Atom> const_res;  // outer atoms of residuals that are known consts
  std::vector<std::size_t> const_res_pos, stacked_pos, keep = sub::range(0, num_known_out);
  for (std::size_t r = 0; r < pe.num_residuals; ++r) {
    const Atom& a = pe.known.jaxpr.outvars[num_known_out + r];
    const auto& kin = pe.known.jaxpr.invars;
    auto it = a.is_literal()
                  ? kin.end()
                  : std::find(kin.begin(),
                              kin.begin() + static_cast<std::ptrdiff_t>(known_in[0].size()), a.var);
    if (!a.is_literal() && it != kin.begin() + static_cast<std::ptrdiff_t>(known_in[0].size())) {
      const_res.push_back(known_in[0][static_cast<std::size_t>(it - kin.begin())]);
      const_res_pos.push_back(r);
    } else {
      stacked_pos.push_back(r);
      keep.push_back(num_known_out + r);
    }
  }
  Eqn known{&scan_p,
            {},
            scan_params(sub::select_outputs(pe.known, keep), s.length, known_in[0].size(),
                        known_in[1].size(), s.reverse),
            {}};
  for (auto& part : known_in) known.inputs.insert(known.inputs.end(), part.begin(), part.end());
  Eqn unknown{&scan_p, const_res, {}, {}};
  std::vector<bool> out_u = pe.out_unknowns;
  for (std::size_t i = 0; i < eqn.outvars.size(); ++i)
    (out_u[i] ? unknown : known).outvars.push_back(eqn.outvars[i]);
  std::vector<Atom> stacked_vars;
  for (std::size_t r : stacked_pos) {
    Var v = new_var(stacked(pe.known.jaxpr.outvars[num_known_out + r].aval(), s.length));
    known.outvars.push_back(v);
    stacked_vars.push_back(v);
  }
  // The unknown body takes (residuals, unknown inputs): reorder to (const residuals, consts,
  // carry, stacked residuals, xs).
  std::size_t nr = pe.num_residuals, nu0 = unknown_in[0].size(), nu1 = unknown_in[1].size();
  std::vector<std::size_t> order = const_res_pos;
  for (auto part : {sub::range(nr, nu0 + nu1)}) order.insert(order.end(), part.begin(), part.end());
  order.insert(order.end(), stacked_pos.begin(), stacked_pos.end());
  for (auto part : {sub::range(nr + nu0 + nu1, unknown_in[2].size())})
    order.insert(order.end(), part.begin(), part.end());
  unknown.params = scan_params(sub::permute_inputs(pe.unknown, order), s.length,
                               const_res.size() + nu0, nu1, s.reverse);
  for (const auto& part : {unknown_in[0], unknown_in[1], stacked_vars, unknown_in[2]})
    unknown.inputs.insert(unknown.inputs.end(), part.begin(), part.end());
  PartialEvalSplit split{{}, {}, out_u};
  if (!known.outvars.empty()) split.known.push_back(std::move(known));
  if (!unknown.outvars.empty()) split.unknown.push_back(std::move(unknown));
  return split;
}

// Reverse mode, second half: a scan in the other direction whose body is the transposed body.
// It carries the cotangents of the carry and accumulates those of the linear consts; the
// cotangents of the linear xs come out as its ys.
std::vector<Array> scan_transpose(Ins cts, std::span<const LinearOperand> operands,
                                  const Params& params) {
  ScanParams s(params);
  std::size_t m = cts.size() - s.nn;
  std::vector<bool> linear;
  std::vector<Array> cres, xres, acc;
  for (std::size_t k = 0; k < operands.size(); ++k) {
    bool is_const = k < s.nc, is_carry = !is_const && k < s.nc + s.nn;
    // The carry is transposed as a whole: a known initial value (instantiated zeros) only
    // gets no cotangent.
    linear.push_back(operands[k].is_linear() || is_carry);
    if (!linear.back()) (is_const ? cres : xres).push_back(operands[k].value);
    if (linear.back() && is_const) acc.push_back(ad::zeros(operands[k].aval));
  }
  std::vector<ShapedArray> out_avals = s.body->jaxpr.out_avals();
  std::vector<Array> ct_carry, ct_ys;
  for (std::size_t i = 0; i < s.nn; ++i)
    ct_carry.push_back(ad::instantiate(cts[i], operands[s.nc + i].aval));
  for (std::size_t j = 0; j < m; ++j)
    ct_ys.push_back(ad::instantiate(cts[s.nn + j], stacked(out_avals[s.nn + j], s.length)));
  ClosedJaxprData body_t = transpose_jaxpr(*s.body, linear);
  std::size_t na = acc.size(), nxr = xres.size();
  std::vector<ShapedArray> in_avals = detail::avals_of(cres);
  for (const auto* part : {&acc, &ct_carry}) {
    std::vector<ShapedArray> a = detail::avals_of(*part);
    in_avals.insert(in_avals.end(), a.begin(), a.end());
  }
  for (const Array& x : xres) in_avals.push_back(unstacked(x.aval()));
  for (std::size_t j = 0; j < m; ++j) in_avals.push_back(out_avals[s.nn + j]);
  ClosedJaxprData body = trace::trace_to_jaxpr(
      [&](const std::vector<Array>& in) {
        std::size_t at = cres.size();
        std::vector<Array> args = sub::slice(in, 0, at);
        std::vector<Array> a = sub::slice(in, at, na);
        std::vector<Array> ct_c = sub::slice(in, at + na, s.nn);
        args = sub::concat(args, sub::slice(in, at + na + s.nn, nxr));
        args = sub::concat(sub::concat(args, ct_c), sub::slice(in, at + na + s.nn + nxr, m));
        std::vector<Array> r = eval_jaxpr(body_t.jaxpr, body_t.consts, args);
        for (std::size_t k = 0; k < na; ++k) a[k] = a[k] + r[k];
        return sub::concat(a, sub::slice(r, na, r.size() - na));
      },
      in_avals, "scan transpose");
  std::vector<Array> outs = bind_scan(std::move(body), cres, sub::concat(acc, ct_carry),
                                      sub::concat(xres, ct_ys), s.length, !s.reverse);
  std::vector<Array> result(operands.size());
  std::size_t next_acc = 0, next_x = na + s.nn;
  for (std::size_t k = 0; k < operands.size(); ++k) {
    if (!operands[k].is_linear()) continue;
    if (k < s.nc)
      result[k] = outs[next_acc++];
    else if (k < s.nc + s.nn)
      result[k] = outs[na + k - s.nc];
    else
      result[k] = outs[next_x++];
  }
  return result;
}

// vmap: batched xs move their batch axis to 1, behind the scanned axis, so the body sees it at 0;
// which carry elements are batched is a fixed point; batched ys come out with it at 1.
BatchResult scan_batch(Ins args, std::span<const BatchDim> dims, const Params& params) {
  ScanParams s(params);
  std::size_t nx = s.num_xs(args.size());
  std::int64_t size = batching::batch_size(args, dims);
  std::vector<bool> batched;
  for (const BatchDim& d : dims) batched.push_back(d.has_value());
  std::vector<bool> consts_b = sub::slice(batched, 0, s.nc),
                    xs_b = sub::slice(batched, s.nc + s.nn, nx);
  std::vector<bool> carry_b = carry_fixed_point(data_flow(s.body->jaxpr), consts_b,
                                                sub::slice(batched, s.nc, s.nn), {}, xs_b);
  std::vector<bool> out_b =
      sub::dependent_outputs(s.body->jaxpr, sub::concat(sub::concat(consts_b, carry_b), xs_b));
  std::vector<Array> all(args.begin(), args.end());
  std::vector<BatchDim> in_dims(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(s.nc));
  for (std::size_t k = 0; k < s.nn; ++k) {
    Array& c = all[s.nc + k];
    if (carry_b[k]) c = batching::batch_at(c, dims[s.nc + k], size, 0);
    in_dims.push_back(carry_b[k] ? BatchDim(0) : std::nullopt);
  }
  for (std::size_t k = 0; k < nx; ++k) {
    Array& x = all[s.nc + s.nn + k];
    if (xs_b[k]) x = batching::move_axis(x, *dims[s.nc + s.nn + k], 1);
    in_dims.push_back(xs_b[k] ? BatchDim(0) : std::nullopt);
  }
  std::vector<BatchDim> body_out(out_b.size()), result_dims(out_b.size());
  for (std::size_t i = 0; i < out_b.size(); ++i) {
    bool b = i < s.nn ? carry_b[i] : out_b[i];
    if (b) body_out[i] = 0;
    if (b) result_dims[i] = i < s.nn ? 0 : 1;
  }
  ClosedJaxprData body = vmap_jaxpr(*s.body, in_dims, size, body_out);
  std::vector<Array> outs =
      bind_scan(std::move(body), sub::slice(all, 0, s.nc), sub::slice(all, s.nc, s.nn),
                sub::slice(all, s.nc + s.nn, nx), s.length, s.reverse);
  return {outs, result_dims};
}

const bool kRegistered = [] {
  scan_p.abstract_eval = scan_abstract_eval;
  scan_p.impl = scan_impl;
  scan_p.lower = lower_scan;
  scan_p.jvp = scan_jvp;
  scan_p.partial_eval = scan_partial_eval;
  scan_p.transpose = scan_transpose;
  scan_p.batch = scan_batch;
  return true;
}();

}  // namespace

namespace detail {

std::vector<Array> scan_flat(const FlatFn& body, const std::vector<Array>& init,
                             const std::vector<Array>& xs, std::optional<std::int64_t> length,
                             bool reverse) {
  std::vector<std::int64_t> sizes;
  for (const Array& x : xs) {
    if (x.ndim() == 0)
      throw ValueError("scan got value with no leading axis to scan over: " + x.aval().str() + ".");
    sizes.push_back(x.shape()[0]);
  }
  auto sizes_str = [&] {
    std::string s;
    for (std::size_t k = 0; k < sizes.size(); ++k) s += (k ? ", " : "") + std::to_string(sizes[k]);
    return s;
  };
  for (std::int64_t n : sizes)
    if (n != sizes[0])
      throw ValueError("scan got values with different leading axis sizes: " + sizes_str() + ".");
  if (!length && sizes.empty())
    throw ValueError("scan got no values to scan over and `length` not provided.");
  if (length && !sizes.empty() && *length != sizes[0])
    throw ValueError("scan got `length` argument of " + std::to_string(*length) +
                     " which disagrees with leading axis sizes [" + sizes_str() + "].");
  std::int64_t n = length ? *length : sizes[0];
  std::vector<Array> carry0 = init;
  auto trace_body = [&] {
    std::vector<ShapedArray> avals = avals_of(carry0);
    for (const Array& x : xs) avals.push_back(unstacked(x.aval()));
    return trace::trace_to_jaxpr(body, avals, "scan body");
  };
  ClosedJaxprData j = trace_body();
  if (promote_weak_carry(carry0, j.jaxpr.out_avals())) j = trace_body();
  std::vector<ShapedArray> carry = avals_of(carry0), out = j.jaxpr.out_avals();
  if (!sub::same_types(sub::slice(out, 0, carry.size()), carry))
    throw TypeError(
        "scan body function carry input and carry output must have equal types, got "
        "the input carry " +
        sub::avals_str(carry) + " and the output carry " +
        sub::avals_str(sub::slice(out, 0, carry.size())) + ".");
  return bind_scan(std::move(j), {}, carry0, xs, n, reverse);
}

}  // namespace detail
}  // namespace jx
