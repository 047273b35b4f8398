// The CPU backend's entry point: compiles HLO kernels to native code with LLVM ORC.
// No LLVM type appears here, so the rest of jx builds without LLVM headers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hlo/ir.hpp"

namespace jx::codegen {

// One kernel: computes `root` (an instruction of the entry computation) into its output
// buffer. ABI: void symbol(void* const* buffers), buffers = root's operands' buffers, then
// the output buffer.
struct KernelRequest {
  const hlo::Instruction* root;
  std::string symbol;
};

struct CpuCompileOptions {
  int opt_level = 2;
  std::string module_name = "jit";
  std::string dump_prefix;  // when set: <prefix>.ir-no-opt.ll and <prefix>.ir-with-opt.ll
};

// Compiled code for a set of kernels. Destroying it frees the code (its ORC resource tracker).
class CompiledKernels {
 public:
  virtual ~CompiledKernels() = default;
  virtual void* symbol(const std::string& name) const = 0;
};

std::shared_ptr<CompiledKernels> compile_kernels(const std::vector<KernelRequest>& kernels,
                                                 const CpuCompileOptions& options);

}  // namespace jx::codegen
