// Fusion merger: a loop fusion whose users are all fusions is merged into each of them, so its
// result never reaches memory, when that recomputes nothing costly: the producer is cheap
// (no expensive or loop ops) and has at most InstructionFusion::kMaxDuplication users, or it has
// one user that reads each of its elements once.
#pragma once

#include "passes/pass.hpp"

namespace jx::passes {

class FusionMerger final : public Pass {
 public:
  std::string name() const override { return "fusion-merger"; }
  bool run(hlo::Module& module) override;
};

}  // namespace jx::passes
