// The call primitives, whose jaxpr takes the operands (closed-over values lead) and has no
// consts: each runs by evaluating its jaxpr, lowers inline (HLO sees one program), and each
// transform binds the same primitive on the transformed jaxpr, its other params kept.
// - jit[name jaxpr]: JAX's primitive for a jitted function called under a trace.
// - checkpoint[jaxpr policy prevent_cse differentiated] (jax.checkpoint, JAX's remat): reverse
//   mode keeps no residuals of it but its inputs and the values its policy saves; the backward
//   pass computes the rest again from them. Its recomputation (`differentiated`) lowers behind an
//   opt-barrier, so CSE cannot merge it with the forward pass.
#include "primitives/call.hpp"

#include <algorithm>
#include <unordered_set>

#include "jx/transforms.hpp"

#include "jaxpr/dce.hpp"
#include "lower/lower.hpp"
#include "primitives/sub_jaxprs.hpp"
#include "support/check.hpp"
#include "trace/staging.hpp"
#include "trace/tracer.hpp"
#include "transforms/ad_rules.hpp"
#include "transforms/batch_rules.hpp"
#include "transforms/jvp.hpp"
#include "transforms/partial_eval.hpp"
#include "transforms/transpose.hpp"
#include "transforms/vmap.hpp"

namespace jx {

Primitive jit_p("jit"), checkpoint_p("checkpoint"), name_p("name");

namespace {

using Avals = std::span<const ShapedArray>;
using Ins = std::span<const Array>;
using sub::ClosedPtr;

ClosedPtr body_of(const Params& params) { return params.get("jaxpr").as_jaxpr(); }
const std::string& name_of(const Params& params) { return params.get("name").as_name(); }

std::shared_ptr<const ClosedJaxprData> shared(ClosedJaxprData j) {
  return std::make_shared<const ClosedJaxprData>(std::move(j));
}

// `params` holding the jaxpr j, which has no consts.
Params with_body(Params params, std::shared_ptr<const ClosedJaxprData> j) {
  JX_CHECK(j->consts.empty(), "a call equation's jaxpr has no consts");
  params.set("jaxpr", Param::jaxpr(std::move(j)));
  return params;
}

// Binds p on j: its consts become leading operands, so a value it closes over is an explicit
// input of the equation; a jaxpr without consts is held as it is, so calls of one cached jaxpr
// share it (and print it once).
std::vector<Array> bind_call(const Primitive& p, std::shared_ptr<const ClosedJaxprData> j,
                             const std::vector<Array>& args, const Params& params) {
  std::vector<Array> ins;
  if (!j->consts.empty()) j = shared(convert_constvars(*j, ins));
  ins.insert(ins.end(), args.begin(), args.end());
  return trace::bind(p, std::move(ins), with_body(params, std::move(j)));
}

std::vector<ShapedArray> call_abstract_eval(const Primitive& p, Avals in, const Params& params) {
  const Jaxpr& j = body_of(params)->jaxpr;
  std::vector<ShapedArray> operands(in.begin(), in.end());
  if (!sub::same_types(j.in_avals(), operands)) {
    std::string what = &p == &jit_p ? "jit of " + name_of(params) : p.name;
    throw TypeError(what + " takes " + sub::avals_str(j.in_avals()) + " but the operands are " +
                    sub::avals_str(operands) + ".");
  }
  return j.out_avals();
}

std::vector<Array> call_impl(Ins in, const Params& params, Avals out) {
  ClosedPtr body = body_of(params);
  return sub::with_weak_types(
      eval_jaxpr(body->jaxpr, body->consts, std::vector<Array>(in.begin(), in.end())), out);
}

// Forward mode: p of the jvp jaxpr, carrying the tangents of the outputs that depend on a
// nonzero input tangent.
JvpResult call_jvp(const Primitive& p, Ins primals, Ins tangents, const Params& params) {
  ClosedPtr body = body_of(params);
  std::vector<bool> nz;
  std::vector<Array> args(primals.begin(), primals.end());
  for (const Array& t : tangents) {
    nz.push_back(!ad::is_zero(t));
    if (nz.back()) args.push_back(t);
  }
  std::vector<ShapedArray> out_avals = body->jaxpr.out_avals();
  std::size_t m = out_avals.size();
  std::vector<bool> out_nz = sub::dependent_outputs(body->jaxpr, nz);
  std::vector<std::size_t> keep = sub::range(0, m);
  for (std::size_t i = 0; i < m; ++i) {
    out_nz[i] = out_nz[i] && ad::has_tangent(out_avals[i].dtype);
    if (out_nz[i]) keep.push_back(m + i);
  }
  std::vector<Array> outs =
      bind_call(p, shared(sub::select_outputs(jvp_jaxpr(*body, nz), keep)), args, params);
  JvpResult r{sub::slice(outs, 0, m), std::vector<Array>(m)};
  for (std::size_t i = 0, t = m; i < m; ++i)
    if (out_nz[i]) r.tangents[i] = outs[t++];
  return r;
}

// Reverse mode, second half: p of the transposed jaxpr.
std::vector<Array> call_transpose(const Primitive& p, Ins cts,
                                  std::span<const LinearOperand> operands, const Params& params) {
  ClosedPtr body = body_of(params);
  std::vector<bool> linear;
  std::vector<Array> ins;
  for (const LinearOperand& op : operands) {
    linear.push_back(op.is_linear());
    if (!linear.back()) ins.push_back(op.value);
  }
  std::vector<ShapedArray> out_avals = body->jaxpr.out_avals();
  for (std::size_t i = 0; i < cts.size(); ++i) ins.push_back(ad::instantiate(cts[i], out_avals[i]));
  std::vector<Array> outs = bind_call(p, shared(transpose_jaxpr(*body, linear)), ins, params);
  std::vector<Array> result(operands.size());
  for (std::size_t k = 0, next = 0; k < operands.size(); ++k)
    if (linear[k]) result[k] = outs[next++];
  return result;
}

// vmap: p of the batched jaxpr; outputs that depend on a batched operand are batched on 0.
BatchResult call_batch(const Primitive& p, Ins args, std::span<const BatchDim> dims,
                       const Params& params) {
  ClosedPtr body = body_of(params);
  std::vector<bool> batched;
  for (const BatchDim& d : dims) batched.push_back(d.has_value());
  std::vector<bool> dependent = sub::dependent_outputs(body->jaxpr, batched);
  std::vector<BatchDim> out_dims(dependent.size());
  for (std::size_t i = 0; i < dependent.size(); ++i)
    if (dependent[i]) out_dims[i] = 0;
  std::vector<BatchDim> in_dims(dims.begin(), dims.end());
  ClosedJaxprData vmapped = vmap_jaxpr(*body, in_dims, batching::batch_size(args, dims), out_dims);
  return {bind_call(p, shared(std::move(vmapped)), {args.begin(), args.end()}, params), out_dims};
}

// Every rule but partial evaluation, for the call primitive p.
void define_call(Primitive& p) {
  p.abstract_eval = [&p](Avals in, const Params& params) {
    return call_abstract_eval(p, in, params);
  };
  p.impl = call_impl;
  p.jvp = [&p](Ins primals, Ins tangents, const Params& params) {
    return call_jvp(p, primals, tangents, params);
  };
  p.transpose = [&p](Ins cts, std::span<const LinearOperand> operands, const Params& params) {
    return call_transpose(p, cts, operands, params);
  };
  p.batch = [&p](Ins args, std::span<const BatchDim> dims, const Params& params) {
    return call_batch(p, args, dims, params);
  };
  p.text.call_names = true;
}

// jit's partial evaluation: a jit of the known part, returning the residuals too, and a jit of
// the unknown part reading them.
PartialEvalSplit jit_partial_eval(const Eqn& eqn, const std::vector<bool>& unknown_inputs) {
  std::size_t m = eqn.outvars.size();
  PartialEval pe =
      partial_eval_jaxpr(*body_of(eqn.params), unknown_inputs, std::vector<bool>(m, false));
  std::vector<ShapedArray> known_avals = pe.known.jaxpr.out_avals();
  Eqn known{&jit_p, {}, with_body(eqn.params, shared(std::move(pe.known))), {}};
  Eqn unknown{&jit_p, {}, with_body(eqn.params, shared(std::move(pe.unknown))), {}};
  std::vector<Var> residuals;
  for (std::size_t k = known_avals.size() - pe.num_residuals; k < known_avals.size(); ++k) {
    residuals.push_back(new_var(known_avals[k]));
    unknown.inputs.push_back(residuals.back());
  }
  for (std::size_t k = 0; k < eqn.inputs.size(); ++k)
    (unknown_inputs[k] ? unknown : known).inputs.push_back(eqn.inputs[k]);
  for (std::size_t i = 0; i < m; ++i)
    (pe.out_unknowns[i] ? unknown : known).outvars.push_back(eqn.outvars[i]);
  known.outvars.insert(known.outvars.end(), residuals.begin(), residuals.end());
  PartialEvalSplit split{{}, {}, pe.out_unknowns};
  if (!known.outvars.empty()) split.known.push_back(std::move(known));
  if (!unknown.outvars.empty()) split.unknown.push_back(std::move(unknown));
  return split;
}

// Whether checkpoint's policy (jax.checkpoint_policies; None: nothing_saveable) has e's outputs
// kept for the backward pass rather than computed again there. The policies on names are
// records of the names (`save_only_these_names(names=(hidden,))`).
bool policy_saves(const Param& policy, const Eqn& e) {
  if (policy.is_none()) return false;
  if (policy.kind() == Param::Kind::kRecord) {
    if (e.prim != &name_p) return false;
    bool listed = false;
    for (const Param& n : policy.field("names").items())
      listed |= n.as_name() == e.params.get("name").as_name();
    return policy.record_type() == "save_only_these_names" ? listed : !listed;
  }
  const std::string& name = policy.as_name();
  bool dot = e.prim->name == "dot_general";
  if (name == "everything_saveable") return true;
  if (name == "dots_saveable") return dot || e.prim->name == "conv_general_dilated";
  if (name == "dots_with_no_batch_dims_saveable")  // lhs_batch of ((..), (lhs_batch, rhs_batch))
    return dot && e.params.get("dimension_numbers").items()[1].items()[0].items().empty();
  throw ValueError("checkpoint: unknown policy " + name);
}

// checkpoint's partial evaluation (JAX's remat rule): the known side computes the known outputs
// and, as residuals, the values its policy saves that the unknown side reads; the unknown side
// computes the unknown outputs from all the inputs it reads (partial evaluation makes the known
// ones residuals too) and those values, recomputing everything else the known side computed.
PartialEvalSplit checkpoint_partial_eval(const Eqn& eqn, const std::vector<bool>& unknown_inputs) {
  ClosedPtr body = body_of(eqn.params);
  const Jaxpr& j = body->jaxpr;
  std::vector<bool> out_unknowns = sub::dependent_outputs(j, unknown_inputs);
  const Param policy = eqn.params.has("policy") ? eqn.params.get("policy") : Param();
  // The outputs of known equations that the policy saves.
  std::unordered_set<const VarNode*> unknown;
  for (std::size_t k = 0; k < j.invars.size(); ++k)
    if (unknown_inputs[k]) unknown.insert(j.invars[k].get());
  std::vector<Var> saved;
  Jaxpr reading = j;  // the body reading the saved values as inputs
  reading.eqns.clear();
  for (const Eqn& e : j.eqns) {
    bool depends = std::any_of(e.inputs.begin(), e.inputs.end(), [&](const Atom& a) {
      return a.var && unknown.contains(a.var.get());
    });
    if (depends) {
      for (const Var& v : e.outvars) unknown.insert(v.get());
    } else if (policy_saves(policy, e)) {
      saved.insert(saved.end(), e.outvars.begin(), e.outvars.end());
      continue;
    }
    reading.eqns.push_back(e);
  }
  reading.invars.insert(reading.invars.end(), saved.begin(), saved.end());
  DceResult unknown_part = dce_jaxpr({std::move(reading), body->consts}, out_unknowns, true);
  std::size_t n = j.invars.size();
  // The saved values the unknown side reads, and the residuals that carry them.
  Jaxpr producing = j;
  std::vector<Var> residuals;
  for (std::size_t s = 0; s < saved.size(); ++s) {
    if (!unknown_part.used_inputs[n + s]) continue;
    producing.outvars.push_back(saved[s]);
    residuals.push_back(new_var(saved[s]->aval));
  }
  std::vector<bool> wanted(producing.outvars.size(), true);
  for (std::size_t i = 0; i < out_unknowns.size(); ++i) wanted[i] = !out_unknowns[i];
  DceResult known_part = dce_jaxpr({std::move(producing), body->consts}, wanted, true);

  PartialEvalSplit split{{}, {}, out_unknowns};
  auto side = [&](DceResult& part, bool differentiated) {
    Params params = with_body(eqn.params, shared(std::move(part.jaxpr)));
    params.set("differentiated", Param::boolean(differentiated));
    Eqn e{&checkpoint_p, {}, std::move(params), {}};
    for (std::size_t k = 0; k < n; ++k)
      if (part.used_inputs[k]) e.inputs.push_back(eqn.inputs[k]);
    for (std::size_t i = 0; i < out_unknowns.size(); ++i)
      if (out_unknowns[i] == differentiated) e.outvars.push_back(eqn.outvars[i]);
    return e;
  };
  if (std::find(wanted.begin(), wanted.end(), true) != wanted.end()) {
    Eqn known = side(known_part, false);
    known.outvars.insert(known.outvars.end(), residuals.begin(), residuals.end());
    split.known.push_back(std::move(known));
  }
  if (std::find(out_unknowns.begin(), out_unknowns.end(), true) != out_unknowns.end()) {
    Eqn unknown_eqn = side(unknown_part, true);
    unknown_eqn.inputs.insert(unknown_eqn.inputs.end(), residuals.begin(), residuals.end());
    split.unknown.push_back(std::move(unknown_eqn));
  }
  return split;
}

// A recomputation reads its operands through an opt-barrier: the values it computes are then
// no longer the forward pass's to CSE, so they are computed again where the backward pass needs
// them (JAX's prevent_cse).
std::vector<hlo::Instruction*> checkpoint_lower(hlo::Builder& b,
                                                std::span<hlo::Instruction* const> ops,
                                                const Params& params) {
  std::vector<hlo::Instruction*> in(ops.begin(), ops.end());
  if (params.get("prevent_cse").as_bool() && params.get("differentiated").as_bool() &&
      !in.empty()) {
    std::vector<hlo::HloShape> shapes;
    for (hlo::Instruction* op : in) shapes.push_back(op->shape);
    hlo::Instruction* barrier =
        b.op(hlo::Opcode::kOptimizationBarrier, hlo::HloShape::tuple(std::move(shapes)), in);
    for (std::size_t k = 0; k < in.size(); ++k)
      in[k] = b.get_tuple_element(barrier, static_cast<int>(k));
  }
  return lower_jaxpr_inline(b, body_of(params)->jaxpr, in);
}

const bool kRegistered = [] {
  define_call(jit_p);
  jit_p.lower = [](hlo::Builder& b, std::span<hlo::Instruction* const> ops, const Params& params,
                   Avals) { return lower_jaxpr_inline(b, body_of(params)->jaxpr, ops); };
  jit_p.partial_eval = jit_partial_eval;
  define_call(checkpoint_p);
  checkpoint_p.lower = [](hlo::Builder& b, std::span<hlo::Instruction* const> ops,
                          const Params& params, Avals) { return checkpoint_lower(b, ops, params); };
  checkpoint_p.partial_eval = checkpoint_partial_eval;

  // name[name] (jax.ad_checkpoint.checkpoint_name): its operand, named for a checkpoint policy.
  // The tangent goes unnamed, as in JAX.
  name_p.abstract_eval = [](Avals in, const Params&) {
    if (in.size() != 1) throw TypeError("name takes 1 operand, got " + std::to_string(in.size()));
    return std::vector<ShapedArray>{in[0]};
  };
  name_p.impl = [](Ins in, const Params&, Avals) { return std::vector<Array>{in[0]}; };
  name_p.jvp = [](Ins primals, Ins tangents, const Params& params) {
    return JvpResult{trace::bind(name_p, {primals[0]}, params), {tangents[0]}};
  };
  name_p.batch = [](Ins args, std::span<const BatchDim> dims, const Params& params) {
    return BatchResult{trace::bind(name_p, {args[0]}, params), {dims[0]}};
  };
  name_p.lower = [](hlo::Builder&, std::span<hlo::Instruction* const> ops, const Params&, Avals) {
    return std::vector<hlo::Instruction*>{ops[0]};
  };
  return true;
}();

}  // namespace

std::vector<Array> bind_jit(std::shared_ptr<const ClosedJaxprData> j,
                            const std::vector<Array>& args, const std::string& name) {
  return bind_call(jit_p, std::move(j), args, {{"name", Param::name(name)}});
}

std::vector<Array> bind_checkpoint(std::shared_ptr<const ClosedJaxprData> j,
                                   const std::vector<Array>& args, bool prevent_cse,
                                   const Param& policy) {
  return bind_call(checkpoint_p, std::move(j), args,
                   {{"prevent_cse", Param::boolean(prevent_cse)},
                    {"differentiated", Param::boolean(false)},
                    {"policy", policy}});
}

Array checkpoint_name(const Array& x, const std::string& name) {
  return trace::bind(name_p, {x}, {{"name", Param::name(name)}})[0];
}

namespace detail {

std::vector<Array> checkpoint_call(const FlatFn& f, const std::vector<Array>& args,
                                   bool prevent_cse, CheckpointPolicy policy,
                                   const std::vector<std::string>& names) {
  using P = CheckpointPolicy;
  // The policy as the jaxpr prints it: None for JAX's default, a name, or a record of names.
  Param param;
  if (policy == P::save_only_these_names || policy == P::save_any_names_but_these) {
    std::vector<Param> listed;
    for (const std::string& n : names) listed.push_back(Param::name(n));
    param = Param::record(
        policy == P::save_only_these_names ? "save_only_these_names" : "save_any_names_but_these",
        {{"names", Param::tuple(std::move(listed))}});
  } else if (policy != P::nothing_saveable) {
    param = Param::name(policy == P::everything_saveable ? "everything_saveable"
                        : policy == P::dots_saveable     ? "dots_saveable"
                                                         : "dots_with_no_batch_dims_saveable");
  }
  return bind_checkpoint(shared(trace::trace_to_jaxpr(f, avals_of(args), "checkpoint")), args,
                         prevent_cse, param);
}

}  // namespace detail

}  // namespace jx
