// A MathTable of straight-line IR for every MathFn at float32 and float64, calling nothing: what a
// target without a math library (the GPU without libdevice) computes its transcendentals with.
// Only intrinsics every LLVM target lowers to instructions (sqrt, fabs, floor, ...) remain.
// docs/math_accuracy.md gives the measured errors and ranges. No LLVM type appears here, so that
// CPU tests can pass the table to CpuCompileOptions.
#pragma once

namespace jx::codegen {

class MathTable;  // codegen/elemental/math_table.hpp

const MathTable& portable_math_table();

}  // namespace jx::codegen
