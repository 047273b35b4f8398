// HLO → thunks: a program's schedule, buffer assignment and kernels, and the Executable whose
// thunk sequence runs them on a backend; nested programs for while and conditional.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/gpu/gpu_compiler.hpp"
#include "jx/device.hpp"
#include "jx/shape.hpp"
#include "passes/pipeline.hpp"
#include "runtime/executable.hpp"

namespace jx::hlo {
class Computation;
}

namespace jx::backend {

// A program's native code, one module per backend compile in build order (the entry program's,
// then those of the programs its loops and conditionals call, depth first): what the persistent
// compilation cache keeps. A build with `replay` loads modules[next++] instead of compiling;
// any other appends each compile's code.
struct ProgramCode {
  std::vector<std::string> modules;
  bool replay = false;
  std::size_t next = 0;
};

// What one program's executable is built from besides its optimized HLO.
struct ExecutableSpec {
  Device device;
  std::string name;  // of the LLVM module
  std::vector<ShapedArray> in_avals, out_avals;
  std::vector<bool> donated;        // per parameter: its buffer may become an output's
  std::string codegen_dump_prefix;  // empty: no LLVM or PTX dump
  ProgramCode* code = nullptr;      // where compiled code is recorded or replayed from, if set
};

// Schedule, buffers, and one thunk per instruction that does work: a kernel for each remaining
// instruction or fusion, a library GEMM, a host sort, or nested executables for control flow.
std::shared_ptr<const runtime::Executable> build_executable(const hlo::Computation& program,
                                                            const ExecutableSpec& spec);

// The PTX of every kernel `program` compiles to on the GPU, then of the programs its loops and
// conditionals call: made without a GPU (tests, inspection).
std::vector<codegen::PtxModule> program_ptx(const hlo::Computation& program,
                                            const std::string& name,
                                            const codegen::GpuCompileOptions& options);

// The pass pipeline's options for `platform` (which dots its GEMM library takes), with no dumps;
// `dnn_convolutions` where its backend runs convolutions through a library (dnn_convolutions).
passes::PipelineOptions pipeline_options(Platform platform, bool dnn_convolutions = false);

// A computation's parameter and result types, as an Executable's in and out avals.
std::vector<ShapedArray> parameter_avals(const hlo::Computation& c);
std::vector<ShapedArray> result_avals(const hlo::Computation& c);

}  // namespace jx::backend
