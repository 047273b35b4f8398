// jx::optim: optax's schedules, and the non-template pieces of the gradient transformations.
#include "jx/optim.hpp"

#include <cstdint>
#include <limits>
#include <numbers>
#include <string>

namespace jx::optim {

Schedule constant_schedule(double value) {
  return [value](const Array&) { return np::full({}, value, float32); };
}

Schedule linear_schedule(double init_value, double end_value, int transition_steps,
                         int transition_begin) {
  if (transition_steps <= 0) return constant_schedule(init_value);  // as optax
  return [=](const Array& count) {
    Array steps = np::clip(count - transition_begin, 0, transition_steps).astype(float32);
    Array frac = 1.0 - steps / static_cast<double>(transition_steps);
    return (init_value - end_value) * frac + end_value;
  };
}

Schedule cosine_decay_schedule(double init_value, int decay_steps, double alpha) {
  if (decay_steps <= 0)
    throw ValueError("cosine_decay_schedule requires positive decay_steps, got decay_steps=" +
                std::to_string(decay_steps));
  return [=](const Array& count) {
    Array steps = np::minimum(count, decay_steps).astype(float32);
    Array cosine =
        0.5 * (1.0 + np::cos(std::numbers::pi * steps / static_cast<double>(decay_steps)));
    return init_value * ((1 - alpha) * cosine + alpha);
  };
}

Schedule warmup_cosine_decay_schedule(double init_value, double peak_value, int warmup_steps,
                                      int decay_steps, double end_value) {
  if (decay_steps <= warmup_steps)
    throw ValueError("warmup_cosine_decay_schedule: decay_steps (" + std::to_string(decay_steps) +
                ") must exceed warmup_steps (" + std::to_string(warmup_steps) + ")");
  double alpha = peak_value == 0 ? 0 : end_value / peak_value;
  Schedule warmup = linear_schedule(init_value, peak_value, warmup_steps);
  Schedule decay = cosine_decay_schedule(peak_value, decay_steps - warmup_steps, alpha);
  // optax.join_schedules: the second schedule counts from its boundary.
  return [=](const Array& count) {
    return np::where(count < warmup_steps, warmup(count), decay(count - warmup_steps));
  };
}

namespace detail {

Array zeros_like_leaf(const Array& x) { return np::zeros(x.shape(), x.dtype()); }

Array safe_increment(const Array& count) {
  constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
  return np::where(count < kMax, count + 1, count);
}

// In float32 at least, then rounded to `dtype`, as optax: 0.999 is 1 in bfloat16, and 1 - 1^t
// would divide by 0.
Array bias_correction(double decay, const Array& count, DType dtype) {
  DType wide = itemsize(dtype) < 4 ? float32 : dtype;
  return (1.0 - np::power(np::full({}, decay, wide), count.astype(wide))).astype(dtype);
}

}  // namespace detail
}  // namespace jx::optim
