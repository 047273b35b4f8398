// Partial evaluation: a jaxpr split into the part computable from the known inputs and the part
// that must wait for the unknown ones, joined by residuals.
#pragma once

#include <vector>

#include "jaxpr/jaxpr.hpp"

namespace jx {

struct PartialEval {
  // Known inputs → known outputs, then the residuals. Keeps the original consts.
  ClosedJaxprData known;
  // Residuals, then unknown inputs → the unknown and the instantiated outputs.
  ClosedJaxprData unknown;
  std::vector<bool> out_unknowns;
  std::size_t num_residuals = 0;
};

// An equation is unknown when any of its inputs is. An output marked in `instantiate` is an
// output of the unknown jaxpr even when it is known (it passes through as a residual).
PartialEval partial_eval_jaxpr(const ClosedJaxprData& j, const std::vector<bool>& unknowns,
                               const std::vector<bool>& instantiate);

}  // namespace jx
