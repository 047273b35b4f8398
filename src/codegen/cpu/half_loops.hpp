// Vector loops over float16 take a whole vector of float32 lanes. LLVM 19's cost model
// vectorizes a loop that converts float16 to float32 and back 2 to 4 lanes wide on x86, F16C
// and AVX-512 FP16 alike, where one vcvtph2ps and one vcvtps2ph convert a whole vector: a
// float16 kernel ran at a third of a bfloat16 one's rate (x * 2 + 1 on f16[65536], one core of
// an AVX-512 Xeon: 2.7 against 8.5 G elements/s).
#pragma once

#include "codegen/llvm_headers.hpp"

namespace jx::codegen::cpu {

// Before optimization: each innermost counted loop (elemental/loops.hpp) that converts between
// half and float, is not kept from vectorizing and carries no sum that must keep its order, is
// given a width of `vector_bytes` / 4 lanes (llvm.loop.vectorize.width); one known to run fewer
// than 4 such vectors, the widest power of two that divides its count (4 lanes at least). The
// hint changes how wide the loop runs, never what it computes.
void widen_half_loops(llvm::Module& module, unsigned vector_bytes);

}  // namespace jx::codegen::cpu
