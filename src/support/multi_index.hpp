// Walking every multi-index of a shape, shared by the eager impls, the passes and codegen.
#pragma once

#include <cstdint>
#include <vector>

#include "jx/shape.hpp"

namespace jx {

// Calls f(index) for every multi-index of `shape` in row-major order (none if any dim is 0).
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  if (shape_size(shape) == 0) return;
  std::vector<std::int64_t> index(shape.size(), 0);
  while (true) {
    f(static_cast<const std::vector<std::int64_t>&>(index));
    int d = static_cast<int>(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace jx
