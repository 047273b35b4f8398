// Splat constants: an array constant whose elements are all equal becomes a broadcast of a
// scalar constant, so a fused kernel reads an immediate instead of an array from memory.
// Simplification folds such broadcasts into arrays (they feed further folding); this runs
// after it, before fusion.
#pragma once

#include "passes/pass.hpp"

namespace jx::passes {

class SplatConstants final : public Pass {
 public:
  std::string name() const override { return "splat-constants"; }
  bool run(hlo::Module& module) override;
};

}  // namespace jx::passes
