// Column reductions on the CPU: a reduce of every dim but the last (a bias gradient's sum over
// the batch) computed a few rows of its operand at a time into the output, so that the inner
// loop runs along contiguous memory and vectorizes. The generator's order (one output element at a
// time, a stride of a whole row between its elements) reads memory a row's length apart.
#pragma once

#include <optional>

#include "codegen/elemental/elemental.hpp"
#include "codegen/elemental/loops.hpp"

namespace jx::codegen::cpu {

// A reduce over an operand of rank 2 or more keeping only its last dim; or, batched, of rank 3
// or more keeping its first and last (split-column-reductions' partial sums).
bool is_column_reduction(const hlo::Instruction& reduce);

// Rows are folded kColumnRowGroup at a time: their values at a column combined pairwise, then
// into out[j]. Row by row, out[j]'s chain through memory (a store forwarded to the next row's
// load, then the combiner: about 12 cycles) bounded the loop, whatever the width: f32[100352,
// 32] summed at 41 GB/s, one thread as fast as two.
inline constexpr std::int64_t kColumnRowGroup = 8;

// out[j] = init, then out[j] op= each group of rows' combined values at column j, in order,
// then the rows left over one by one: the same order on any number of threads. `part`, a
// thread's part, limits j to a range; absent: all. Batched, each entry of the first dim is one
// such reduction over all columns, and `part` limits the entries instead.
void emit_column_reduction(ElementalEmitter& em, const hlo::Instruction& reduce,
                           const ElementGenerator& operand, const ElementGenerator& init,
                           llvm::Value* out, const std::optional<OuterRange>& part);

}  // namespace jx::codegen::cpu
