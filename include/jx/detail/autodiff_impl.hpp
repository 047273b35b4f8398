// What the autodiff templates of transforms.hpp and custom_derivatives.hpp call into: flat
// functions over leaves. The transforms themselves (jvp, partial_eval, transpose, vjp) live in
// libjx (src/transforms).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jx/array.hpp"

namespace jx {
enum class CheckpointPolicy : int;  // jx/custom_derivatives.hpp
}  // namespace jx

namespace jx::detail {

using FlatFn = std::function<std::vector<Array>(const std::vector<Array>&)>;

// f's outputs and their tangents at `primals` along `tangents` (checked against the primals).
std::pair<std::vector<Array>, std::vector<Array>> jvp_flat(const FlatFn& f,
                                                           const std::vector<Array>& primals,
                                                           const std::vector<Array>& tangents);

// f's outputs, and the pullback: output cotangents → one cotangent per primal.
struct VjpState;
class Pullback {
 public:
  explicit Pullback(std::shared_ptr<const VjpState> state) : state_(std::move(state)) {}
  // The cotangents are checked against the outputs: jx::ShapeError / jx::TypeError.
  std::vector<Array> operator()(const std::vector<Array>& cts) const;

 private:
  std::shared_ptr<const VjpState> state_;
};
std::pair<std::vector<Array>, Pullback> vjp_flat(const FlatFn& f,
                                                 const std::vector<Array>& primals);

// The gradient of f's first output (a real scalar) with respect to the primals marked `wrt`;
// also that value when `keep_value`, and f's other outputs (aux) when `keep_aux`. What is not
// kept is not computed. `who` names the transform in messages ("grad", "value_and_grad").
// Integer and bool primals in `wrt` are a TypeError, or, with `allow_int`, get zero gradients.
struct GradFlat {
  Array value;
  std::vector<Array> aux, grads;
};
GradFlat grad_flat(const FlatFn& f, const std::vector<Array>& primals, const std::vector<bool>& wrt,
                   bool keep_value, bool keep_aux, const char* who, bool allow_int = false);

// Argnums given at run time (an int, or a list when `is_list`), checked against the number of
// positional arguments as JAX checks them, and made non-negative.
std::vector<int> check_argnums(const std::vector<int>& argnums, bool is_list, std::size_t num_args);

// The Jacobians of f's first num_values() outputs (num_values is read once f has been traced;
// the outputs after them are aux, kept as they are) with respect to the primals marked `wrt`,
// computed by one vmap over the standard basis: of the inputs (`forward`, jacfwd) or of the
// outputs (jacrev). jacobians[j * k + i] belongs to output j and the i-th of the k primals in
// `wrt`, of shape out_j.shape + primal_i.shape. Primals in `wrt` must be floating point, or,
// for jacrev with `allow_int`, get zeros of their dtype; jacrev's outputs must be floating point.
struct JacobianFlat {
  std::vector<Array> jacobians, aux;
};
JacobianFlat jacobian_flat(const FlatFn& f, const std::vector<Array>& primals,
                           const std::vector<bool>& wrt, bool forward,
                           const std::function<std::size_t()>& num_values, bool allow_int);

// Custom derivative rules (src/primitives/custom_derivatives.cpp). `jvp` maps primals then
// tangents to outputs then output tangents. `fwd` maps args to outputs then residuals; `bwd`
// maps residuals then output cotangents to one cotangent per arg.
std::vector<Array> custom_jvp_call(const FlatFn& f, const FlatFn& jvp,
                                   const std::vector<Array>& args);
std::vector<Array> custom_vjp_call(const FlatFn& f, const FlatFn& fwd, const FlatFn& bwd,
                                   const std::vector<Array>& args);
// f bound as one checkpoint equation (jax.checkpoint) on args.
std::vector<Array> checkpoint_call(const FlatFn& f, const std::vector<Array>& args,
                                   bool prevent_cse, CheckpointPolicy policy,
                                   const std::vector<std::string>& names);

}  // namespace jx::detail
