// cond: branches[index](operands...), JAX's primitive behind lax.cond and lax.switch. Operands:
// the int32 index, then what every branch takes (values the branches close over lead). Each
// branch is a closed jaxpr in params["branches"]; its consts, if any, are concrete.
#include <algorithm>

#include "hlo/builder.hpp"
#include "jx/control_flow.hpp"
#include "jx/lax.hpp"
#include "lower/lower.hpp"
#include "transforms/ad_rules.hpp"
#include "transforms/batch_rules.hpp"
#include "primitives/sub_jaxprs.hpp"
#include "trace/staging.hpp"
#include "trace/tracer.hpp"
#include "transforms/jvp.hpp"
#include "transforms/partial_eval.hpp"
#include "transforms/transpose.hpp"
#include "transforms/vmap.hpp"

namespace jx {

Primitive cond_p("cond");

namespace {

using Avals = std::span<const ShapedArray>;
using Ins = std::span<const Array>;
using sub::ClosedPtr;

std::vector<ClosedPtr> branches_of(const Params& params) {
  std::vector<ClosedPtr> out;
  for (const Param& item : params.get("branches").items()) out.push_back(item.as_jaxpr());
  return out;
}

Params branch_params(std::vector<ClosedJaxprData> branches) {
  std::vector<Param> items;
  for (auto& b : branches)
    items.push_back(Param::jaxpr(std::make_shared<const ClosedJaxprData>(std::move(b))));
  return {{"branches", Param::tuple(std::move(items))}};
}

// Binds cond. Each branch's consts become operands that every branch takes (and all but their
// owner ignore), so closed-over tracers are explicit inputs.
std::vector<Array> bind_cond(const Array& index, std::vector<ClosedJaxprData> branches,
                             const std::vector<Array>& operands) {
  std::vector<Array> consts;
  std::vector<std::size_t> begin;
  for (auto& b : branches) {
    std::vector<Array> own;
    b = convert_constvars(std::move(b), own);
    begin.push_back(consts.size());
    consts.insert(consts.end(), own.begin(), own.end());
  }
  std::vector<ShapedArray> avals = detail::avals_of(consts);
  for (std::size_t k = 0; k < branches.size(); ++k) {
    std::size_t own = (k + 1 < branches.size() ? begin[k + 1] : consts.size()) - begin[k];
    branches[k] =
        sub::with_unused_inputs(std::move(branches[k]), own,
                                sub::slice(avals, begin[k] + own, avals.size() - begin[k] - own));
    branches[k] =
        sub::with_unused_inputs(std::move(branches[k]), 0, sub::slice(avals, 0, begin[k]));
  }
  std::vector<Array> ins{index};
  ins.insert(ins.end(), consts.begin(), consts.end());
  ins.insert(ins.end(), operands.begin(), operands.end());
  return trace::bind(cond_p, std::move(ins), branch_params(std::move(branches)));
}

std::vector<ShapedArray> cond_abstract_eval(Avals in, const Params& params) {
  if (in.empty() || !in[0].shape.empty() || in[0].dtype != int32)
    throw TypeError("cond: the branch index must be an int32 scalar, got " +
                    (in.empty() ? std::string("nothing") : in[0].str()) + ".");
  std::vector<ShapedArray> operands(in.begin() + 1, in.end());
  std::vector<ClosedPtr> branches = branches_of(params);
  if (branches.empty()) throw ValueError("Empty branch sequence");
  std::vector<ShapedArray> first = branches[0]->jaxpr.out_avals();
  for (std::size_t k = 0; k < branches.size(); ++k) {
    if (!sub::same_types(branches[k]->jaxpr.in_avals(), operands))
      throw TypeError("cond branch " + std::to_string(k) + " takes " +
                      sub::avals_str(branches[k]->jaxpr.in_avals()) + " but the operands are " +
                      sub::avals_str(operands) + ".");
    if (!sub::same_types(branches[k]->jaxpr.out_avals(), first))
      throw TypeError("branch 0 and " + std::to_string(k) +
                      " outputs must have identical types, got " + sub::avals_str(first) + " and " +
                      sub::avals_str(branches[k]->jaxpr.out_avals()) + ".");
  }
  return first;
}

std::size_t clamped(const Array& index, std::size_t n) {
  auto i = static_cast<std::int64_t>(index.item<std::int32_t>());
  return static_cast<std::size_t>(std::clamp<std::int64_t>(i, 0, static_cast<std::int64_t>(n) - 1));
}

std::vector<hlo::Instruction*> lower_cond(hlo::Builder& b, std::span<hlo::Instruction* const> ops,
                                          const Params& params, Avals out) {
  std::vector<hlo::Computation*> computations;
  std::vector<ClosedPtr> branches = branches_of(params);
  for (std::size_t k = 0; k < branches.size(); ++k)
    computations.push_back(lower_jaxpr_computation(*b.computation()->module(), *branches[k],
                                                   "branch_" + std::to_string(k)));
  hlo::Instruction* c = b.conditional(
      ops[0], std::vector<hlo::Instruction*>(ops.begin() + 1, ops.end()), computations);
  std::vector<hlo::Instruction*> results;
  for (std::size_t i = 0; i < out.size(); ++i)
    results.push_back(b.get_tuple_element(c, static_cast<int>(i)));
  return results;
}

// Forward mode: every branch differentiated along the same nonzero tangents; an output's tangent
// is carried where any branch's may be nonzero.
JvpResult cond_jvp(Ins primals, Ins tangents, const Params& params) {
  std::vector<Array> ops(primals.begin() + 1, primals.end()), nonzero_tangents;
  std::vector<bool> nz;
  for (std::size_t k = 1; k < tangents.size(); ++k) {
    nz.push_back(!ad::is_zero(tangents[k]));
    if (nz.back()) nonzero_tangents.push_back(tangents[k]);
  }
  std::vector<ClosedPtr> branches = branches_of(params);
  std::vector<ShapedArray> out_avals = branches[0]->jaxpr.out_avals();
  std::size_t m = out_avals.size();
  std::vector<bool> out_nz(m, false);
  for (const ClosedPtr& b : branches) {
    std::vector<bool> d = sub::dependent_outputs(b->jaxpr, nz);
    for (std::size_t i = 0; i < m; ++i)
      out_nz[i] = out_nz[i] || (d[i] && ad::has_tangent(out_avals[i].dtype));
  }
  std::vector<std::size_t> keep = sub::range(0, m);
  for (std::size_t i = 0; i < m; ++i)
    if (out_nz[i]) keep.push_back(m + i);
  std::vector<ClosedJaxprData> jvps;
  for (const ClosedPtr& b : branches) jvps.push_back(sub::select_outputs(jvp_jaxpr(*b, nz), keep));
  std::vector<Array> outs =
      bind_cond(primals[0], std::move(jvps), sub::concat(ops, nonzero_tangents));
  JvpResult r{sub::slice(outs, 0, m), std::vector<Array>(m)};
  for (std::size_t i = 0, t = m; i < m; ++i)
    if (out_nz[i]) r.tangents[i] = outs[t++];
  return r;
}

// Reverse mode, first half: each branch split into its known and unknown parts. The known cond
// computes the known outputs and every branch's residuals (zeros for the branches not taken);
// the unknown cond reads them.
PartialEvalSplit cond_partial_eval(const Eqn& eqn, const std::vector<bool>& unknown_inputs) {
  std::size_t m = eqn.outvars.size();
  if (unknown_inputs[0]) return {{}, {eqn}, std::vector<bool>(m, true)};
  std::vector<bool> ops_unknown(unknown_inputs.begin() + 1, unknown_inputs.end());
  std::vector<ClosedPtr> branches = branches_of(eqn.params);
  std::vector<bool> out_unknown(m, false);
  for (const ClosedPtr& b : branches) {
    std::vector<bool> u = partial_eval_jaxpr(*b, ops_unknown, out_unknown).out_unknowns;
    for (std::size_t i = 0; i < m; ++i) out_unknown[i] = out_unknown[i] || u[i];
  }
  std::vector<PartialEval> parts;
  std::vector<ShapedArray> residuals;  // every branch's, in branch order
  std::vector<std::size_t> res_begin;
  for (const ClosedPtr& b : branches) {
    parts.push_back(partial_eval_jaxpr(*b, ops_unknown, out_unknown));
    std::vector<ShapedArray> avals = parts.back().known.jaxpr.out_avals();
    res_begin.push_back(residuals.size());
    residuals.insert(residuals.end(),
                     avals.end() - static_cast<std::ptrdiff_t>(parts.back().num_residuals),
                     avals.end());
  }
  std::size_t num_known_out =
      static_cast<std::size_t>(std::count(out_unknown.begin(), out_unknown.end(), false));
  std::vector<ClosedJaxprData> known, unknown;
  for (std::size_t k = 0; k < branches.size(); ++k) {
    const PartialEval& pe = parts[k];
    std::size_t nr = pe.num_residuals, at = res_begin[k];
    known.push_back(trace::trace_to_jaxpr(
        [&](const std::vector<Array>& xs) {
          std::vector<Array> r = eval_jaxpr(pe.known.jaxpr, pe.known.consts, xs);
          std::vector<Array> out = sub::slice(r, 0, num_known_out);
          for (std::size_t i = 0; i < residuals.size(); ++i)
            out.push_back(i >= at && i < at + nr ? r[num_known_out + i - at]
                                                 : ad::zeros(residuals[i]));
          return out;
        },
        pe.known.jaxpr.in_avals(), "cond known"));
    ClosedJaxprData u = sub::with_unused_inputs(
        pe.unknown, nr, sub::slice(residuals, at + nr, residuals.size() - at - nr));
    unknown.push_back(sub::with_unused_inputs(std::move(u), 0, sub::slice(residuals, 0, at)));
  }
  Eqn known_eqn{&cond_p, {eqn.inputs[0]}, branch_params(std::move(known)), {}};
  Eqn unknown_eqn{&cond_p, {eqn.inputs[0]}, branch_params(std::move(unknown)), {}};
  for (std::size_t k = 1; k < eqn.inputs.size(); ++k)
    (unknown_inputs[k] ? unknown_eqn : known_eqn).inputs.push_back(eqn.inputs[k]);
  for (std::size_t i = 0; i < m; ++i)
    (out_unknown[i] ? unknown_eqn : known_eqn).outvars.push_back(eqn.outvars[i]);
  std::vector<Atom> res_atoms;
  for (const ShapedArray& a : residuals) {
    Var v = new_var(a);
    known_eqn.outvars.push_back(v);
    res_atoms.push_back(v);
  }
  unknown_eqn.inputs.insert(unknown_eqn.inputs.begin() + 1, res_atoms.begin(), res_atoms.end());
  PartialEvalSplit split{{}, {}, out_unknown};
  if (!known_eqn.outvars.empty()) split.known.push_back(std::move(known_eqn));
  if (!unknown_eqn.outvars.empty()) split.unknown.push_back(std::move(unknown_eqn));
  return split;
}

// Reverse mode, second half: a cond of the transposed branches, on the same index.
std::vector<Array> cond_transpose(Ins cts, std::span<const LinearOperand> operands,
                                  const Params& params) {
  if (operands[0].is_linear()) throw Error("cond: the branch index cannot be linear");
  std::vector<bool> linear;
  std::vector<Array> ins;
  for (std::size_t k = 1; k < operands.size(); ++k) {
    linear.push_back(operands[k].is_linear());
    if (!linear.back()) ins.push_back(operands[k].value);
  }
  std::vector<ClosedPtr> branches = branches_of(params);
  std::vector<ShapedArray> out_avals = branches[0]->jaxpr.out_avals();
  for (std::size_t i = 0; i < cts.size(); ++i) ins.push_back(ad::instantiate(cts[i], out_avals[i]));
  std::vector<ClosedJaxprData> transposed;
  for (const ClosedPtr& b : branches) transposed.push_back(transpose_jaxpr(*b, linear));
  std::vector<Array> outs = bind_cond(operands[0].value, std::move(transposed), ins);
  std::vector<Array> result(operands.size());
  for (std::size_t k = 1, next = 0; k < operands.size(); ++k)
    if (linear[k - 1]) result[k] = outs[next++];
  return result;
}

// vmap: with an unbatched index, a cond of the batched branches; with a batched one, every
// branch runs on the whole batch and select_n picks each example's result.
BatchResult cond_batch(Ins args, std::span<const BatchDim> dims, const Params& params) {
  std::int64_t size = batching::batch_size(args, dims);
  std::vector<Array> ops(args.begin() + 1, args.end());
  std::vector<BatchDim> op_dims(dims.begin() + 1, dims.end());
  std::vector<bool> batched;
  for (const BatchDim& d : op_dims) batched.push_back(d.has_value());
  std::vector<ClosedPtr> branches = branches_of(params);
  std::size_t m = branches[0]->jaxpr.outvars.size();
  std::vector<BatchDim> out_dims(m);
  for (const ClosedPtr& b : branches) {
    std::vector<bool> d = sub::dependent_outputs(b->jaxpr, batched);
    for (std::size_t i = 0; i < m; ++i)
      if (d[i] || dims[0]) out_dims[i] = 0;
  }
  std::vector<ClosedJaxprData> vmapped;
  for (const ClosedPtr& b : branches) vmapped.push_back(vmap_jaxpr(*b, op_dims, size, out_dims));
  if (!dims[0]) return {bind_cond(args[0], std::move(vmapped), ops), out_dims};
  std::vector<std::vector<Array>> results;
  for (const ClosedJaxprData& v : vmapped) results.push_back(eval_jaxpr(v.jaxpr, v.consts, ops));
  Array index = batching::move_axis(args[0], *dims[0], 0);
  std::vector<Array> outs;
  for (std::size_t i = 0; i < m; ++i) {
    std::vector<Array> cases;
    for (const auto& r : results) cases.push_back(r[i]);
    Array which = lax::broadcast_in_dim(index, cases[0].shape(), {0});
    outs.push_back(lax::select_n(branches.size() == 2 ? lax::ne(which, Array(0)) : which, cases));
  }
  return {outs, out_dims};
}

const bool kRegistered = [] {
  cond_p.abstract_eval = cond_abstract_eval;
  cond_p.impl = [](Ins in, const Params& params, Avals out) {
    std::vector<ClosedPtr> branches = branches_of(params);
    const ClosedPtr& b = branches[clamped(in[0], branches.size())];
    return sub::with_weak_types(
        eval_jaxpr(b->jaxpr, b->consts, std::vector<Array>(in.begin() + 1, in.end())), out);
  };
  cond_p.lower = lower_cond;
  cond_p.jvp = cond_jvp;
  cond_p.partial_eval = cond_partial_eval;
  cond_p.transpose = cond_transpose;
  cond_p.batch = cond_batch;
  return true;
}();

}  // namespace

namespace detail {

Array cond_index(const Array& pred) {
  if (pred.ndim() != 0) throw TypeError("Pred must be a scalar, got " + pred.aval().str() + ".");
  if (pred.dtype() == bool_) return lax::convert_element_type(pred, int32);
  return lax::convert_element_type(lax::ne(pred, lax::convert_element_type(Array(0), pred.dtype())),
                                   int32);
}

Array switch_index(const Array& index, std::size_t n) {
  if (index.ndim() != 0)
    throw TypeError("Branch index must be scalar, got " + index.aval().str() + ".");
  if (!is_integral(index.dtype()))
    throw TypeError("Index type must be an integer, got " + index.aval().str() + ".");
  if (n == 0) throw ValueError("Empty branch sequence");
  Array i = lax::convert_element_type(index, int32);
  return lax::clamp(Array(0), i, Array(static_cast<std::int32_t>(n - 1)));
}

void throw_structure_mismatch(const char* who, std::size_t b, const std::string& first,
                              const std::string& other) {
  std::string w = who;
  if (w == "cond")
    throw TypeError("true_fun and false_fun output must have same type structure, got " + other +
                    " and " + first + ".");
  if (w == "switch")
    throw TypeError("branch 0 and " + std::to_string(b) +
                    " outputs must have same type structure, got " + first + " and " + other + ".");
  if (w == "while_loop")
    throw TypeError("body_fun output and input must have identical types, got the input " + first +
                    " and the output " + other + ".");
  throw TypeError(
      "scan body function carry input and carry output must have the same pytree "
      "structure, but they differ: the input carry is " +
      first + " and the output carry " + other + ".");
}

std::vector<Array> cond_flat(const Array& index, const std::vector<FlatFn>& branches,
                             const std::vector<Array>& operands, const char* who) {
  if (branches.empty()) throw ValueError("Empty branch sequence");
  std::vector<ShapedArray> avals = avals_of(operands);
  std::vector<ClosedJaxprData> traced;
  for (std::size_t k = 0; k < branches.size(); ++k)
    traced.push_back(trace::trace_to_jaxpr(branches[k], avals,
                                           std::string(who) + " branch " + std::to_string(k)));
  for (std::size_t k = 1; k < traced.size(); ++k) {
    std::vector<ShapedArray> a = traced[0].jaxpr.out_avals(), b = traced[k].jaxpr.out_avals();
    if (sub::same_types(a, b)) continue;
    if (std::string(who) == "cond")
      throw TypeError("true_fun and false_fun output must have identical types, got " +
                      sub::avals_str(b) + " and " + sub::avals_str(a) + ".");
    throw TypeError("branch 0 and " + std::to_string(k) +
                    " outputs must have identical types, got " + sub::avals_str(a) + " and " +
                    sub::avals_str(b) + ".");
  }
  return bind_cond(index, std::move(traced), operands);
}

}  // namespace detail
}  // namespace jx
