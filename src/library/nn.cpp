// jx::nn: activations, normalisers and losses (jax.nn, optax).
#include "jx/nn.hpp"

#include <cmath>
#include <limits>
#include <numbers>
#include <string>

#include "jx/lax.hpp"

namespace jx::nn {
namespace {

// Integers and bools compute in float32 (float64 for int64), as JAX's to_inexact_dtype.
Array inexact(const Array& x) {
  if (is_floating(x.dtype())) return x;
  return x.astype(x.dtype() == int64 ? float64 : float32);
}

// The maximum over `axis`, kept as size-1 axes, with no gradient: every use below is a shift
// that the result does not depend on.
// The max over `axis`, kept as size-1 dims, from -inf (JAX's max(..., initial=-inf)): an empty
// axis gives -inf rather than an error.
Array max_from_neg_inf(const Array& x, const np::Axes& axis) {
  if (x.size() != 0) return np::max(x, axis, /*keepdims=*/true);
  return np::full_like(np::sum(x, axis, /*keepdims=*/true),
                       -std::numeric_limits<double>::infinity());
}

Array shift_of(const Array& x, const np::Axes& axis) {
  return np::stop_gradient(max_from_neg_inf(x, axis));
}

Array is_class(const Array& labels, int num_classes) {
  return np::equal(np::expand_dims(labels, -1), lax::iota(labels.dtype(), {num_classes}));
}

}  // namespace

// A select rather than maximum: maximum's derivative at 0 is 1/2, JAX's relu has 0 there.
// NaN stays NaN (NaN <= 0 is false).
Array relu(const Array& x) { return np::where(x <= 0, 0, x); }

Array gelu(const Array& x, bool approximate) {
  Array v = inexact(x);
  if (approximate) {
    const double sqrt_2_over_pi = std::sqrt(2.0 / std::numbers::pi);
    Array inner = sqrt_2_over_pi * (v + 0.044715 * lax::integer_pow(v, 3));
    return v * (0.5 * (1.0 + np::tanh(inner)));
  }
  return 0.5 * v * (1.0 + lax::erf(v * std::sqrt(0.5)));  // Φ(x) = (1 + erf(x / √2)) / 2
}

Array sigmoid(const Array& x) { return lax::logistic(inexact(x)); }

Array softmax(const Array& x, const np::Axes& axis) {
  Array v = inexact(x);
  Array unnormalized = np::exp(v - shift_of(v, axis));
  return unnormalized / np::sum(unnormalized, axis, /*keepdims=*/true);
}

Array log_softmax(const Array& x, const np::Axes& axis) {
  Array v = inexact(x);
  Array shifted = v - shift_of(v, axis);
  return shifted - np::log(np::sum(np::exp(shifted), axis, /*keepdims=*/true));
}

Array logsumexp(const Array& x, const np::Axes& axis, bool keepdims) {
  Array v = inexact(x);
  Array amax = max_from_neg_inf(v, axis);
  // A non-finite maximum shifts by 0 instead: -inf - -inf would be NaN (jax.nn.logsumexp).
  Array finite = np::abs(amax) < std::numeric_limits<double>::infinity();
  amax = np::stop_gradient(np::where(finite, amax, 0));
  Array sumexp = np::sum(np::exp(v - amax), axis, keepdims);
  return np::log(sumexp) + np::reshape(amax, sumexp.shape());
}

Array one_hot(const Array& labels, int num_classes, std::optional<DType> dtype) {
  return is_class(labels, num_classes).astype(dtype.value_or(default_float_dtype()));
}

Array softmax_cross_entropy(const Array& logits, const Array& labels) {
  if (!is_integral(labels.dtype()))
    throw TypeError("softmax_cross_entropy: labels must be integers, got " +
                    std::string(dtype_name(labels.dtype())));
  Shape batch = logits.shape();
  if (!batch.empty()) batch.pop_back();
  if (logits.ndim() == 0 || labels.shape() != batch)
    throw ShapeError("softmax_cross_entropy: labels of shape " + shape_str(labels.shape()) +
                     " do not match logits of shape " + shape_str(logits.shape()) +
                     " (labels take the logits' shape without its last axis)");
  Array v = inexact(logits);
  int num_classes = static_cast<int>(v.shape().back());
  // The label's logit, gathered (a label outside [0, C), negative ones too, reads 0).
  Array inside = np::where(labels < 0, num_classes, labels);
  Array label_logits =
      np::squeeze(np::take_along_axis(v, np::expand_dims(inside, -1), -1, std::nullopt, 0.0), -1);
  return logsumexp(v, -1) - label_logits;
}

Array mse(const Array& predictions, const Array& targets) {
  return np::mean(np::square(predictions - targets));
}

}  // namespace jx::nn
