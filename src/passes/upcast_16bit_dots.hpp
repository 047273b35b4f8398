// Upcast 16-bit dots: a dot of bfloat16 or float16 operands becomes a float32 product, its
// result converted back: JAX's dot of 16-bit arrays accumulates in float32 and rounds once.
// Where the backend reads 16-bit operands (cuBLAS's tensor cores, the CPU's blocked kernel for
// bf16 where its pair multiply-adds pay, CpuIsa::bf16_pairs_pay, or it reads a few rows' rhs in
// place, or AMX's tile unit computes the product) the product takes them as they are; elsewhere
// they are converted to float32 (as XLA's CPU backend does), so the product runs on
// the f32 paths (the blocked kernel, BLAS) and the conversions fuse into their neighbours.
#pragma once

#include <functional>

#include "passes/pass.hpp"

namespace jx::passes {

class Upcast16BitDots final : public Pass {
 public:
  // `reads_16bit`: whether the backend runs a given f32 product on its 16-bit operands.
  explicit Upcast16BitDots(std::function<bool(const hlo::Instruction&)> reads_16bit = {})
      : reads_16bit_(std::move(reads_16bit)) {}
  std::string name() const override { return "upcast-16bit-dots"; }
  bool run(hlo::Module& module) override;

 private:
  std::function<bool(const hlo::Instruction&)> reads_16bit_;
};

}  // namespace jx::passes
