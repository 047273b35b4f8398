// The CPU's ldexp (elemental/ldexp.hpp) on AVX-512: vscalef, which computes y · 2^floor(n) rounded
// once, in one instruction where the portable form needs four and a clamp on n.
#pragma once

#include "codegen/llvm_headers.hpp"

namespace jx::codegen::cpu {

// After optimization: every call to a jx_ldexp_ function becomes vscalef on a 512-bit vector
// (narrower values padded), and the functions go. For AVX-512 targets only.
void lower_ldexp_calls(llvm::Module& module);

}  // namespace jx::codegen::cpu
