// The compilation pipeline, stage by stage: lower the jaxpr to HLO, run the passes, then build
// the executable (backend/thunk_program.hpp), with the dumps and analyses along the way.
#include "api/compile.hpp"

#include <atomic>
#include <chrono>

#include "api/dump.hpp"
#include "backend/backend.hpp"
#include "backend/thunk_program.hpp"
#include "hlo/cost_analysis.hpp"
#include "hlo/dot_graph.hpp"
#include "hlo/ir.hpp"
#include "jx/config.hpp"
#include "lower/lower.hpp"
#include "passes/pipeline.hpp"
#include "support/profiler.hpp"
#include "support/stopwatch.hpp"

namespace jx::api {
namespace {

using backend::ExecutableSpec;

using support::ms_since;

int next_module_id() {
  static std::atomic<int> next{1};
  return next++;
}

// The executable of `entry` with its code loaded from `code` (every module of it) instead of
// compiled.
std::shared_ptr<const runtime::Executable> build_replayed(const hlo::Computation& entry,
                                                          ExecutableSpec spec,
                                                          backend::ProgramCode code) {
  code.replay = true;
  code.next = 0;
  spec.code = &code;
  std::shared_ptr<const runtime::Executable> exe = backend::build_executable(entry, spec);
  if (code.next != code.modules.size())
    throw CompileError("a cached program holds more compiled modules than its HLO needs");
  return exe;
}

// A program calling host functions names them by their numbers in this process's table, which
// no other process could load.
bool calls_host_functions(const hlo::Module& module) {
  for (const hlo::Computation* c : module.computations())
    for (const hlo::Instruction* i : c->instructions())
      if (i->opcode == hlo::Opcode::kHostCallback) return true;
  return false;
}

// The executable of `entry`: with a persistent cache, its code loaded from there when the cache
// holds this program (a program entry, keyed by its optimized HLO), else compiled and stored.
// An entry that does not load is a warning and a compile; a program calling host functions is
// never stored.
std::shared_ptr<const runtime::Executable> build_cached(const hlo::Computation& entry,
                                                        ExecutableSpec spec, CompiledProgram& out) {
  std::shared_ptr<const support::DiskCache> disk = disk_cache();
  if (!disk || calls_host_functions(*entry.module())) return backend::build_executable(entry, spec);
  auto stored = std::make_shared<StoredProgram>(
      StoredProgram{out.hlo_text->get(), spec.in_avals, spec.out_avals, spec.donated, {}});
  std::string key = program_key(stored->hlo_text, spec);
  if (std::optional<std::string> bytes = disk->read(key)) {
    try {
      stored->code = read_code(*bytes);
      std::shared_ptr<const runtime::Executable> exe = build_replayed(entry, spec, stored->code);
      out.code_from_disk = true;
      out.stored = std::move(stored);
      return exe;
    } catch (const Error& e) {
      disk->ignore(key, e.what());
      stored->code = {};
    }
  }
  spec.code = &stored->code;
  std::shared_ptr<const runtime::Executable> exe = backend::build_executable(entry, spec);
  disk->write(key, write_code(stored->code));
  out.stored = std::move(stored);
  return exe;
}

// What a program's executable and analyses add to `out`.
void describe(const hlo::Module& module, std::shared_ptr<const runtime::Executable> exe,
              CompiledProgram& out) {
  out.thunk_sequence = std::make_shared<LazyText>([exe] { return exe->thunk_sequence(); });
  hlo::HloCost cost = hlo::cost_analysis(module);
  out.cost = {cost.flops, cost.transcendentals, cost.bytes_accessed};
  hlo::HloMemory mem = hlo::memory_analysis(module);
  out.memory = {mem.argument_bytes, mem.output_bytes, exe->arena_bytes()};
  out.executable = std::move(exe);
}

// The passes, then the executable of the optimized module's entry, with dumps and analyses:
// what compiling a jaxpr and compiling HLO share.
CompiledProgram optimize_and_build(std::shared_ptr<hlo::Module> module, int id,
                                   const std::string& name, ExecutableSpec spec) {
  CompiledProgram out;
  auto t0 = std::chrono::steady_clock::now();
  std::optional<profiler::detail::ScopedSpan> span(std::in_place, "optimize", name, "compile");
  passes::PipelineOptions options =
      backend::pipeline_options(spec.device.platform(), backend::dnn_convolutions(spec.device));
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

  span.emplace("codegen", name, "compile");
  t0 = std::chrono::steady_clock::now();
  spec.name = name;
  if (dump_enabled(DumpKind::kLlvm) || dump_enabled(DumpKind::kPtx))
    spec.codegen_dump_prefix = dump_prefix(id, name);
  std::shared_ptr<const runtime::Executable> exe = build_cached(*module->entry(), spec, out);
  (out.code_from_disk ? out.load_ms : out.codegen_ms) = ms_since(t0);
  if (dump_enabled(DumpKind::kThunks))
    write_dump(id, name, "thunk_sequence.txt", exe->thunk_sequence());
  describe(*module, std::move(exe), out);
  return out;
}

}  // namespace

std::vector<Array> CompiledProgram::operator()(const std::vector<Array>& args) const {
  if (consts.empty()) return executable->execute(args);
  std::vector<Array> all = consts;
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
  profiler::detail::ScopedSpan span("lower", name, "compile");
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
  out.consts = lowered.jaxpr->consts;
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

CompiledProgram load_program(std::shared_ptr<const StoredProgram> stored, std::vector<Array> consts,
                             const std::string& name, const Device& device) {
  auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<hlo::Module> module = hlo::parse_module(stored->hlo_text);
  ExecutableSpec spec{device,          name, stored->in_avals, stored->out_avals,
                      stored->donated, "",   nullptr};
  CompiledProgram out;
  out.hlo_text = std::make_shared<LazyText>([stored] { return stored->hlo_text; });
  describe(*module, build_replayed(*module->entry(), spec, stored->code), out);
  out.consts = std::move(consts);
  out.stored = std::move(stored);
  out.code_from_disk = true;
  out.load_ms = ms_since(t0);
  return out;
}

std::vector<codegen::PtxModule> compile_ptx(const LoweredProgram& lowered,
                                            const codegen::GpuCompileOptions& options) {
  return backend::program_ptx(*optimized_module(lowered, Platform::gpu)->entry(), lowered.name,
                              options);
}

}  // namespace jx::api
