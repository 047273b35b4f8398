#include "jx/shape.hpp"

#include "support/format.hpp"

namespace jx {

std::int64_t shape_size(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) { return detail::tuple_str(s); }

std::string ShapedArray::str() const {
  return std::string(dtype_short_name(dtype)) + "[" + detail::join(shape, ",") + "]";
}

}  // namespace jx
