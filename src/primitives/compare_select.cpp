// Placeholder until the compare_select family lands: every entry point throws.
#include "jx/lax.hpp"

#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace jx::lax {

Array eq(const Array& x, const Array& y) {
  throw Error("compare_select: not implemented");
}
Array ne(const Array& x, const Array& y) {
  throw Error("compare_select: not implemented");
}
Array lt(const Array& x, const Array& y) {
  throw Error("compare_select: not implemented");
}
Array le(const Array& x, const Array& y) {
  throw Error("compare_select: not implemented");
}
Array gt(const Array& x, const Array& y) {
  throw Error("compare_select: not implemented");
}
Array ge(const Array& x, const Array& y) {
  throw Error("compare_select: not implemented");
}
Array select_n(const Array& which, const std::vector<Array>& cases) {
  throw Error("compare_select: not implemented");
}
Array clamp(const Array& lo, const Array& x, const Array& hi) {
  throw Error("compare_select: not implemented");
}

}  // namespace jx::lax
