// Multi-output fusion: kernels over the same loop nest merge into one kernel with several
// outputs (a tuple-rooted fusion read through get-tuple-element):
//   - siblings: two kernels reading the same array (at least kMinSharedBytes), all of whose
//     outputs have one shape, with no path between them: the array is read once;
//   - producer and consumer: a loop fusion read elementwise by a consumer fusion of its shape,
//     whose result is also needed elsewhere: it is written once and never read back.
#pragma once

#include "passes/pass.hpp"

namespace jx::passes {

class MultiOutputFusion final : public Pass {
 public:
  static constexpr std::int64_t kMinSharedBytes = 1024;

  std::string name() const override { return "multi-output-fusion"; }
  bool run(hlo::Module& module) override;
};

}  // namespace jx::passes
