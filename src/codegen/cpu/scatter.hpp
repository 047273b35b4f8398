// A scatter's kernel on the CPU: the updates combine, in order, into the result, which already
// holds the operand (the kernel works in place over it, or over a copy made before it runs).
#pragma once

#include "codegen/elemental/elemental.hpp"

namespace jx::codegen::cpu {

void emit_scatter(ElementalEmitter& em, const hlo::Instruction& scatter,
                  const ElementGenerator& indices, const ElementGenerator& updates,
                  llvm::Value* out);

}  // namespace jx::codegen::cpu
