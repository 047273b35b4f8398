// libdevice, NVIDIA's math library as LLVM bitcode: where it is, the MathTable that calls it,
// and linking it into a module.
#pragma once

#include <string>

#include "codegen/elemental/math_table.hpp"

namespace jx::codegen::gpu {

// Every MathFn as libdevice's __nv_* function, except maximum and minimum: LLVM's intrinsics
// propagate NaN as jx does (libdevice's fmax returns the other operand).
const MathTable& libdevice_math_table();

// Links in the libdevice functions `module` calls, resolves their __nvvm_reflect queries as
// IEEE (no flush to zero) and internalizes everything but the kernels, so that the optimizer
// inlines what is used and drops the rest. Throws jx::CompileError if the file is unusable.
void link_libdevice(llvm::Module& module, const std::string& path);

}  // namespace jx::codegen::gpu
