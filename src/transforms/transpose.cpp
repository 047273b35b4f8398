// The transpose interpreter. It knows no primitive: each linear equation's rule comes from its
// Primitive.
#include "transforms/transpose.hpp"

#include <unordered_map>
#include <unordered_set>

#include "transforms/ad_rules.hpp"
#include "support/check.hpp"
#include "trace/staging.hpp"
#include "trace/tracer.hpp"

namespace jx {

std::vector<Array> backward_pass(const Jaxpr& jaxpr, const std::vector<Array>& consts,
                                 const std::vector<bool>& linear, const std::vector<Array>& args,
                                 const std::vector<Array>& cts) {
  JX_CHECK(linear.size() == jaxpr.invars.size() && args.size() == linear.size() &&
               cts.size() == jaxpr.outvars.size(),
           "backward_pass: mismatched inputs");
  std::unordered_map<const VarNode*, Array> env, ct_env;
  std::unordered_set<const VarNode*> linear_vars;
  auto is_linear = [&](const Atom& a) { return !a.is_literal() && linear_vars.count(a.var.get()); };
  auto read = [&](const Atom& a) { return a.is_literal() ? a.literal : env.at(a.var.get()); };
  for (std::size_t i = 0; i < consts.size(); ++i) env[jaxpr.constvars[i].get()] = consts[i];
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (linear[i])
      linear_vars.insert(jaxpr.invars[i].get());
    else
      env[jaxpr.invars[i].get()] = args[i];
  }

  // Forward: what does not depend on a linear input is computed as usual.
  std::vector<const Eqn*> linear_eqns;
  for (const Eqn& eqn : jaxpr.eqns) {
    bool any = false;
    for (const Atom& a : eqn.inputs) any = any || is_linear(a);
    if (any) {
      linear_eqns.push_back(&eqn);
      for (const Var& v : eqn.outvars) linear_vars.insert(v.get());
      continue;
    }
    std::vector<Array> ins;
    for (const Atom& a : eqn.inputs) ins.push_back(read(a));
    std::vector<Array> outs = trace::bind(*eqn.prim, std::move(ins), eqn.params);
    for (std::size_t i = 0; i < outs.size(); ++i) env[eqn.outvars[i].get()] = outs[i];
  }

  auto accumulate = [&](const Var& v, const Array& ct) {
    if (ad::is_zero(ct)) return;
    JX_CHECK(ct.shape() == v->aval.shape && ct.dtype() == v->aval.dtype,
             "cotangent " << ct.aval().str() << " for a value of type " << v->aval.str());
    Array& slot = ct_env[v.get()];
    slot = ad::add(slot, ct);
  };
  for (std::size_t i = 0; i < cts.size(); ++i)
    if (is_linear(jaxpr.outvars[i])) accumulate(jaxpr.outvars[i].var, cts[i]);

  // Backward: each linear equation maps its outputs' cotangents to its linear inputs'.
  for (auto it = linear_eqns.rbegin(); it != linear_eqns.rend(); ++it) {
    const Eqn& eqn = **it;
    std::vector<Array> eqn_cts;
    bool any = false;
    for (const Var& v : eqn.outvars) {
      auto found = ct_env.find(v.get());
      eqn_cts.push_back(found == ct_env.end() ? Array() : found->second);
      any = any || found != ct_env.end();
      if (found != ct_env.end()) ct_env.erase(found);
    }
    if (!any) continue;
    if (!eqn.prim->transpose)
      throw Error("Transpose rule (for reverse-mode differentiation) for '" + eqn.prim->name +
                  "' not implemented");
    std::vector<LinearOperand> operands;
    for (const Atom& a : eqn.inputs)
      operands.push_back(is_linear(a) ? LinearOperand{Array(), a.aval()}
                                      : LinearOperand{read(a), a.aval()});
    std::vector<Array> in_cts = eqn.prim->transpose(eqn_cts, operands, eqn.params);
    JX_CHECK(in_cts.size() == eqn.inputs.size(), eqn.prim->name << " transpose rule arity");
    for (std::size_t k = 0; k < in_cts.size(); ++k)
      if (is_linear(eqn.inputs[k])) accumulate(eqn.inputs[k].var, in_cts[k]);
  }

  std::vector<Array> out;
  for (std::size_t i = 0; i < linear.size(); ++i) {
    if (!linear[i]) continue;
    auto found = ct_env.find(jaxpr.invars[i].get());
    out.push_back(found == ct_env.end() ? Array() : found->second);
  }
  return out;
}

ClosedJaxprData transpose_jaxpr(const ClosedJaxprData& j, const std::vector<bool>& linear) {
  const Jaxpr& jaxpr = j.jaxpr;
  std::vector<ShapedArray> in_avals, linear_avals;
  for (std::size_t i = 0; i < linear.size(); ++i)
    (linear[i] ? linear_avals : in_avals).push_back(jaxpr.invars[i]->aval);
  std::size_t num_known = in_avals.size();
  for (const ShapedArray& a : jaxpr.out_avals()) in_avals.push_back(a);
  auto fn = [&](const std::vector<Array>& flat) {
    std::vector<Array> args(linear.size());
    for (std::size_t i = 0, k = 0; i < linear.size(); ++i)
      if (!linear[i]) args[i] = flat[k++];
    std::vector<Array> cts(flat.begin() + static_cast<std::ptrdiff_t>(num_known), flat.end());
    std::vector<Array> in_cts = backward_pass(jaxpr, j.consts, linear, args, cts);
    for (std::size_t i = 0; i < in_cts.size(); ++i)
      in_cts[i] = ad::instantiate(in_cts[i], linear_avals[i]);
    return in_cts;
  };
  ClosedJaxprData out = trace::trace_to_jaxpr(fn, in_avals, "transpose");
  debug_typecheck(out);
  return out;
}

}  // namespace jx
