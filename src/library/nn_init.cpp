// jx::nn initializers (jax.nn.initializers' variance scaling) and the Dense and Conv layers'
// parameters drawn with them.
#include <cmath>
#include <string>

#include "jx/errors.hpp"
#include "jx/nn.hpp"
#include "jx/random.hpp"

namespace jx::nn {
namespace {

// The standard deviation of a standard normal truncated to (-2, 2): the truncated draws are
// divided by it so that their variance is the target's (JAX's constant).
constexpr double kTruncatedStddev = .87962566103423978;

struct Scaling {
  double scale;
  enum { kFanIn, kFanAvg } mode;
  bool uniform;
};

Scaling scaling_of(Init init) {
  switch (init) {
    case Init::glorot_uniform:
      return {1, Scaling::kFanAvg, true};
    case Init::glorot_normal:
      return {1, Scaling::kFanAvg, false};
    case Init::he_uniform:
      return {2, Scaling::kFanIn, true};
    case Init::he_normal:
      return {2, Scaling::kFanIn, false};
    case Init::lecun_uniform:
      return {1, Scaling::kFanIn, true};
    case Init::lecun_normal:
      break;
  }
  return {1, Scaling::kFanIn, false};
}

}  // namespace

Array initialize(Init init, const Array& key, const Shape& shape, DType dtype) {
  if (shape.size() < 2)
    throw ValueError("Can't compute input and output sizes of a " + std::to_string(shape.size()) +
                     "-dimensional weights tensor. Must be at least 2D.");
  // JAX's _compute_fans with in_axis -2 and out_axis -1: every other dim is receptive field.
  double receptive_field = 1;
  for (std::size_t i = 0; i + 2 < shape.size(); ++i) receptive_field *= double(shape[i]);
  double fan_in = double(shape[shape.size() - 2]) * receptive_field;
  double fan_out = double(shape.back()) * receptive_field;
  Scaling s = scaling_of(init);
  double fan = s.mode == Scaling::kFanIn ? fan_in : (fan_in + fan_out) / 2;
  // As JAX: the variance rounded to the dtype, and every later step computed in it.
  Array variance = np::array(s.scale / fan).astype(dtype);
  if (s.uniform) return random::uniform(key, shape, dtype, -1, 1) * np::sqrt(3 * variance);
  Array stddev = np::sqrt(variance) / np::array(kTruncatedStddev).astype(dtype);
  return random::truncated_normal(key, -2, 2, shape, dtype) * stddev;
}

Dense dense_init(const Array& key, int in, int out, Init init) {
  if (in <= 0 || out <= 0)
    throw ShapeError("dense_init: in and out must be positive, got in=" + std::to_string(in) +
                     ", out=" + std::to_string(out));
  return Dense{initialize(init, key, {in, out}), np::zeros({out})};
}

Conv conv_init(const Array& key, int in_features, int out_features,
               std::vector<std::int64_t> kernel_size, Init init) {
  if (in_features <= 0 || out_features <= 0)
    throw ShapeError("conv_init: in_features and out_features must be positive, got in_features=" +
                     std::to_string(in_features) +
                     ", out_features=" + std::to_string(out_features));
  bool positive = !kernel_size.empty();
  for (std::int64_t k : kernel_size) positive &= k > 0;
  if (!positive)
    throw ShapeError("conv_init: kernel_size must be one or more positive sizes, got " +
                     shape_str(kernel_size));
  // flax.linen.Conv's kernel: kernel_size + (in_features, out_features).
  Shape shape = std::move(kernel_size);
  shape.push_back(in_features);
  shape.push_back(out_features);
  return Conv{initialize(init, key, shape), np::zeros({out_features})};
}

}  // namespace jx::nn
