// Which kind of GPU kernel computes a root, decided from its HLO alone: the CPU's fusion
// decisions are kept, only the way a kernel maps its work onto threads differs.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/elemental/elemental.hpp"

namespace jx::codegen::gpu {

enum class KernelKind {
  kLoop,             // a grid-stride loop, one output element per iteration
  kRowReduction,     // reduces with the operand's last dim reduced: a block per output element
  kColumnReduction,  // reduces with the operand's last dim kept: a block per 32 output elements
  kTranspose,        // a transpose of the last two dims through shared-memory tiles
};

// The instruction computing each output: the fused computation's outputs, or the root itself.
std::vector<const hlo::Instruction*> computed_outputs(const hlo::Instruction& root);

// The reduces of a reduction kernel: every output is one, all over the same operand dims and
// reduced dims.
struct ReductionShape {
  Shape operand;
  ReduceSplit split;
  Shape reduced;  // the reduced dims' sizes, in operand order
  std::int64_t outputs = 0, reduced_size = 0;
};
ReductionShape reduction_shape(const hlo::Instruction& reduce);

KernelKind kernel_kind(const hlo::Instruction& root);

}  // namespace jx::codegen::gpu
