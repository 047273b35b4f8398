// Row-major index arithmetic shared by the eager impls of layout and reduction primitives.
#pragma once

#include <cstdint>
#include <vector>

#include "jx/shape.hpp"
#include "support/multi_index.hpp"

namespace jx {

// Row-major strides in elements: strides({2, 3, 4}) = {12, 4, 1}.
inline std::vector<std::int64_t> strides(const Shape& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

// The flat offset of a multi-index under the given strides.
inline std::int64_t offset_of(const std::vector<std::int64_t>& index,
                              const std::vector<std::int64_t>& strides) {
  std::int64_t off = 0;
  for (std::size_t d = 0; d < index.size(); ++d) off += index[d] * strides[d];
  return off;
}

}  // namespace jx
