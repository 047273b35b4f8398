// Branch-free IR for exp, log, tanh, erf, sin and cos: range reduction, a minimax polynomial and
// exponent bit manipulation, all straight-line (selects, no calls), so that LLVM's loop
// vectorizer widens loops of them instead of scalarizing into libm calls. NaN and infinities
// follow C's <cmath>; docs/math_accuracy.md gives the measured errors and ranges.
#pragma once

#include "codegen/llvm_headers.hpp"

namespace jx::codegen::vector_math {

// Each is a MathEmitter: args[0] is the argument, of the function's float type.
llvm::Value* exp_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args);
llvm::Value* exp_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args);
llvm::Value* log_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args);
llvm::Value* log_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args);
llvm::Value* tanh_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args);
llvm::Value* erf_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args);
// The fast forms, with XLA:CPU's accuracy (a few ULP) and a fraction of the work.
llvm::Value* fast_exp_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args);
llvm::Value* fast_exp_nonpositive_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args);
llvm::Value* fast_tanh_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args);
llvm::Value* fast_erf_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args);
// exp computed with ldexp (target_calls.hpp), for targets that lower it: the precise form's
// values, with a fraction of its work.
llvm::Value* exp_ldexp_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args);
llvm::Value* exp_ldexp_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args);
llvm::Value* exp_nonpositive_ldexp_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args);
llvm::Value* exp_nonpositive_ldexp_f64(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args);
llvm::Value* sin_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args);
llvm::Value* cos_f32(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args);

}  // namespace jx::codegen::vector_math
