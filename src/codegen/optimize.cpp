// Verification, the new pass manager's default pipelines, and IR dumps.
#define JX_LLVM_OPTIMIZE
#include "codegen/optimize.hpp"

#include "jx/errors.hpp"

namespace jx::codegen {

void verify_module(const llvm::Module& module) {
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(module, &os))
    throw CompileError("codegen: invalid LLVM IR for module " + module.getName().str() + ": " +
                       os.str());
}

void optimize_module(llvm::Module& module, llvm::TargetMachine& tm, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  if (opt_level <= 0)
    mpm = pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0);
  else
    mpm = pb.buildPerModuleDefaultPipeline(opt_level == 1   ? llvm::OptimizationLevel::O1
                                           : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                            : llvm::OptimizationLevel::O3);
  mpm.run(module, mam);
}

void dump_module(const llvm::Module& module, const std::string& path) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec) throw CompileError("codegen: cannot write " + path + ": " + ec.message());
  module.print(os, nullptr);
}

}  // namespace jx::codegen
