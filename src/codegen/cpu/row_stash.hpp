// A value a fusion both sums over each row and reads at each output element, computed once: a
// softmax's exp(x - max), which the row's sum reads and the output divides by that sum. As the
// sum's loop computes the value it stores it into the output's row, which the kernel writes
// only after the sum, and the output's loop reads it back instead of computing it again. An
// output that streams (streaming_stores.hpp) is written once instead: a row of up to 16 KiB is
// stashed on the stack, where it stays in the first-level cache. The sum's loop also prefetches
// the next row of the kernel's operands of the output's shape: the row it computes from is in
// the cache, the next one is not (ElementalEmitter::RowPrefetch).
#pragma once

#include <vector>

#include "codegen/elemental/elemental.hpp"

namespace jx::codegen::cpu {

struct RowStash {
  ElementalEmitter::GivenGenerators values;  // none when nothing is stashed
  bool in_output = false;                    // stashed in the output's rows
};

// A generator standing in for one such value of `fusion` (one output, not written over an
// operand, into `out`, which streams if `out_streams`), or none when no value qualifies: one
// with the output's shape and dtype that holds a math function, is reduced over trailing dims
// (never dim 0, so that each thread's rows are its own), is otherwise read only through
// elementwise ops at the output's own index, and not only by the reduction. Of several, the last
// in the fusion's order. `buffers` are the fusion's operands, as `params` read them.
RowStash stash_row_values(ElementalEmitter& em, const hlo::Instruction& fusion,
                          const std::vector<ElementGenerator>& params,
                          const std::vector<llvm::Value*>& buffers, llvm::Value* out,
                          bool out_streams);

}  // namespace jx::codegen::cpu
