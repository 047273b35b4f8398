// The CPU backend's register-blocked matrix kernel (gemm_emitter.hpp; AMX's tile unit for plain
// bf16 matrices, gemm_amx.hpp), for dots whose strategy is kBlockedKernel, and for dense layers
// whose bias and activation it applies as it stores.
#pragma once

#include <optional>

#include "codegen/cpu/cpu_isa.hpp"
#include "codegen/elemental/elemental.hpp"
#include "codegen/elemental/loops.hpp"
#include "hlo/convolution.hpp"
#include "hlo/gemm.hpp"

namespace jx::codegen::cpu {

// What a finished tile becomes as it is stored: activation(tile + bias), bias a vector of
// `bias_dtype` along the columns (or none): a dense layer's epilogue (hlo::as_gemm_epilogue).
// An `out` of 16 bits (the tile unit's kernel only) rounds the tile to it first, computes the
// rest in f32 and rounds again as it stores, as the same ops fused in a loop would.
struct TileEpilogue {
  hlo::GemmActivation activation = hlo::GemmActivation::kNone;
  llvm::Value* bias = nullptr;
  DType bias_dtype = float32, out = float32;
  bool applies() const { return bias || activation != hlo::GemmActivation::kNone; }
};

// out = epilogue(lhs · rhs), out of dims `out_dims`, over all of it or the rows of its
// dimension 0 in `rows` (the column panels, or the tile unit's units, where gemm_column_panels
// says so); `workspace`: gemm_workspace(isa, g, nullptr).bytes of the call's own
// (gemm_plan.hpp), or null where that is 0.
void emit_blocked_gemm(ElementalEmitter& em, const CpuIsa& isa, const hlo::GemmShape& g,
                       const Shape& out_dims, llvm::Value* lhs, llvm::Value* rhs, llvm::Value* out,
                       llvm::Value* workspace, const std::optional<OuterRange>& rows,
                       const TileEpilogue& epilogue = {});

// out = the convolution `conv` (hlo::as_implicit_gemm) of lhs and rhs: the same kernel, its
// lhs elements read where they lie in lhs, a run at a time; `rows` are the product's rows;
// `workspace`: gemm_workspace(isa, conv.shape, &conv).bytes of the call's own.
void emit_implicit_gemm(ElementalEmitter& em, const CpuIsa& isa, const hlo::ImplicitGemm& conv,
                        llvm::Value* lhs, llvm::Value* rhs, llvm::Value* out,
                        llvm::Value* workspace, const std::optional<OuterRange>& rows);

}  // namespace jx::codegen::cpu
