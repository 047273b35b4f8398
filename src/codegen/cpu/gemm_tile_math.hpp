// The arithmetic on one vector of the matrix kernel's tile (gemm.cpp): the multiply-add of bf16
// pairs and a dense layer's epilogue.
#pragma once

#include "codegen/elemental/elemental.hpp"
#include "hlo/gemm.hpp"

namespace jx::codegen::cpu {

// acc + x.even · y.even + x.odd · y.odd, lane by lane, for x and y of twice acc's lanes of bf16:
// one instruction where `dpbf16` (AVX-512 BF16 at 16 lanes, which adds the odd product first,
// then the even, and flushes subnormals); elsewhere the same two multiply-adds in f32.
llvm::Value* pair_multiply_add(llvm::IRBuilder<>& b, bool dpbf16, llvm::Value* acc, llvm::Value* x,
                               llvm::Value* y);

// activation(sum + bias) of one vector of a finished tile (`bias` null: none).
llvm::Value* apply_epilogue(ElementalEmitter& em, hlo::GemmActivation activation, llvm::Value* sum,
                            llvm::Value* bias);

}  // namespace jx::codegen::cpu
