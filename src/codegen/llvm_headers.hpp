// The one place jx includes LLVM (as Halide's LLVM_Headers.h). The IR core is always included;
// the rest is heavy, so a file asks for it by defining, before including this: JX_LLVM_OPTIMIZE
// (verifier, pass builder, target machines), JX_LLVM_JIT (that and ORC), JX_LLVM_NVPTX (the
// NVPTX intrinsics GPU kernels call), JX_LLVM_GPU (the optimizer and the bitcode reader, linker
// and internalizer the PTX compiler adds).
#ifndef JX_CODEGEN_LLVM_HEADERS_CORE
#define JX_CODEGEN_LLVM_HEADERS_CORE

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Type.h>
#include <llvm/IR/Value.h>

#endif  // JX_CODEGEN_LLVM_HEADERS_CORE

#if (defined(JX_LLVM_OPTIMIZE) || defined(JX_LLVM_JIT) || defined(JX_LLVM_GPU)) && \
    !defined(JX_CODEGEN_LLVM_HEADERS_OPTIMIZE)
#define JX_CODEGEN_LLVM_HEADERS_OPTIMIZE

#include <llvm/IR/Verifier.h>
#include <llvm/Passes/OptimizationLevel.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#endif  // JX_LLVM_OPTIMIZE

#if defined(JX_LLVM_JIT) && !defined(JX_CODEGEN_LLVM_HEADERS_JIT)
#define JX_CODEGEN_LLVM_HEADERS_JIT

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutorProcessControl.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/TaskDispatch.h>
#include <llvm/Support/MemoryBuffer.h>

#endif  // JX_LLVM_JIT

#if defined(JX_LLVM_NVPTX) && !defined(JX_CODEGEN_LLVM_HEADERS_NVPTX)
#define JX_CODEGEN_LLVM_HEADERS_NVPTX

#include <llvm/IR/IntrinsicsNVPTX.h>

#endif  // JX_LLVM_NVPTX

#if defined(JX_LLVM_GPU) && !defined(JX_CODEGEN_LLVM_HEADERS_GPU)
#define JX_CODEGEN_LLVM_HEADERS_GPU

// TargetSelect.h (above) declares LLVMInitializeNVPTXTarget and the other NVPTX initializers.
#include <llvm/ADT/SmallString.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/Transforms/IPO/Internalize.h>

#endif  // JX_LLVM_GPU
