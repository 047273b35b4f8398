// How the transform templates see a function: its arguments' leaves and their abstract values,
// a flat function of leaves for the tracer, and its result rebuilt from leaves (transforms.hpp, custom_derivatives.hpp,
// vmap.hpp).
#pragma once

#include <cstddef>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "jx/array.hpp"
#include "jx/detail/autodiff_impl.hpp"
#include "jx/tree.hpp"

namespace jx::detail {

// The arguments' leaves, and where each argument's leaves begin (plus the end).
template <class... Args>
std::vector<Array> flatten_args(std::vector<std::size_t>& begins, const Args&... args) {
  std::vector<Array> leaves;
  ((begins.push_back(leaves.size()), tree::flatten(args, leaves)), ...);
  begins.push_back(leaves.size());
  return leaves;
}

// The leaves' abstract values: what the tracer traces at (defined in make_jaxpr.cpp).
std::vector<ShapedArray> avals_of(const std::vector<Array>& xs);

// f called on the arguments rebuilt from `leaves` (scalars become Arrays, as under jit).
template <class F, class... Args>
auto call_rebuilt(const F& f, const std::vector<Array>& leaves, const Args&... args) {
  [[maybe_unused]] std::size_t pos = 0;  // unread when there are no args
  // Braced initialization runs left to right, so leaves are consumed in order.
  std::tuple<tree::rebuilt_t<Args>...> rebuilt{tree::rebuild(args, leaves, pos)...};
  return std::apply(f, rebuilt);
}

template <class F, class... Args>
using result_t = std::decay_t<std::invoke_result_t<const F&, tree::rebuilt_t<Args>...>>;

// A flat view of f for the tracer: leaves in, leaves out; the last result's structure is kept
// in `proto` (the function runs once per trace) so results can be rebuilt.
template <class F, class... Args>
FlatFn flat_fn(const F& f, std::optional<result_t<F, Args...>>& proto, const Args&... args) {
  return [&](const std::vector<Array>& leaves) {
    proto.emplace(call_rebuilt(f, leaves, args...));
    return tree::leaves(*proto);
  };
}

template <class T>
auto rebuild_from(const T& like, const std::vector<Array>& leaves, std::size_t begin = 0) {
  std::size_t pos = begin;
  return tree::rebuild(like, leaves, pos);
}

}  // namespace jx::detail
