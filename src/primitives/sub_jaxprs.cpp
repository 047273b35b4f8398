#include "primitives/sub_jaxprs.hpp"

#include <sstream>
#include <unordered_set>

#include "jx/lax.hpp"
#include "lower/lower.hpp"
#include "support/check.hpp"
#include "trace/staging.hpp"

namespace jx::sub {

const Jaxpr& jaxpr_param(const Params& params, const char* name) {
  return params.get(name).as_jaxpr()->jaxpr;
}
std::size_t count_param(const Params& params, const char* name) {
  return static_cast<std::size_t>(params.get(name).as_int());
}
Param size_param(std::size_t n) { return Param::integer(static_cast<std::int64_t>(n)); }

std::string avals_str(const std::vector<ShapedArray>& avals) {
  std::ostringstream os;
  os << "[";
  for (std::size_t i = 0; i < avals.size(); ++i) os << (i ? ", " : "") << avals[i].str();
  os << "]";
  return os.str();
}

bool same_types(const std::vector<ShapedArray>& a, const std::vector<ShapedArray>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].shape != b[i].shape || a[i].dtype != b[i].dtype) return false;
  return true;
}

std::vector<Array> with_weak_types(std::vector<Array> xs, std::span<const ShapedArray> avals) {
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (xs[i].weak_type() != avals[i].weak_type)
      xs[i] = lax::convert_element_type(xs[i], avals[i].dtype, avals[i].weak_type);
  return xs;
}

Param closed_over(ClosedJaxprData j, std::vector<Array>& operands, std::size_t& count) {
  std::vector<Array> consts;
  j = convert_constvars(std::move(j), consts);
  count = consts.size();
  operands.insert(operands.end(), consts.begin(), consts.end());
  return Param::jaxpr(std::make_shared<const ClosedJaxprData>(std::move(j)));
}

Param trace_converted(const detail::FlatFn& fn, const std::vector<ShapedArray>& avals,
                      const std::string& name, std::vector<Array>& operands, std::size_t& count,
                      std::vector<ShapedArray>* out_avals) {
  ClosedJaxprData j = trace::trace_to_jaxpr(fn, avals, name);
  if (out_avals) *out_avals = j.jaxpr.out_avals();
  return closed_over(std::move(j), operands, count);
}

std::vector<hlo::Instruction*> lower_traced(hlo::Builder& b,
                                            std::span<hlo::Instruction* const> operands,
                                            const detail::FlatFn& fn, const std::string& name) {
  std::vector<ShapedArray> avals;
  for (hlo::Instruction* op : operands) avals.push_back({op->shape.dims, op->shape.dtype, false});
  ClosedJaxprData j = trace::trace_to_jaxpr(fn, avals, name);
  std::vector<hlo::Instruction*> args;
  for (const Array& c : j.consts) args.push_back(b.constant(c));
  args.insert(args.end(), operands.begin(), operands.end());
  return lower_jaxpr_inline(b, j.jaxpr, args);
}

ClosedJaxprData with_unused_inputs(ClosedJaxprData j, std::size_t at,
                                   const std::vector<ShapedArray>& avals) {
  std::vector<Var> fresh;
  for (const ShapedArray& a : avals) fresh.push_back(new_var(a));
  auto& in = j.jaxpr.invars;
  in.insert(in.begin() + static_cast<std::ptrdiff_t>(at), fresh.begin(), fresh.end());
  return j;
}

ClosedJaxprData permute_inputs(ClosedJaxprData j, const std::vector<std::size_t>& order) {
  JX_CHECK(order.size() == j.jaxpr.invars.size(), "permute_inputs: one position per invar");
  std::vector<Var> in;
  for (std::size_t k : order) in.push_back(j.jaxpr.invars.at(k));
  j.jaxpr.invars = std::move(in);
  return j;
}

ClosedJaxprData select_outputs(ClosedJaxprData j, const std::vector<std::size_t>& order) {
  std::vector<Atom> out;
  for (std::size_t k : order) out.push_back(j.jaxpr.outvars.at(k));
  j.jaxpr.outvars = std::move(out);
  return j;
}

std::vector<bool> dependent_outputs(const Jaxpr& j, const std::vector<bool>& marked) {
  std::unordered_set<const VarNode*> reached;
  for (std::size_t i = 0; i < j.invars.size(); ++i)
    if (marked.at(i)) reached.insert(j.invars[i].get());
  auto reads = [&](const Atom& a) { return !a.is_literal() && reached.count(a.var.get()); };
  for (const Eqn& e : j.eqns) {
    bool any = false;
    for (const Atom& a : e.inputs) any = any || reads(a);
    if (any)
      for (const Var& v : e.outvars) reached.insert(v.get());
  }
  std::vector<bool> out;
  for (const Atom& a : j.outvars) out.push_back(reads(a));
  return out;
}

std::vector<std::size_t> range(std::size_t begin, std::size_t n) {
  std::vector<std::size_t> r(n);
  for (std::size_t k = 0; k < n; ++k) r[k] = begin + k;
  return r;
}

}  // namespace jx::sub
