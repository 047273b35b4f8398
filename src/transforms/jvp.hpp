// Forward-mode differentiation as a jaxpr-to-jaxpr transform.
#pragma once

#include <vector>

#include "jaxpr/jaxpr.hpp"

namespace jx {

// Runs `jaxpr` on primals and tangents (an empty Array is a symbolic zero), binding each
// equation's jvp rule; equations whose tangents are all zero run on primals alone. Under a
// trace, this stages the differentiated program.
struct JvpValues {
  std::vector<Array> primals, tangents;
};
JvpValues jvp_eval(const Jaxpr& jaxpr, const std::vector<Array>& consts,
                   const std::vector<Array>& primals, const std::vector<Array>& tangents);

// The jvp of a closed jaxpr: takes its inputs, then the tangents of the inputs marked
// `nonzeros`; returns its outputs, then one tangent per output (zeros instantiated).
ClosedJaxprData jvp_jaxpr(const ClosedJaxprData& j, const std::vector<bool>& nonzeros);

}  // namespace jx
