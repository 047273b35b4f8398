// elemental/target_calls.hpp's calls as AVX-512 instructions:
// - ldexp: vscalef, which computes y · 2^floor(n) rounded once, in one instruction where the
//   portable form needs four and a clamp on n;
// - rounding to bfloat16: vcvtneps2bf16 (AVX-512 BF16), one instruction for narrow_float's nine.
//   It rounds to nearest even as they do, but reads a subnormal float as zero whatever the
//   denormal mode. Where denormals are kept, a vector holding one takes narrow_float's form
//   instead, behind a branch that is almost never taken; where they are flushed (the default), a
//   subnormal is zero, as for every other floating-point instruction. (narrow_float keeps a
//   subnormal input in either mode, so on other CPUs converting a subnormal float32 that was
//   loaded as it is, not computed, keeps it; computed values are flushed already.)
#pragma once

#include "codegen/llvm_headers.hpp"

namespace jx::codegen::cpu {

// After optimization: every such call becomes those instructions on 512-bit vectors (narrower
// values and scalars padded), and the functions go.
// The CPU emits the calls for AVX-512 targets only, the rounding for those with AVX-512 BF16.
void lower_target_calls(llvm::Module& module);

}  // namespace jx::codegen::cpu
