// The compilation pipeline, stage by stage: lower the jaxpr to HLO, run the passes, then build
// the executable (backend/thunk_program.hpp), with the dumps and analyses along the way.
#include "api/compile.hpp"

#include <atomic>
#include <chrono>

#include "backend/thunk_program.hpp"
#include "api/dump.hpp"
#include "hlo/cost_analysis.hpp"
#include "hlo/dot_graph.hpp"
#include "jx/config.hpp"
#include "lower/lower.hpp"
#include "passes/pipeline.hpp"

namespace jx::api {
namespace {

using backend::ExecutableSpec;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int next_module_id() {
  static std::atomic<int> next{1};
  return next++;
}

// The passes, then the executable of the optimized module's entry, with dumps and analyses:
// what compiling a jaxpr and compiling HLO share.
CompiledProgram optimize_and_build(std::shared_ptr<hlo::Module> module, int id,
                                   const std::string& name, ExecutableSpec spec) {
  CompiledProgram out;
  auto t0 = std::chrono::steady_clock::now();
  passes::PipelineOptions options = backend::pipeline_options(spec.device.platform());
  if (!config().dump_hlo_pass_re.empty() && !config().dump_to.empty()) {
    options.dump_pass_re = config().dump_hlo_pass_re;
    options.dump = [&](const std::string& pass, const std::string& text) {
      write_dump(id, name, "after_" + pass + ".txt", text);
    };
  }
  passes::run_pipeline(*module, options);
  out.hlo_text = std::make_shared<LazyText>([module] { return hlo::to_string(*module); });
  out.optimize_ms = ms_since(t0);
  if (dump_enabled(DumpKind::kHlo))
    write_dump(id, name, "after_optimizations.txt", out.hlo_text->get());
  if (dump_enabled(DumpKind::kDot)) write_dump(id, name, "dot", hlo::to_dot(*module));

  t0 = std::chrono::steady_clock::now();
  spec.name = name;
  if (dump_enabled(DumpKind::kLlvm) || dump_enabled(DumpKind::kPtx))
    spec.codegen_dump_prefix = dump_prefix(id, name);
  std::shared_ptr<const runtime::Executable> exe = backend::build_executable(*module->entry(), spec);
  out.codegen_ms = ms_since(t0);
  out.thunk_sequence = std::make_shared<LazyText>([exe] { return exe->thunk_sequence(); });
  if (dump_enabled(DumpKind::kThunks))
    write_dump(id, name, "thunk_sequence.txt", out.thunk_sequence->get());

  hlo::HloCost cost = hlo::cost_analysis(*module);
  out.cost = {cost.flops, cost.transcendentals, cost.bytes_accessed};
  hlo::HloMemory mem = hlo::memory_analysis(*module);
  out.memory = {mem.argument_bytes, mem.output_bytes, exe->arena_bytes()};
  out.executable = std::move(exe);
  return out;
}

}  // namespace

std::vector<Array> CompiledProgram::operator()(const std::vector<Array>& args) const {
  if (!jaxpr || jaxpr->consts.empty()) return executable->execute(args);
  std::vector<Array> all = jaxpr->consts;
  all.insert(all.end(), args.begin(), args.end());
  return executable->execute(all);
}

std::shared_ptr<hlo::Module> optimized_module(const LoweredProgram& lowered, Platform platform) {
  std::shared_ptr<hlo::Module> module =
      lower_jaxpr(lowered.jaxpr->jaxpr, lowered.name, lowered.jaxpr->consts);
  passes::run_pipeline(*module, backend::pipeline_options(platform));
  return module;
}

LoweredProgram lower_program(std::shared_ptr<const ClosedJaxprData> jaxpr,
                             const std::string& name) {
  auto t0 = std::chrono::steady_clock::now();
  LoweredProgram out;
  out.name = name;
  out.module_id = next_module_id();
  out.module = lower_jaxpr(jaxpr->jaxpr, name, jaxpr->consts);
  out.jaxpr_text = std::make_shared<LazyText>([jaxpr] { return to_string(jaxpr->jaxpr); });
  out.hlo_text = std::make_shared<LazyText>([m = out.module] { return hlo::to_string(*m); });
  out.jaxpr = std::move(jaxpr);
  out.lower_ms = ms_since(t0);
  if (dump_enabled(DumpKind::kJaxpr))
    write_dump(out.module_id, name, "jaxpr.txt", out.jaxpr_text->get());
  if (dump_enabled(DumpKind::kHlo))
    write_dump(out.module_id, name, "before_optimizations.txt", out.hlo_text->get());
  return out;
}

CompiledProgram compile_program(const LoweredProgram& lowered, const Device& device) {
  // Optimize a fresh lowering, so a Lowered can be compiled more than once.
  const Jaxpr& jaxpr = lowered.jaxpr->jaxpr;
  ExecutableSpec spec;
  spec.device = device;
  for (const Var& v : jaxpr.constvars) spec.in_avals.push_back(v->aval);
  for (const ShapedArray& aval : jaxpr.in_avals()) spec.in_avals.push_back(aval);
  spec.out_avals = jaxpr.out_avals();
  spec.donated.assign(lowered.jaxpr->consts.size(), false);  // consts lead, never donated
  spec.donated.insert(spec.donated.end(), lowered.donated.begin(), lowered.donated.end());
  CompiledProgram out = optimize_and_build(lower_jaxpr(jaxpr, lowered.name, lowered.jaxpr->consts),
                                           lowered.module_id, lowered.name, std::move(spec));
  out.jaxpr = lowered.jaxpr;
  return out;
}

CompiledProgram compile_module(std::shared_ptr<hlo::Module> module, const std::string& name,
                               const Device& device) {
  hlo::verify(*module);
  const hlo::Computation& entry = *module->entry();
  ExecutableSpec spec;
  spec.device = device;
  spec.in_avals = backend::parameter_avals(entry);
  spec.out_avals = backend::result_avals(entry);
  return optimize_and_build(std::move(module), next_module_id(), name, std::move(spec));
}

std::vector<codegen::PtxModule> compile_ptx(const LoweredProgram& lowered,
                                            const codegen::GpuCompileOptions& options) {
  return backend::program_ptx(*optimized_module(lowered, Platform::gpu)->entry(), lowered.name,
                              options);
}

}  // namespace jx::api
