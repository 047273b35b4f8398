// The compilation pipeline behind jit: closed jaxpr → HLO → passes → kernels → Executable.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "api/persistent_cache.hpp"
#include "codegen/gpu/gpu_compiler.hpp"
#include "jaxpr/jaxpr.hpp"
#include "jx/device.hpp"
#include "runtime/executable.hpp"

namespace jx::hlo {
class Module;
}

namespace jx::api {

// A text printed on its first request: printing a program costs more than lowering it, and
// only AOT inspection and dumps read the text.
class LazyText {
 public:
  explicit LazyText(std::function<std::string()> print) : print_(std::move(print)) {}
  const std::string& get() const {
    std::call_once(once_, [this] { text_ = print_(); });
    return text_;
  }

 private:
  std::function<std::string()> print_;
  mutable std::once_flag once_;
  mutable std::string text_;
};

// The first half: the jaxpr lowered to an unoptimized HLO module. The executable's arguments
// are the jaxpr's consts followed by its invars.
struct LoweredProgram {
  std::string name;   // "jit_f"
  int module_id = 0;  // numbers dump files: module_0001.jit_f...
  std::shared_ptr<const ClosedJaxprData> jaxpr;
  std::shared_ptr<hlo::Module> module;
  std::shared_ptr<const LazyText> jaxpr_text, hlo_text;
  std::vector<bool> donated;  // per argument leaf: its buffer may become an output's
  double lower_ms = 0;
};

struct CostAnalysis {
  double flops = 0, transcendentals = 0, bytes_accessed = 0;
};
struct MemoryAnalysis {
  std::int64_t argument_bytes = 0, output_bytes = 0, temp_bytes = 0;
};

// The second half: optimized HLO compiled to native code.
struct CompiledProgram {
  std::shared_ptr<const runtime::Executable> executable;
  std::vector<Array> consts;  // the jaxpr's consts: the leading arguments
  // With a persistent cache (--compilation_cache_dir): the program as a warm entry stores it,
  // and whether its code came from the cache instead of a compile.
  std::shared_ptr<const StoredProgram> stored;
  bool code_from_disk = false;
  std::shared_ptr<const LazyText> hlo_text;        // after optimizations
  std::shared_ptr<const LazyText> thunk_sequence;  // one thunk per line
  CostAnalysis cost;
  MemoryAnalysis memory;
  double optimize_ms = 0, codegen_ms = 0, load_ms = 0;  // load: reading the persistent cache

  // Runs on the user's flat arguments (the consts are prepended here).
  std::vector<Array> operator()(const std::vector<Array>& args) const;
};

LoweredProgram lower_program(std::shared_ptr<const ClosedJaxprData> jaxpr, const std::string& name);
// For `device` (the CPU by default).
CompiledProgram compile_program(const LoweredProgram& lowered, const Device& device = {});
// Compiles an HLO module (verified first) as compile_program compiles a lowered jaxpr: its
// arguments are the entry's parameters, its results the root's arrays (one per element of a
// root tuple).
CompiledProgram compile_module(std::shared_ptr<hlo::Module> module, const std::string& name,
                               const Device& device = {});

// The program a warm entry stored, built again: its HLO parsed and its code loaded, with no
// pass run and nothing compiled. Throws jx::Error when the entry does not build.
CompiledProgram load_program(std::shared_ptr<const StoredProgram> stored, std::vector<Array> consts,
                             const std::string& name, const Device& device);

// The optimized HLO `lowered` compiles from on `platform`.
std::shared_ptr<hlo::Module> optimized_module(const LoweredProgram& lowered, Platform platform);

// The PTX of every kernel `lowered` compiles to on the GPU, the entry program's module first,
// then one per program a while or conditional calls: made without a GPU (tests, inspection).
std::vector<codegen::PtxModule> compile_ptx(const LoweredProgram& lowered,
                                            const codegen::GpuCompileOptions& options);

}  // namespace jx::api
