#include "jaxpr/jaxpr.hpp"

namespace jx {

Var new_var(ShapedArray aval) { return std::make_shared<VarNode>(VarNode{std::move(aval)}); }

std::vector<ShapedArray> Jaxpr::in_avals() const {
  std::vector<ShapedArray> out;
  for (const auto& v : invars) out.push_back(v->aval);
  return out;
}

std::vector<ShapedArray> Jaxpr::out_avals() const {
  std::vector<ShapedArray> out;
  for (const auto& a : outvars) out.push_back(a.aval());
  return out;
}

ClosedJaxprData convert_constvars(ClosedJaxprData j, std::vector<Array>& consts) {
  consts = std::move(j.consts);
  j.consts.clear();
  j.jaxpr.invars.insert(j.jaxpr.invars.begin(), j.jaxpr.constvars.begin(), j.jaxpr.constvars.end());
  j.jaxpr.constvars.clear();
  return j;
}

}  // namespace jx

namespace jx {

bool closed_jaxpr_equal(const ClosedJaxprData& a, const ClosedJaxprData& b) {
  if (a.consts.size() != b.consts.size()) return false;
  for (std::size_t i = 0; i < a.consts.size(); ++i)
    if (a.consts[i].impl() != b.consts[i].impl()) return false;
  return to_string(a.jaxpr) == to_string(b.jaxpr);
}

}  // namespace jx
