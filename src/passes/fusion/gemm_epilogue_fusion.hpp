// GEMM epilogue fusion, for backends whose GEMM applies a bias and an activation as it writes
// (cuBLASLt's epilogues, the CPU's blocked kernel): a dot read only by a fusion computing
// activation(dot + bias) becomes one output fusion of the two, which hlo::as_gemm_epilogue
// recognizes and the backend runs as one library call or one kernel, without the dot's result
// going through memory.
#pragma once

#include <functional>

#include "hlo/ir.hpp"
#include "passes/pass.hpp"

namespace jx::passes {

class GemmEpilogueFusion final : public Pass {
 public:
  // `fuses`: whether the backend's code for a dot takes an epilogue.
  explicit GemmEpilogueFusion(std::function<bool(const hlo::Instruction&)> fuses)
      : fuses_(std::move(fuses)) {}

  std::string name() const override { return "gemm-epilogue-fusion"; }
  bool run(hlo::Module& module) override;

 private:
  std::function<bool(const hlo::Instruction&)> fuses_;
};

}  // namespace jx::passes
