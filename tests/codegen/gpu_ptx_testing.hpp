// Helpers for the GPU codegen tests, which run without a GPU: real programs traced and lowered
// to their PTX, the compile option variants CI and this machine can run, checks of a PTX
// module's kernels, and ptxas (from a CUDA toolkit, when there is one) to assemble them.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <vector>

#include "api/compile.hpp"
#include "codegen/gpu/gpu_compiler.hpp"
#include "hlo/ir.hpp"
#include "lower/lower.hpp"
#include "passes/pipeline.hpp"
#include "support/scratch_dir.hpp"
#include "trace/staging.hpp"

namespace jx::testing {

// A real program: `fn` traced on arguments of `avals`, lowered to HLO.
inline api::LoweredProgram lower(const trace::FlatFn& fn, const std::vector<ShapedArray>& avals,
                                 const std::string& name) {
  auto jaxpr = std::make_shared<const ClosedJaxprData>(trace::trace_to_jaxpr(fn, avals, name));
  return api::lower_program(jaxpr, name);
}

// The optimized HLO a lowered program compiles from on the GPU.
inline std::shared_ptr<hlo::Module> optimized(const api::LoweredProgram& lowered) {
  return api::optimized_module(lowered, Platform::gpu);
}

// The first instruction of the module's entry computation with this opcode.
inline const hlo::Instruction* find(const hlo::Module& module, hlo::Opcode op) {
  for (const hlo::Instruction* i : module.entry()->instructions())
    if (i->opcode == op) return i;
  FAIL("no " << hlo::info(op).name << " in the program");
  return nullptr;
}

// A kernel request per fusion of the module's entry.
inline std::vector<codegen::KernelRequest> fusion_kernels(const hlo::Module& module) {
  std::vector<codegen::KernelRequest> out;
  for (const hlo::Instruction* i : module.entry()->instructions())
    if (i->opcode == hlo::Opcode::kFusion)
      out.push_back({i, "kernel_" + std::to_string(out.size()) + "_" + i->name});
  return out;
}

// The math variants: libdevice when this machine has it (CI has not), and the portable table.
struct MathVariant {
  std::string name;
  codegen::GpuCompileOptions options;
};

inline std::vector<MathVariant> math_variants() {
  std::vector<MathVariant> out;
  if (std::string path = codegen::find_libdevice(); !path.empty())
    out.push_back({"libdevice", {.libdevice = path}});
  else
    WARN("no libdevice found: PTX is made with portable math only");
  out.push_back({"portable math", {.libdevice = "none"}});
  return out;
}

// Every kernel of the module is an entry of its PTX, and its launch is well-formed.
inline void check_kernels(const codegen::PtxModule& m) {
  for (const codegen::GpuKernel& k : m.kernels) {
    INFO("kernel " << k.symbol);
    CHECK(m.ptx.find(".visible .entry " + k.symbol + "(") != std::string::npos);
    CHECK(k.launch.grid >= 1);
    CHECK(k.launch.block >= 32);
    CHECK(k.launch.block <= 256);
    CHECK(k.launch.block % 32 == 0);
  }
}

// ptxas from a CUDA toolkit: $JX_PTXAS, then PATH, then /usr/local/cuda/bin/ptxas.
inline std::string find_ptxas() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("JX_PTXAS"); env && *env) candidates.push_back(env);
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty()) candidates.push_back(dir + "/ptxas");
  }
  candidates.push_back("/usr/local/cuda/bin/ptxas");
  for (const std::string& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec)) return c;
  }
  return "";
}

// Assembles modules with ptxas for sm_80 and sm_90, when ptxas is here, in the background: one
// module assembles while the test compiles the next. check() waits and fails the test with
// ptxas's messages for each module it rejected.
class PtxasChecks {
 public:
  PtxasChecks() : ptxas_(find_ptxas()) {
    if (ptxas_.empty()) WARN("no ptxas (JX_PTXAS, PATH, /usr/local/cuda/bin): PTX not assembled");
  }
  ~PtxasChecks() {
    for (auto& run : runs_) run.second.wait();
  }

  void add(const codegen::PtxModule& m, const std::string& what) {
    if (ptxas_.empty()) return;
    if (!runs_.empty()) runs_.back().second.wait();
    std::string in = scratch_ / ("module" + std::to_string(runs_.size()) + ".ptx");
    std::ofstream(in) << m.ptx;
    runs_.emplace_back(what, std::async(std::launch::async, [this, in] {
                         std::string problems;
                         for (const char* arch : {"sm_80", "sm_90"}) problems += assemble(in, arch);
                         return problems;
                       }));
  }

  void check() {
    for (auto& [what, run] : runs_) {
      std::string problems = run.get();
      INFO(what << ": " << problems);
      CHECK(problems.empty());
    }
    runs_.clear();
  }

 private:
  // "" when ptxas accepts the file, else its messages.
  std::string assemble(const std::string& in, const std::string& arch) const {
    std::string log = in + "." + arch + ".log";
    std::string command =
        "'" + ptxas_ + "' -arch=" + arch + " -o /dev/null '" + in + "' > '" + log + "' 2>&1";
    int status = std::system(command.c_str());
    if (status == 0) return "";
    std::ifstream messages(log);
    std::string text((std::istreambuf_iterator<char>(messages)), {});
    return "ptxas -arch=" + arch + " failed (status " + std::to_string(status) + "):\n" + text;
  }

  std::string ptxas_;
  ScratchDir scratch_;
  std::vector<std::pair<std::string, std::future<std::string>>> runs_;
};

}  // namespace jx::testing
