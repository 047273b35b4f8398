// compile_ptx: one LLVM module per call (a fresh context, so threads compile at once), its
// kernels emitted, libdevice linked in when there is one, optimized and printed as PTX by the
// NVPTX target.
#define JX_LLVM_GPU
#include "codegen/llvm_headers.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <unordered_set>

#include "codegen/elemental/portable_math.hpp"
#include "codegen/gpu/gpu_compiler.hpp"
#include "codegen/gpu/kernel.hpp"
#include "codegen/gpu/libdevice.hpp"
#include "codegen/optimize.hpp"
#include "jx/errors.hpp"

namespace jx::codegen {
namespace {

constexpr const char* kTriple = "nvptx64-nvidia-cuda";

// The architectures LLVM 19's NVPTX target knows, from sm_60 on, each with the oldest PTX ISA
// it accepts for it, but at least 6.0 (shfl.sync): older PTX loads on more drivers.
struct Arch {
  int sm, ptx;
};
constexpr Arch kArchs[] = {{60, 60}, {61, 60}, {62, 60}, {70, 60}, {72, 61}, {75, 63},
                           {80, 70}, {86, 71}, {87, 74}, {89, 78}, {90, 78}};

Arch pick_arch(const GpuTarget& target) {
  std::string cc = std::to_string(target.major) + "." + std::to_string(target.minor);
  if (target.major < 0 || target.minor < 0 || target.minor > 9)
    throw CompileError("codegen: " + cc + " is not a compute capability");
  const Arch* best = nullptr;
  for (const Arch& a : kArchs)
    if (a.sm <= target.major * 10 + target.minor) best = &a;
  if (!best)
    throw CompileError("codegen: compute capability " + cc +
                       " is older than the GPU backend supports (6.0)");
  return *best;
}

std::unique_ptr<llvm::TargetMachine> target_machine(const Arch& arch, int opt_level) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (!target) throw CompileError("codegen: LLVM has no NVPTX target: " + error);
  llvm::CodeGenOptLevel level = opt_level <= 0   ? llvm::CodeGenOptLevel::None
                                : opt_level == 1 ? llvm::CodeGenOptLevel::Less
                                : opt_level == 2 ? llvm::CodeGenOptLevel::Default
                                                 : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      kTriple, "sm_" + std::to_string(arch.sm), "+ptx" + std::to_string(arch.ptx),
      llvm::TargetOptions(), std::nullopt, std::nullopt, level));
  if (!tm) throw CompileError("codegen: cannot make an NVPTX target machine");
  return tm;
}

// PTX names are letters, digits, '_' and '$', not starting with a digit.
std::string ptx_name(const std::string& symbol) {
  std::string name = symbol;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '$') c = '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "_" + name;
  return name;
}

// The libdevice file to link, or "" for none.
std::string libdevice_path(const std::string& option) {
  if (option == "none") return "";
  if (option.empty()) return find_libdevice();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(option, ec))
    throw CompileError("codegen: no libdevice at " + option);
  return option;
}

std::string emit_ptx(llvm::Module& module, llvm::TargetMachine& tm) {
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream os(ptx);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    throw CompileError("codegen: the NVPTX target cannot print PTX");
  pm.run(module);
  return std::string(ptx.str());
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw CompileError("codegen: cannot write " + path);
}

}  // namespace

PtxModule compile_ptx(const std::vector<KernelRequest>& kernels, const GpuCompileOptions& options) {
  Arch arch = pick_arch(options.target);
  std::unique_ptr<llvm::TargetMachine> tm = target_machine(arch, options.opt_level);
  std::string libdevice = libdevice_path(options.libdevice);
  const MathTable& math = libdevice.empty() ? portable_math_table() : gpu::libdevice_math_table();

  llvm::LLVMContext ctx;
  llvm::Module module(options.module_name, ctx);
  module.setTargetTriple(kTriple);
  module.setDataLayout(tm->createDataLayout());
  PtxModule out;
  out.arch = "sm_" + std::to_string(arch.sm);
  out.libdevice = !libdevice.empty();
  std::unordered_set<std::string> seen;
  for (const KernelRequest& k : kernels) {
    if (!k.root) throw CompileError("codegen: kernel '" + k.symbol + "' has no instruction");
    std::string symbol = ptx_name(k.symbol);
    if (!seen.insert(symbol).second)
      throw CompileError("codegen: two kernels named '" + symbol + "'");
    out.kernels.push_back({symbol, gpu::emit_kernel(module, k, symbol, math)});
  }
  const std::string& dump = options.dump_prefix;
  if (!dump.empty()) dump_module(module, dump + ".ir-no-opt.ll");
  verify_module(module);
  if (out.libdevice) gpu::link_libdevice(module, libdevice);
  optimize_module(module, *tm, options.opt_level);
  if (!dump.empty()) dump_module(module, dump + ".ir-with-opt.ll");
  out.ptx = emit_ptx(module, *tm);
  if (!dump.empty()) write_text(dump + ".ptx", out.ptx);
  return out;
}

}  // namespace jx::codegen
