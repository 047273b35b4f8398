// jx::nn — activations, normalisers and losses as jax.nn and optax define them, and Dense layer
// initialisation (jax.nn.initializers). Built from jx::np and jx::lax: all trace, jit and
// differentiate.
#pragma once

#include "jx/array.hpp"
#include "jx/numpy.hpp"
#include "jx/tree.hpp"
#include "jx/window.hpp"

namespace jx::nn {

// ---- activations -----------------------------------------------------------------------------
Array relu(const Array& x);  // max(x, 0); its derivative at 0 is 0, as JAX's
// x * Φ(x): with `approximate`, the tanh form; otherwise the exact erf form.
Array gelu(const Array& x, bool approximate = true);
Array sigmoid(const Array& x);  // 1 / (1 + exp(-x))

// ---- normalisers -----------------------------------------------------------------------------
// Over `axis` (np::Axes{} for all axes). Each subtracts the maximum (through which no gradient
// flows) before exponentiating, so large inputs do not overflow.
Array softmax(const Array& x, const np::Axes& axis = -1);
Array log_softmax(const Array& x, const np::Axes& axis = -1);
// log(sum(exp(x))); a slice that is all -inf gives -inf (and one holding +inf gives +inf), not NaN.
Array logsumexp(const Array& x, const np::Axes& axis = -1, bool keepdims = false);

// labels[..., None] == arange(num_classes), as `dtype`: a label outside [0, num_classes) gives
// a row of zeros.
Array one_hot(const Array& labels, int num_classes, DType dtype = float32);

// ---- losses ----------------------------------------------------------------------------------
// optax.softmax_cross_entropy_with_integer_labels: logits [..., C], integer labels [...] →
// per-example losses [...] (logsumexp(logits) - the label's logit). A label outside [0, C)
// contributes no logit: its loss is the logsumexp.
Array softmax_cross_entropy(const Array& logits, const Array& labels);
// mean((predictions - targets)^2), a scalar.
Array mse(const Array& predictions, const Array& targets);

// ---- pooling ---------------------------------------------------------------------------------
// flax.linen's pools: x is (batch..., spatial..., features), or (spatial..., features) unbatched;
// `window_shape` and `strides` (default 1s) run over the spatial dims, `padding` ("VALID",
// "SAME", or a (low, high) pair per spatial dim) pads them. max_pool takes each window's max;
// avg_pool its mean, counting padded positions unless `count_include_pad` is false.
Array max_pool(const Array& x, const std::vector<std::int64_t>& window_shape,
               const std::vector<std::int64_t>& strides = {}, const Padding& padding = "VALID");
Array avg_pool(const Array& x, const std::vector<std::int64_t>& window_shape,
               const std::vector<std::int64_t>& strides = {}, const Padding& padding = "VALID",
               bool count_include_pad = true);

// ---- layers ----------------------------------------------------------------------------------
// y = x @ w + b, with w: [in, out] and b: [out].
struct Dense {
  Array w, b;
};
JX_PYTREE(Dense, w, b)

// jax.nn.initializers: glorot_* scale by fan_avg = (in + out) / 2, he_* by fan_in, each as
// variance_scaling (1 for glorot, 2 for he) with a uniform or a normal distribution.
enum class Init { glorot_uniform, glorot_normal, he_uniform, he_normal };

// A Dense layer with w drawn from `key` as `init` says and b zero (float32).
Dense dense_init(const Array& key, int in, int out, Init init = Init::glorot_uniform);

}  // namespace jx::nn
