#include "jx/shape.hpp"

#include <limits>
#include <string>

#include "jx/errors.hpp"
#include "support/format.hpp"

namespace jx {

std::int64_t shape_size(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

void check_array_size(const Shape& s, DType dtype) {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t bytes = static_cast<std::int64_t>(itemsize(dtype));
  bool empty = false, overflow = false;
  for (std::int64_t d : s) {
    empty |= d == 0;
    if (d > 0 && bytes > kMax / d) overflow = true;
    if (!overflow && d > 0) bytes *= d;
  }
  if (overflow && !empty)
    throw ValueError("array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum "
                     "possible size: shape " + shape_str(s) + ", dtype " +
                     std::string(dtype_name(dtype)));
}

std::string shape_str(const Shape& s) { return detail::tuple_str(s); }

std::string ShapedArray::str() const {
  return std::string(dtype_short_name(dtype)) + "[" + detail::join(shape, ",") + "]";
}

}  // namespace jx
