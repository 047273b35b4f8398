// Placeholder until the dot family lands: every entry point throws.
#include "jx/lax.hpp"

#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace jx::lax {

Array dot_general(const Array& lhs, const Array& rhs, const DotDimensionNumbers& dimension_numbers,                   std::optional<DType> preferred_element_type) {
  throw Error("dot: not implemented");
}

}  // namespace jx::lax
