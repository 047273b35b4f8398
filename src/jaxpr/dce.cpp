#include "jaxpr/dce.hpp"

#include <unordered_set>

#include "support/check.hpp"

namespace jx {

DceResult dce_jaxpr(const ClosedJaxprData& j, std::vector<bool> used_outputs, bool prune_invars) {
  const Jaxpr& in = j.jaxpr;
  if (used_outputs.empty()) used_outputs.assign(in.outvars.size(), true);
  JX_CHECK(used_outputs.size() == in.outvars.size(), "dce_jaxpr: wrong used_outputs size");
  std::unordered_set<const VarNode*> live;
  auto read = [&](const Atom& a) {
    if (!a.is_literal()) live.insert(a.var.get());
  };
  Jaxpr out;
  for (std::size_t i = 0; i < in.outvars.size(); ++i) {
    if (!used_outputs[i]) continue;
    read(in.outvars[i]);
    out.outvars.push_back(in.outvars[i]);
  }
  // Backwards: an equation lives if any of its outputs is read, or if it runs for its effect.
  std::vector<const Eqn*> kept;
  for (auto it = in.eqns.rbegin(); it != in.eqns.rend(); ++it) {
    bool needed = it->prim->effectful;
    for (const Var& v : it->outvars) needed = needed || live.count(v.get());
    if (!needed) continue;
    kept.push_back(&*it);
    for (const Atom& a : it->inputs) read(a);
  }
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) out.eqns.push_back(**it);

  DceResult r;
  for (std::size_t i = 0; i < in.constvars.size(); ++i) {
    if (!live.count(in.constvars[i].get())) continue;
    out.constvars.push_back(in.constvars[i]);
    r.jaxpr.consts.push_back(j.consts[i]);
  }
  for (const Var& v : in.invars) {
    bool used = live.count(v.get()) > 0;
    r.used_inputs.push_back(used);
    if (used || !prune_invars) out.invars.push_back(v);
  }
  r.jaxpr.jaxpr = std::move(out);
  debug_typecheck(r.jaxpr);
  return r;
}

}  // namespace jx
