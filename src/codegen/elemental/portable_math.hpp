// A MathTable of straight-line IR for every MathFn at float32 and float64, calling nothing: what a
// target without a math library (the GPU without libdevice) computes its transcendentals with.
// Only intrinsics every LLVM target lowers to instructions (sqrt, fabs, floor, ...) remain.
#pragma once

#include "codegen/elemental/math_table.hpp"

namespace jx::codegen {

const MathTable& portable_math_table();

}  // namespace jx::codegen
