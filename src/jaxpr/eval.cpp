// eval_jaxpr and typecheck: the one interpreter loop every jaxpr pass shares.
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "jaxpr/jaxpr.hpp"
#include "jx/detail/call_site.hpp"
#include "support/check.hpp"
#include "trace/tracer.hpp"

namespace jx {

namespace detail {
std::string jaxpr_eqn_str(const Jaxpr& jaxpr, std::size_t index);  // printer.cpp
}  // namespace detail

namespace {

std::vector<Array> evaluate(const Jaxpr& jaxpr, const std::vector<Array>& consts,
                            const std::vector<Array>& args, bool name_equations) {
  JX_CHECK(consts.size() == jaxpr.constvars.size() && args.size() == jaxpr.invars.size(),
           "eval_jaxpr got " << consts.size() << " consts and " << args.size() << " args");
  std::unordered_map<const VarNode*, Array> env;
  auto read = [&](const Atom& a) { return a.is_literal() ? a.literal : env.at(a.var.get()); };
  for (std::size_t i = 0; i < consts.size(); ++i) env[jaxpr.constvars[i].get()] = consts[i];
  for (std::size_t i = 0; i < args.size(); ++i) env[jaxpr.invars[i].get()] = args[i];
  for (std::size_t k = 0; k < jaxpr.eqns.size(); ++k) {
    const Eqn& eqn = jaxpr.eqns[k];
    std::vector<Array> ins;
    for (const auto& a : eqn.inputs) ins.push_back(read(a));
    std::vector<Array> outs;
    try {
      outs = trace::bind(*eqn.prim, std::move(ins), eqn.params);
    } catch (const FloatingPointError& e) {
      if (!name_equations) throw;
      std::string message =
          std::string(e.what()) + "\n\nin equation:\n\n" + detail::jaxpr_eqn_str(jaxpr, k);
      if (eqn.source.line() != 0) message += "\n\nstaged at " + detail::source_str(eqn.source);
      throw FloatingPointError(message);
    }
    for (std::size_t i = 0; i < outs.size(); ++i) env[eqn.outvars[i].get()] = outs[i];
  }
  std::vector<Array> outs;
  for (const auto& a : jaxpr.outvars) outs.push_back(read(a));
  return outs;
}

}  // namespace

std::vector<Array> eval_jaxpr(const Jaxpr& jaxpr, const std::vector<Array>& consts,
                              const std::vector<Array>& args) {
  return evaluate(jaxpr, consts, args, false);
}

std::vector<Array> eval_jaxpr_naming_equations(const Jaxpr& jaxpr, const std::vector<Array>& consts,
                                               const std::vector<Array>& args) {
  return evaluate(jaxpr, consts, args, true);
}

namespace detail {
// From printer.cpp: names as the printout gives them (for messages), and the sub-jaxprs in params.
std::string jaxpr_var_name(const Jaxpr& jaxpr, const VarNode* v);
std::vector<const Jaxpr*> jaxprs_in_params(const Params& params);
}  // namespace detail

// JAX's check_jaxpr: every variable is bound once before it is read, and every binder's declared
// type is what the primitive's rule gives. Messages use JAX's words and the printed names.
void typecheck(const Jaxpr& jaxpr) {
  std::unordered_set<const VarNode*> defined;
  auto name = [&](const Var& v) { return "'" + detail::jaxpr_var_name(jaxpr, v.get()) + "'"; };
  auto fail = [&](const std::string& msg, std::optional<std::size_t> eqn) {
    std::string s = "Jaxpr typecheck error: " + msg;
    if (eqn) s += "\n\nin equation:\n\n" + detail::jaxpr_eqn_str(jaxpr, *eqn);
    throw TypeError(s);
  };
  auto define = [&](const Var& v, std::optional<std::size_t> eqn) {
    if (!defined.insert(v.get()).second) fail("Variable " + name(v) + " already bound", eqn);
  };
  auto read = [&](const Atom& a, std::optional<std::size_t> eqn) {
    if (a.is_literal()) {
      if (!a.literal.valid() || a.literal.is_tracer() || a.literal.ndim() != 0)
        fail("a literal must be a concrete scalar", eqn);
    } else if (!defined.count(a.var.get())) {
      fail("Variable " + name(a.var) + " not defined", eqn);
    }
  };
  for (const auto& v : jaxpr.constvars) define(v, std::nullopt);
  for (const auto& v : jaxpr.invars) define(v, std::nullopt);
  for (std::size_t k = 0; k < jaxpr.eqns.size(); ++k) {
    const Eqn& eqn = jaxpr.eqns[k];
    std::vector<ShapedArray> in_avals;
    for (const auto& a : eqn.inputs) {
      read(a, k);
      in_avals.push_back(a.aval());
    }
    for (const Jaxpr* sub : detail::jaxprs_in_params(eqn.params)) typecheck(*sub);
    std::vector<ShapedArray> expected;
    try {
      expected = eqn.prim->abstract_eval(in_avals, eqn.params);
    } catch (const std::exception& e) {  // a rule given malformed params may throw anything
      fail(e.what(), k);
    }
    if (expected.size() != eqn.outvars.size())
      fail("the equation binds " + std::to_string(eqn.outvars.size()) + " outputs but " +
               eqn.prim->name + " has " + std::to_string(expected.size()),
           k);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const Var& v = eqn.outvars[i];
      if (v->aval.shape != expected[i].shape || v->aval.dtype != expected[i].dtype)
        fail("Value for variable " + name(v) + " inconsistently typed as " + expected[i].str() +
                 " for let-binder of type " + v->aval.str(),
             k);
      define(v, k);
    }
  }
  for (const auto& a : jaxpr.outvars) read(a, std::nullopt);
}

}  // namespace jx
