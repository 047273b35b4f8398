// HLO → thunks: the schedule and buffers of a program, its kernels compiled by the backend, and
// the thunk each instruction runs as.
#include "backend/thunk_program.hpp"

#include "backend/backend.hpp"
#include "hlo/convolution.hpp"
#include "hlo/fusion.hpp"
#include "runtime/buffer_assignment.hpp"
#include "runtime/control_flow_thunks.hpp"
#include "runtime/parallel.hpp"
#include "support/check.hpp"

namespace jx::backend {
namespace {

using hlo::Instruction;
using hlo::Opcode;

std::vector<ShapedArray> avals_of(const std::vector<const hlo::HloShape*>& shapes) {
  std::vector<ShapedArray> out;
  for (const hlo::HloShape* s : shapes) out.push_back({s->dims, s->dtype, false});
  return out;
}

// How a program's instruction runs: not at all (it only names buffers), as a library GEMM, as a
// sort or a host function on the host, as nested programs (while, conditional), or as an
// emitted kernel.
enum class ThunkKind {
  kNone,
  kGemm,
  kConvolution,
  kSort,
  kHostCallback,
  kWhile,
  kConditional,
  kKernel
};
ThunkKind thunk_kind(const Instruction& i, Platform platform) {
  switch (hlo::runs_as(i.opcode)) {
    case hlo::RunsAs::kNothing:
      return ThunkKind::kNone;
    case hlo::RunsAs::kHost:
      return i.opcode == Opcode::kSort ? ThunkKind::kSort : ThunkKind::kHostCallback;
    case hlo::RunsAs::kNested:
      return i.opcode == Opcode::kWhile ? ThunkKind::kWhile : ThunkKind::kConditional;
    case hlo::RunsAs::kLibraryOrKernel:
      if (library_convolution(i, platform)) return ThunkKind::kConvolution;
      return library_gemm(i, platform) ? ThunkKind::kGemm : ThunkKind::kKernel;
    case hlo::RunsAs::kKernel:
      break;
  }
  if (library_gemm_epilogues(platform) && hlo::as_gemm_epilogue(i)) return ThunkKind::kGemm;
  return ThunkKind::kKernel;
}

// The library call of a kGemm instruction: a dot, or a fusion of one with its epilogue.
runtime::LibraryGemm library_gemm_of(const Instruction& i, const runtime::BufferAssignment& ba) {
  if (i.opcode == Opcode::kDot)
    return {i.name, *hlo::as_gemm(i), ba.at(i.operands[0]), ba.at(i.operands[1]), ba.at(&i)};
  hlo::GemmEpilogue e = *hlo::as_gemm_epilogue(i);
  JX_CHECK(e.out == float32 && e.shape.operand_dtype == float32);  // fuses_gemm_epilogue's
  auto operand = [&](int k) { return ba.at(i.operands[static_cast<std::size_t>(k)]); };
  runtime::LibraryGemm gemm{i.name,    e.shape,      operand(e.lhs), operand(e.rhs),
                            ba.at(&i), e.activation, std::nullopt};
  if (e.bias >= 0) gemm.bias = operand(e.bias);
  return gemm;
}

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
                              prefix,
                              caller.code});
}

// The backend compiles a program's kernels, or loads them from spec.code when it replays.
void compile_kernels(Backend& backend, const std::vector<codegen::KernelRequest>& requests,
                     const ExecutableSpec& spec) {
  ProgramCode* code = spec.code;
  if (code && code->replay) {
    if (code->next >= code->modules.size())
      throw CompileError("a cached program holds fewer compiled modules than its HLO needs");
    backend.compile(requests, spec.name, spec.codegen_dump_prefix,
                    {.load = &code->modules[code->next++]});
    return;
  }
  std::string compiled;
  backend.compile(requests, spec.name, spec.codegen_dump_prefix,
                  {.save = code ? &compiled : nullptr});
  if (code) code->modules.push_back(std::move(compiled));
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
  runtime::defer_overwrites_of_donated(program, plan.order, donated);
  plan.ba = runtime::assign_buffers(program, plan.order, donated);
  // A matrix kernel is compute-bound: it splits as a streaming kernel of a byte per 4
  // multiply-adds would. Each thread packs its own panels and the output's lines move between
  // cores, so below that a split lost: f32 products on a 2-core Xeon, one thread against two,
  // 64^3 3.6 -> 4.4 us, 80^3 7.2 -> 8.1 (a byte per multiply-add split both), 96^3 11.2 -> 11.3,
  // 112^3 17.3 -> 15.1, [256, 32] x [32, 64] 6.5 -> 5.4 (docs/performance.md).
  constexpr std::int64_t kMacsPerByte = 4;
  auto split = [&](const Instruction* i) {
    if (platform != Platform::cpu) return false;
    std::int64_t bytes = 0;
    for (const runtime::Allocation& a : plan.buffers(i)) bytes += a.size;
    std::optional<hlo::GemmShape> gemm;
    if (auto g = hlo::as_gemm(*i)) gemm = *g;
    if (auto e = hlo::as_gemm_epilogue(*i)) gemm = e->shape;
    if (auto c = hlo::as_implicit_gemm(*i)) gemm = c->shape;
    if (gemm) bytes = std::max(bytes, gemm->macs() / kMacsPerByte);
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

}  // namespace

std::shared_ptr<const runtime::Executable> build_executable(const hlo::Computation& program,
                                                            const ExecutableSpec& spec) {
  std::unique_ptr<Backend> backend = make_backend(spec.device);
  ProgramPlan plan = plan_program(program, spec.donated, spec.device.platform());
  runtime::BufferAssignment& ba = plan.ba;
  compile_kernels(*backend, plan.requests, spec);

  std::vector<std::unique_ptr<runtime::Thunk>> thunks;
  std::size_t next_kernel = 0;
  for (const Instruction* i : plan.order) {
    ThunkKind kind = thunk_kind(*i, spec.device.platform());
    if (kind == ThunkKind::kNone) continue;
    auto add = [&](std::unique_ptr<runtime::Thunk> thunk) {
      thunk->set_label(i->name);
      thunks.push_back(std::move(thunk));
    };
    if (kind == ThunkKind::kGemm) {
      add(backend->gemm_thunk(library_gemm_of(*i, ba)));
      continue;
    }
    if (kind == ThunkKind::kConvolution) {
      std::optional<hlo::DnnConvolution> conv = hlo::as_dnn_convolution(*i);
      JX_CHECK(conv, "convolution " << i->name << " is not in the DNN library's form");
      add(backend->convolution_thunk(
          {i->name, *conv, ba.at(i->operands[0]), ba.at(i->operands[1]), ba.at(i)}));
      continue;
    }
    std::vector<runtime::Allocation> buffers = plan.buffers(i);
    auto outputs_at = buffers.begin() + static_cast<std::ptrdiff_t>(i->operands.size());
    std::vector<runtime::Allocation> operands(buffers.begin(), outputs_at);
    std::vector<runtime::Allocation> outputs(outputs_at, buffers.end());
    if (kind == ThunkKind::kSort) {
      add(std::make_unique<runtime::SortThunk>(*i, std::move(operands), std::move(outputs)));
      continue;
    }
    if (kind == ThunkKind::kHostCallback) {
      add(std::make_unique<runtime::HostCallbackThunk>(*i, std::move(operands)));
      continue;
    }
    if (kind == ThunkKind::kWhile) {
      auto condition = build_nested(*i->called[0], spec);  // in order: spec.code records it
      auto body = build_nested(*i->called[1], spec);
      add(std::make_unique<runtime::WhileThunk>(
          i->name, std::move(condition), std::move(body), std::move(operands), std::move(outputs),
          ba.spare_carry.at(i),
          i->attrs.has("known_trip_count") ? std::optional(i->attrs.get_int("known_trip_count"))
                                           : std::nullopt));
      continue;
    }
    if (kind == ThunkKind::kConditional) {
      std::vector<std::shared_ptr<const runtime::Executable>> branches;
      for (const hlo::Computation* c : i->called) branches.push_back(build_nested(*c, spec));
      runtime::Allocation index = operands.front();
      operands.erase(operands.begin());
      add(std::make_unique<runtime::ConditionalThunk>(i->name, std::move(branches), index,
                                                      std::move(operands), std::move(outputs)));
      continue;
    }
    // A scatter works in place over its operand: when that is not its own buffer, a copy.
    if (i->opcode == Opcode::kScatter && plan.requests.at(next_kernel).output_aliases.empty())
      add(std::make_unique<runtime::CopyThunk>(operands[0], outputs[0]));
    const codegen::KernelRequest& req = plan.requests.at(next_kernel);
    JX_CHECK(req.root == i);
    std::int64_t rows = req.partitioned ? codegen::kernel_rows(*i) : 1;
    add(backend->kernel_thunk(next_kernel++, std::move(buffers), rows));
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
      spec.name, std::move(thunks), ba.arena_bytes, spec.in_avals, spec.out_avals,
      std::move(constants), std::move(ba.donations), backend->code(), backend->runtime());
}

namespace {

// The PTX of `program` and, after it, of the programs its loops and conditionals call.
void add_ptx(const hlo::Computation& program, const std::string& name,
             const codegen::GpuCompileOptions& options, std::vector<codegen::PtxModule>& out) {
  ProgramPlan plan = plan_program(program, {}, Platform::gpu);
  codegen::GpuCompileOptions these = options;
  these.module_name = name;
  out.push_back(codegen::compile_ptx(plan.requests, these));
  for (const Instruction* i : plan.order)
    if (hlo::runs_as(i->opcode) == hlo::RunsAs::kNested)
      for (const hlo::Computation* c : i->called) add_ptx(*c, name + "." + c->name(), options, out);
}

}  // namespace

std::vector<codegen::PtxModule> program_ptx(const hlo::Computation& program,
                                            const std::string& name,
                                            const codegen::GpuCompileOptions& options) {
  std::vector<codegen::PtxModule> out;
  add_ptx(program, name, options, out);
  return out;
}

// A CPU kernel batched with others runs on one thread. One reading more than this takes far
// longer than a launch (a bias gradient summing a layer's activations: 12.8 MB in a CNN's step)
// and runs split over the threads alone.
constexpr std::int64_t kCpuMaxBatchedReadBytes = 64 << 10;

passes::PipelineOptions pipeline_options(Platform platform, bool dnn_convolutions) {
  passes::PipelineOptions options;
  options.gemm_epilogues = [platform](const Instruction& dot, DType out) {
    return fuses_gemm_epilogue(dot, out, platform);
  };
  options.reads_16bit_operands = [platform](const Instruction& product) {
    return reads_16bit_operands(product, platform);
  };
  if (platform == Platform::gpu) options.kernel_batch_key = codegen::gpu_kernel_batch_key;
  if (platform == Platform::cpu) options.max_batched_read_bytes = kCpuMaxBatchedReadBytes;
  options.implicit_gemm_convolutions = platform == Platform::cpu;
  options.split_column_reductions = platform == Platform::cpu;
  options.dnn_convolutions = dnn_convolutions;
  return options;
}

std::vector<ShapedArray> parameter_avals(const hlo::Computation& c) {
  std::vector<const hlo::HloShape*> shapes;
  for (const Instruction* p : c.parameters()) shapes.push_back(&p->shape);
  return avals_of(shapes);
}
std::vector<ShapedArray> result_avals(const hlo::Computation& c) {
  return avals_of(hlo::output_shapes(*c.root()));
}

}  // namespace jx::backend
