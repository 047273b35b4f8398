// Which kind of GPU kernel computes a root, decided from its HLO alone: the CPU's fusion
// decisions are kept, only the way a kernel maps its work onto threads differs. The cooperative
// kinds compute some instructions of the fusion, its heroes, themselves; the rest of the fusion
// runs through the element generators, reading the heroes' values.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/elemental/elemental.hpp"

namespace jx::codegen::gpu {

enum class KernelKind {
  // A grid-stride loop over the output elements (any root).
  kLoop,
  // A block per row: the reduces reduce trailing dims of operands whose leading dims (the row)
  // are their output's; a reduce may read an earlier one. Outputs are rows or elements of rows.
  kRow,
  // Reduces keeping the operand's last dim: a block per 32 output elements. Outputs are the
  // reduces, or elementwise functions of them at the same index.
  kColumnReduction,
  // A transpose of the last two dims through shared-memory tiles; the output is it, or an
  // elementwise function of it at the same index.
  kTranspose,
  // A thread per update element of a scatter, combining it atomically into the result.
  kScatter,
  // A prefix scan (hlo::as_prefix_scan), the only output: a thread per row along its axis.
  kScan,
};

// Threads per block of a row kernel whose rows are this long or longer.
inline constexpr int kRowBlock = 256;

struct KernelPlan {
  KernelKind kind = KernelKind::kLoop;
  // kRow and kColumnReduction: the reduces, operands before users; kTranspose: the transpose;
  // kScan: the scan.
  std::vector<const hlo::Instruction*> heroes;
  // kRow: blocks per row. Above 1 (a multiple of 32), each block folds a part of its row and
  // the last to finish combines the parts: few long rows then still fill the GPU.
  std::int64_t blocks_per_row = 1;
};

KernelPlan plan_kernel(const hlo::Instruction& root);

// The instruction computing each output: the fused computation's outputs, or the root itself.
std::vector<const hlo::Instruction*> computed_outputs(const hlo::Instruction& root);

// A reduce's shapes: its operand's, its reduced dims' (in operand order) and their sizes.
struct ReductionShape {
  Shape operand;
  ReduceSplit split;
  Shape reduced;
  std::int64_t outputs = 0, reduced_size = 0;
};
ReductionShape reduction_shape(const hlo::Instruction& reduce);

}  // namespace jx::codegen::gpu
