// jx::nn normalisation layers, LayerNorm and BatchNorm, as flax.linen computes them: statistics
// in at least float32 (_compute_stats with its fast variance), then _normalize.
#include <string>
#include <vector>

#include "jx/errors.hpp"
#include "jx/lax.hpp"
#include "jx/nn.hpp"

namespace jx::nn {
namespace {

struct Moments {
  Array mean, var;
};

// Mean and biased variance over `axes` (kept as size-1 dims), computed in at least float32 so
// that 16-bit inputs do not lose the statistics: var = mean(x^2) - mean(x)^2, clamped at 0
// (round-off can make the difference negative), as flax's use_fast_variance.
Moments moments(const Array& x, const std::vector<int>& axes) {
  Array v = x.astype(promote_types(x.dtype(), float32));
  Array mean = np::mean(v, axes, /*keepdims=*/true);
  Array mean_of_squares = np::mean(np::square(v), axes, /*keepdims=*/true);
  return {mean, np::maximum(0, mean_of_squares - np::square(mean))};
}

// flax's _normalize: (x - mean) * (rsqrt(var + epsilon) * scale) + bias, in the promoted dtype
// of x and the statistics, returned in the common dtype of x, scale and bias.
Array normalize(const Array& x, const Moments& m, const Array& scale, const Array& bias,
                double epsilon) {
  Array mul = lax::rsqrt(m.var + epsilon) * scale;
  Array y = (x - m.mean) * mul + bias;
  return y.astype(promote_types(promote_types(x.dtype(), scale.dtype()), bias.dtype()));
}

// Every parameter and statistic is [features], the features being x's last axis.
void check_features(const char* op, const Array& x, const std::vector<const Array*>& params,
                    const char* names) {
  if (x.ndim() == 0)
    throw ShapeError(std::string(op) + ": x must have a feature axis (its last), got shape ()");
  const Shape features{x.shape().back()};
  for (const Array* p : params)
    if (p->shape() != features)
      throw ShapeError(std::string(op) + ": " + names + " must have shape " + shape_str(features) +
                       " (the features of x, of shape " + shape_str(x.shape()) + "), got " +
                       shape_str(p->shape()));
}

std::vector<int> all_axes_but_last(const Array& x) {
  std::vector<int> axes;
  for (int i = 0; i + 1 < static_cast<int>(x.ndim()); ++i) axes.push_back(i);
  return axes;
}

}  // namespace

LayerNorm layer_norm_init(int features) { return {np::ones({features}), np::zeros({features})}; }

Array layer_norm(const LayerNorm& layer, const Array& x, double epsilon) {
  check_features("layer_norm", x, {&layer.scale, &layer.bias}, "scale and bias");
  return normalize(x, moments(x, {-1}), layer.scale, layer.bias, epsilon);
}

BatchNorm batch_norm_init(int features) { return {np::ones({features}), np::zeros({features})}; }

BatchStats batch_stats_init(int features) { return {np::zeros({features}), np::ones({features})}; }

std::pair<Array, BatchStats> batch_norm(const BatchNorm& layer, const BatchStats& stats,
                                        const Array& x, bool training, double momentum,
                                        double epsilon) {
  check_features("batch_norm", x, {&layer.scale, &layer.bias, &stats.mean, &stats.var},
                 "scale, bias and the running mean and var");
  if (!training)
    return {normalize(x, {stats.mean, stats.var}, layer.scale, layer.bias, epsilon), stats};
  Moments batch = moments(x, all_axes_but_last(x));
  // The running averages keep their dtype, so a training loop's state never changes type.
  auto average = [&](const Array& running, const Array& observed) {
    Array v = momentum * running + (1 - momentum) * np::reshape(observed, running.shape());
    return v.astype(running.dtype());
  };
  BatchStats updated{average(stats.mean, batch.mean), average(stats.var, batch.var)};
  return {normalize(x, batch, layer.scale, layer.bias, epsilon), updated};
}

}  // namespace jx::nn
