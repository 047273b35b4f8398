// The lowering interpreter: the same loop as eval_jaxpr, with lower rules in place of bind.
#include "lower/lower.hpp"

#include <unordered_map>

#include "core/array_impl.hpp"
#include "support/check.hpp"

namespace jx {

std::vector<hlo::Instruction*> lower_jaxpr_inline(hlo::Builder& b, const Jaxpr& jaxpr,
                                                  std::span<hlo::Instruction* const> args) {
  JX_CHECK(args.size() == jaxpr.constvars.size() + jaxpr.invars.size(), "lower_jaxpr_inline");
  std::unordered_map<const VarNode*, hlo::Instruction*> env;
  std::size_t n = 0;
  for (const Var& v : jaxpr.constvars) env[v.get()] = args[n++];
  for (const Var& v : jaxpr.invars) env[v.get()] = args[n++];
  auto read = [&](const Atom& a) {
    return a.is_literal() ? b.constant(a.literal) : env.at(a.var.get());
  };
  for (const Eqn& eqn : jaxpr.eqns) {
    if (!eqn.prim->lower)
      throw CompileError("jit cannot compile primitive `" + eqn.prim->name +
                         "`: it has no lowering");
    std::vector<hlo::Instruction*> operands;
    for (const Atom& a : eqn.inputs) operands.push_back(read(a));
    std::vector<ShapedArray> out_avals;
    for (const Var& v : eqn.outvars) out_avals.push_back(v->aval);
    std::vector<hlo::Instruction*> outs = eqn.prim->lower(b, operands, eqn.params, out_avals);
    JX_CHECK(outs.size() == eqn.outvars.size(), eqn.prim->name << " lowered to " << outs.size());
    for (std::size_t i = 0; i < outs.size(); ++i) env[eqn.outvars[i].get()] = outs[i];
  }
  std::vector<hlo::Instruction*> results;
  for (const Atom& a : jaxpr.outvars) results.push_back(read(a));
  return results;
}

std::unique_ptr<hlo::Module> lower_jaxpr(const Jaxpr& jaxpr, const std::string& module_name,
                                         std::span<const Array> consts) {
  JX_CHECK(consts.empty() || consts.size() == jaxpr.constvars.size(), "lower_jaxpr: consts");
  auto module = std::make_unique<hlo::Module>(module_name);
  hlo::Builder b(module->add_computation("main", /*entry=*/true));
  std::vector<hlo::Instruction*> args;
  for (const auto* vars : {&jaxpr.constvars, &jaxpr.invars})
    for (const Var& v : *vars)
      args.push_back(b.parameter(static_cast<std::int64_t>(args.size()),
                                 hlo::HloShape::array(v->aval.dtype, v->aval.shape)));
  for (std::size_t k = 0; k < consts.size(); ++k) {
    if (consts[k].size() == 0) continue;
    if (std::optional<Array> value = splat_value(consts[k]))
      args[k] = b.broadcast(b.constant(*value), consts[k].shape(), {});
  }
  std::vector<hlo::Instruction*> results = lower_jaxpr_inline(b, jaxpr, args);
  b.computation()->set_root(results.size() == 1 ? results[0] : b.tuple(results));
  return module;
}

hlo::Computation* lower_jaxpr_computation(hlo::Module& module, const ClosedJaxprData& jaxpr,
                                          const std::string& name, bool tuple_root) {
  hlo::Computation* c = module.add_computation(name);
  hlo::Builder b(c);
  std::vector<hlo::Instruction*> args;
  for (const Array& value : jaxpr.consts) args.push_back(b.constant(value));
  for (const Var& v : jaxpr.jaxpr.invars)
    args.push_back(b.parameter(static_cast<std::int64_t>(args.size() - jaxpr.consts.size()),
                               hlo::HloShape::array(v->aval.dtype, v->aval.shape)));
  std::vector<hlo::Instruction*> results = lower_jaxpr_inline(b, jaxpr.jaxpr, args);
  JX_CHECK(tuple_root || results.size() == 1, name << ": one output without a tuple root");
  c->set_root(tuple_root ? hlo::Builder(c).tuple(results) : results[0]);
  return c;
}

}  // namespace jx
