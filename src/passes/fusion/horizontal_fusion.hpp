// Horizontal fusion: small kernels (outputs of at most kMaxBytes) with no path between them run
// as one kernel, a loop nest per output shape, saving a launch each (up to kMaxKernels a batch).
// A backend may keep kernels of different kinds apart (PipelineOptions::kernel_batch_key), and
// kernels reading more than a bound out of batches (PipelineOptions::max_batched_read_bytes).
#pragma once

#include <functional>
#include <limits>
#include <string>

#include "passes/pass.hpp"

namespace jx::passes {

class HorizontalFusion final : public Pass {
 public:
  static constexpr std::int64_t kMaxBytes = 16 << 10;
  static constexpr std::size_t kMaxKernels = 16;

  // `batch_key`: a kernel joins only batches of its key; none given: any batch.
  explicit HorizontalFusion(std::function<std::string(const hlo::Instruction&)> batch_key = {},
                            std::int64_t max_read_bytes = std::numeric_limits<std::int64_t>::max())
      : batch_key_(std::move(batch_key)), max_read_bytes_(max_read_bytes) {}

  std::string name() const override { return "horizontal-fusion"; }
  bool run(hlo::Module& module) override;

 private:
  std::function<std::string(const hlo::Instruction&)> batch_key_;
  std::int64_t max_read_bytes_;
};

}  // namespace jx::passes
