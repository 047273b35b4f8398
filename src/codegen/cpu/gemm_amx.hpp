// The matrix kernel on Intel's AMX tile unit, for f32 products of bf16 operands: each
// tdpbf16ps multiplies a 16 x 32 tile of lhs by a 32 x 16 tile of rhs (its pairs of steps
// interleaved) into 16 x 16 f32 sums, 8192 multiply-adds, where an AVX-512 multiply-add does 16.
// Eight tile registers hold a block of 32 x 32 sums (four tiles), two tiles of lhs and two of
// rhs (a product of fewer than 32 rows: tiles of its rows alone; one of lhs and two of sums
// where 16 or fewer). Each call
// packs the column panels it owns (32 columns, pairs of steps interleaved) into its workspace a
// group and a block of steps at a time (AmxWorkspace), a row of every panel of the group at a
// time, and passes every block of 32 rows over the group, the block's lhs for those steps packed
// once for it in tile order (zero-padded at lhs's edges: tiles read from one run of lines, not 16
// rows that share few sets of the first-level cache); the sums carry through the workspace from
// one block of steps to the next, and after the last go through the epilogue and out.
#pragma once

#include "codegen/cpu/gemm.hpp"
#include "codegen/cpu/gemm_plan.hpp"

namespace jx::codegen::cpu {

// out = epilogue(lhs · rhs) for the units [unit_begin, unit_end) (amx_units: a panel of a part
// of the rows of one product of the batch) of a product that amx_computes (gemm_plan.hpp);
// `workspace`:
// amx_workspace(g).bytes of the call's own.
void emit_amx_gemm(ElementalEmitter& em, const hlo::GemmShape& g, llvm::Value* lhs,
                   llvm::Value* rhs, llvm::Value* out, llvm::Value* workspace,
                   llvm::Value* unit_begin, llvm::Value* unit_end, const TileEpilogue& epilogue);

}  // namespace jx::codegen::cpu
