// The matrix kernel's arithmetic that needs none of its state (gemm_emitter.hpp): on the tile's
// vectors, the multiply-add of bf16 pairs, a dense layer's epilogue, the transpose of a square
// block and the interleaving of runs; on indices, a tile's share of a panel's work and where a
// convolution's lhs elements lie.
#pragma once

#include <utility>
#include <vector>

#include "codegen/elemental/elemental.hpp"
#include "hlo/convolution.hpp"
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

// Transposes the square block whose rows are `rows` (as many vectors as each has lanes), in
// place: log2(lanes) rounds of two-vector shuffles.
void transpose_square(llvm::IRBuilder<>& b, std::vector<llvm::Value*>& rows);

// The vectors `runs` (one or more, of equal lanes) interleaved: lane p of run r at
// p · runs.size() + r.
llvm::Value* interleave(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& runs);

// Part q's share of `count` items over `parts` parts in equal runs: [first, second).
std::pair<llvm::Value*, llvm::Value*> share(llvm::IRBuilder<>& b, llvm::Value* count,
                                            llvm::Value* parts, llvm::Value* q);

// i_a, for (i_a) the row-major multi-index of `linear` over the axes' sizes.
llvm::Value* axis_index(llvm::IRBuilder<>& b, llvm::Value* linear,
                        const std::vector<hlo::ImplicitGemm::Axis>& axes, std::size_t a);
// Σ_a i_a · axes[a].lhs_stride, in elements (i_a as axis_index gives them).
llvm::Value* lhs_offset(llvm::IRBuilder<>& b, llvm::Value* linear,
                        const std::vector<hlo::ImplicitGemm::Axis>& axes);

}  // namespace jx::codegen::cpu
