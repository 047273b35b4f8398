// Placeholder until the binary family lands: every entry point throws.
#include "jx/lax.hpp"

#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace jx::lax {

Array add(const Array& x, const Array& y) {
  throw Error("binary: not implemented");
}
Array sub(const Array& x, const Array& y) {
  throw Error("binary: not implemented");
}
Array mul(const Array& x, const Array& y) {
  throw Error("binary: not implemented");
}
Array div(const Array& x, const Array& y) {
  throw Error("binary: not implemented");
}
Array rem(const Array& x, const Array& y) {
  throw Error("binary: not implemented");
}
Array pow(const Array& x, const Array& y) {
  throw Error("binary: not implemented");
}
Array max(const Array& x, const Array& y) {
  throw Error("binary: not implemented");
}
Array min(const Array& x, const Array& y) {
  throw Error("binary: not implemented");
}
Array atan2(const Array& x, const Array& y) {
  throw Error("binary: not implemented");
}
Array bitwise_and(const Array& x, const Array& y) {
  throw Error("binary: not implemented");
}
Array bitwise_or(const Array& x, const Array& y) {
  throw Error("binary: not implemented");
}

}  // namespace jx::lax
