// The choice of kernel kind, and of which dots go to cuBLAS. A cooperative kind is chosen only
// when every instruction that reads a hero reads it at an index the kernel knows: the row's (for
// a row kernel) or the output element's (the others).
#include "codegen/gpu/kernel_plan.hpp"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "codegen/gpu/gpu_compiler.hpp"
#include "codegen/gpu/nvvm.hpp"
#include "hlo/fusion.hpp"
#include "hlo/gemm.hpp"
#include "hlo/window.hpp"

namespace jx::codegen {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using Ints = std::vector<std::int64_t>;

// Below this many multiply-adds a one-thread-per-element kernel finishes before cuBLAS's
// launch and setup would.
constexpr std::int64_t kMinCublasMacs = 32 * 32 * 32;

}  // namespace

bool gpu_dot_uses_cublas(const Instruction& dot) {
  if (dot.opcode != Opcode::kDot) return false;
  std::optional<hlo::GemmShape> g = hlo::as_gemm(dot);
  return g && g->macs() >= kMinCublasMacs;
}

std::string gpu_kernel_batch_key(const Instruction& kernel) {
  gpu::KernelPlan plan = gpu::plan_kernel(kernel);
  if (plan.kind == gpu::KernelKind::kLoop) return "";
  std::string key = std::to_string(static_cast<int>(plan.kind));
  for (const Instruction* hero : plan.heroes)
    key += " " + hero->operands.at(0)->shape.str() + "->" + hero->shape.str();
  return key;
}

namespace gpu {
namespace {

// A block reduction gives each of its threads at least one element: fewer reduced elements per
// output go to one thread per output, which loops over them.
constexpr std::int64_t kMinBlockReduction = 64;
// Rows split over blocks: only this few rows (more fill the GPU without), each long enough to
// give every thread of its blocks this many elements at least, in kSplitBlocks blocks at most.
constexpr std::int64_t kMaxSplitRows = 32;
constexpr std::int64_t kSplitBlocks = 1024;
constexpr std::int64_t kMinSplitElements = 16;
// Both transposed dims at least this long: a 32x32 tile is at least half used.
constexpr std::int64_t kMinTransposeTile = 16;

using Set = std::unordered_set<const Instruction*>;

// The instructions a kernel computes, operands before users: the fused computation's but its
// parameters, or the root alone.
std::vector<const Instruction*> kernel_instructions(const Instruction& root) {
  if (root.opcode != Opcode::kFusion) return {&root};
  std::vector<const Instruction*> out;
  for (const Instruction* i : root.called[0]->instructions())
    if (i->opcode != Opcode::kParameter) out.push_back(i);
  return out;
}

std::vector<const Instruction*> with_opcode(const std::vector<const Instruction*>& insts,
                                            Opcode op) {
  std::vector<const Instruction*> out;
  for (const Instruction* i : insts)
    if (i->opcode == op) out.push_back(i);
  return out;
}

// The heroes and every instruction that reads one, directly or through others.
Set dependents(const std::vector<const Instruction*>& insts,
               const std::vector<const Instruction*>& heroes) {
  Set d(heroes.begin(), heroes.end());
  for (const Instruction* i : insts)
    for (const Instruction* o : i->operands)
      if (d.count(o)) d.insert(i);
  return d;
}

bool has_prefix(const Shape& s, const Shape& prefix) {
  return s.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), s.begin());
}

bool is_elementwise(const Instruction& i) { return hlo::has_trait(i.opcode, hlo::kElementwise); }

// broadcast with dimensions={0, ..., r-1}: the operand's index is a prefix of the output's.
bool is_prefix_broadcast(const Instruction& i) {
  if (i.opcode != Opcode::kBroadcast || !i.attrs.has("dimensions")) return false;
  Ints dims = i.attrs.get_ints("dimensions");
  for (std::size_t d = 0; d < dims.size(); ++d)
    if (dims[d] != static_cast<std::int64_t>(d)) return false;
  return true;
}

// How many blocks share each row of independent reduces with row outputs only: a multiple of
// 32, or 1. Reduces that read another need its whole row first, which one block has to compute.
std::int64_t blocks_per_row(const std::vector<const Instruction*>& reduces) {
  std::int64_t rows = shape_size(reduces.front()->shape.dims), shortest = -1;
  for (const Instruction* r : reduces) {
    std::int64_t n = reduction_shape(*r).reduced_size;
    shortest = shortest < 0 ? n : std::min(shortest, n);
  }
  if (rows > kMaxSplitRows) return 1;
  std::int64_t splits = std::min(shortest / (kRowBlock * kMinSplitElements), kSplitBlocks / rows);
  splits -= splits % kWarpSize;
  return splits >= kWarpSize ? splits : 1;
}

std::optional<KernelPlan> row_plan(const std::vector<const Instruction*>& insts,
                                   const std::vector<const Instruction*>& outputs) {
  std::vector<const Instruction*> reduces = with_opcode(insts, Opcode::kReduce);
  if (reduces.empty()) return std::nullopt;
  const Shape& row = reduces.front()->shape.dims;
  for (const Instruction* r : reduces) {
    ReductionShape s = reduction_shape(*r);
    if (r->shape.dims != row || s.reduced_size < kMinBlockReduction) return std::nullopt;
    for (std::size_t d = 0; d < s.split.kept.size(); ++d)
      if (s.split.kept[d] != static_cast<std::int64_t>(d)) return std::nullopt;
  }
  Set d = dependents(insts, reduces);
  for (const Instruction* i : insts) {
    if (!d.count(i) || i->opcode == Opcode::kTuple) continue;
    // A reshape of the dims after the row's (keepdims) keeps the row in front as well.
    bool ok = i->opcode == Opcode::kReduce
                  ? !d.count(i->operands[1])
                  : has_prefix(i->shape.dims, row) &&
                        (is_elementwise(*i) ||
                         ((is_prefix_broadcast(*i) || i->opcode == Opcode::kReshape) &&
                          has_prefix(i->operands[0]->shape.dims, row)));
    if (!ok) return std::nullopt;
  }
  // Outputs are rows (stored by one thread) or elements of rows of one shape (by all).
  const Shape* elements = nullptr;
  for (const Instruction* o : outputs) {
    if (!has_prefix(o->shape.dims, row)) return std::nullopt;
    if (o->shape.dims.size() == row.size()) continue;
    if (elements && *elements != o->shape.dims) return std::nullopt;
    elements = &o->shape.dims;
  }
  bool independent = std::none_of(reduces.begin(), reduces.end(), [&](const Instruction* r) {
    return d.count(r->operands[0]) || d.count(r->operands[1]);
  });
  std::int64_t splits = independent && !elements ? blocks_per_row(reduces) : 1;
  return KernelPlan{KernelKind::kRow, reduces, splits};
}

std::optional<KernelPlan> column_plan(const std::vector<const Instruction*>& insts,
                                      const std::vector<const Instruction*>& outputs) {
  std::vector<const Instruction*> reduces = with_opcode(insts, Opcode::kReduce);
  if (reduces.empty()) return std::nullopt;
  ReductionShape first = reduction_shape(*reduces.front());
  const Shape& out = reduces.front()->shape.dims;
  // One output element: the kernel would have no loop index for the reduces to depend on.
  if (first.reduced_size < kMinBlockReduction || first.outputs < 2 ||
      first.split.kept.back() + 1 != static_cast<std::int64_t>(first.operand.size()))
    return std::nullopt;
  for (const Instruction* r : reduces) {
    ReductionShape s = reduction_shape(*r);
    if (s.operand != first.operand || s.split.reduced != first.split.reduced) return std::nullopt;
  }
  Set d = dependents(insts, reduces);
  for (const Instruction* i : insts) {
    if (!d.count(i) || i->opcode == Opcode::kTuple) continue;
    bool ok = i->opcode == Opcode::kReduce ? !d.count(i->operands[0]) && !d.count(i->operands[1])
                                           : is_elementwise(*i) && i->shape.dims == out;
    if (!ok) return std::nullopt;
  }
  for (const Instruction* o : outputs)
    if (o->shape.dims != out) return std::nullopt;
  return KernelPlan{KernelKind::kColumnReduction, reduces};
}

// transpose with dimensions={0, ..., r-3, r-1, r-2}, both swapped dims long enough to tile
bool is_minor_transpose(const Instruction& t) {
  if (t.opcode != Opcode::kTranspose || t.shape.rank() < 2 || !t.attrs.has("dimensions"))
    return false;
  Ints perm = t.attrs.get_ints("dimensions");
  auto r = static_cast<std::int64_t>(t.shape.rank());
  if (static_cast<std::int64_t>(perm.size()) != r) return false;
  for (std::int64_t d = 0; d < r - 2; ++d)
    if (perm[static_cast<std::size_t>(d)] != d) return false;
  const Shape& x = t.operands[0]->shape.dims;
  return perm[static_cast<std::size_t>(r - 2)] == r - 1 &&
         perm[static_cast<std::size_t>(r - 1)] == r - 2 && x[x.size() - 2] >= kMinTransposeTile &&
         x[x.size() - 1] >= kMinTransposeTile;
}

std::optional<KernelPlan> transpose_plan(const std::vector<const Instruction*>& insts,
                                         const std::vector<const Instruction*>& outputs) {
  std::vector<const Instruction*> transposes = with_opcode(insts, Opcode::kTranspose);
  if (outputs.size() != 1 || transposes.size() != 1 || !is_minor_transpose(*transposes.front()))
    return std::nullopt;
  const Instruction* t = transposes.front();
  Set d = dependents(insts, {t});
  if (!d.count(outputs.front())) return std::nullopt;
  for (const Instruction* i : insts)
    if (d.count(i) && i != t && (!is_elementwise(*i) || i->shape.dims != t->shape.dims))
      return std::nullopt;
  return KernelPlan{KernelKind::kTranspose, {t}};
}

// A scan only ever stands alone as a kernel's output (the fusion passes keep it so).
std::optional<KernelPlan> scan_plan(const std::vector<const Instruction*>&,
                                    const std::vector<const Instruction*>& outputs) {
  if (outputs.size() != 1 || !hlo::as_prefix_scan(*outputs.front())) return std::nullopt;
  return KernelPlan{KernelKind::kScan, {outputs.front()}};
}

}  // namespace

std::vector<const Instruction*> computed_outputs(const Instruction& root) {
  if (root.opcode != Opcode::kFusion) return {&root};
  std::vector<const Instruction*> out;
  for (std::size_t k = 0; k < hlo::output_shapes(root).size(); ++k)
    out.push_back(hlo::fused_output(root, static_cast<int>(k)));
  return out;
}

ReductionShape reduction_shape(const Instruction& reduce) {
  ReductionShape s{reduce.operands.at(0)->shape.dims, split_reduce_dims(reduce), {}, 0, 1};
  for (std::int64_t d : s.split.reduced)
    s.reduced.push_back(s.operand[static_cast<std::size_t>(d)]);
  s.outputs = reduce.shape.size();
  s.reduced_size = shape_size(s.reduced);
  return s;
}

KernelPlan plan_kernel(const Instruction& root) {
  if (root.opcode == hlo::Opcode::kScatter) return {KernelKind::kScatter, {&root}};
  std::vector<const Instruction*> insts = kernel_instructions(root);
  std::vector<const Instruction*> outputs = computed_outputs(root);
  for (auto plan : {scan_plan, row_plan, column_plan, transpose_plan})
    if (std::optional<KernelPlan> p = plan(insts, outputs)) return *p;
  return {};
}

}  // namespace gpu
}  // namespace jx::codegen
