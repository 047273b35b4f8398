// jx::nn's Dropout, as flax.linen.Dropout in training.
#include <string>

#include "jx/errors.hpp"
#include "jx/nn.hpp"
#include "jx/random.hpp"
#include "support/format.hpp"

namespace jx::nn {

Array dropout(const Array& key, double rate, const Array& x) {
  if (!(rate >= 0 && rate <= 1))
    throw ValueError("dropout: rate must be in [0, 1], got " +
                     detail::python_float_repr(rate, /*single_precision=*/false));
  if (rate == 0) return x;
  if (rate == 1) return np::zeros_like(x);  // not x * 0 / 0: no NaN in the value or gradient
  const double keep = 1 - rate;
  Array mask = random::bernoulli(key, keep, x.shape());
  return np::where(mask, x / keep, 0);
}

}  // namespace jx::nn
