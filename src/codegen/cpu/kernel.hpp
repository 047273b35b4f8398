// Emits one CPU kernel function: `void name(void* const* buffers)` computing an HLO instruction
// into its output buffer (buffers = the instruction's operands' buffers, then the output).
#pragma once

#include <string>

#include "codegen/llvm_headers.hpp"
#include "hlo/ir.hpp"

namespace jx::codegen::cpu {

// Throws jx::CompileError for instructions the CPU backend cannot emit.
void emit_kernel(llvm::Module& module, const hlo::Instruction& root, const std::string& name);

}  // namespace jx::codegen::cpu
