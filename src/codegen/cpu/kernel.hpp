// Emits one CPU kernel function for a KernelRequest (see cpu_compiler.hpp for its ABI).
#pragma once

#include <string>

#include "codegen/cpu/cpu_compiler.hpp"
#include "codegen/cpu/cpu_isa.hpp"
#include "codegen/llvm_headers.hpp"

namespace jx::codegen::cpu {

// Throws jx::CompileError for instructions the CPU backend cannot emit.
void emit_kernel(llvm::Module& module, const KernelRequest& request, const std::string& name,
                 const MathTable& math, const CpuIsa& isa);

}  // namespace jx::codegen::cpu
