// Control over how derivatives are computed: custom_jvp and custom_vjp (user-written rules),
// and checkpoint/remat with its policies (what reverse mode keeps from the forward pass). The
// flat functions they call are in detail/autodiff_impl.hpp.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.hpp"
#include "jx/detail/autodiff_impl.hpp"
#include "jx/detail/flat_fn.hpp"
#include "jx/tree.hpp"

namespace jx {

// custom_jvp(f, rule): f with a user-written jvp rule. rule(primals, tangents) takes two
// std::tuples shaped like f's arguments and returns std::pair{f(primals...), tangent}. The rule
// must be linear in the tangents for reverse mode to transpose it.
template <class F, class Rule>
auto custom_jvp(F f, Rule rule) {
  return [f = std::move(f), rule = std::move(rule)](const auto&... args) {
    using R = detail::result_t<F, std::decay_t<decltype(args)>...>;
    std::optional<R> proto;
    std::vector<std::size_t> begins;
    std::vector<Array> leaves = detail::flatten_args(begins, args...);
    std::size_t n = leaves.size();
    detail::FlatFn flat_rule = [&](const std::vector<Array>& xs) {
      std::vector<Array> ts(xs.begin() + static_cast<std::ptrdiff_t>(n), xs.end());
      std::size_t p = 0, t = 0;
      std::tuple<tree::rebuilt_t<std::decay_t<decltype(args)>>...> primals{
          tree::rebuild(args, xs, p)...};
      std::tuple<tree::rebuilt_t<std::decay_t<decltype(args)>>...> tangents{
          tree::rebuild(args, ts, t)...};
      auto [out, out_tangent] = rule(primals, tangents);
      std::vector<Array> flat = tree::leaves(out);
      tree::flatten(out_tangent, flat);
      return flat;
    };
    std::vector<Array> outs =
        detail::custom_jvp_call(detail::flat_fn(f, proto, args...), flat_rule, leaves);
    return detail::rebuild_from(*proto, outs);
  };
}

// custom_vjp(f, fwd, bwd): f with user-written reverse mode. fwd(args...) returns
// std::pair{f(args...), residuals} (any pytree); bwd(residuals, cotangent) returns a std::tuple
// with one cotangent per argument, shaped like it.
template <class F, class Fwd, class Bwd>
auto custom_vjp(F f, Fwd fwd, Bwd bwd) {
  return [f = std::move(f), fwd = std::move(fwd), bwd = std::move(bwd)](const auto&... args) {
    using R = detail::result_t<F, std::decay_t<decltype(args)>...>;
    using FwdOut = detail::result_t<Fwd, std::decay_t<decltype(args)>...>;
    std::optional<R> proto;
    std::optional<FwdOut> fwd_proto;
    std::vector<std::size_t> begins;
    std::vector<Array> leaves = detail::flatten_args(begins, args...);
    detail::FlatFn flat_fwd = [&](const std::vector<Array>& xs) {
      fwd_proto.emplace(detail::call_rebuilt(fwd, xs, args...));
      std::vector<Array> flat = tree::leaves(fwd_proto->first);
      tree::flatten(fwd_proto->second, flat);
      return flat;
    };
    detail::FlatFn flat_bwd = [&](const std::vector<Array>& xs) {
      std::size_t pos = 0;
      auto residuals = tree::rebuild(fwd_proto->second, xs, pos);
      auto ct = tree::rebuild(*proto, xs, pos);
      return tree::leaves(bwd(residuals, ct));
    };
    std::vector<Array> outs =
        detail::custom_vjp_call(detail::flat_fn(f, proto, args...), flat_fwd, flat_bwd, leaves);
    return detail::rebuild_from(*proto, outs);
  };
}

// Which of its intermediate values a checkpoint's reverse mode keeps from the forward pass
// instead of computing them again (jax.checkpoint_policies). Only values computed from what the
// forward pass knows can be kept.
enum class CheckpointPolicy : int {
  nothing_saveable,     // JAX's default: the backward pass computes everything again
  everything_saveable,  // every value: reverse mode as without checkpoint
  dots_saveable,        // dot_general's and conv_general_dilated's outputs (checkpoint_dots)
  dots_with_no_batch_dims_saveable,  // dot_general's, where it has no batch dimensions
  save_only_these_names,             // values checkpoint_name named with one of `names`
  save_any_names_but_these,          // values checkpoint_name named, but with none of `names`
};

struct CheckpointOptions {
  // Whether the recomputation is kept apart from the forward pass when both are compiled into
  // one program (an opt-barrier on its inputs), as JAX's prevent_cse; false lets CSE merge them
  // back, which keeps the residuals after all (JAX's advice for checkpoint inside scan).
  bool prevent_cse = true;
  CheckpointPolicy policy = CheckpointPolicy::nothing_saveable;
  std::vector<std::string> names;  // for the policies on names
};

// x, named for a checkpoint policy (jax.ad_checkpoint.checkpoint_name).
Array checkpoint_name(const Array& x, const std::string& name);

// checkpoint(f) (jax.checkpoint, also known as remat): f whose reverse mode stores none of its
// intermediate values for the backward pass (but those options.policy saves); the backward pass
// computes them again from f's inputs. Less memory for more compute: checkpointing each layer of
// a deep model keeps one value per layer alive between the passes instead of all of them. Its
// value and derivatives are f's.
template <class F>
auto checkpoint(F f, CheckpointOptions options = {}) {
  return [f = std::move(f), options](const auto&... args) {
    using R = detail::result_t<F, std::decay_t<decltype(args)>...>;
    std::optional<R> proto;
    std::vector<std::size_t> begins;
    std::vector<Array> leaves = detail::flatten_args(begins, args...);
    std::vector<Array> outs =
        detail::checkpoint_call(detail::flat_fn(f, proto, args...), leaves, options.prevent_cse,
                                options.policy, options.names);
    return detail::rebuild_from(*proto, outs);
  };
}
template <class F>
auto remat(F f, CheckpointOptions options = {}) {
  return checkpoint(std::move(f), options);
}

}  // namespace jx
