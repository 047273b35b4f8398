// The compilation pipeline: lower the jaxpr to HLO, run the passes, assign buffers, generate
// kernels with LLVM, and assemble the thunk sequence.
#include "api/compile.hpp"

#include <atomic>
#include <chrono>

#include "api/backend.hpp"
#include "api/dump.hpp"
#include "codegen/gpu/gpu_compiler.hpp"
#include "hlo/cost_analysis.hpp"
#include "hlo/dot_graph.hpp"
#include "hlo/fusion.hpp"
#include "jx/config.hpp"
#include "lower/lower.hpp"
#include "passes/pipeline.hpp"
#include "runtime/buffer_assignment.hpp"
#include "runtime/control_flow_thunks.hpp"
#include "runtime/parallel.hpp"
#include "support/check.hpp"

namespace jx::api {
namespace {

using hlo::Instruction;
using hlo::Opcode;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

bool needs_no_thunk(Opcode op) {
  return op == Opcode::kParameter || op == Opcode::kConstant || op == Opcode::kTuple ||
         op == Opcode::kGetTupleElement;
}

// How a program's instruction runs: not at all (it only names buffers), as a library GEMM, as a
// sort on the host, as nested programs (while, conditional), or as an emitted kernel.
enum class ThunkKind { kNone, kGemm, kSort, kWhile, kConditional, kKernel };
ThunkKind thunk_kind(const Instruction& i, Platform platform) {
  if (needs_no_thunk(i.opcode)) return ThunkKind::kNone;
  if (i.opcode == Opcode::kDot && library_gemm(i, platform)) return ThunkKind::kGemm;
  if (library_gemm_epilogues(platform) && hlo::as_gemm_epilogue(i)) return ThunkKind::kGemm;
  if (i.opcode == Opcode::kSort) return ThunkKind::kSort;
  if (i.opcode == Opcode::kWhile) return ThunkKind::kWhile;
  if (i.opcode == Opcode::kConditional) return ThunkKind::kConditional;
  return ThunkKind::kKernel;
}

int next_module_id() {
  static std::atomic<int> next{1};
  return next++;
}

std::vector<ShapedArray> avals_of(const std::vector<const hlo::HloShape*>& shapes) {
  std::vector<ShapedArray> out;
  for (const hlo::HloShape* s : shapes) out.push_back({s->dims, s->dtype, false});
  return out;
}
std::vector<ShapedArray> parameter_avals(const hlo::Computation& c) {
  std::vector<const hlo::HloShape*> shapes;
  for (const Instruction* p : c.parameters()) shapes.push_back(&p->shape);
  return avals_of(shapes);
}
std::vector<ShapedArray> result_avals(const hlo::Computation& c) {
  return avals_of(hlo::output_shapes(*c.root()));
}

// The library call of a kGemm instruction: a dot, or a fusion of one with its epilogue.
runtime::LibraryGemm library_gemm_of(const Instruction& i, const runtime::BufferAssignment& ba) {
  if (i.opcode == Opcode::kDot)
    return {i.name, *hlo::as_gemm(i), ba.at(i.operands[0]), ba.at(i.operands[1]), ba.at(&i)};
  hlo::GemmEpilogue e = *hlo::as_gemm_epilogue(i);
  auto operand = [&](int k) { return ba.at(i.operands[static_cast<std::size_t>(k)]); };
  runtime::LibraryGemm gemm{i.name,    e.shape,      operand(e.lhs), operand(e.rhs),
                            ba.at(&i), e.activation, std::nullopt};
  if (e.bias >= 0) gemm.bias = operand(e.bias);
  return gemm;
}

// The pipeline's options for `platform`, with no dumps.
passes::PipelineOptions pipeline_options(Platform platform) {
  passes::PipelineOptions options;
  if (library_gemm_epilogues(platform))
    options.gemm_epilogues = [platform](const Instruction& dot) {
      return library_gemm(dot, platform);
    };
  return options;
}

// What one program's executable is built from besides its optimized HLO.
struct ExecutableSpec {
  Device device;
  std::string name;  // of the LLVM module
  std::vector<ShapedArray> in_avals, out_avals;
  std::vector<bool> donated;        // per parameter: its buffer may become an output's
  std::string codegen_dump_prefix;  // empty: no LLVM or PTX dump
};

std::shared_ptr<const runtime::Executable> build_executable(const hlo::Computation& program,
                                                            const ExecutableSpec& spec);

// A computation a while or conditional calls, built as a program of its own (recursively).
std::shared_ptr<const runtime::Executable> build_nested(const hlo::Computation& c,
                                                        const ExecutableSpec& caller) {
  std::string prefix =
      caller.codegen_dump_prefix.empty() ? "" : caller.codegen_dump_prefix + "." + c.name();
  return build_executable(c, {caller.device,
                              caller.name + "." + c.name(),
                              parameter_avals(c),
                              result_avals(c),
                              {},
                              prefix});
}

// A program's schedule, buffers, and the kernels its instructions compile to.
struct ProgramPlan {
  std::vector<Instruction*> order;
  runtime::BufferAssignment ba;
  std::vector<codegen::KernelRequest> requests;  // in schedule order

  // An instruction's buffers: its operands', then its outputs'.
  std::vector<runtime::Allocation> buffers(const Instruction* i) const {
    std::vector<runtime::Allocation> out;
    for (const Instruction* op : i->operands) out.push_back(ba.at(op));
    if (!i->shape.is_tuple) out.push_back(ba.at(i));
    for (std::size_t e = 0; i->shape.is_tuple && e < i->shape.tuple_shapes.size(); ++e)
      out.push_back(ba.of.at({i, static_cast<int>(e)}));
    return out;
  }
};

ProgramPlan plan_program(const hlo::Computation& program, const std::vector<bool>& donated,
                         Platform platform) {
  ProgramPlan plan{program.instructions(), {}, {}};
  plan.ba = runtime::assign_buffers(program, plan.order, donated);
  // A matrix kernel is compute-bound: it splits as a streaming kernel of 4 bytes per
  // multiply-add would (both take about as long; bench_fusion).
  auto split = [&](const Instruction* i) {
    if (platform != Platform::cpu) return false;
    std::int64_t bytes = 0;
    for (const runtime::Allocation& a : plan.buffers(i)) bytes += a.size;
    if (auto g = hlo::as_gemm(*i)) bytes = std::max(bytes, 4 * g->macs());
    return runtime::split_pays(codegen::kernel_rows(*i), bytes);
  };
  for (const Instruction* i : plan.order) {
    if (thunk_kind(*i, platform) != ThunkKind::kKernel) continue;
    auto in_place = plan.ba.in_place.find(i);
    plan.requests.push_back(
        {i, "kernel_" + std::to_string(plan.requests.size()) + "_" + i->name, split(i),
         in_place == plan.ba.in_place.end() ? std::vector<int>{} : in_place->second});
  }
  return plan;
}

// Schedule, buffers, and one thunk per instruction that does work: a kernel for each remaining
// instruction or fusion, a library GEMM, a host sort, or nested executables for control flow.
std::shared_ptr<const runtime::Executable> build_executable(const hlo::Computation& program,
                                                            const ExecutableSpec& spec) {
  std::unique_ptr<Backend> backend = make_backend(spec.device);
  ProgramPlan plan = plan_program(program, spec.donated, spec.device.platform());
  runtime::BufferAssignment& ba = plan.ba;
  backend->compile(plan.requests, spec.name, spec.codegen_dump_prefix);

  std::vector<std::unique_ptr<runtime::Thunk>> thunks;
  std::size_t next_kernel = 0;
  for (const Instruction* i : plan.order) {
    ThunkKind kind = thunk_kind(*i, spec.device.platform());
    if (kind == ThunkKind::kNone) continue;
    if (kind == ThunkKind::kGemm) {
      thunks.push_back(backend->gemm_thunk(library_gemm_of(*i, ba)));
      continue;
    }
    std::vector<runtime::Allocation> buffers = plan.buffers(i);
    auto outputs_at = buffers.begin() + static_cast<std::ptrdiff_t>(i->operands.size());
    std::vector<runtime::Allocation> operands(buffers.begin(), outputs_at);
    std::vector<runtime::Allocation> outputs(outputs_at, buffers.end());
    if (kind == ThunkKind::kSort) {
      thunks.push_back(
          std::make_unique<runtime::SortThunk>(*i, std::move(operands), std::move(outputs)));
      continue;
    }
    if (kind == ThunkKind::kWhile) {
      thunks.push_back(std::make_unique<runtime::WhileThunk>(
          i->name, build_nested(*i->called[0], spec), build_nested(*i->called[1], spec),
          std::move(operands), std::move(outputs), ba.spare_carry.at(i),
          i->attrs.has("known_trip_count") ? std::optional(i->attrs.get_int("known_trip_count"))
                                           : std::nullopt));
      continue;
    }
    if (kind == ThunkKind::kConditional) {
      std::vector<std::shared_ptr<const runtime::Executable>> branches;
      for (const hlo::Computation* c : i->called) branches.push_back(build_nested(*c, spec));
      runtime::Allocation index = operands.front();
      operands.erase(operands.begin());
      thunks.push_back(std::make_unique<runtime::ConditionalThunk>(
          i->name, std::move(branches), index, std::move(operands), std::move(outputs)));
      continue;
    }
    const codegen::KernelRequest& req = plan.requests.at(next_kernel);
    JX_CHECK(req.root == i);
    std::int64_t rows = req.partitioned ? codegen::kernel_rows(*i) : 1;
    thunks.push_back(backend->kernel_thunk(next_kernel++, std::move(buffers), rows));
  }
  // Outputs that are parameters, constants or repeated values are copied into their buffers.
  for (std::size_t k = 0; k < ba.outputs.size(); ++k) {
    runtime::Allocation src = ba.of.at(ba.outputs[k]);
    if (src.kind == runtime::Allocation::Kind::kOutput && src.index == static_cast<int>(k))
      continue;
    runtime::Allocation dst = src;
    dst.kind = runtime::Allocation::Kind::kOutput;
    dst.index = static_cast<int>(k);
    thunks.push_back(std::make_unique<runtime::CopyThunk>(src, dst));
  }

  std::vector<Array> constants;
  for (const Instruction* c : ba.constants) constants.push_back(*c->literal);
  return std::make_shared<runtime::Executable>(
      std::move(thunks), ba.arena_bytes, spec.in_avals, spec.out_avals, std::move(constants),
      std::move(ba.donations), backend->code(), backend->runtime());
}

// The PTX of `program` and, after it, of the programs its loops and conditionals call.
void add_ptx(const hlo::Computation& program, const std::string& name,
             const codegen::GpuCompileOptions& options, std::vector<codegen::PtxModule>& out) {
  ProgramPlan plan = plan_program(program, {}, Platform::gpu);
  codegen::GpuCompileOptions these = options;
  these.module_name = name;
  out.push_back(codegen::compile_ptx(plan.requests, these));
  for (const Instruction* i : plan.order)
    if (i->opcode == Opcode::kWhile || i->opcode == Opcode::kConditional)
      for (const hlo::Computation* c : i->called) add_ptx(*c, name + "." + c->name(), options, out);
}

// The passes, then the executable of the optimized module's entry, with dumps and analyses:
// what compiling a jaxpr and compiling HLO share.
CompiledProgram optimize_and_build(std::shared_ptr<hlo::Module> module, int id,
                                   const std::string& name, ExecutableSpec spec) {
  CompiledProgram out;
  auto t0 = std::chrono::steady_clock::now();
  passes::PipelineOptions options = pipeline_options(spec.device.platform());
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
  std::shared_ptr<const runtime::Executable> exe = build_executable(*module->entry(), spec);
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
  passes::run_pipeline(*module, pipeline_options(platform));
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
  spec.in_avals = parameter_avals(entry);
  spec.out_avals = result_avals(entry);
  return optimize_and_build(std::move(module), next_module_id(), name, std::move(spec));
}

std::vector<codegen::PtxModule> compile_ptx(const LoweredProgram& lowered,
                                            const codegen::GpuCompileOptions& options) {
  std::vector<codegen::PtxModule> out;
  add_ptx(*optimized_module(lowered, Platform::gpu)->entry(), lowered.name, options, out);
  return out;
}

}  // namespace jx::api
