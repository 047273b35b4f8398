// A kernel: the ABI entry loads the buffer pointers and calls an always-inlined body whose
// pointer arguments are noalias (buffer assignment never lets an output overlap its inputs,
// except in place, where the two share one argument), so LLVM may vectorize; the body is a loop
// nest per output shape, writing through the generators of the fused computation, or the special
// roots' own loops: GEMMs, column reductions, prefix scans.
#include "codegen/cpu/kernel.hpp"

#include <functional>

#include "codegen/cpu/column_reduction.hpp"
#include "codegen/cpu/cpu_compiler.hpp"
#include "codegen/cpu/cpu_isa.hpp"
#include "codegen/cpu/gemm.hpp"
#include "codegen/cpu/gemm_plan.hpp"
#include "codegen/cpu/prefix_scan.hpp"
#include "codegen/cpu/read_ahead.hpp"
#include "codegen/cpu/row_stash.hpp"
#include "codegen/cpu/scatter.hpp"
#include "codegen/cpu/streaming_stores.hpp"
#include "codegen/elemental/loops.hpp"
#include "core/buffer.hpp"
#include "hlo/fusion.hpp"
#include "hlo/gemm.hpp"
#include "hlo/window.hpp"
#include "jx/config.hpp"
#include "jx/errors.hpp"

namespace jx::codegen {

using hlo::Instruction;
using hlo::Opcode;

namespace {

// The prefix scan a kernel computes, if any: the fusion passes keep it its kernel's only output.
const Instruction* prefix_scan_of(const Instruction& root) {
  const Instruction* out = root.opcode == Opcode::kFusion ? hlo::fused_output(root, 0) : &root;
  return hlo::output_shapes(root).size() == 1 && hlo::as_prefix_scan(*out) ? out : nullptr;
}

// A transposed output is written in tiles of this many elements along each of two dims.
constexpr std::int64_t kTransposeTile = 16;

// The dim of `out` that its operand's last dim becomes, when `out` is a transpose of a parameter
// that moves that dim away from the last (seen through what keeps each dim where it is: pads,
// conversions and other unary elementwise ops); its loop nest is then tiled across it.
std::optional<std::size_t> transposed_dim(const Instruction& out) {
  const Instruction* i = &out;
  while (i->opcode == Opcode::kPad || (hlo::has_trait(i->opcode, hlo::kElementwise) &&
                                       i->operands.size() == 1 && i->opcode != Opcode::kTranspose))
    i = i->operands[0];
  if (i->opcode != Opcode::kTranspose || i->operands[0]->opcode != Opcode::kParameter)
    return std::nullopt;
  const std::vector<std::int64_t>& perm = i->attrs.get_ints("dimensions");
  auto last = static_cast<std::int64_t>(perm.size()) - 1;
  if (perm.empty() || perm.back() == last) return std::nullopt;
  auto d = static_cast<std::size_t>(std::find(perm.begin(), perm.end(), last) - perm.begin());
  return i->shape.dims[d] > 1 && i->shape.dims.back() > 1 ? std::optional(d) : std::nullopt;
}

// What the blocked matrix kernel computes for `root`, if anything: a dot (lhs and rhs its
// operands, no epilogue), or a dense layer's dot and epilogue.
std::optional<hlo::GemmEpilogue> blocked_gemm(const Instruction& root) {
  if (root.opcode == Opcode::kDot) {
    if (dot_strategy(root) != DotStrategy::kBlockedKernel) return std::nullopt;
    hlo::GemmEpilogue product{*hlo::as_gemm(root)};
    product.out = root.shape.dtype;
    return product;
  }
  std::optional<hlo::GemmEpilogue> e = hlo::as_gemm_epilogue(root);
  if (e && gemm_strategy(e->shape) == DotStrategy::kBlockedKernel) return e;
  return std::nullopt;
}

// The workspace each call of the matrix kernel for `root` takes (gemm_workspace), if it is one.
std::int64_t workspace_bytes(const Instruction& root, const cpu::CpuIsa& isa) {
  if (std::optional<hlo::GemmEpilogue> g = blocked_gemm(root))
    return cpu::gemm_workspace(isa, g->shape, nullptr).bytes;
  if (root.opcode != Opcode::kConvolution) return 0;
  std::optional<hlo::ImplicitGemm> conv = hlo::as_implicit_gemm(root);
  return conv ? cpu::gemm_workspace(isa, conv->shape, &*conv).bytes : 0;
}

// Below this many rows a loop kernel's rows take in the next dim too: a batch of one (or a few)
// would otherwise be as many rows, run by as many threads.
constexpr std::int64_t kMinLoopRows = 64;

// How many leading dims a kernel's rows range over (1 for most): they are taken in until they
// make kMinLoopRows rows, never the last (the vectorized loop) nor any past a transposed output's
// tiled dim. Only kernels that compute every output in the loop nest over those dims (or a row
// at a time): elementwise and layout ops, reductions of the output's own rows (a softmax, a layer
// norm: hoisted to once a row through delinearize_loop_index), no other reduction, no scan,
// scatter or product, and no concatenation at the root (which has a loop nest of its own).
std::size_t row_dims(const Instruction& root) {
  std::optional<Shape> dims = hlo::common_output_dims(root);
  if (!dims || dims->size() < 2) return 1;
  // Computed through a generator at each index of the nest.
  auto generated = [](const Instruction& i) {
    return !hlo::loops_per_element(i.opcode) && i.opcode != Opcode::kScatter &&
           hlo::runs_as(i.opcode) != hlo::RunsAs::kLibraryOrKernel;
  };
  auto reduces_row = [&](const Instruction& i) {
    return i.opcode == Opcode::kReduce && i.operands.size() == 2 &&
           i.operands[0]->shape.dims == *dims &&
           i.attrs.get_ints("dimensions") ==
               std::vector<std::int64_t>{static_cast<std::int64_t>(dims->size()) - 1};
  };
  const bool fusion = root.opcode == Opcode::kFusion;
  std::vector<const Instruction*> outputs;
  for (int k = 0; k < static_cast<int>(hlo::output_shapes(root).size()); ++k)
    outputs.push_back(fusion ? hlo::fused_output(root, k) : &root);
  if (!fusion && !generated(root)) return 1;
  for (const Instruction* i : fusion ? root.called[0]->instructions() : std::vector<Instruction*>{})
    if (!reduces_row(*i) && !generated(*i)) return 1;
  for (const Instruction* out : outputs)
    if (out->opcode == Opcode::kConcatenate) return 1;
  std::size_t last = dims->size() - 1;
  // A transposed output's tiled dim may be the last of them (the nest's first dim), no earlier.
  if (std::optional<std::size_t> across =
          outputs.size() == 1 ? transposed_dim(*outputs[0]) : std::nullopt)
    last = std::min(last, *across + 1);
  std::size_t k = 1;
  std::int64_t rows = (*dims)[0];
  while (k < last && rows < kMinLoopRows) rows *= (*dims)[k++];
  return k;
}

}  // namespace

std::int64_t kernel_rows(const Instruction& root) {
  if (root.opcode == Opcode::kScatter) return 1;  // its updates combine in order
  if (auto conv = hlo::as_implicit_gemm(root)) return conv->shape.m;
  if (std::optional<hlo::GemmEpilogue> g = blocked_gemm(root))
    if (std::int64_t panels = gemm_column_panels(cpu::configured_cpu_isa(), g->shape))
      return panels;
  std::optional<Shape> dims = hlo::common_output_dims(root);
  if (!dims || dims->empty()) return 1;
  if (std::size_t k = row_dims(root); k > 1)
    return shape_size(Shape(dims->begin(), dims->begin() + static_cast<std::ptrdiff_t>(k)));
  // A tiled scan's rows are its tiles. A prefix scan along dimension 0 carries its value from
  // row to row: its kernel splits dimension 1 instead; without one it runs whole. One along a
  // later dim splits the dims before it, taken together.
  if (const Instruction* scan = prefix_scan_of(root)) {
    if (std::int64_t tiles = cpu::scan_tiles(*scan)) return tiles;
    auto axis = static_cast<std::ptrdiff_t>(hlo::as_prefix_scan(*scan)->axis);
    if (axis == 0) return dims->size() > 1 ? (*dims)[1] : 1;
    return shape_size(Shape(dims->begin(), dims->begin() + axis));
  }
  return (*dims)[0];
}

std::int64_t kernel_scratch_words(const Instruction& root) {
  const Instruction* scan = prefix_scan_of(root);
  std::int64_t tiles = scan ? cpu::scan_tiles(*scan) : 0;
  return tiles ? cpu::scan_scratch_words(tiles) : 0;
}

std::int64_t kernel_workspace_bytes(const Instruction& root, const CpuCompileOptions& options) {
  return workspace_bytes(root, cpu::compile_isa(options));
}

namespace cpu {

CpuIsa compile_isa(const CpuCompileOptions& options) {
  CpuIsa isa = cpu_isa(options.isa, options.vector_width);
  if (options.second_level_cache) isa.second_level_cache = options.second_level_cache;
  if (options.cores) isa.cores = options.cores;
  return options.amx_tiles ? with_amx_tiles(isa) : isa;
}

namespace {

// A concatenation along a dim past the first: the output is its operands' blocks side by side,
// so within a loop nest over the dims before it, each operand gets a loop nest of its own over
// the rest, storing at its offset, instead of one loop nest choosing an operand per element
// (which keeps the loops from vectorizing). The operands' blocks of one row are written one
// after another, into the same cache lines (the patches of a one-feature convolution, nine
// columns wide, were written 2.7x faster than operand by operand). Rows of dim 0 split over
// threads as the output's would.
bool is_column_concatenation(const Instruction& c) {
  return c.opcode == Opcode::kConcatenate && c.attrs.has("dimensions") &&
         c.attrs.get_ints("dimensions").size() == 1 && c.attrs.get_ints("dimensions")[0] > 0;
}

void emit_concatenation_by_parts(ElementalEmitter& em, const Instruction& c,
                                 const std::vector<ElementGenerator>& operands, llvm::Value* out,
                                 const std::optional<OuterRange>& rows) {
  auto dim = static_cast<std::size_t>(c.attrs.get_ints("dimensions")[0]);
  Shape outer(c.shape.dims.begin(), c.shape.dims.begin() + static_cast<std::ptrdiff_t>(dim));
  Vectorize parts =
      rows || shape_size(c.shape.dims) >= kMinVectorizedElements ? Vectorize::kYes : Vectorize::kNo;
  emit_loop_nest(
      em, outer, "concat.row",
      [&](const IrIndex& row) {
        std::int64_t offset = 0;
        for (std::size_t k = 0; k < c.operands.size(); ++k) {
          const Shape& dims = c.operands[k]->shape.dims;
          Shape inner(dims.begin() + static_cast<std::ptrdiff_t>(dim), dims.end());
          emit_loop_nest(
              em, inner, "part" + std::to_string(k),
              [&](const IrIndex& in) {
                IrIndex index{row.dims, nullptr};
                index.dims.insert(index.dims.end(), in.dims.begin(), in.dims.end());
                IrIndex at = index;
                at.dims[dim] = em.b().CreateAdd(in.dims[0], em.i64(offset), "", true, true);
                em.store(c.shape.dtype, operands[k](index), out, em.linear_index(at, c.shape.dims));
              },
              std::nullopt, 1, parts);
          offset += dims[dim];
        }
      },
      rows, 1, Vectorize::kNo);
}

// The body's pointer arguments: the operands, then the outputs that have their own buffer.
struct BodyArgs {
  std::vector<int> operand_arg, output_arg;
  unsigned count = 0;
};

BodyArgs body_args(std::size_t num_operands, const std::vector<int>& aliases) {
  BodyArgs a;
  for (std::size_t k = 0; k < num_operands; ++k)
    a.operand_arg.push_back(static_cast<int>(a.count++));
  for (int alias : aliases)
    a.output_arg.push_back(alias >= 0 ? a.operand_arg[static_cast<std::size_t>(alias)]
                                      : static_cast<int>(a.count++));
  return a;
}

}  // namespace

void emit_kernel(llvm::Module& module, const KernelRequest& request, const std::string& name,
                 const MathTable& math, const CpuIsa& isa) {
  const Instruction& root = *request.root;
  check_emittable(root, "CPU");
  llvm::LLVMContext& ctx = module.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type* void_ty = llvm::Type::getVoidTy(ctx);
  std::vector<const hlo::HloShape*> shapes = hlo::output_shapes(root);
  std::vector<int> aliases = request.output_aliases;
  aliases.resize(shapes.size(), -1);
  std::size_t n = root.operands.size();
  BodyArgs args = body_args(n, aliases);

  // The scratch and the workspace, when the kernel has them, follow the buffers
  // (cpu_compiler.hpp).
  bool has_scratch = kernel_scratch_words(root) > 0;
  std::optional<hlo::GemmEpilogue> gemm = blocked_gemm(root);
  std::int64_t workspace_size = workspace_bytes(root, isa);
  bool has_workspace = workspace_size > 0;
  unsigned extras = has_scratch + has_workspace;
  std::vector<llvm::Type*> body_params(args.count + extras, ptr);
  body_params.push_back(i64);
  body_params.push_back(i64);
  auto* body = llvm::Function::Create(llvm::FunctionType::get(void_ty, body_params, false),
                                      llvm::GlobalValue::InternalLinkage, name + ".body", module);
  body->addFnAttr(llvm::Attribute::AlwaysInline);
  body->setDoesNotThrow();
  for (unsigned k = 0; k < args.count; ++k) {
    body->addParamAttr(k, llvm::Attribute::NoAlias);
    body->addParamAttr(k, llvm::Attribute::NoCapture);
    bool written = std::find(aliases.begin(), aliases.end(), static_cast<int>(k)) != aliases.end();
    if (k < n && !written) body->addParamAttr(k, llvm::Attribute::ReadOnly);
  }
  if (has_workspace) {
    unsigned arg = args.count + has_scratch;
    body->addParamAttr(arg, llvm::Attribute::NoAlias);
    body->addParamAttr(arg,
                       llvm::Attribute::getWithAlignment(ctx, llvm::Align(Buffer::kAlignment)));
    body->addDereferenceableParamAttr(arg, static_cast<std::uint64_t>(workspace_size));
  }

  auto* entry = llvm::Function::Create(llvm::FunctionType::get(void_ty, {ptr, i64, i64}, false),
                                       llvm::GlobalValue::ExternalLinkage, name, module);
  entry->setDoesNotThrow();
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  std::vector<llvm::Value*> call_args(args.count);
  std::vector<llvm::LoadInst*> output_buffers(shapes.size(), nullptr);  // not in place
  for (std::size_t k = 0; k < n + shapes.size(); ++k) {
    int arg = k < n ? args.operand_arg[k] : args.output_arg[k - n];
    if (k >= n && aliases[k - n] >= 0) continue;
    llvm::LoadInst* buffer = b.CreateLoad(
        ptr, b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), k), "buffer" + std::to_string(k));
    call_args[static_cast<std::size_t>(arg)] = buffer;
    if (k >= n) output_buffers[k - n] = buffer;
  }
  for (unsigned k = 0; k < extras; ++k)
    call_args.push_back(b.CreateLoad(
        ptr, b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), n + shapes.size() + k)));
  call_args.push_back(entry->getArg(1));
  call_args.push_back(entry->getArg(2));
  b.CreateCall(body, call_args);
  b.CreateRetVoid();

  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", body));
  ElementalEmitter em(b, math, elemental_emitters());
  std::optional<OuterRange> rows;
  unsigned range_arg = args.count + extras;
  if (request.partitioned && kernel_rows(root) > 1)
    rows = OuterRange{body->getArg(range_arg), body->getArg(range_arg + 1)};
  llvm::Value* scratch = has_scratch ? body->getArg(args.count) : nullptr;
  llvm::Value* workspace = has_workspace ? body->getArg(args.count + has_scratch) : nullptr;
  auto operand = [&](int k) {
    return body->getArg(static_cast<unsigned>(args.operand_arg[static_cast<std::size_t>(k)]));
  };
  llvm::Value* out = body->getArg(static_cast<unsigned>(args.output_arg[0]));
  if (gemm) {
    if (aliases[0] >= 0) fail(root, "a matrix product cannot overwrite its operand");
    TileEpilogue epilogue{gemm->activation, nullptr, float32, gemm->out};
    if (gemm->bias >= 0) {
      epilogue.bias = operand(gemm->bias);
      epilogue.bias_dtype = root.operands[static_cast<std::size_t>(gemm->bias)]->shape.dtype;
    }
    emit_blocked_gemm(em, isa, gemm->shape, root.shape.dims, operand(gemm->lhs), operand(gemm->rhs),
                      out, workspace, rows, epilogue);
    b.CreateRetVoid();
    return;
  }
  if (root.opcode == Opcode::kConvolution) {
    std::optional<hlo::ImplicitGemm> conv = hlo::as_implicit_gemm(root);
    if (!conv) fail(root, "is not a convolution the matrix kernel computes in place");
    if (aliases[0] >= 0) fail(root, "a convolution cannot overwrite its operand");
    emit_implicit_gemm(em, isa, *conv, operand(0), operand(1), out, workspace, rows);
    b.CreateRetVoid();
    return;
  }
  std::vector<llvm::Value*> buffers;
  std::vector<ElementGenerator> params;
  for (std::size_t k = 0; k < n; ++k) {
    const hlo::HloShape& shape = root.operands[k]->shape;
    llvm::Value* arg = buffers.emplace_back(operand(static_cast<int>(k)));
    params.push_back([&em, arg, shape](const IrIndex& i) {
      return em.load(shape.dtype, arg, em.linear_index(i, shape.dims), "x");
    });
  }
  if (root.opcode == Opcode::kScatter) {
    emit_scatter(em, root, params[1], params[2], out);
    b.CreateRetVoid();
    return;
  }
  // Whether output j may stream: written here once, in order, and so large that it leaves
  // the caches. Its vector loops then start at a cache line, which the optimizer can tell when
  // every row does.
  auto line = [&](std::size_t j) {  // output j's elements in a cache line
    return static_cast<std::int64_t>(Buffer::kAlignment / itemsize(shapes[j]->dtype));
  };
  auto may_stream = [&](std::size_t j) {
    const Shape& dims = shapes[j]->dims;
    return output_buffers[j] && streams(isa, shape_size(dims) * itemsize(shapes[j]->dtype)) &&
           (dims.size() == 1 || dims.back() % line(j) == 0);
  };
  std::vector<ElementGenerator> gens;
  RowStash stash;
  if (shapes.size() == 1 && aliases[0] < 0)
    stash = stash_row_values(em, root, params, buffers, out, may_stream(0));
  if (stash.behind) {
    mark_streaming(*output_buffers[0]);
    emit_rows_behind(em, stash, root, params, out, rows);
    b.CreateRetVoid();
    return;
  }
  const ElementalEmitter::GivenGenerators& stashed = stash.values;
  if (!stashed.empty())
    gens = em.generators_of(*root.called[0], params, {root.called[0]->root()}, stashed);
  else if (root.opcode == Opcode::kFusion)
    gens = em.outputs(*root.called[0], params);
  else
    gens = {em.generator(root, params)};

  // One loop nest per distinct output shape, storing every output of that shape; or, when they
  // are all column reductions (or all prefix scans) computing into their own buffers, one
  // row-order loop nest (one scan) each.
  std::vector<bool> done(shapes.size(), false);
  auto output = [&](std::size_t j) {
    return root.opcode == Opcode::kFusion ? hlo::fused_output(root, static_cast<int>(j)) : &root;
  };
  auto column_reduction = [&](std::size_t j) -> const Instruction* {
    const Instruction* r = output(j);
    return aliases[j] < 0 && is_column_reduction(*r) ? r : nullptr;
  };
  auto prefix_scan = [&](std::size_t j) -> const Instruction* {
    const Instruction* r = output(j);
    return aliases[j] < 0 && hlo::as_prefix_scan(*r) ? r : nullptr;
  };
  // The generators of an output's own operands: inside the fusion, or the kernel's parameters.
  auto operands_of = [&](const Instruction* r) {
    return root.opcode == Opcode::kFusion
               ? em.generators_of(*root.called[0], params, {r->operands.begin(), r->operands.end()})
               : params;
  };
  // The kernel operand an output's first operand is, element for element, if it is one.
  auto buffer_of_operand = [&](const Instruction& r) -> llvm::Value* {
    const Instruction* x = r.operands[0];
    int k = 0;
    if (root.opcode == Opcode::kFusion) {
      if (x->opcode != Opcode::kParameter) return nullptr;
      k = static_cast<int>(x->parameter_number);
    }
    return x->shape.dims == r.shape.dims && x->shape.dtype == r.shape.dtype ? operand(k) : nullptr;
  };
  if (const Instruction* c = output(0);
      shapes.size() == 1 && aliases[0] < 0 && is_column_concatenation(*c)) {
    emit_concatenation_by_parts(em, *c, operands_of(c), out, rows);
    b.CreateRetVoid();
    return;
  }
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    if (done[k]) continue;
    const Shape& dims = shapes[k]->dims;
    std::vector<std::size_t> group;
    for (std::size_t j = k; j < shapes.size(); ++j)
      if (shapes[j]->dims == dims) group.push_back(j);
    // Outputs that are all column reductions, or all prefix scans, run in row order each.
    bool own_order = false;
    using Kind = std::function<const Instruction*(std::size_t)>;
    // Emits output j, the instruction r of operands x and init.
    using Emit = std::function<void(std::size_t j, const Instruction& r, const ElementGenerator& x,
                                    const ElementGenerator& init)>;
    auto out_arg = [&](std::size_t j) {
      return body->getArg(static_cast<unsigned>(args.output_arg[j]));
    };
    Emit reduce_columns = [&](std::size_t j, const Instruction& r, const ElementGenerator& x,
                              const ElementGenerator& init) {
      emit_column_reduction(em, r, x, init, out_arg(j), rows);
    };
    Emit scan = [&](std::size_t j, const Instruction& r, const ElementGenerator& x,
                    const ElementGenerator& init) {
      // A scan writes its output once, a row, a run or a tile at a time: it streams as a loop
      // nest's would.
      bool streams = may_stream(j);
      if (streams) mark_streaming(*output_buffers[j]);
      std::int64_t aligned = std::max(streams ? line(j) : 1, scan_part_columns(isa, r));
      emit_prefix_scan(em, r, x, init, out_arg(j), rows, prefix_scan_of(root) != nullptr, scratch,
                       buffer_of_operand(r), aligned, streams);
    };
    for (auto [is_kind, emit] :
         {std::pair{Kind(column_reduction), reduce_columns}, std::pair{Kind(prefix_scan), scan}}) {
      if (own_order || !std::all_of(group.begin(), group.end(), is_kind)) continue;
      for (std::size_t j : group) {
        const Instruction* r = is_kind(j);
        std::vector<ElementGenerator> in = operands_of(r);
        emit(j, *r, in[0], in[1]);
        done[j] = true;
      }
      own_order = true;
    }
    if (own_order) continue;
    auto store_outputs = [&](const IrIndex& index) {
      // Every value before any store: an output may overwrite an operand others read.
      std::vector<std::pair<std::size_t, llvm::Value*>> values;
      for (std::size_t j = k; j < shapes.size(); ++j)
        if (!done[j] && shapes[j]->dims == dims) values.emplace_back(j, gens[j](index));
      for (auto [j, value] : values)
        em.store(shapes[j]->dtype, value, out_arg(j), em.linear_index(index, dims));
    };
    std::optional<std::size_t> across =
        shapes.size() == 1 && aliases[0] < 0 ? transposed_dim(*output(0)) : std::nullopt;
    // The nest's first dim is the rows: the leading dims they range over, as one.
    auto folded = static_cast<std::ptrdiff_t>(row_dims(root) - 1);
    Shape lead(dims.begin(), dims.begin() + (folded ? folded + 1 : 0));
    Shape nest(dims.begin() + folded, dims.end());
    if (folded) nest[0] = shape_size(lead);
    auto store_at = [&](const IrIndex& index) {
      if (folded == 0) return store_outputs(index);
      // The row's leading indices, once a row: what depends on them alone is hoisted.
      IrIndex full = em.delinearize_loop_index(index.dims[0], lead);
      full.dims.insert(full.dims.end(), index.dims.begin() + 1, index.dims.end());
      full.linear = index.linear;
      store_outputs(full);
    };
    if (across) {
      emit_tiled_loop_nest(em, nest, *across - static_cast<std::size_t>(folded), kTransposeTile,
                           "out" + std::to_string(k), store_at, rows);
    } else {
      std::int64_t aligned = 1;
      for (std::size_t j : group) {
        if (stash.in_output || !may_stream(j)) continue;
        mark_streaming(*output_buffers[j]);
        aligned = std::max(aligned, line(j));
      }
      // A nest that streams reads its operands ahead, a chunk of lines at a time.
      std::optional<LoopChunks> chunks =
          aligned > 1 ? streaming_chunks(em, root, buffers, static_cast<int>(k), aligned)
                      : std::nullopt;
      emit_loop_nest(em, nest, "out" + std::to_string(k), store_at, rows, aligned,
                     Vectorize::kIfLarge, chunks ? &*chunks : nullptr);
    }
    for (std::size_t j = k; j < shapes.size(); ++j)
      if (shapes[j]->dims == dims) done[j] = true;
  }
  b.CreateRetVoid();
}

}  // namespace cpu
}  // namespace jx::codegen
