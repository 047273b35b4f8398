// compile_kernels: one LLVM module per call, optimized with the new pass manager and added to
// the process-wide ORC LLJIT under its own resource tracker, freed with the CompiledKernels.
#define JX_LLVM_JIT
#include "codegen/llvm_headers.hpp"

#include <atomic>
#include <unordered_map>
#include <unordered_set>

#include "codegen/cpu/cpu_compiler.hpp"
#include "codegen/cpu/cpu_isa.hpp"
#include "codegen/cpu/kernel.hpp"
#include "codegen/elemental/math_table.hpp"
#include "codegen/optimize.hpp"
#include "jx/errors.hpp"

namespace jx::codegen {
namespace {

[[noreturn]] void fail(const std::string& what, llvm::Error err) {
  throw CompileError("codegen: " + what + ": " + llvm::toString(std::move(err)));
}

template <class T>
T unwrap(llvm::Expected<T> value, const std::string& what) {
  if (!value) fail(what, value.takeError());
  return std::move(*value);
}

// The process-wide JIT: host CPU and features, concurrent compilation, and the process's own
// symbols (libm, memcpy) resolvable. Never destroyed: code may outlive static destructors.
struct Jit {
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  llvm::orc::JITTargetMachineBuilder jtmb;
};

// This thread's target machine for the host. A target machine builds its subtarget tables
// lazily, which costs more than a small kernel's codegen, so each thread keeps one; it is not
// safe to share between threads.
llvm::TargetMachine& thread_target_machine(const llvm::orc::JITTargetMachineBuilder& jtmb) {
  thread_local std::unique_ptr<llvm::TargetMachine> tm = [&] {
    llvm::orc::JITTargetMachineBuilder builder = jtmb;  // createTargetMachine is not const
    return unwrap(builder.createTargetMachine(), "creating a target machine");
  }();
  return *tm;
}

// ORC's compile step on the calling thread's target machine.
class ThreadCompiler : public llvm::orc::IRCompileLayer::IRCompiler {
 public:
  explicit ThreadCompiler(llvm::orc::JITTargetMachineBuilder jtmb)
      : IRCompiler(llvm::orc::irManglingOptionsFromTargetOptions(jtmb.getOptions())),
        jtmb_(std::move(jtmb)) {}
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> operator()(llvm::Module& m) override {
    return llvm::orc::SimpleCompiler(thread_target_machine(jtmb_))(m);
  }

 private:
  llvm::orc::JITTargetMachineBuilder jtmb_;
};

Jit& jit() {
  static Jit* instance = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    auto jtmb = unwrap(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
    // Compiles run on the thread that asks for them, with that thread's target machine, so
    // threads may compile at once without a dispatcher thread per compile.
    auto epc = unwrap(llvm::orc::SelfExecutorProcessControl::Create(
                          nullptr, std::make_unique<llvm::orc::InPlaceTaskDispatcher>()),
                      "creating the JIT's process control");
    auto lljit = unwrap(
        llvm::orc::LLJITBuilder()
            .setJITTargetMachineBuilder(jtmb)
            .setExecutorProcessControl(std::move(epc))
            .setSupportConcurrentCompilation(true)
            .setCompileFunctionCreator(
                [](llvm::orc::JITTargetMachineBuilder b)
                    -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
                  return std::make_unique<ThreadCompiler>(std::move(b));
                })
            .create(),
        "creating the ORC JIT");
    auto process = unwrap(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                              lljit->getDataLayout().getGlobalPrefix()),
                          "opening the process's symbols");
    lljit->getMainJITDylib().addGenerator(std::move(process));
    return new Jit{std::move(lljit), std::move(jtmb)};
  }();
  return *instance;
}

class OrcKernels : public CompiledKernels {
 public:
  explicit OrcKernels(llvm::orc::ResourceTrackerSP tracker) : tracker_(std::move(tracker)) {}
  ~OrcKernels() override {
    if (llvm::Error err = tracker_->remove()) llvm::consumeError(std::move(err));
  }
  void* symbol(const std::string& name) const override {
    auto it = symbols_.find(name);
    if (it == symbols_.end()) throw Error("codegen: no compiled kernel named '" + name + "'");
    return it->second;
  }
  void add(const std::string& name, void* address) { symbols_[name] = address; }

 private:
  llvm::orc::ResourceTrackerSP tracker_;
  std::unordered_map<std::string, void*> symbols_;
};

}  // namespace

std::shared_ptr<CompiledKernels> compile_kernels(const std::vector<KernelRequest>& kernels,
                                                 const CpuCompileOptions& options) {
  Jit& j = jit();
  // Symbols get a per-compile suffix: executables compiled apart may reuse kernel names.
  static std::atomic<std::uint64_t> next_id{0};
  std::string suffix = ".jx" + std::to_string(next_id++);

  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>(options.module_name, *ctx);
  llvm::TargetMachine& tm = thread_target_machine(j.jtmb);
  module->setDataLayout(j.lljit->getDataLayout());
  module->setTargetTriple(tm.getTargetTriple().str());

  const cpu::CpuIsa& isa = cpu::cpu_isa(options.isa);
  std::unordered_set<std::string> seen;
  for (const KernelRequest& k : kernels) {
    if (!k.root) throw CompileError("codegen: kernel '" + k.symbol + "' has no instruction");
    if (!seen.insert(k.symbol).second)
      throw CompileError("codegen: two kernels named '" + k.symbol + "'");
    cpu::emit_kernel(*module, k, k.symbol + suffix,
                     options.math ? *options.math : cpu_math_table(options.precise_math), isa);
  }
  // Each function names its features, which both the optimizer's cost model and instruction
  // selection read in place of the target machine's: so --cpu_isa=avx2 compiles for AVX2 on an
  // AVX-512 host.
  for (llvm::Function& f : *module) {
    f.addFnAttr("target-cpu", isa.cpu);
    f.addFnAttr("target-features", isa.features);
    // LLVM keeps to 256-bit vectors on AVX-512 hosts by default (older cores downclocked on
    // 512-bit code); kernels are throughput loops, where twice the lanes pay on current ones.
    if (isa.name == "avx512") f.addFnAttr("prefer-vector-width", "512");
  }
  if (!options.dump_prefix.empty()) dump_module(*module, options.dump_prefix + ".ir-no-opt.ll");
  verify_module(*module);
  optimize_module(*module, tm, options.opt_level);
  if (!options.dump_prefix.empty()) dump_module(*module, options.dump_prefix + ".ir-with-opt.ll");

  llvm::orc::ResourceTrackerSP tracker = j.lljit->getMainJITDylib().createResourceTracker();
  auto result = std::make_shared<OrcKernels>(tracker);  // from here on, failure frees the code
  if (llvm::Error err = j.lljit->addIRModule(
          tracker, llvm::orc::ThreadSafeModule(std::move(module), std::move(ctx))))
    fail("adding module " + options.module_name + " to the JIT", std::move(err));
  for (const KernelRequest& k : kernels) {
    auto address = unwrap(j.lljit->lookup(k.symbol + suffix), "looking up kernel " + k.symbol);
    result->add(k.symbol, address.toPtr<void*>());
  }
  return result;
}

}  // namespace jx::codegen
