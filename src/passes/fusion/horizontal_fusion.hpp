// Horizontal fusion: small kernels (outputs of at most kMaxBytes) with no path between them run
// as one kernel, a loop nest per output shape, saving a launch each (up to kMaxKernels a batch).
#pragma once

#include "passes/pass.hpp"

namespace jx::passes {

class HorizontalFusion final : public Pass {
 public:
  static constexpr std::int64_t kMaxBytes = 16 << 10;
  static constexpr std::size_t kMaxKernels = 16;

  std::string name() const override { return "horizontal-fusion"; }
  bool run(hlo::Module& module) override;
};

}  // namespace jx::passes
