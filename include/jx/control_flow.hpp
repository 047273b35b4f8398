// Structured control flow as jax.lax has it: cond, switch, while_loop, fori_loop, scan.
// Branches and bodies are traced once into sub-jaxprs held by the primitives `cond`, `while` and
// `scan`; what they capture becomes explicit operands. Operands, carries and results are pytrees.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.hpp"
#include "jx/transforms.hpp"
#include "jx/tree.hpp"

namespace jx {

namespace detail {

// The flat forms the templates call (src/primitives/control_flow/). `who` names the user-facing
// function in messages ("cond", "switch").
std::vector<Array> cond_flat(const Array& index, const std::vector<FlatFn>& branches,
                             const std::vector<Array>& operands, const char* who);
std::vector<Array> while_flat(const FlatFn& cond_fn, const FlatFn& body_fn,
                              const std::vector<Array>& init);
// body maps (carry, x) leaves to (carry, y) leaves; returns the final carry, then the stacked ys.
std::vector<Array> scan_flat(const FlatFn& body, const std::vector<Array>& init,
                             const std::vector<Array>& xs, std::optional<std::int64_t> length,
                             bool reverse);
// The pred of cond as the int32 index of its branch (false: 0, true: 1), checked.
Array cond_index(const Array& pred);
// The index of switch clamped into [0, n).
Array switch_index(const Array& index, std::size_t n);
// fori_loop's counter, as JAX's: static bounds start a weak counter of the default int dtype
// (int32, or int64 under --enable_x64), as a Python int does; Array bounds must have one dtype,
// or be a weak and a strong signed integer (the weak one takes the other's dtype): the bounds
// converted to it, else a TypeError.
Array fori_start(std::int64_t lower);
std::pair<Array, Array> fori_bounds(const Array& lower, const Array& upper);
// Branch `b`'s (or the body's) result structure differs from branch 0's (or the carry's).
[[noreturn]] void throw_structure_mismatch(const char* who, std::size_t b, const std::string& first,
                                           const std::string& other);

// Runs branches (callables with one result type R) through cond_flat and rebuilds the result.
template <class R, class... Ops>
R call_branches(const Array& index,
                const std::vector<std::function<R(const tree::rebuilt_t<Ops>&...)>>& branches,
                const char* who, const Ops&... operands) {
  std::vector<std::optional<R>> protos(branches.size());
  std::vector<std::size_t> begins;
  std::vector<Array> leaves = flatten_args(begins, operands...);
  std::vector<FlatFn> flat;
  for (std::size_t b = 0; b < branches.size(); ++b)
    flat.push_back([&, b](const std::vector<Array>& xs) {
      protos[b].emplace(call_rebuilt(branches[b], xs, operands...));
      auto first = tree::structure(*protos[0]), mine = tree::structure(*protos[b]);
      if (!(mine == first)) throw_structure_mismatch(who, b, first.str(), mine.str());
      return tree::leaves(*protos[b]);
    });
  return rebuild_from(*protos[0], cond_flat(index, flat, leaves, who));
}

// The branches of a std::tuple as one std::function type.
template <class... Ops, class... Branches>
auto branch_list(const std::tuple<Branches...>& branches) {
  using R = std::common_type_t<
      std::decay_t<std::invoke_result_t<const Branches&, const tree::rebuilt_t<Ops>&...>>...>;
  return std::apply(
      [](const auto&... fs) {
        return std::vector<std::function<R(const tree::rebuilt_t<Ops>&...)>>{fs...};
      },
      branches);
}

}  // namespace detail

namespace lax {

// true_fn(operands...) if pred else false_fn(operands...). pred is a bool or number scalar; both
// branches are traced and must return the same structure and types. Under vmap with a batched
// pred, both branches run and the results are selected per example.
template <class TrueFn, class FalseFn, class... Ops>
auto cond(const Array& pred, const TrueFn& true_fn, const FalseFn& false_fn,
          const Ops&... operands) {
  return detail::call_branches(detail::cond_index(pred),
                               detail::branch_list<Ops...>(std::tie(false_fn, true_fn)), "cond",
                               operands...);
}

// branches[index](operands...), index clamped into range. `branches` is a std::tuple of
// callables (lambdas of different types) or a std::vector of one callable type.
template <class... Branches, class... Ops>
auto switch_(const Array& index, const std::tuple<Branches...>& branches, const Ops&... operands) {
  return detail::call_branches(detail::switch_index(index, sizeof...(Branches)),
                               detail::branch_list<Ops...>(branches), "switch", operands...);
}
template <class Branch, class... Ops>
auto switch_(const Array& index, const std::vector<Branch>& branches, const Ops&... operands) {
  using R = std::decay_t<std::invoke_result_t<const Branch&, const tree::rebuilt_t<Ops>&...>>;
  return detail::call_branches(detail::switch_index(index, branches.size()),
                               std::vector<std::function<R(const tree::rebuilt_t<Ops>&...)>>(
                                   branches.begin(), branches.end()),
                               "switch", operands...);
}

// while cond_fn(carry): carry = body_fn(carry). The carry is a pytree whose structure, shapes
// and dtypes the body keeps. Differentiable in forward mode only (use scan or fori_loop with
// static bounds for reverse mode).
template <class CondFn, class BodyFn, class T>
tree::rebuilt_t<T> while_loop(const CondFn& cond_fn, const BodyFn& body_fn, const T& init) {
  std::vector<Array> leaves = tree::leaves(init);
  using C = tree::rebuilt_t<T>;
  detail::FlatFn flat_cond = [&](const std::vector<Array>& xs) {
    std::size_t pos = 0;
    return std::vector<Array>{Array(cond_fn(tree::rebuild(init, xs, pos)))};
  };
  detail::FlatFn flat_body = [&](const std::vector<Array>& xs) {
    std::size_t pos = 0;
    C out = body_fn(tree::rebuild(init, xs, pos));
    if (!(tree::structure(out) == tree::structure(init)))
      detail::throw_structure_mismatch("while_loop", 1, tree::structure(init).str(),
                                       tree::structure(out).str());
    return tree::leaves(out);
  };
  return detail::rebuild_from(init, detail::while_flat(flat_cond, flat_body, leaves));
}

struct ScanOptions {
  std::optional<std::int64_t> length;  // required when xs has no leaves
  bool reverse = false;
};

// JAX's scan: f(carry, x) returns std::pair{carry, y}; x is xs's slice along axis 0 (xs is any
// pytree, e.g. std::tuple{} for none), y's are stacked along a new axis 0. Returns
// std::pair{final carry, ys}.
template <class F, class C, class X>
auto scan(const F& f, const C& init, const X& xs, ScanOptions options = {}) {
  using Carry = tree::rebuilt_t<C>;
  using Out = std::decay_t<std::invoke_result_t<const F&, Carry, tree::rebuilt_t<X>>>;
  std::vector<Array> init_leaves = tree::leaves(init), xs_leaves = tree::leaves(xs);
  std::vector<Array> x_protos;  // one slice per xs leaf: what f is called with
  std::optional<Out> proto;
  detail::FlatFn body = [&](const std::vector<Array>& in) {
    std::size_t pos = 0;
    Carry c = tree::rebuild(init, in, pos);
    auto x = tree::rebuild(xs, in, pos);
    proto.emplace(f(std::move(c), std::move(x)));
    if (!(tree::structure(proto->first) == tree::structure(init)))
      detail::throw_structure_mismatch("scan", 1, tree::structure(init).str(),
                                       tree::structure(proto->first).str());
    std::vector<Array> out = tree::leaves(proto->first);
    tree::flatten(proto->second, out);
    return out;
  };
  std::vector<Array> outs =
      detail::scan_flat(body, init_leaves, xs_leaves, options.length, options.reverse);
  std::size_t pos = 0;
  Carry carry = tree::rebuild(init, outs, pos);
  auto ys = tree::rebuild(proto->second, outs, pos);
  return std::pair{std::move(carry), std::move(ys)};
}

// for i in [lower, upper): carry = body_fn(i, carry), i a scalar of the bounds' integer dtype
// (detail::fori_start, fori_bounds). Static bounds lower to a scan (so reverse mode works);
// traced bounds (Arrays) to a while_loop.
template <class BodyFn, class T>
tree::rebuilt_t<T> fori_loop(std::int64_t lower, std::int64_t upper, const BodyFn& body_fn,
                             const T& init) {
  using C = tree::rebuilt_t<T>;
  auto step = [&](std::pair<Array, C> state, std::tuple<>) {
    auto& [i, carry] = state;
    C next = body_fn(i, std::move(carry));
    return std::pair{std::pair{i + 1, std::move(next)}, std::tuple<>{}};
  };
  std::pair<Array, C> start{detail::fori_start(lower),
                            detail::rebuild_from(init, tree::leaves(init))};
  return scan(step, start, std::tuple<>{}, {.length = std::max<std::int64_t>(upper - lower, 0)})
      .first.second;
}
template <class BodyFn, class T>
tree::rebuilt_t<T> fori_loop(const Array& lower, const Array& upper, const BodyFn& body_fn,
                             const T& init) {
  using C = tree::rebuilt_t<T>;
  auto [lo, hi] = detail::fori_bounds(lower, upper);
  std::tuple<Array, Array, C> start{lo, hi, detail::rebuild_from(init, tree::leaves(init))};
  auto done = while_loop([](const auto& s) { return std::get<0>(s) < std::get<1>(s); },
                         [&](std::tuple<Array, Array, C> s) {
                           auto& [i, hi, carry] = s;
                           C next = body_fn(i, std::move(carry));
                           return std::tuple<Array, Array, C>{i + 1, hi, std::move(next)};
                         },
                         start);
  return std::get<2>(std::move(done));
}

}  // namespace lax
}  // namespace jx
