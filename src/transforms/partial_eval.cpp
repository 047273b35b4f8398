// Partial evaluation splits equations by data flow, except where a primitive's partial_eval rule
// splits an equation itself (one holding sub-jaxprs); it knows no primitive.
#include "transforms/partial_eval.hpp"

#include <unordered_map>
#include <unordered_set>

#include "support/check.hpp"

namespace jx {

PartialEval partial_eval_jaxpr(const ClosedJaxprData& j, const std::vector<bool>& unknowns,
                               const std::vector<bool>& instantiate) {
  const Jaxpr& in = j.jaxpr;
  JX_CHECK(unknowns.size() == in.invars.size() && instantiate.size() == in.outvars.size(),
           "partial_eval_jaxpr: one flag per input and per output");
  std::unordered_set<const VarNode*> unknown_vars;
  auto is_unknown = [&](const Atom& a) {
    return !a.is_literal() && unknown_vars.count(a.var.get());
  };

  Jaxpr known, unknown;
  known.constvars = in.constvars;
  std::vector<Var> residuals;
  std::unordered_set<const VarNode*> is_residual;
  // A known variable the unknown side reads becomes a residual (once).
  auto residual = [&](const Atom& a) {
    if (a.is_literal() || is_unknown(a) || !is_residual.insert(a.var.get()).second) return;
    residuals.push_back(a.var);
  };

  for (std::size_t i = 0; i < in.invars.size(); ++i) {
    if (unknowns[i]) {
      unknown_vars.insert(in.invars[i].get());
      unknown.invars.push_back(in.invars[i]);
    } else {
      known.invars.push_back(in.invars[i]);
    }
  }
  for (const Eqn& eqn : in.eqns) {
    bool any = false;
    for (const Atom& a : eqn.inputs) any = any || is_unknown(a);
    if (!any) {
      known.eqns.push_back(eqn);
      continue;
    }
    if (!eqn.prim->partial_eval) {
      for (const Atom& a : eqn.inputs) residual(a);
      for (const Var& v : eqn.outvars) unknown_vars.insert(v.get());
      unknown.eqns.push_back(eqn);
      continue;
    }
    std::vector<bool> unknown_inputs;
    for (const Atom& a : eqn.inputs) unknown_inputs.push_back(is_unknown(a));
    PartialEvalSplit split = eqn.prim->partial_eval(eqn, unknown_inputs);
    for (std::size_t k = 0; k < eqn.outvars.size(); ++k)
      if (split.out_unknowns[k]) unknown_vars.insert(eqn.outvars[k].get());
    known.eqns.insert(known.eqns.end(), split.known.begin(), split.known.end());
    for (const Eqn& e : split.unknown) {
      for (const Atom& a : e.inputs) residual(a);
      for (const Var& v : e.outvars) unknown_vars.insert(v.get());
      unknown.eqns.push_back(e);
    }
  }

  PartialEval r;
  for (std::size_t i = 0; i < in.outvars.size(); ++i) {
    const Atom& a = in.outvars[i];
    bool u = is_unknown(a) || instantiate[i];
    r.out_unknowns.push_back(u);
    if (u) {
      residual(a);
      unknown.outvars.push_back(a);
    } else {
      known.outvars.push_back(a);
    }
  }
  for (const Var& v : residuals) known.outvars.push_back(v);
  unknown.invars.insert(unknown.invars.begin(), residuals.begin(), residuals.end());
  r.num_residuals = residuals.size();
  r.known = ClosedJaxprData{std::move(known), j.consts};
  r.unknown = ClosedJaxprData{std::move(unknown), {}};
  debug_typecheck(r.known);
  debug_typecheck(r.unknown);
  return r;
}

}  // namespace jx
