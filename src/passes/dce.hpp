// DCE: removes instructions nothing reaches from their computation's root (parameters and
// side-effecting instructions stay) and computations the entry never calls, even indirectly.
#pragma once

#include "passes/pass.hpp"

namespace jx::passes {

class Dce final : public Pass {
 public:
  std::string name() const override { return "dce"; }
  bool run(hlo::Module& module) override;
};

}  // namespace jx::passes
