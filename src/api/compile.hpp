// The compilation pipeline behind jit: closed jaxpr → HLO → passes → kernels → Executable.
#pragma once

#include <memory>
#include <string>

#include "jaxpr/jaxpr.hpp"
#include "runtime/executable.hpp"

namespace jx::hlo {
class Module;
}

namespace jx::api {

// The first half: the jaxpr lowered to an unoptimized HLO module. The executable's arguments
// are the jaxpr's consts followed by its invars.
struct LoweredProgram {
  std::string name;   // "jit_f"
  int module_id = 0;  // numbers dump files: module_0001.jit_f...
  std::shared_ptr<const ClosedJaxprData> jaxpr;
  std::shared_ptr<hlo::Module> module;
  std::string jaxpr_text, hlo_text;
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
  std::shared_ptr<const ClosedJaxprData> jaxpr;  // its consts are the leading arguments
  std::string hlo_text;                          // after optimizations
  std::string thunk_sequence;                    // one thunk per line
  CostAnalysis cost;
  MemoryAnalysis memory;
  double optimize_ms = 0, codegen_ms = 0;

  // Runs on the user's flat arguments (the consts are prepended here).
  std::vector<Array> operator()(const std::vector<Array>& args) const;
};

LoweredProgram lower_program(std::shared_ptr<const ClosedJaxprData> jaxpr, const std::string& name);
CompiledProgram compile_program(const LoweredProgram& lowered);

}  // namespace jx::api
