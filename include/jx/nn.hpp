// jx::nn — activations, normalisers, pooling and losses as jax.nn, flax and optax define them,
// initializers (jax.nn.initializers) and layers as flax.linen defines them (Dense, Conv, Dropout,
// LayerNorm, BatchNorm), as parameter structs and pure functions. Built from jx::np, jx::lax and
// jx::random: all trace, jit and differentiate.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

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

// labels[..., None] == arange(num_classes), as `dtype` (the default float dtype unless given):
// a label outside [0, num_classes) gives a row of zeros.
Array one_hot(const Array& labels, int num_classes, std::optional<DType> dtype = std::nullopt);

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

// jax.nn.initializers, each variance_scaling(scale, mode, distribution): variance = scale / fan,
// fans as JAX computes them for a weight of shape (receptive field..., in, out): fan_in =
// in * prod(receptive field), fan_out = out * prod(receptive field), fan_avg their mean.
//   lecun_*:  scale 1, fan_in        glorot_*: scale 1, fan_avg        he_*: scale 2, fan_in
// *_uniform draws uniform in ±sqrt(3 variance); *_normal draws a normal truncated to ±2 standard
// deviations, rescaled by 1 / 0.87962566103423978 (the truncated normal's stddev) so that its
// variance is the target's.
enum class Init {
  glorot_uniform,
  glorot_normal,
  he_uniform,
  he_normal,
  lecun_uniform,
  lecun_normal
};

// An array of `shape` (at least 2-D: its last two dims are in and out) drawn from `key` as `init`
// says, computed in `dtype` as JAX computes it.
Array initialize(Init init, const Array& key, const Shape& shape, DType dtype = float32);

// A Dense layer with w drawn from `key` as `init` says and b zero (float32).
Dense dense_init(const Array& key, int in, int out, Init init = Init::glorot_uniform);

// flax.linen.Conv: w in HWIO (kernel spatial dims..., in, out), b [out].
struct Conv {
  Array w, b;
};
JX_PYTREE(Conv, w, b)

// A Conv layer with one kernel dim per spatial dim; w drawn from `key` as `init` says (fan_in =
// in_features * prod(kernel_size)), b zero (float32), as flax.linen.Conv's defaults.
Conv conv_init(const Array& key, int in_features, int out_features,
               std::vector<std::int64_t> kernel_size, Init init = Init::lecun_normal);

// x (batch, spatial..., in_features) → (batch, spatial'..., out_features): the convolution
// (lax.conv_general_dilated with NHWC / HWIO dimension numbers) plus the bias. `strides` empty
// means 1 along every spatial dim; padding as lax's ("SAME", "VALID" or explicit pairs).
Array conv(const Conv& layer, const Array& x, std::vector<std::int64_t> strides = {},
           const Padding& padding = "SAME");

// flax.linen.Dropout in training: each element kept with probability 1 - rate (jx::random's
// bernoulli from `key`) and scaled by 1 / (1 - rate), the others zero. rate 0 returns x, rate 1
// zeros; a rate outside [0, 1] is a jx::ValueError.
Array dropout(const Array& key, double rate, const Array& x);

// flax.linen.LayerNorm: (x - mean) / sqrt(var + epsilon) * scale + bias, the statistics over the
// last axis, computed in at least float32 (var = mean(x^2) - mean(x)^2, clamped at 0, as flax's
// fast variance); scale and bias [features].
struct LayerNorm {
  Array scale, bias;
};
JX_PYTREE(LayerNorm, scale, bias)

LayerNorm layer_norm_init(int features);  // scale ones, bias zeros (float32)
Array layer_norm(const LayerNorm& layer, const Array& x, double epsilon = 1e-6);

// flax.linen.BatchNorm over the last axis (the features): statistics over every other axis,
// biased variance, in at least float32. Training normalises by the batch's statistics and
// returns the running averages moved toward them (momentum * running + (1 - momentum) * batch);
// evaluation normalises by the running ones and returns them unchanged. The stats are a pytree:
// return them as the aux of value_and_grad(loss, jx::has_aux) and feed them to the next step.
struct BatchNorm {
  Array scale, bias;  // [features]
};
JX_PYTREE(BatchNorm, scale, bias)
struct BatchStats {
  Array mean, var;  // [features]: running averages
};
JX_PYTREE(BatchStats, mean, var)

BatchNorm batch_norm_init(int features);    // scale ones, bias zeros (float32)
BatchStats batch_stats_init(int features);  // mean zeros, var ones (float32), as flax's
std::pair<Array, BatchStats> batch_norm(const BatchNorm& layer, const BatchStats& stats,
                                        const Array& x, bool training, double momentum = 0.99,
                                        double epsilon = 1e-5);

}  // namespace jx::nn
