// compile_kernels: one LLVM module per call, optimized with the new pass manager and compiled to
// a relocatable object on the calling thread, which the process-wide ORC LLJIT links into a
// JITDylib of its own, removed with the CompiledKernels. load_kernels links such an object again
// (the persistent compilation cache): kernels keep their own names in their JITDylib, so an object
// holds no trace of the process that compiled it.
#define JX_LLVM_JIT
#include "codegen/llvm_headers.hpp"

#include <atomic>
#include <unordered_map>
#include <unordered_set>

#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/DiagnosticInfo.h>

#include "codegen/cpu/cpu_compiler.hpp"
#include "codegen/cpu/cpu_isa.hpp"
#include "codegen/cpu/half_loops.hpp"
#include "codegen/cpu/kernel.hpp"
#include "codegen/cpu/streaming_stores.hpp"
#include "codegen/cpu/x86_target_calls.hpp"
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

// Keeps the loop vectorizer's remarks and missed-transformation warnings off stderr: a loop that
// cannot take the vector width asked of it (half_loops.hpp: an argmax's loop over float16) is
// reported so, and compiles all the same. Other diagnostics go to LLVM's default handling.
struct QuietOptimizer : llvm::DiagnosticHandler {
  bool handleDiagnostics(const llvm::DiagnosticInfo& d) override {
    if (d.getKind() == llvm::DK_OptimizationFailure) return true;
    auto* remark = llvm::dyn_cast<llvm::DiagnosticInfoOptimizationBase>(&d);
    return remark && d.getSeverity() == llvm::DS_Remark &&
           remark->getPassName() == llvm::StringRef("loop-vectorize");
  }
};

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

Jit& jit() {
  static Jit* instance = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    auto jtmb = unwrap(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
    // Compiles run on the thread that asks for them (compile_kernels), so threads may compile at
    // once; the JIT only links objects. Its JITDylibs see the process's symbols (libm, memcpy).
    auto epc = unwrap(llvm::orc::SelfExecutorProcessControl::Create(
                          nullptr, std::make_unique<llvm::orc::InPlaceTaskDispatcher>()),
                      "creating the JIT's process control");
    auto lljit = unwrap(llvm::orc::LLJITBuilder()
                            .setJITTargetMachineBuilder(jtmb)
                            .setExecutorProcessControl(std::move(epc))
                            .setSupportConcurrentCompilation(true)
                            .create(),
                        "creating the ORC JIT");
    return new Jit{std::move(lljit), std::move(jtmb)};
  }();
  return *instance;
}

// One program's kernels: their object linked into a JITDylib of their own, removed with them.
class OrcKernels : public CompiledKernels {
 public:
  explicit OrcKernels(llvm::orc::JITDylib& dylib) : dylib_(dylib) {}
  ~OrcKernels() override {
    if (llvm::Error err = jit().lljit->getExecutionSession().removeJITDylib(dylib_))
      llvm::consumeError(std::move(err));
  }
  void* symbol(const std::string& name) const override {
    auto it = symbols_.find(name);
    if (it == symbols_.end()) throw Error("codegen: no compiled kernel named '" + name + "'");
    return it->second;
  }
  void add(const std::string& name, void* address) { symbols_[name] = address; }

 private:
  llvm::orc::JITDylib& dylib_;
  std::unordered_map<std::string, void*> symbols_;
};

// Links `object` into a new JITDylib and looks up its kernels `symbols`.
std::shared_ptr<CompiledKernels> link_object(std::unique_ptr<llvm::MemoryBuffer> object,
                                             const std::vector<std::string>& symbols,
                                             const std::string& what) {
  Jit& j = jit();
  static std::atomic<std::uint64_t> next_id{0};
  llvm::Expected<llvm::orc::JITDylib&> created =
      j.lljit->createJITDylib("jx" + std::to_string(next_id++));
  if (!created) fail("creating a JITDylib for " + what, created.takeError());
  llvm::orc::JITDylib& dylib = *created;
  auto result = std::make_shared<OrcKernels>(dylib);  // from here on, failure frees the code
  if (llvm::Error err = j.lljit->addObjectFile(dylib, std::move(object)))
    fail("adding " + what + " to the JIT", std::move(err));
  for (const std::string& s : symbols)
    result->add(s, unwrap(j.lljit->lookup(dylib, s), "looking up kernel " + s).toPtr<void*>());
  return result;
}

}  // namespace

std::shared_ptr<CompiledKernels> compile_kernels(const std::vector<KernelRequest>& kernels,
                                                 const CpuCompileOptions& options,
                                                 std::string* object) {
  Jit& j = jit();
  auto ctx = std::make_unique<llvm::LLVMContext>();
  ctx->setDiagnosticHandler(std::make_unique<QuietOptimizer>());
  auto module = std::make_unique<llvm::Module>(options.module_name, *ctx);
  llvm::TargetMachine& tm = thread_target_machine(j.jtmb);
  module->setDataLayout(j.lljit->getDataLayout());
  module->setTargetTriple(tm.getTargetTriple().str());

  cpu::CpuIsa isa = cpu::compile_isa(options);
  MathTable cpu_table = cpu_math_table(
      options.precise_math, {.ldexp = isa.name == "avx512", .round_bf16 = isa.avx512_bf16});
  const MathTable& math = options.math ? *options.math : cpu_table;
  std::vector<std::string> symbols;
  std::unordered_set<std::string> seen;
  for (const KernelRequest& k : kernels) {
    if (!k.root) throw CompileError("codegen: kernel '" + k.symbol + "' has no instruction");
    if (!seen.insert(k.symbol).second)
      throw CompileError("codegen: two kernels named '" + k.symbol + "'");
    cpu::emit_kernel(*module, k, k.symbol, math, isa);
    symbols.push_back(k.symbol);
  }
  // Each function names its features, which both the optimizer's cost model and instruction
  // selection read in place of the target machine's: so --cpu_isa=avx2 compiles for AVX2 on an
  // AVX-512 host.
  for (llvm::Function& f : *module) {
    f.addFnAttr("target-cpu", isa.cpu);
    f.addFnAttr("target-features", isa.features);
    // LLVM keeps to 256-bit vectors on AVX-512 hosts by default (older cores downclocked on
    // 512-bit code); kernels are throughput loops, where twice the lanes pay on current ones.
    // --cpu_vector_width=256 keeps LLVM to 256 bits.
    if (isa.name == "avx512")
      f.addFnAttr("prefer-vector-width", std::to_string(8 * isa.vector_bytes));
    // A kernel's frame may hold a GEMM panel of hundreds of KiB: touching it a page at a time
    // makes a stack too small for it fault at its guard page, rather than write past it.
    f.addFnAttr("probe-stack", "inline-asm");
  }
  cpu::widen_half_loops(*module, isa.vector_bytes);
  if (!options.dump_prefix.empty()) dump_module(*module, options.dump_prefix + ".ir-no-opt.ll");
  verify_module(*module);
  optimize_module(*module, tm, options.opt_level);
  cpu::lower_target_calls(*module);
  cpu::emit_streaming_stores(*module);
  if (!options.dump_prefix.empty()) dump_module(*module, options.dump_prefix + ".ir-with-opt.ll");

  std::unique_ptr<llvm::MemoryBuffer> compiled =
      unwrap(llvm::orc::SimpleCompiler(tm)(*module), "compiling module " + options.module_name);
  if (object) object->assign(compiled->getBufferStart(), compiled->getBufferSize());
  return link_object(std::move(compiled), symbols, "module " + options.module_name);
}

std::string llvm_version() { return LLVM_VERSION_STRING; }

std::shared_ptr<CompiledKernels> load_kernels(std::string_view object,
                                              const std::vector<std::string>& symbols) {
  return link_object(llvm::MemoryBuffer::getMemBufferCopy(
                         llvm::StringRef(object.data(), object.size()), "cached object"),
                     symbols, "a cached object");
}

}  // namespace jx::codegen
