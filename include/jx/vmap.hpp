// vmap(f, in_axes, out_axes): f mapped over a batch axis of its arguments; jx::none, Axis and
// InAxes, the tree prefixes that say which axis of each leaf is batched.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.hpp"
#include "jx/detail/flat_fn.hpp"
#include "jx/detail/vmap_impl.hpp"
#include "jx/errors.hpp"
#include "jx/tree.hpp"

namespace jx {

// "Not batched", as an in_axes or out_axes entry (JAX's None).
struct NoneAxis {};
inline constexpr NoneAxis none{};

// One in_axes/out_axes entry: an axis (negative counts from the end), jx::none, or a list of
// entries for the children of a container (a struct's fields, a vector's or tuple's elements,
// a map's values by key), as JAX takes a tree prefix of the value: {jx::none, 0} for a pair
// maps its second element only. An axis or jx::none applies to every leaf below it.
class Axis {
 public:
  Axis(int axis) : axis_(axis) {}  // NOLINT: implicit, so {0, jx::none} reads as in JAX
  Axis(NoneAxis) {}                // NOLINT
  Axis(std::initializer_list<Axis> children) : children_(children), is_list_(true) {}  // NOLINT
  bool is_list() const { return is_list_; }
  const std::optional<int>& get() const { return axis_; }
  const std::vector<Axis>& children() const { return children_; }

 private:
  std::optional<int> axis_;
  std::vector<Axis> children_;
  bool is_list_ = false;
};

// vmap's in_axes: one entry for every argument (0, jx::none), or one per argument
// ({0, jx::none, {1, jx::none}}), each a tree prefix of its argument.
class InAxes {
 public:
  InAxes(int axis) : all_(axis) {}             // NOLINT
  InAxes(NoneAxis) : all_(none) {}             // NOLINT
  InAxes(std::initializer_list<Axis> per_arg)  // NOLINT
      : all_(none), per_arg_(per_arg), listed_(true) {}
  // The entry of argument i of n; a list of another length is a jx::TypeError.
  const Axis& of(std::size_t i, std::size_t n) const {
    if (!listed_) return all_;
    if (per_arg_.size() != n)
      throw TypeError(
          "vmap in_axes must be an int, jx::none, or a list with one entry per "
          "positional argument, but got " +
          std::to_string(per_arg_.size()) + " entries for " + std::to_string(n) + " arguments.");
    return per_arg_[i];
  }

 private:
  Axis all_;
  std::vector<Axis> per_arg_;
  bool listed_ = false;
};

namespace detail {

// Appends the axis of each leaf of x, as `spec`, a tree prefix of x, gives it. `what` names
// the spec in errors ("in_axes", "out_axes").
template <class T>
void leaf_axes(const Axis& spec, const T& x, const char* what,
               std::vector<std::optional<int>>& out) {
  if (!spec.is_list()) {
    out.insert(out.end(), tree::leaves(x).size(), spec.get());
    return;
  }
  std::size_t n = spec.children().size();
  auto mismatch = [&](const std::string& value) {
    return TypeError(std::string("vmap ") + what +
                     " specification must be a tree prefix of the corresponding value, got a "
                     "list of " +
                     std::to_string(n) + " entries for " + value + ".");
  };
  if constexpr (tree::is_container_v<T>) {
    std::size_t children = 0;
    tree::for_each_child(x, [&](const auto&) { ++children; });
    if (children != n) throw mismatch("a value with " + std::to_string(children) + " children");
    std::size_t i = 0;
    tree::for_each_child(x, [&](const auto& c) { leaf_axes(spec.children()[i++], c, what, out); });
  } else {
    throw mismatch("a leaf");
  }
}

}  // namespace detail

// vmap(f, in_axes, out_axes)(args...): f mapped over a batch axis of its arguments, computed by
// rewriting f's jaxpr with each primitive's batch rule (no loop at run time). Outputs get the
// batch axis at out_axes, a tree prefix of f's result.
template <class F>
auto vmap(F f, InAxes in_axes = 0, Axis out_axes = 0) {
  return [f = std::move(f), in_axes = std::move(in_axes),
          out_axes = std::move(out_axes)](const auto&... args) {
    using R = detail::result_t<F, std::decay_t<decltype(args)>...>;
    std::vector<std::size_t> begins;
    std::vector<Array> leaves = detail::flatten_args(begins, args...);
    std::vector<std::optional<int>> axes;
    std::vector<int> arg_of_leaf;
    constexpr std::size_t n = sizeof...(args);
    std::size_t a = 0;
    (detail::leaf_axes(in_axes.of(a++, n), args, "in_axes", axes), ...);
    for (std::size_t k = 0; k < n; ++k)
      arg_of_leaf.insert(arg_of_leaf.end(), begins[k + 1] - begins[k], static_cast<int>(k));
    std::optional<R> proto;
    auto out_leaf_axes = [&] {
      std::vector<std::optional<int>> out;
      detail::leaf_axes(out_axes, *proto, "out_axes", out);
      return out;
    };
    std::vector<Array> outs = detail::vmap_flat(detail::flat_fn(f, proto, args...), leaves, axes,
                                                arg_of_leaf, out_leaf_axes);
    return detail::rebuild_from(*proto, outs);
  };
}

}  // namespace jx
