// jit[name jaxpr]: JAX's primitive for a jitted function called under a trace. Its jaxpr takes the
// operands (closed-over values lead) and has no consts. It runs by evaluating the jaxpr, lowers
// inline (HLO sees one program), and each transform makes a jit of the transformed jaxpr.
#include "primitives/call.hpp"

#include <algorithm>

#include "lower/lower.hpp"
#include "primitives/sub_jaxprs.hpp"
#include "support/check.hpp"
#include "trace/tracer.hpp"
#include "transforms/ad_rules.hpp"
#include "transforms/batch_rules.hpp"
#include "transforms/jvp.hpp"
#include "transforms/partial_eval.hpp"
#include "transforms/transpose.hpp"
#include "transforms/vmap.hpp"

namespace jx {

Primitive jit_p("jit");

namespace {

using Avals = std::span<const ShapedArray>;
using Ins = std::span<const Array>;
using sub::ClosedPtr;

ClosedPtr body_of(const Params& params) { return params.get("jaxpr").as_jaxpr(); }
const std::string& name_of(const Params& params) { return params.get("name").as_name(); }

Params jit_params(std::shared_ptr<const ClosedJaxprData> j, const std::string& name) {
  JX_CHECK(j->consts.empty(), "a jit equation's jaxpr has no consts");
  return {{"jaxpr", Param::jaxpr(std::move(j))}, {"name", Param::name(name)}};
}

std::shared_ptr<const ClosedJaxprData> shared(ClosedJaxprData j) {
  return std::make_shared<const ClosedJaxprData>(std::move(j));
}

std::vector<ShapedArray> jit_abstract_eval(Avals in, const Params& params) {
  const Jaxpr& j = body_of(params)->jaxpr;
  std::vector<ShapedArray> operands(in.begin(), in.end());
  if (!sub::same_types(j.in_avals(), operands))
    throw TypeError("jit of " + name_of(params) + " takes " + sub::avals_str(j.in_avals()) +
                    " but the operands are " + sub::avals_str(operands) + ".");
  return j.out_avals();
}

// Forward mode: a jit of the jvp jaxpr, carrying the tangents of the outputs that depend on a
// nonzero input tangent.
JvpResult jit_jvp(Ins primals, Ins tangents, const Params& params) {
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
      bind_jit(shared(sub::select_outputs(jvp_jaxpr(*body, nz), keep)), args, name_of(params));
  JvpResult r{sub::slice(outs, 0, m), std::vector<Array>(m)};
  for (std::size_t i = 0, t = m; i < m; ++i)
    if (out_nz[i]) r.tangents[i] = outs[t++];
  return r;
}

// Reverse mode, first half: a jit of the known part, returning the residuals too, and a jit of
// the unknown part reading them.
PartialEvalSplit jit_partial_eval(const Eqn& eqn, const std::vector<bool>& unknown_inputs) {
  std::size_t m = eqn.outvars.size();
  PartialEval pe =
      partial_eval_jaxpr(*body_of(eqn.params), unknown_inputs, std::vector<bool>(m, false));
  const std::string& name = name_of(eqn.params);
  std::vector<ShapedArray> known_avals = pe.known.jaxpr.out_avals();
  Eqn known{&jit_p, {}, jit_params(shared(std::move(pe.known)), name), {}};
  Eqn unknown{&jit_p, {}, jit_params(shared(std::move(pe.unknown)), name), {}};
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

// Reverse mode, second half: a jit of the transposed jaxpr.
std::vector<Array> jit_transpose(Ins cts, std::span<const LinearOperand> operands,
                                 const Params& params) {
  ClosedPtr body = body_of(params);
  std::vector<bool> linear;
  std::vector<Array> ins;
  for (const LinearOperand& op : operands) {
    linear.push_back(op.is_linear());
    if (!linear.back()) ins.push_back(op.value);
  }
  std::vector<ShapedArray> out_avals = body->jaxpr.out_avals();
  for (std::size_t i = 0; i < cts.size(); ++i) ins.push_back(ad::instantiate(cts[i], out_avals[i]));
  std::vector<Array> outs = bind_jit(shared(transpose_jaxpr(*body, linear)), ins, name_of(params));
  std::vector<Array> result(operands.size());
  for (std::size_t k = 0, next = 0; k < operands.size(); ++k)
    if (linear[k]) result[k] = outs[next++];
  return result;
}

// vmap: a jit of the batched jaxpr; outputs that depend on a batched operand are batched on 0.
BatchResult jit_batch(Ins args, std::span<const BatchDim> dims, const Params& params) {
  ClosedPtr body = body_of(params);
  std::vector<bool> batched;
  for (const BatchDim& d : dims) batched.push_back(d.has_value());
  std::vector<bool> dependent = sub::dependent_outputs(body->jaxpr, batched);
  std::vector<BatchDim> out_dims(dependent.size());
  for (std::size_t i = 0; i < dependent.size(); ++i)
    if (dependent[i]) out_dims[i] = 0;
  std::vector<BatchDim> in_dims(dims.begin(), dims.end());
  ClosedJaxprData vmapped = vmap_jaxpr(*body, in_dims, batching::batch_size(args, dims), out_dims);
  return {bind_jit(shared(std::move(vmapped)), {args.begin(), args.end()}, name_of(params)),
          out_dims};
}

const bool kRegistered = [] {
  jit_p.abstract_eval = jit_abstract_eval;
  jit_p.impl = [](Ins in, const Params& params, Avals out) {
    ClosedPtr body = body_of(params);
    return sub::with_weak_types(
        eval_jaxpr(body->jaxpr, body->consts, std::vector<Array>(in.begin(), in.end())), out);
  };
  jit_p.lower = [](hlo::Builder& b, std::span<hlo::Instruction* const> ops, const Params& params,
                   Avals) { return lower_jaxpr_inline(b, body_of(params)->jaxpr, ops); };
  jit_p.jvp = jit_jvp;
  jit_p.partial_eval = jit_partial_eval;
  jit_p.transpose = jit_transpose;
  jit_p.batch = jit_batch;
  jit_p.text.call_names = true;
  return true;
}();

}  // namespace

std::vector<Array> bind_jit(std::shared_ptr<const ClosedJaxprData> j,
                            const std::vector<Array>& args, const std::string& name) {
  std::vector<Array> ins;
  if (!j->consts.empty()) j = shared(convert_constvars(*j, ins));
  ins.insert(ins.end(), args.begin(), args.end());
  return trace::bind(jit_p, std::move(ins), jit_params(std::move(j), name));
}

}  // namespace jx
