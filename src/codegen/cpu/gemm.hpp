// The CPU backend's register-blocked matrix kernel (gemm.cpp), for dots whose strategy is
// kBlockedKernel.
#pragma once

#include <optional>

#include "codegen/cpu/cpu_isa.hpp"
#include "codegen/elemental/elemental.hpp"
#include "codegen/elemental/loops.hpp"

namespace jx::codegen::cpu {

// out = lhs · rhs over all of it or the rows of out's dimension 0 in `rows`.
void emit_blocked_gemm(ElementalEmitter& em, const CpuIsa& isa, const hlo::Instruction& dot, llvm::Value* lhs,
                       llvm::Value* rhs, llvm::Value* out, const std::optional<OuterRange>& rows);

}  // namespace jx::codegen::cpu
