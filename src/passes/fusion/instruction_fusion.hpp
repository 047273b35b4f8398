// Instruction fusion (XLA's loop and reduction-input fusion): producers join their consumers'
// kernels, so intermediate arrays never reach memory.
//
// Starting from the last instruction, each kernel-worthy instruction roots a group, and its
// producers join it in reverse topological order when:
//   - they are fusible (elementwise, layout ops, iota, small constants) or loop ops (reduce,
//     argmax, argmin) whose every element the group evaluates once per row: through a
//     broadcast along leading dims (softmax's `x - max(x)`) or elementwise;
//   - their values are not recomputed by the group beyond what is cheap: an expensive op
//     (exp, divide, ...) or loop op never sits behind a broadcast that repeats its elements;
//   - all their users are in the group, or they are cheap (no expensive op) and are then
//     duplicated into at most kMaxDuplication groups, keeping the original for other users;
//     a scalar constant and its broadcasts are immediates, duplicated into every group;
//   - but a value that reaches memory anyway (a dot or a convolution reads it, directly or
//     through reshapes, or it is the result) is read from there by other groups, unless a
//     copy reads fewer bytes than it.
// Dots never join: large ones are BLAS calls whose epilogues become their own loop fusion.
#pragma once

#include "passes/pass.hpp"

namespace jx::passes {

class InstructionFusion final : public Pass {
 public:
  static constexpr int kMaxDuplication = 4;
  static constexpr int kMaxGroupSize = 256;                // bounds one kernel's compile time
  static constexpr std::int64_t kMaxFusedConstant = 1024;  // elements; larger ones stay buffers

  std::string name() const override { return "instruction-fusion"; }
  bool run(hlo::Module& module) override;
};

}  // namespace jx::passes
