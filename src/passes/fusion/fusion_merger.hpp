// Fusion merger: a loop fusion whose users are all fusions is merged into each of them, so its
// result never reaches memory, when that recomputes nothing costly: the producer is cheap
// (no expensive or loop ops) and has at most InstructionFusion::kMaxDuplication users, or it has
// one user that reads each of its elements once, and the merged body holds at most
// kMaxMergedSize instructions.
#pragma once

#include "passes/pass.hpp"

namespace jx::passes {

class FusionMerger final : public Pass {
 public:
  // Larger than instruction fusion's groups, whose chains it joins: a gradient's kernels of up to
  // this size compile faster than the more numerous ones of up to 256 (bench_compile's g300:
  // 263 against 378 ms of codegen).
  static constexpr int kMaxMergedSize = 1024;

  std::string name() const override { return "fusion-merger"; }
  bool run(hlo::Module& module) override;
};

}  // namespace jx::passes
