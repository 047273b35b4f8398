// jx::optim — optax's gradient transformations as pure functions on pytrees. An optimizer is a
// value with init(params) → state and update(grads, state, params) → std::pair{updates, state};
// apply_updates(params, updates) adds them. States are pytrees (step counts are int32 arrays),
// so a whole training step, value_and_grad and update, runs under one jx::jit.
//
//   auto opt = optim::adam(1e-3);
//   auto state = opt.init(params);
//   auto [updates, new_state] = opt.update(grads, state, params);
//   params = optim::apply_updates(params, updates);
#pragma once

#include <concepts>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "jx/array.hpp"
#include "jx/numpy.hpp"
#include "jx/tree.hpp"

namespace jx::optim {

// ---- learning rates and schedules ------------------------------------------------------------

// A value as a function of the step count (an int32 scalar, 0 at the first update). Schedules
// here return float32 scalars and trace under jit.
using Schedule = std::function<Array(const Array& count)>;

Schedule constant_schedule(double value);
// init_value → end_value linearly over transition_steps, starting at transition_begin.
Schedule linear_schedule(double init_value, double end_value, int transition_steps,
                         int transition_begin = 0);
// init_value * ((1 - alpha) * (1 + cos(pi * min(count, decay_steps) / decay_steps)) / 2 + alpha).
Schedule cosine_decay_schedule(double init_value, int decay_steps, double alpha = 0);
// Linear from init_value to peak_value over warmup_steps, then a cosine decay to end_value at
// decay_steps (which counts the warmup steps too).
Schedule warmup_cosine_decay_schedule(double init_value, double peak_value, int warmup_steps,
                                      int decay_steps, double end_value = 0);

// A learning rate: a constant or a Schedule.
class LearningRate {
 public:
  LearningRate(double value) : value_(value) {}  // NOLINT: implicit, so adam(1e-3) reads well
  template <class F>
  requires(!std::same_as<F, LearningRate> && std::is_invocable_r_v<Array, const F&, const Array&>)
      LearningRate(F schedule)
      : schedule_(std::move(schedule)) {}  // NOLINT

  // The rate at a step count; a constant is a weak-typed scalar.
  Array operator()(const Array& count) const {
    return schedule_ ? schedule_(count) : Array(value_);
  }

 private:
  double value_ = 0;
  Schedule schedule_;
};

// ---- states ----------------------------------------------------------------------------------

// The state of a transformation that keeps none.
struct EmptyState {};
[[maybe_unused]] inline std::tuple<> jx_pytree_fields(const EmptyState&) { return {}; }
[[maybe_unused]] inline std::tuple<> jx_pytree_fields(EmptyState&) { return {}; }
[[maybe_unused]] inline constexpr const char* jx_pytree_field_names(const EmptyState*) {
  return "";
}
[[maybe_unused]] inline constexpr const char* jx_pytree_type_name(const EmptyState*) {
  return "EmptyState";
}

struct ScaleByScheduleState {
  Array count;  // int32: updates so far
};
JX_PYTREE(ScaleByScheduleState, count)

template <class T>
struct TraceState {
  T trace;  // the momentum, shaped like the parameters
};
JX_PYTREE_TEMPLATE(TraceState, trace)

template <class T>
struct ScaleByAdamState {
  Array count;  // int32: updates so far
  T mu, nu;     // first and second moments, shaped like the parameters
};
JX_PYTREE_TEMPLATE(ScaleByAdamState, count, mu, nu)

namespace detail {
Array zeros_like_leaf(const Array& x);     // strong-typed: a state's type never changes
Array safe_increment(const Array& count);  // count + 1, saturating at the int32 maximum
// 1 - decay^count, computed in float32 at least and rounded to `dtype`: Adam's bias correction.
Array bias_correction(double decay, const Array& count, DType dtype);
template <class P>
auto zeros_like_tree(const P& params) {
  return tree::map(zeros_like_leaf, params);
}
}  // namespace detail

// sqrt of the sum of the squares of every leaf (optax.global_norm).
template <class T>
Array global_norm(const T& tree) {
  Array total = np::zeros({});
  for (const Array& leaf : tree::leaves(tree)) total = total + np::sum(np::square(leaf));
  return np::sqrt(total);
}

// ---- gradient transformations (optax's building blocks) --------------------------------------

// updates * -learning_rate(count) (optax.scale_by_learning_rate): the step size is cast to each
// update's dtype, so a float32 schedule keeps float32 updates float32.
struct ScaleByLearningRate {
  LearningRate learning_rate;

  template <class P>
  ScaleByScheduleState init(const P&) const {
    return {np::zeros({}, int32)};
  }
  template <class G, class P>
  auto update(const G& updates, const ScaleByScheduleState& state, const P&) const {
    Array rate = learning_rate(state.count);  // cast first: a constant rate converts exactly
    auto out = tree::map([&](const Array& u) { return u * -rate.astype(u.dtype()); }, updates);
    return std::pair{std::move(out), ScaleByScheduleState{detail::safe_increment(state.count)}};
  }
};

// Momentum (optax.trace): trace = g + decay * trace; the update is the trace, or with Nesterov
// g + decay * trace (the new trace).
struct Trace {
  double decay = 0.9;
  bool nesterov = false;

  template <class P>
  auto init(const P& params) const {
    using T = tree::rebuilt_t<P>;
    return TraceState<T>{detail::zeros_like_tree(params)};
  }
  template <class G, class T, class P>
  auto update(const G& updates, const TraceState<T>& state, const P&) const {
    auto step = [&](const Array& t, const Array& g) { return g + decay * t; };
    T trace = tree::map(step, state.trace, updates);
    T out = nesterov ? tree::map(step, trace, updates) : trace;
    return std::pair{std::move(out), TraceState<T>{std::move(trace)}};
  }
};

// Adam's direction (optax.scale_by_adam): bias-corrected moments, mu_hat / (sqrt(nu_hat) + eps).
struct ScaleByAdam {
  double b1 = 0.9, b2 = 0.999, eps = 1e-8;

  template <class P>
  auto init(const P& params) const {
    using T = tree::rebuilt_t<P>;
    return ScaleByAdamState<T>{np::zeros({}, int32), detail::zeros_like_tree(params),
                               detail::zeros_like_tree(params)};
  }
  template <class G, class T, class P>
  auto update(const G& updates, const ScaleByAdamState<T>& state, const P&) const {
    T mu = tree::map([&](const Array& m, const Array& g) { return (1 - b1) * g + b1 * m; },
                     state.mu, updates);
    T nu = tree::map([&](const Array& v, const Array& g) { return (1 - b2) * (g * g) + b2 * v; },
                     state.nu, updates);
    Array count = detail::safe_increment(state.count);
    T out = tree::map(
        [&](const Array& m, const Array& v) {
          Array m_hat = m / detail::bias_correction(b1, count, m.dtype());
          Array v_hat = v / detail::bias_correction(b2, count, v.dtype());
          return m_hat / (np::sqrt(v_hat) + eps);
        },
        mu, nu);
    return std::pair{std::move(out), ScaleByAdamState<T>{count, std::move(mu), std::move(nu)}};
  }
};

// updates + weight_decay * params (optax.add_decayed_weights).
struct AddDecayedWeights {
  double weight_decay = 0;

  template <class P>
  EmptyState init(const P&) const {
    return {};
  }
  template <class G, class P>
  auto update(const G& updates, const EmptyState&, const P& params) const {
    auto out = tree::map([&](const Array& u, const Array& p) { return u + weight_decay * p; },
                         updates, params);
    return std::pair{std::move(out), EmptyState{}};
  }
};

// Scales every update by max_norm / global_norm when the global norm exceeds max_norm
// (optax.clip_by_global_norm); below it updates pass unchanged.
struct ClipByGlobalNorm {
  double max_norm = 1;

  template <class P>
  EmptyState init(const P&) const {
    return {};
  }
  template <class G, class P>
  auto update(const G& updates, const EmptyState&, const P&) const {
    Array norm = global_norm(updates);
    Array below = norm < max_norm;
    auto out = tree::map(
        [&](const Array& u) { return np::where(below, u, u / norm.astype(u.dtype()) * max_norm); },
        updates);
    return std::pair{std::move(out), EmptyState{}};
  }
};

// Transformations applied one after another; the state is a std::tuple of theirs (optax.chain).
template <class... Ts>
struct Chain {
  static_assert(sizeof...(Ts) > 0, "chain needs at least one transformation");
  std::tuple<Ts...> transforms;

  template <class P>
  auto init(const P& params) const {
    return std::apply(
        [&](const auto&... t) {
          return std::tuple<decltype(t.init(params))...>{t.init(params)...};
        },
        transforms);
  }
  template <class G, class S, class P>
  auto update(const G& updates, const S& state, const P& params) const {
    return update_from<0>(updates, state, params);
  }

 private:
  // Runs transformations I... on `updates`, collecting their new states after `done`.
  template <std::size_t I, class U, class S, class P, class... Done>
  auto update_from(const U& updates, const S& state, const P& params, const Done&... done) const {
    auto [u, s] = std::get<I>(transforms).update(updates, std::get<I>(state), params);
    if constexpr (I + 1 == sizeof...(Ts))
      return std::pair{std::move(u), std::tuple<Done..., decltype(s)>{done..., std::move(s)}};
    else
      return update_from<I + 1>(u, state, params, done..., s);
  }
};

template <class... Ts>
Chain<Ts...> chain(Ts... transforms) {
  return Chain<Ts...>{{std::move(transforms)...}};
}

inline ScaleByLearningRate scale_by_learning_rate(LearningRate learning_rate) {
  return {std::move(learning_rate)};
}
inline Trace trace(double decay, bool nesterov = false) { return {decay, nesterov}; }
inline ScaleByAdam scale_by_adam(double b1 = 0.9, double b2 = 0.999, double eps = 1e-8) {
  return {b1, b2, eps};
}
inline AddDecayedWeights add_decayed_weights(double weight_decay) { return {weight_decay}; }
inline ClipByGlobalNorm clip_by_global_norm(double max_norm) { return {max_norm}; }

// ---- optimizers ------------------------------------------------------------------------------

// params - learning_rate * grads.
inline ScaleByLearningRate sgd(LearningRate learning_rate) {
  return scale_by_learning_rate(std::move(learning_rate));
}
// SGD with momentum (optax.sgd with momentum=beta): -learning_rate * trace.
inline Chain<Trace, ScaleByLearningRate> momentum(LearningRate learning_rate, double beta = 0.9,
                                                  bool nesterov = false) {
  return chain(trace(beta, nesterov), scale_by_learning_rate(std::move(learning_rate)));
}
inline Chain<ScaleByAdam, ScaleByLearningRate> adam(LearningRate learning_rate, double b1 = 0.9,
                                                    double b2 = 0.999, double eps = 1e-8) {
  return chain(scale_by_adam(b1, b2, eps), scale_by_learning_rate(std::move(learning_rate)));
}
// Adam with decoupled weight decay: -learning_rate * (adam direction + weight_decay * params).
inline Chain<ScaleByAdam, AddDecayedWeights, ScaleByLearningRate> adamw(
    LearningRate learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
    double weight_decay = 1e-4) {
  return chain(scale_by_adam(b1, b2, eps), add_decayed_weights(weight_decay),
               scale_by_learning_rate(std::move(learning_rate)));
}

// ---- mixed precision -------------------------------------------------------------------------

// Mixed precision as optax users train (with jmp's policy): parameters and optimizer state stay
// in param_dtype (float32 "master weights"); the loss runs on a copy cast to compute_dtype, so
// its matmuls and activations are 16-bit; the gradient flows back through the cast and arrives
// in param_dtype, where the optimizer updates the master weights. Loss scaling, which float16's
// narrow range needs, is the user's, as in JAX.
//
//   auto mp = optim::MixedPrecision{};  // float32 parameters, bfloat16 compute, float32 loss
//   auto loss = [&](const Params& p, const Array& x) {
//     return mp.cast_to_output(model(mp.cast_to_compute(p), mp.cast_to_compute(x)));
//   };
struct MixedPrecision {
  DType param_dtype = float32;
  DType compute_dtype = bfloat16;
  DType output_dtype = float32;

  template <class T>
  tree::rebuilt_t<T> cast_to_compute(const T& tree) const { return cast(tree, compute_dtype); }
  template <class T>
  tree::rebuilt_t<T> cast_to_param(const T& tree) const { return cast(tree, param_dtype); }
  template <class T>
  tree::rebuilt_t<T> cast_to_output(const T& tree) const { return cast(tree, output_dtype); }

 private:
  // Floating leaves only: integer labels and step counts keep their dtype.
  template <class T>
  static tree::rebuilt_t<T> cast(const T& tree, DType dtype) {
    return tree::map(
        [dtype](const Array& x) { return is_floating(x.dtype()) ? x.astype(dtype) : x; }, tree);
  }
};

// params + updates, leaf-wise, in each parameter's dtype (optax.apply_updates).
template <class P, class U>
tree::rebuilt_t<P> apply_updates(const P& params, const U& updates) {
  return tree::map([](const Array& p, const Array& u) { return (p + u).astype(p.dtype()); }, params,
                   updates);
}

}  // namespace jx::optim
