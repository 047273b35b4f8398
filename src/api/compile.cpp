// The compilation pipeline: lower the jaxpr to HLO, run the passes, assign buffers, generate
// kernels with LLVM, and assemble the thunk sequence.
#include "api/compile.hpp"

#include <atomic>
#include <chrono>

#include "api/dump.hpp"
#include "codegen/cpu/cpu_compiler.hpp"
#include "hlo/cost_analysis.hpp"
#include "hlo/dot_graph.hpp"
#include "jx/config.hpp"
#include "lower/lower.hpp"
#include "passes/pipeline.hpp"
#include "runtime/buffer_assignment.hpp"
#include "runtime/parallel.hpp"
#include "support/check.hpp"

namespace jx::api {
namespace {

using hlo::Instruction;
using hlo::Opcode;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

bool goes_to_blas(const Instruction& i) {
  return i.opcode == Opcode::kDot && codegen::dot_strategy(i) == codegen::DotStrategy::kBlas;
}

bool needs_no_thunk(Opcode op) {
  return op == Opcode::kParameter || op == Opcode::kConstant || op == Opcode::kTuple ||
         op == Opcode::kGetTupleElement;
}

// How an entry instruction runs: not at all (it only names buffers), as a BLAS call, as a sort
// on the host, or as an emitted kernel.
enum class ThunkKind { kNone, kGemm, kSort, kKernel };
ThunkKind thunk_kind(const Instruction& i) {
  if (needs_no_thunk(i.opcode)) return ThunkKind::kNone;
  if (goes_to_blas(i)) return ThunkKind::kGemm;
  if (i.opcode == Opcode::kSort) return ThunkKind::kSort;
  return ThunkKind::kKernel;
}

}  // namespace

std::vector<Array> CompiledProgram::operator()(const std::vector<Array>& args) const {
  if (jaxpr->consts.empty()) return executable->execute(args);
  std::vector<Array> all = jaxpr->consts;
  all.insert(all.end(), args.begin(), args.end());
  return executable->execute(all);
}

LoweredProgram lower_program(std::shared_ptr<const ClosedJaxprData> jaxpr,
                             const std::string& name) {
  static std::atomic<int> next_id{1};
  auto t0 = std::chrono::steady_clock::now();
  LoweredProgram out;
  out.name = name;
  out.module_id = next_id++;
  out.module = lower_jaxpr(jaxpr->jaxpr, name);
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

CompiledProgram compile_program(const LoweredProgram& lowered) {
  CompiledProgram out;
  out.jaxpr = lowered.jaxpr;
  const int id = lowered.module_id;
  const std::string& name = lowered.name;

  // Optimize a fresh lowering, so a Lowered can be compiled more than once.
  auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<hlo::Module> module = lower_jaxpr(lowered.jaxpr->jaxpr, name);
  passes::PipelineOptions options;
  if (!config().dump_hlo_pass_re.empty() && !config().dump_to.empty()) {
    options.dump_pass_re = config().dump_hlo_pass_re;
    options.dump = [&](const std::string& pass, const std::string& text) {
      write_dump(id, name, "after_" + pass + ".txt", text);
    };
  }
  passes::run_cpu_pipeline(*module, options);
  out.hlo_text = std::make_shared<LazyText>([module] { return hlo::to_string(*module); });
  out.optimize_ms = ms_since(t0);
  if (dump_enabled(DumpKind::kHlo))
    write_dump(id, name, "after_optimizations.txt", out.hlo_text->get());
  if (dump_enabled(DumpKind::kDot)) write_dump(id, name, "dot", hlo::to_dot(*module));

  // Schedule, buffers, and one kernel per remaining instruction or fusion (or a BLAS call).
  t0 = std::chrono::steady_clock::now();
  const hlo::Computation& entry = *module->entry();
  std::vector<Instruction*> order = entry.instructions();
  std::vector<bool> donated(lowered.jaxpr->consts.size(), false);  // consts lead, never donated
  donated.insert(donated.end(), lowered.donated.begin(), lowered.donated.end());
  runtime::BufferAssignment ba = runtime::assign_buffers(entry, order, donated);

  // Each kernel's buffers (operands, then outputs) and the rows it is split into.
  auto kernel_buffers = [&](const Instruction* i) {
    std::vector<runtime::Allocation> buffers;
    for (const Instruction* op : i->operands) buffers.push_back(ba.at(op));
    if (!i->shape.is_tuple) buffers.push_back(ba.at(i));
    for (std::size_t e = 0; i->shape.is_tuple && e < i->shape.tuple_shapes.size(); ++e)
      buffers.push_back(ba.of.at({i, static_cast<int>(e)}));
    return buffers;
  };
  // A matrix kernel is compute-bound: it splits as a streaming kernel of 4 bytes per
  // multiply-add would (both take about as long; bench_fusion).
  auto split = [&](const Instruction* i) {
    std::int64_t bytes = 0;
    for (const runtime::Allocation& a : kernel_buffers(i)) bytes += a.size;
    if (auto g = hlo::as_gemm(*i)) bytes = std::max(bytes, 4 * g->macs());
    return runtime::split_pays(codegen::kernel_rows(*i), bytes);
  };

  std::vector<codegen::KernelRequest> requests;
  for (const Instruction* i : order) {
    if (thunk_kind(*i) != ThunkKind::kKernel) continue;
    auto in_place = ba.in_place.find(i);
    requests.push_back({i, "kernel_" + std::to_string(requests.size()) + "_" + i->name, split(i),
                        in_place == ba.in_place.end() ? std::vector<int>{} : in_place->second});
  }
  codegen::CpuCompileOptions cg;
  cg.module_name = name;
  if (dump_enabled(DumpKind::kLlvm)) cg.dump_prefix = dump_prefix(id, name);
  std::shared_ptr<codegen::CompiledKernels> code;
  if (!requests.empty()) code = codegen::compile_kernels(requests, cg);

  std::vector<std::unique_ptr<runtime::Thunk>> thunks;
  std::size_t next_kernel = 0;
  for (const Instruction* i : order) {
    ThunkKind kind = thunk_kind(*i);
    if (kind == ThunkKind::kNone) continue;
    if (kind == ThunkKind::kGemm) {
      thunks.push_back(std::make_unique<runtime::GemmThunk>(
          i->name, *hlo::as_gemm(*i), ba.at(i->operands[0]), ba.at(i->operands[1]), ba.at(i)));
      continue;
    }
    if (kind == ThunkKind::kSort) {
      std::vector<runtime::Allocation> buffers = kernel_buffers(i);
      auto outputs_at = buffers.begin() + static_cast<std::ptrdiff_t>(i->operands.size());
      thunks.push_back(std::make_unique<runtime::SortThunk>(
          *i, std::vector<runtime::Allocation>(buffers.begin(), outputs_at),
          std::vector<runtime::Allocation>(outputs_at, buffers.end())));
      continue;
    }
    const codegen::KernelRequest& req = requests.at(next_kernel++);
    JX_CHECK(req.root == i);
    auto fn = reinterpret_cast<runtime::KernelThunk::Fn>(code->symbol(req.symbol));
    std::int64_t rows = req.partitioned ? codegen::kernel_rows(*i) : 1;
    thunks.push_back(
        std::make_unique<runtime::KernelThunk>(req.symbol, fn, kernel_buffers(i), rows));
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
  std::vector<ShapedArray> in_avals = lowered.jaxpr->jaxpr.in_avals();
  std::vector<ShapedArray> const_avals;
  for (const Var& v : lowered.jaxpr->jaxpr.constvars) const_avals.push_back(v->aval);
  in_avals.insert(in_avals.begin(), const_avals.begin(), const_avals.end());
  auto exe = std::make_shared<runtime::Executable>(
      std::move(thunks), ba.arena_bytes, std::move(in_avals), lowered.jaxpr->jaxpr.out_avals(),
      std::move(constants), std::move(ba.donations), std::shared_ptr<const void>(code, code.get()));
  out.codegen_ms = ms_since(t0);
  out.thunk_sequence = std::make_shared<LazyText>([exe] { return exe->thunk_sequence(); });
  if (dump_enabled(DumpKind::kThunks))
    write_dump(id, name, "thunk_sequence.txt", out.thunk_sequence->get());

  hlo::HloCost cost = hlo::cost_analysis(*module);
  out.cost = {cost.flops, cost.transcendentals, cost.bytes_accessed};
  hlo::HloMemory mem = hlo::memory_analysis(*module);
  out.memory = {mem.argument_bytes, mem.output_bytes, ba.arena_bytes};
  out.executable = std::move(exe);
  return out;
}

}  // namespace jx::api
