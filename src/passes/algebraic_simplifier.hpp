// Algebraic simplifier: value-preserving local rewrites (bit for bit, NaN and signed zeros
// included): x*1, x+(-0.0), x-(+0.0), integer x+0 and x-0, x/1, neg(neg x), not(not x),
// reshape/transpose/broadcast/convert chains and no-ops, full slices, select on a constant
// predicate, broadcast of a scalar constant into a small constant, a dot's transposed operand
// read through its dimension numbers.
#pragma once

#include "passes/pass.hpp"

namespace jx::passes {

class AlgebraicSimplifier final : public Pass {
 public:
  std::string name() const override { return "algebraic-simplifier"; }
  bool run(hlo::Module& module) override;
};

}  // namespace jx::passes
