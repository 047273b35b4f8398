// The CPU backend's emitter table: the shared elemental emitters plus reduce, argmax/argmin and
// dot, whose generators emit their inner loops at the point of use.
#pragma once

#include "codegen/cpu/loops.hpp"
#include "codegen/elemental/elemental.hpp"

namespace jx::codegen::cpu {

void add_reduction_emitters(EmitterTable& table);  // reduce.cpp: reduce, argmax, argmin
void add_dot_emitter(EmitterTable& table);         // dot.cpp
const EmitterTable& cpu_emitters();                // kernel.cpp

// gemm.cpp: out = lhs · rhs for a dot whose strategy is kBlockedKernel, over all of it or the
// rows of out's dimension 0 in `rows`.
void emit_blocked_gemm(ElementalEmitter& em, const hlo::Instruction& dot, llvm::Value* lhs,
                       llvm::Value* rhs, llvm::Value* out, const std::optional<OuterRange>& rows);

}  // namespace jx::codegen::cpu
