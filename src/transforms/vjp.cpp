#include "transforms/vjp.hpp"

#include <algorithm>

#include "jaxpr/dce.hpp"
#include "support/check.hpp"
#include "transforms/ad_rules.hpp"
#include "transforms/jvp.hpp"
#include "transforms/partial_eval.hpp"
#include "transforms/transpose.hpp"

namespace jx {
namespace {

// The linear part's inputs: residuals (known), then tangents (linear).
std::vector<bool> linear_inputs(const Linearized& lin) {
  std::vector<bool> linear(lin.linear.jaxpr.invars.size(), true);
  std::fill_n(linear.begin(), lin.num_residuals, false);
  return linear;
}

}  // namespace

Linearized linearize_jaxpr(const ClosedJaxprData& f, const std::vector<bool>& wrt) {
  std::size_t n = f.jaxpr.invars.size(), m = f.jaxpr.outvars.size();
  std::size_t k = static_cast<std::size_t>(std::count(wrt.begin(), wrt.end(), true));
  ClosedJaxprData jvp = jvp_jaxpr(f, wrt);
  std::vector<bool> unknowns(n + k, true), instantiate(2 * m, true);
  std::fill_n(unknowns.begin(), n, false);
  std::fill_n(instantiate.begin(), m, false);
  PartialEval pe = partial_eval_jaxpr(jvp, unknowns, instantiate);
  for (std::size_t i = 0; i < m; ++i)
    JX_CHECK(!pe.out_unknowns[i], "a primal output depends on a tangent");
  return {std::move(pe.known), std::move(pe.unknown), m, pe.num_residuals};
}

std::vector<Array> pullback(const Linearized& lin, const std::vector<Array>& residuals,
                            const std::vector<Array>& cts) {
  std::vector<bool> linear = linear_inputs(lin);
  std::vector<Array> args(linear.size());
  std::copy(residuals.begin(), residuals.end(), args.begin());
  std::vector<Array> in_cts = backward_pass(lin.linear.jaxpr, lin.linear.consts, linear, args, cts);
  for (std::size_t i = 0; i < in_cts.size(); ++i)
    in_cts[i] = ad::instantiate(in_cts[i], lin.linear.jaxpr.invars[lin.num_residuals + i]->aval);
  return in_cts;
}

VjpJaxprs vjp_jaxpr(const ClosedJaxprData& f, const std::vector<bool>& wrt, std::size_t num_cts) {
  Linearized lin = linearize_jaxpr(f, wrt);
  ClosedJaxprData linear = lin.linear;
  if (num_cts < lin.num_outputs) {
    std::vector<bool> used(lin.num_outputs, false);
    std::fill_n(used.begin(), num_cts, true);
    linear = dce_jaxpr(lin.linear, used).jaxpr;  // its invars stay: residuals, then tangents
  }
  DceResult backward =
      dce_jaxpr(transpose_jaxpr(linear, linear_inputs(lin)), {}, /*prune_invars=*/false);
  // Residuals the backward pass never reads are dropped from both halves.
  std::vector<bool> keep(lin.num_outputs + lin.num_residuals, true);
  Jaxpr& bj = backward.jaxpr.jaxpr;
  std::vector<Var> invars;
  for (std::size_t i = 0; i < bj.invars.size(); ++i) {
    bool residual = i < lin.num_residuals;
    if (residual && !backward.used_inputs[i]) {
      keep[lin.num_outputs + i] = false;
      continue;
    }
    invars.push_back(bj.invars[i]);
  }
  bj.invars = std::move(invars);
  VjpJaxprs r;
  r.forward = dce_jaxpr(lin.forward, keep).jaxpr;
  r.backward = std::move(backward.jaxpr);
  r.num_outputs = lin.num_outputs;
  r.num_residuals =
      static_cast<std::size_t>(std::count(keep.begin(), keep.end(), true)) - lin.num_outputs;
  debug_typecheck(r.forward);
  debug_typecheck(r.backward);
  return r;
}

}  // namespace jx
