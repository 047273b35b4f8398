// Reverse mode: vjp = transpose ∘ partial_eval ∘ jvp, then DCE.
#pragma once

#include <cstdint>
#include <vector>

#include "jaxpr/jaxpr.hpp"

namespace jx {

// f's jvp, split by partial evaluation into a forward part (primals → outputs, residuals) and a
// part linear in the tangents of the `wrt` inputs (residuals, tangents → output tangents).
struct Linearized {
  ClosedJaxprData forward, linear;
  std::size_t num_outputs = 0, num_residuals = 0;
};
Linearized linearize_jaxpr(const ClosedJaxprData& f, const std::vector<bool>& wrt);

// Runs the transpose of the linear part: residuals and one cotangent per output (empty: zero)
// → one cotangent per `wrt` input, zeros instantiated.
std::vector<Array> pullback(const Linearized& lin, const std::vector<Array>& residuals,
                            const std::vector<Array>& cts);

// The two halves of a vjp as jaxprs, dead code removed: forward (primals → outputs, residuals)
// and backward (residuals, output cotangents → cotangents of the `wrt` inputs). Only the first
// `num_cts` outputs take cotangents (all by default): those after them, aux outputs, get none.
struct VjpJaxprs {
  ClosedJaxprData forward, backward;
  std::size_t num_outputs = 0, num_residuals = 0;
};
VjpJaxprs vjp_jaxpr(const ClosedJaxprData& f, const std::vector<bool>& wrt,
                    std::size_t num_cts = SIZE_MAX);

}  // namespace jx
