// Walking every multi-index of a shape, shared by the eager impls, the HLO evaluator, the passes
// and codegen.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "jx/shape.hpp"

namespace jx {

// Calls f(index), or f(index, flat) where f takes the row-major offset too, for every
// multi-index of `shape` in row-major order (none if any dim is 0).
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  if (shape_size(shape) == 0) return;
  using Index = std::vector<std::int64_t>;
  Index index(shape.size(), 0);
  for (std::int64_t flat = 0;; ++flat) {
    if constexpr (std::is_invocable_v<F&, const Index&, std::int64_t>)
      f(static_cast<const Index&>(index), flat);
    else
      f(static_cast<const Index&>(index));
    int d = static_cast<int>(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace jx
