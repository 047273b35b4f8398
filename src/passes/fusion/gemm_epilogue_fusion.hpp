// GEMM epilogue fusion, for backends whose GEMM applies a bias and an activation as it writes
// (cuBLASLt's epilogues, the CPU's blocked kernel): a dot read only by a fusion computing
// activation(dot + bias) (or of the dot rounded to bf16 or f16), or only by that rounding alone,
// becomes one output fusion of the two, which hlo::as_gemm_epilogue recognizes and the backend
// runs as one library call or one kernel, without the dot's result going through memory.
#pragma once

#include <functional>

#include "hlo/ir.hpp"
#include "passes/pass.hpp"

namespace jx::passes {

class GemmEpilogueFusion final : public Pass {
 public:
  // Whether the backend's code for a dot takes an epilogue whose output is of `out` (f32, or a
  // 16-bit float the product rounds to first: hlo::epilogue_value).
  using Fuses = std::function<bool(const hlo::Instruction& dot, DType out)>;
  explicit GemmEpilogueFusion(Fuses fuses) : fuses_(std::move(fuses)) {}

  std::string name() const override { return "gemm-epilogue-fusion"; }
  bool run(hlo::Module& module) override;

 private:
  Fuses fuses_;
};

}  // namespace jx::passes
