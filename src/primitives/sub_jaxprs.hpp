// What primitives holding sub-jaxprs share (custom derivatives, control flow): reading them from
// params, tracing user functions into closure-converted jaxprs, and reshaping their signatures.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hlo/builder.hpp"
#include "jaxpr/jaxpr.hpp"
#include "jx/detail/autodiff_impl.hpp"

namespace jx::sub {

using ClosedPtr = std::shared_ptr<const ClosedJaxprData>;

const Jaxpr& jaxpr_param(const Params& params, const char* name);
std::size_t count_param(const Params& params, const char* name);
Param size_param(std::size_t n);

// "[f32[3], i32[]]": avals as messages print them.
std::string avals_str(const std::vector<ShapedArray>& avals);
// Equal shapes and dtypes, weak types aside.
bool same_types(const std::vector<ShapedArray>& a, const std::vector<ShapedArray>& b);

// xs with the weak types of `avals` (a body may return a weak value where the carry is not).
std::vector<Array> with_weak_types(std::vector<Array> xs, std::span<const ShapedArray> avals);

// A closed jaxpr as a param with no consts of its own: its consts are appended to `operands`
// (they become its leading invars) and counted in `count`.
Param closed_over(ClosedJaxprData j, std::vector<Array>& operands, std::size_t& count);
// Traces fn and closure-converts it (closed_over); its output avals go to `out_avals`.
Param trace_converted(const detail::FlatFn& fn, const std::vector<ShapedArray>& avals,
                      const std::string& name, std::vector<Array>& operands, std::size_t& count,
                      std::vector<ShapedArray>* out_avals = nullptr);

// The HLO of fn, traced with lax ops at the operands' types, built inline: the lowering of a
// primitive computed as a composite of others.
std::vector<hlo::Instruction*> lower_traced(hlo::Builder& b,
                                            std::span<hlo::Instruction* const> operands,
                                            const detail::FlatFn& fn, const std::string& name);

// j taking fresh, unread inputs of `avals` before its invar `at`.
ClosedJaxprData with_unused_inputs(ClosedJaxprData j, std::size_t at,
                                   const std::vector<ShapedArray>& avals);
// j with its invars reordered: new invar k is old invar order[k].
ClosedJaxprData permute_inputs(ClosedJaxprData j, const std::vector<std::size_t>& order);
// j with its outvars reordered or dropped: new outvar k is old outvar order[k].
ClosedJaxprData select_outputs(ClosedJaxprData j, const std::vector<std::size_t>& order);
// Which outputs of j read (through data flow) an input marked in `marked`.
std::vector<bool> dependent_outputs(const Jaxpr& j, const std::vector<bool>& marked);

template <class T>
std::vector<T> slice(const std::vector<T>& v, std::size_t begin, std::size_t n) {
  return {v.begin() + static_cast<std::ptrdiff_t>(begin),
          v.begin() + static_cast<std::ptrdiff_t>(begin + n)};
}
template <class T>
std::vector<T> concat(std::vector<T> a, const std::vector<T>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
// The positions [begin, begin + n).
std::vector<std::size_t> range(std::size_t begin, std::size_t n);

}  // namespace jx::sub
