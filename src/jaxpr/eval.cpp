// eval_jaxpr and typecheck: the one interpreter loop every jaxpr pass shares.
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "jaxpr/jaxpr.hpp"
#include "support/check.hpp"
#include "trace/tracer.hpp"

namespace jx {

std::vector<Array> eval_jaxpr(const Jaxpr& jaxpr, const std::vector<Array>& consts,
                              const std::vector<Array>& args) {
  JX_CHECK(consts.size() == jaxpr.constvars.size() && args.size() == jaxpr.invars.size(),
           "eval_jaxpr got " << consts.size() << " consts and " << args.size() << " args");
  std::unordered_map<const VarNode*, Array> env;
  auto read = [&](const Atom& a) { return a.is_literal() ? a.literal : env.at(a.var.get()); };
  for (std::size_t i = 0; i < consts.size(); ++i) env[jaxpr.constvars[i].get()] = consts[i];
  for (std::size_t i = 0; i < args.size(); ++i) env[jaxpr.invars[i].get()] = args[i];
  for (const auto& eqn : jaxpr.eqns) {
    std::vector<Array> ins;
    for (const auto& a : eqn.inputs) ins.push_back(read(a));
    std::vector<Array> outs = trace::bind(*eqn.prim, std::move(ins), eqn.params);
    for (std::size_t i = 0; i < outs.size(); ++i) env[eqn.outvars[i].get()] = outs[i];
  }
  std::vector<Array> outs;
  for (const auto& a : jaxpr.outvars) outs.push_back(read(a));
  return outs;
}

void typecheck(const Jaxpr& jaxpr) {
  std::unordered_set<const VarNode*> defined;
  auto fail = [](const std::string& msg) { throw TypeError("Jaxpr typecheck error: " + msg); };
  auto define = [&](const Var& v) {
    if (!defined.insert(v.get()).second) fail("variable defined twice");
  };
  auto check_read = [&](const Atom& a, const std::string& where) {
    if (!a.is_literal() && !defined.count(a.var.get()))
      fail("variable of type " + a.var->aval.str() + " used in " + where + " before definition");
  };
  for (const auto& v : jaxpr.constvars) define(v);
  for (const auto& v : jaxpr.invars) define(v);
  for (const auto& eqn : jaxpr.eqns) {
    std::vector<ShapedArray> in_avals;
    for (const auto& a : eqn.inputs) {
      check_read(a, eqn.prim->name);
      in_avals.push_back(a.aval());
    }
    std::vector<ShapedArray> expected;
    try {
      expected = eqn.prim->abstract_eval(in_avals, eqn.params);
    } catch (const Error& e) {
      fail(std::string("in ") + eqn.prim->name + ": " + e.what());
    }
    if (expected.size() != eqn.outvars.size())
      fail(eqn.prim->name + " has " + std::to_string(expected.size()) + " outputs, the equation binds " +
           std::to_string(eqn.outvars.size()));
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const ShapedArray& got = eqn.outvars[i]->aval;
      if (got.shape != expected[i].shape || got.dtype != expected[i].dtype)
        fail(eqn.prim->name + " output " + std::to_string(i) + " is declared " + got.str() +
             " but its rule gives " + expected[i].str());
      define(eqn.outvars[i]);
    }
  }
  for (const auto& a : jaxpr.outvars) check_read(a, "the outputs");
}

}  // namespace jx
