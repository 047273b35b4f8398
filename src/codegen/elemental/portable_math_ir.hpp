// The pieces of portable_math.cpp's table: the emitters of the functions vector_math.hpp lacks,
// written with float_ir.hpp's IRBuilder.
#pragma once

#include "codegen/elemental/float_ir.hpp"

namespace jx::codegen::portable_math {

using llvm::Value;

using float_ir::emit;
using float_ir::Format;
using float_ir::Ir;
using float_ir::kF32;
using float_ir::kF64;
using float_ir::TwoPart;

// Each is a MathEmitter (math_table.hpp). Trigonometric: portable_math_trig.cpp.
Value* sin_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* cos_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* tan_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* tan_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* atan2_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* atan2_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
// Exponential and logarithmic: portable_math_exp_log.cpp.
Value* expm1_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* expm1_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* log1p_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* log1p_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* tanh_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* erf_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* pow_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* pow_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
// Composed from the functions above at float64: portable_math_composite.cpp.
Value* exp2_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* exp2_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* cbrt_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* cbrt_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* asin_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* asin_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* acos_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* acos_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* atan_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* atan_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* sinh_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* sinh_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* cosh_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* cosh_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* asinh_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* asinh_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* acosh_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* acosh_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* atanh_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);
Value* atanh_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args);

}  // namespace jx::codegen::portable_math
