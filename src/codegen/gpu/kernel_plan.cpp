// The choice of kernel kind, and of which dots go to cuBLAS.
#include "codegen/gpu/kernel_plan.hpp"

#include <optional>

#include "codegen/gpu/gpu_compiler.hpp"
#include "hlo/fusion.hpp"
#include "hlo/gemm.hpp"

namespace jx::codegen {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Below this many multiply-adds a one-thread-per-element kernel finishes before cuBLAS's
// launch and setup would.
constexpr std::int64_t kMinCublasMacs = 32 * 32 * 32;

}  // namespace

bool gpu_dot_uses_cublas(const Instruction& dot) {
  if (dot.opcode != Opcode::kDot) return false;
  std::optional<hlo::GemmShape> g = hlo::as_gemm(dot);
  return g && g->macs() >= kMinCublasMacs;
}

namespace gpu {
namespace {

// A block reduction needs each of its threads to have an element: fewer reduced elements per
// output go to one thread per output, which then loops over them.
constexpr std::int64_t kMinBlockReduction = 64;
// Both transposed dims at least this long: a 32x32 tile is at least half used.
constexpr std::int64_t kMinTransposeTile = 16;

bool is_block_reduction(const std::vector<const Instruction*>& outputs) {
  for (const Instruction* o : outputs)
    if (o->opcode != Opcode::kReduce || o->called.size() != 1 || o->operands.size() != 2)
      return false;
  ReductionShape first = reduction_shape(*outputs.front());
  for (const Instruction* o : outputs) {
    ReductionShape s = reduction_shape(*o);
    if (s.operand != first.operand || s.split.reduced != first.split.reduced) return false;
  }
  return first.reduced_size >= kMinBlockReduction;
}

// transpose with dimensions={0, ..., r-3, r-1, r-2}
bool is_minor_transpose(const Instruction& t) {
  if (t.opcode != Opcode::kTranspose || t.shape.rank() < 2 || !t.attrs.has("dimensions"))
    return false;
  std::vector<std::int64_t> perm = t.attrs.get_ints("dimensions");
  auto r = static_cast<std::int64_t>(t.shape.rank());
  if (static_cast<std::int64_t>(perm.size()) != r) return false;
  for (std::int64_t d = 0; d < r - 2; ++d)
    if (perm[static_cast<std::size_t>(d)] != d) return false;
  const Shape& x = t.operands[0]->shape.dims;
  return perm[static_cast<std::size_t>(r - 2)] == r - 1 &&
         perm[static_cast<std::size_t>(r - 1)] == r - 2 && x[x.size() - 2] >= kMinTransposeTile &&
         x[x.size() - 1] >= kMinTransposeTile;
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

KernelKind kernel_kind(const Instruction& root) {
  std::vector<const Instruction*> outputs = computed_outputs(root);
  if (is_block_reduction(outputs)) {
    const ReductionShape s = reduction_shape(*outputs.front());
    bool last_reduced = !s.split.reduced.empty() &&
                        s.split.reduced.back() + 1 == static_cast<std::int64_t>(s.operand.size());
    return last_reduced ? KernelKind::kRowReduction : KernelKind::kColumnReduction;
  }
  if (outputs.size() == 1 && is_minor_transpose(*outputs.front())) return KernelKind::kTranspose;
  return KernelKind::kLoop;
}

}  // namespace gpu
}  // namespace jx::codegen
