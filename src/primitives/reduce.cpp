// Placeholder until the reduce family lands: every entry point throws.
#include "jx/lax.hpp"

#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace jx::lax {

Array reduce_sum(const Array& x, const std::vector<std::int64_t>& axes) {
  throw Error("reduce: not implemented");
}
Array reduce_max(const Array& x, const std::vector<std::int64_t>& axes) {
  throw Error("reduce: not implemented");
}
Array reduce_min(const Array& x, const std::vector<std::int64_t>& axes) {
  throw Error("reduce: not implemented");
}
Array reduce_prod(const Array& x, const std::vector<std::int64_t>& axes) {
  throw Error("reduce: not implemented");
}
Array argmax(const Array& x, std::int64_t axis, DType index_dtype) {
  throw Error("reduce: not implemented");
}
Array argmin(const Array& x, std::int64_t axis, DType index_dtype) {
  throw Error("reduce: not implemented");
}

}  // namespace jx::lax
