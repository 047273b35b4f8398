// Questions about fusion instructions that passes, buffer assignment and codegen share.
#pragma once

#include <optional>
#include <vector>

#include "hlo/ir.hpp"

namespace jx::hlo {

// The array shapes an instruction produces: a multi-output fusion's tuple elements, else its
// own shape.
std::vector<const HloShape*> output_shapes(const Instruction& inst);

// The dims all of `inst`'s outputs share, when they share one shape's dims (one loop nest
// covers them all).
std::optional<Shape> common_output_dims(const Instruction& inst);

// The instruction of `fusion`'s computation that computes output `output` (its root, or the
// root tuple's element).
const Instruction* fused_output(const Instruction& fusion, int output);

// Whether `inst` (a fusion, an elementwise instruction or a scatter) reads operand `operand` only at the
// index it writes output `output` at, through same-shape elementwise ops: then the output may
// overwrite that operand's buffer in place. In a loop fusion the operand may also reach other
// outputs of that shape (loop kernels compute them all at an index before storing any). A
// scatter's result starts as its operand 0, which it may therefore overwrite.
bool reads_only_at_output_index(const Instruction& inst, int operand, int output);

}  // namespace jx::hlo
