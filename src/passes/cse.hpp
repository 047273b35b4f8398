// CSE: merges instructions that compute the same value (same opcode, operands, shape, attributes,
// literal and called computations) into the first of them; side-effecting ones never merge.
#pragma once

#include "passes/pass.hpp"

namespace jx::passes {

class Cse final : public Pass {
 public:
  std::string name() const override { return "cse"; }
  bool run(hlo::Module& module) override;
};

}  // namespace jx::passes
