// Prefix scans on the CPU: a reduce-window that is a cumulative reduction (hlo::as_prefix_scan:
// cumsum, cumprod, cummax, cummin, cumlogsumexp) computed in one pass with a running
// accumulator, where the window generator would fold up to n elements for each output element.
// Along a dim with dims after it, the accumulators are a row of them, one per inner position,
// updated a contiguous run at a time (so the loop vectorizes), each element in scan order: the
// generator's folds exactly. Along the last dim each row is scanned alone; a row of at least a
// vector's length whose combiner is one commutative opcode (add, multiply, maximum, minimum, and,
// or) is scanned a chunk at a time: the chunk's operand elements computed into a stack buffer (a
// loop LLVM vectorizes), then scanned from there a vector at a time: a prefix inside the vector
// in log2(width) steps, then the running value combined in, stored as one vector. That
// reassociates, as reduce's generator lets LLVM reassociate float sums: each output is init ⊕ (its
// block's carry) ⊕ (a tree over its block), so float sums may differ from the sequential order by
// rounding; it is what brings a long row to memory speed instead of one dependent add per element.
#pragma once

#include <optional>

#include "codegen/elemental/elemental.hpp"
#include "codegen/elemental/loops.hpp"

namespace jx::codegen::cpu {

// Whether `scan` is a 1-d scan long enough to run as two parts, one per thread: the first scans
// two thirds of the row, the second folds those into its carry and scans the rest, reading
// them twice but leaving no core idle (kernel_rows gives it 2 rows).
bool splits_row_scan(const hlo::Instruction& scan);

// out = the scan `scan` (hlo::as_prefix_scan holds) of operand, from init. `rows` is a thread's
// part of dimension 0, of dimension 1 for a scan along dimension 0, or of a split 1-d scan's two
// parts (see kernel_rows).
void emit_prefix_scan(ElementalEmitter& em, const hlo::Instruction& scan,
                      const ElementGenerator& operand, const ElementGenerator& init,
                      llvm::Value* out, const std::optional<OuterRange>& rows);

}  // namespace jx::codegen::cpu
