// The LLVM steps both backends run on a finished module: verify, optimize, dump.
#pragma once

#include <string>

#include "codegen/llvm_headers.hpp"

namespace llvm {
class TargetMachine;
}

namespace jx::codegen {

// jx::CompileError naming the problems when `module` is not valid IR.
void verify_module(const llvm::Module& module);
// LLVM's default pipeline at opt_level 0-3 with the new pass manager. The target machine adds
// its own passes (the NVPTX target resolves libdevice's __nvvm_reflect queries).
void optimize_module(llvm::Module& module, llvm::TargetMachine& tm, int opt_level);
// The module's text into `path`; jx::CompileError when it cannot be written.
void dump_module(const llvm::Module& module, const std::string& path);

}  // namespace jx::codegen
