// Row-major index arithmetic shared by the eager impls of layout and reduction primitives.
#pragma once

#include <cstdint>
#include <vector>

#include "jx/shape.hpp"

namespace jx {

// Row-major strides in elements: strides({2, 3, 4}) = {12, 4, 1}.
inline std::vector<std::int64_t> strides(const Shape& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

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

// The flat offset of a multi-index under the given strides.
inline std::int64_t offset_of(const std::vector<std::int64_t>& index,
                              const std::vector<std::int64_t>& strides) {
  std::int64_t off = 0;
  for (std::size_t d = 0; d < index.size(); ++d) off += index[d] * strides[d];
  return off;
}

}  // namespace jx
