// jx::nn pooling: flax.linen's max_pool and avg_pool over lax::reduce_window.
#include <cmath>
#include <limits>
#include <string>

#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "jx/errors.hpp"
#include "jx/lax.hpp"
#include "jx/nn.hpp"

namespace jx::nn {
namespace {

using Ints = std::vector<std::int64_t>;

// The lowest value of x's dtype: -inf where it has one (flax's -jnp.inf), max's identity.
Array lowest_of(DType d) {
  Array out = make_scalar(0, d);
  dispatch(d, [&]<class T>() {
    using L = std::numeric_limits<T>;
    *out.impl()->buffer->as<T>() = L::has_infinity ? -L::infinity() : L::lowest();
  });
  return out;
}

// flax.linen.pool: the window and strides over the spatial dims, 1 over the batch dims and the
// features; explicit padding gets (0, 0) there too.
Array pool(const std::string& name, const Array& x, const Array& init,
           lax::WindowComputation computation, const Ints& window_shape, const Ints& strides,
           const Padding& padding) {
  std::int64_t batch_dims = x.ndim() - static_cast<std::int64_t>(window_shape.size()) - 1;
  if (batch_dims < 0)
    throw ValueError(name + " pools " + std::to_string(window_shape.size()) +
                     " spatial dims and a features dim, but its input has shape " +
                     shape_str(x.shape()) + ".");
  Ints s = strides.empty() ? Ints(window_shape.size(), 1) : strides;
  if (s.size() != window_shape.size())
    throw ValueError(name + " got " + std::to_string(s.size()) + " strides for a window of " +
                     std::to_string(window_shape.size()) + " dims.");
  auto widen = [batch_dims](const Ints& spatial) {
    Ints all(static_cast<std::size_t>(batch_dims), 1);
    all.insert(all.end(), spatial.begin(), spatial.end());
    all.push_back(1);
    return all;
  };
  Padding full = padding;
  if (padding.kind() == Padding::Kind::kExplicit) {
    PadPairs pairs = padding.pads({}, {}, {});
    if (pairs.size() != window_shape.size())
      throw ValueError(name + " got padding for " + std::to_string(pairs.size()) +
                       " dims, but a window of " + std::to_string(window_shape.size()) + ".");
    pairs.insert(pairs.begin(), static_cast<std::size_t>(batch_dims), {0, 0});
    pairs.emplace_back(0, 0);
    full = Padding(pairs);
  }
  return lax::reduce_window(x, init, computation, widen(window_shape), widen(s), full);
}

}  // namespace

Array max_pool(const Array& x, const Ints& window_shape, const Ints& strides,
               const Padding& padding) {
  return pool("max_pool", x, lowest_of(x.dtype()), lax::max, window_shape, strides, padding);
}

Array avg_pool(const Array& x, const Ints& window_shape, const Ints& strides,
               const Padding& padding, bool count_include_pad) {
  Array sums = pool("avg_pool", x, Array(0.0f), lax::add, window_shape, strides, padding);
  if (count_include_pad) {
    std::int64_t count = 1;
    for (std::int64_t w : window_shape) count *= w;
    return sums / static_cast<double>(count);
  }
  // How many real elements each window holds: the same pool over ones, as flax counts them.
  Shape ones_shape = x.shape();
  ones_shape.back() = 1;
  if (ones_shape.size() == window_shape.size() + 2) ones_shape.front() = 1;
  Array counts =
      pool("avg_pool", np::ones(ones_shape), Array(0.0f), lax::add, window_shape, strides, padding);
  return sums / counts;
}

}  // namespace jx::nn
