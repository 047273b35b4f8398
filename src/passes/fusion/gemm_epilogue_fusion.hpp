// GEMM epilogue fusion, for backends whose GEMM library applies a bias and an activation as it
// writes (cuBLASLt): a library dot read only by a fusion computing activation(dot + bias)
// becomes one output fusion of the two, which hlo::as_gemm_epilogue recognizes and the backend
// runs as one library call, without the dot's result going through memory.
#pragma once

#include <functional>

#include "hlo/ir.hpp"
#include "passes/pass.hpp"

namespace jx::passes {

class GemmEpilogueFusion final : public Pass {
 public:
  // `library_gemm`: whether the backend runs a dot as a library call.
  explicit GemmEpilogueFusion(std::function<bool(const hlo::Instruction&)> library_gemm)
      : library_gemm_(std::move(library_gemm)) {}

  std::string name() const override { return "gemm-epilogue-fusion"; }
  bool run(hlo::Module& module) override;

 private:
  std::function<bool(const hlo::Instruction&)> library_gemm_;
};

}  // namespace jx::passes
