// The batching interpreter. It knows no primitive: each equation's rule comes from its Primitive.
#include "transforms/vmap.hpp"

#include <unordered_map>

#include "transforms/batch_rules.hpp"
#include "support/check.hpp"
#include "trace/staging.hpp"
#include "trace/tracer.hpp"

namespace jx {

BatchedValues vmap_eval(const Jaxpr& jaxpr, const std::vector<Array>& consts,
                        const std::vector<Array>& args, const std::vector<BatchDim>& in_dims) {
  JX_CHECK(args.size() == jaxpr.invars.size() && in_dims.size() == args.size(), "vmap_eval");
  std::unordered_map<const VarNode*, Array> env;
  std::unordered_map<const VarNode*, int> batched;  // variable → its batch axis
  auto read = [&](const Atom& a) { return a.is_literal() ? a.literal : env.at(a.var.get()); };
  auto dim_of = [&](const Atom& a) -> BatchDim {
    if (a.is_literal()) return std::nullopt;
    auto it = batched.find(a.var.get());
    return it == batched.end() ? BatchDim() : BatchDim(it->second);
  };
  for (std::size_t i = 0; i < consts.size(); ++i) env[jaxpr.constvars[i].get()] = consts[i];
  for (std::size_t i = 0; i < args.size(); ++i) {
    env[jaxpr.invars[i].get()] = args[i];
    if (in_dims[i]) batched[jaxpr.invars[i].get()] = *in_dims[i];
  }
  for (const Eqn& eqn : jaxpr.eqns) {
    std::vector<Array> ins;
    std::vector<BatchDim> dims;
    bool any = false;
    for (const Atom& a : eqn.inputs) {
      ins.push_back(read(a));
      dims.push_back(dim_of(a));
      any = any || dims.back().has_value();
    }
    BatchResult r;
    if (!any) {
      r.outs = trace::bind(*eqn.prim, std::move(ins), eqn.params);
      r.dims.resize(r.outs.size());
    } else {
      if (!eqn.prim->batch)
        throw Error("Batching rule for '" + eqn.prim->name + "' not implemented");
      r = eqn.prim->batch(ins, dims, eqn.params);
    }
    JX_CHECK(r.outs.size() == eqn.outvars.size() && r.dims.size() == r.outs.size(),
             eqn.prim->name << " batch rule gave " << r.outs.size() << " outputs");
    for (std::size_t i = 0; i < r.outs.size(); ++i) {
      env[eqn.outvars[i].get()] = r.outs[i];
      if (r.dims[i]) batched[eqn.outvars[i].get()] = *r.dims[i];
    }
  }
  BatchedValues out;
  for (const Atom& a : jaxpr.outvars) {
    out.outs.push_back(read(a));
    out.dims.push_back(dim_of(a));
  }
  return out;
}

ClosedJaxprData vmap_jaxpr(const ClosedJaxprData& j, const std::vector<BatchDim>& in_dims,
                           std::int64_t size, const std::vector<BatchDim>& out_dims) {
  const Jaxpr& jaxpr = j.jaxpr;
  std::vector<ShapedArray> in_avals = jaxpr.in_avals();
  for (std::size_t i = 0; i < in_avals.size(); ++i)
    if (in_dims[i]) in_avals[i].shape.insert(in_avals[i].shape.begin() + *in_dims[i], size);
  auto fn = [&](const std::vector<Array>& args) {
    BatchedValues r = vmap_eval(jaxpr, j.consts, args, in_dims);
    for (std::size_t i = 0; i < r.outs.size(); ++i) {
      if (!out_dims[i]) {
        if (r.dims[i]) throw Error("vmap has mapped output but out_axes is none");
        continue;
      }
      r.outs[i] = batching::batch_at(r.outs[i], r.dims[i], size, *out_dims[i]);
    }
    return r.outs;
  };
  ClosedJaxprData out = trace::trace_to_jaxpr(fn, in_avals, "vmap");
  debug_typecheck(out);
  return out;
}

}  // namespace jx
