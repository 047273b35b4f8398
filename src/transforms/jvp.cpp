// The jvp interpreter. It knows no primitive: each equation's rule comes from its Primitive.
#include "transforms/jvp.hpp"

#include <unordered_map>

#include "transforms/ad_rules.hpp"
#include "support/check.hpp"
#include "trace/staging.hpp"
#include "trace/tracer.hpp"

namespace jx {
namespace {

bool all_zero(const std::vector<Array>& ts) {
  for (const Array& t : ts)
    if (!ad::is_zero(t)) return false;
  return true;
}

}  // namespace

JvpValues jvp_eval(const Jaxpr& jaxpr, const std::vector<Array>& consts,
                   const std::vector<Array>& primals, const std::vector<Array>& tangents) {
  JX_CHECK(primals.size() == jaxpr.invars.size() && tangents.size() == primals.size(),
           "jvp_eval got " << primals.size() << " primals and " << tangents.size() << " tangents");
  std::unordered_map<const VarNode*, Array> primal_env, tangent_env;
  auto bind_var = [&](const Var& v, const Array& p, const Array& t) {
    primal_env[v.get()] = p;
    if (!ad::is_zero(t) && ad::has_tangent(v->aval.dtype)) tangent_env[v.get()] = t;
  };
  auto primal = [&](const Atom& a) {
    return a.is_literal() ? a.literal : primal_env.at(a.var.get());
  };
  auto tangent = [&](const Atom& a) {
    if (a.is_literal()) return Array();
    auto it = tangent_env.find(a.var.get());
    return it == tangent_env.end() ? Array() : it->second;
  };
  for (std::size_t i = 0; i < consts.size(); ++i) bind_var(jaxpr.constvars[i], consts[i], Array());
  for (std::size_t i = 0; i < primals.size(); ++i)
    bind_var(jaxpr.invars[i], primals[i], tangents[i]);

  for (const Eqn& eqn : jaxpr.eqns) {
    std::vector<Array> ps, ts;
    for (const Atom& a : eqn.inputs) {
      ps.push_back(primal(a));
      ts.push_back(tangent(a));
    }
    JvpValues out;
    if (all_zero(ts)) {
      out.primals = trace::bind(*eqn.prim, std::move(ps), eqn.params);
      out.tangents.resize(out.primals.size());
    } else {
      if (!eqn.prim->jvp)
        throw Error("Differentiation rule for '" + eqn.prim->name + "' not implemented");
      JvpResult r = eqn.prim->jvp(ps, ts, eqn.params);
      out = {std::move(r.primals), std::move(r.tangents)};
    }
    JX_CHECK(out.primals.size() == eqn.outvars.size() && out.tangents.size() == out.primals.size(),
             eqn.prim->name << " jvp rule gave " << out.primals.size() << " outputs");
    for (std::size_t i = 0; i < eqn.outvars.size(); ++i) {
      const Array& t = out.tangents[i];
      JX_CHECK(ad::is_zero(t) || t.shape() == eqn.outvars[i]->aval.shape,
               eqn.prim->name << " jvp rule gave a tangent of shape " << shape_str(t.shape())
                              << " for " << eqn.outvars[i]->aval.str());
      bind_var(eqn.outvars[i], out.primals[i], t);
    }
  }
  JvpValues result;
  for (const Atom& a : jaxpr.outvars) {
    result.primals.push_back(primal(a));
    result.tangents.push_back(tangent(a));
  }
  return result;
}

ClosedJaxprData jvp_jaxpr(const ClosedJaxprData& j, const std::vector<bool>& nonzeros) {
  const Jaxpr& jaxpr = j.jaxpr;
  JX_CHECK(nonzeros.size() == jaxpr.invars.size(), "jvp_jaxpr: one flag per input");
  std::vector<ShapedArray> in_avals = jaxpr.in_avals();
  for (std::size_t i = 0; i < nonzeros.size(); ++i)
    if (nonzeros[i]) in_avals.push_back(jaxpr.invars[i]->aval);
  std::size_t n = jaxpr.invars.size();
  auto fn = [&](const std::vector<Array>& args) {
    std::vector<Array> primals(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(n));
    std::vector<Array> tangents(n);
    for (std::size_t i = 0, k = n; i < n; ++i)
      if (nonzeros[i]) tangents[i] = args[k++];
    JvpValues r = jvp_eval(jaxpr, j.consts, primals, tangents);
    std::vector<Array> outs = r.primals;
    for (std::size_t i = 0; i < r.tangents.size(); ++i)
      outs.push_back(ad::instantiate(r.tangents[i], r.primals[i].aval()));
    return outs;
  };
  ClosedJaxprData out = trace::trace_to_jaxpr(fn, in_avals, "jvp");
  debug_typecheck(out);
  return out;
}

}  // namespace jx
