// Upcast 16-bit dots: a dot of bfloat16 or float16 operands becomes a float32 dot of the
// operands converted to float32, its result converted back. JAX's dot of 16-bit arrays
// accumulates in float32 and rounds once (XLA's CPU backend upcasts them the same way); the
// float32 product then runs on the backend's fast paths (the blocked kernel, BLAS), and the
// conversions fuse into their neighbours.
#pragma once

#include "passes/pass.hpp"

namespace jx::passes {

class Upcast16BitDots final : public Pass {
 public:
  std::string name() const override { return "upcast-16bit-dots"; }
  bool run(hlo::Module& module) override;
};

}  // namespace jx::passes
