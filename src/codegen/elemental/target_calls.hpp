// Calls that a backend replaces with its own instructions after optimization, where LLVM would
// lower the portable IR poorly inside a vectorized loop. Each call names vector variants of
// itself (LLVM's vector-function ABI, as a vector math library's functions do), which the loop
// vectorizer calls at its widths; then the backend replaces every call, scalar or vector (the
// CPU on AVX-512: cpu/x86_target_calls.hpp). A backend's MathTable says which it emits.
//
// - ldexp: y · 2^n for an integral float n, rounded once (to a subnormal, 0 or infinity where the
//   result is one). llvm.ldexp would do, but LLVM lowers it on x86 to a libm call per lane, and
//   the loop would stop vectorizing.
// - Rounding f32 to bfloat16, to nearest even, as narrow_float does (but for a subnormal input
//   while denormals are flushed: the lowering may read it as zero, as the mode asks). LLVM
//   vectorizes an fptrunc to bfloat 4 lanes at a time on x86, and narrow_float's integer form
//   costs 9 instructions a vector where AVX-512 BF16 has one.
#pragma once

#include <string_view>

#include "codegen/llvm_headers.hpp"

namespace jx::codegen {

// The names of the functions the calls call, by prefix: jx_ldexp_f32, jx_ldexp_v16f32, ...
inline constexpr std::string_view kLdexpPrefix = "jx_ldexp_";
inline constexpr std::string_view kRoundBf16Prefix = "jx_round_bf16_";

// y · 2^n, y and n of one float type (scalar or vector).
llvm::Value* emit_ldexp(llvm::IRBuilder<>& b, llvm::Value* y, llvm::Value* n);
// An f32 value (scalar or vector) rounded to bfloat16.
llvm::Value* emit_round_bf16(llvm::IRBuilder<>& b, llvm::Value* v);

// Replaces every call to a function named `prefix`... by lower(call) and removes the functions.
void replace_calls(llvm::Module& module, std::string_view prefix,
                   llvm::function_ref<llvm::Value*(llvm::CallInst&)> lower);

}  // namespace jx::codegen
