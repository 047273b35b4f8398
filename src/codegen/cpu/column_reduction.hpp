// Column reductions on the CPU: a reduce of every dim but the last (a bias gradient's sum over
// the batch) computed a row of its operand at a time into the output, so that the inner loop
// runs along contiguous memory and vectorizes. The generator's order (one output element at a
// time, a stride of a whole row between its elements) reads memory a row's length apart.
#pragma once

#include <optional>

#include "codegen/elemental/elemental.hpp"
#include "codegen/elemental/loops.hpp"

namespace jx::codegen::cpu {

// A reduce over an operand of rank 2 or more keeping only its last dim.
bool is_column_reduction(const hlo::Instruction& reduce);

// out[j] = init, then out[j] = out[j] op operand[i..., j] for every row i... in order: the
// generator's sums exactly. `columns` limits j to a range (a thread's part); absent: all.
void emit_column_reduction(ElementalEmitter& em, const hlo::Instruction& reduce,
                           const ElementGenerator& operand, const ElementGenerator& init,
                           llvm::Value* out, const std::optional<OuterRange>& columns);

}  // namespace jx::codegen::cpu
