// Transposition: the reverse-mode form of a jaxpr that is linear in some of its inputs.
#pragma once

#include <vector>

#include "jaxpr/jaxpr.hpp"

namespace jx {

// JAX's backward_pass. `args` holds the values of the non-linear inputs (empty where
// `linear`); equations with no linear input run forward first, then each linear equation's
// transpose rule runs in reverse order. Returns one cotangent per linear input, an empty Array
// where it is zero. `cts` holds one cotangent per output (empty: zero).
std::vector<Array> backward_pass(const Jaxpr& jaxpr, const std::vector<Array>& consts,
                                 const std::vector<bool>& linear, const std::vector<Array>& args,
                                 const std::vector<Array>& cts);

// The transpose as a jaxpr: takes the non-linear inputs, then one cotangent per output;
// returns one cotangent per linear input (zeros instantiated).
ClosedJaxprData transpose_jaxpr(const ClosedJaxprData& j, const std::vector<bool>& linear);

}  // namespace jx
