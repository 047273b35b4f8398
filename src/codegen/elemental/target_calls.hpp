// ldexp as a call that LLVM's loop vectorizer widens: y · 2^n for an integral float n, rounded
// once (to a subnormal, 0 or infinity where the result is one). llvm.ldexp would do, but LLVM
// lowers it on x86 to a libm call per lane, and the loop would stop vectorizing. The call instead
// names vector variants of itself (LLVM's vector-function ABI, as a vector math library's do),
// which the vectorizer calls at its widths. A backend whose MathTable emits it replaces every
// such call after optimization: the CPU with AVX-512's vscalef (cpu/x86_ldexp.hpp).
#pragma once

#include <string_view>

#include "codegen/llvm_headers.hpp"

namespace jx::codegen {

// The names of the scalar and vector functions the calls call: jx_ldexp_f32, jx_ldexp_v16f32...
inline constexpr std::string_view kLdexpPrefix = "jx_ldexp_";

// y · 2^n, y and n of one float type (scalar or vector).
llvm::Value* emit_ldexp(llvm::IRBuilder<>& b, llvm::Value* y, llvm::Value* n);

}  // namespace jx::codegen
