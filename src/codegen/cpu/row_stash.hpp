// A value a fusion both sums over each row and reads at each output element, computed once: a
// softmax's exp(x - max), which the row's sum reads and the output divides by that sum. As the
// sum's loop computes the value it stores it into the output's row, which the kernel writes
// only after the sum, and the output's loop reads it back instead of computing it again. The sum's
// loop also prefetches the next row of the kernel's operands of the output's shape: the row it
// computes from is in the cache, the next one is not (ElementalEmitter::ChunkHook).
//
// An output that streams (streaming_stores.hpp) is written once instead: a row of up to 16 KiB is
// stashed on the stack, where it stays in the first-level cache. Where the rows fold in chunks,
// the output is written a row behind (emit_rows_behind): the sum's loop over row r writes row
// r - 1 a chunk at a time, from the other of two stashed rows, so that the output's stores stream
// out while the row computes rather than in a burst that stalls the core once the write-combining
// buffers fill (softmax of f32[4096, 4096] on two cores: 5-11% faster, docs/performance.md).
// A streamed row kernel with nothing to stash (log-softmax, layer norm) is written a row behind
// as well, its output computed again from the operands' previous row, which its reductions have
// just read into the cache, and the chunks' prefetch of the next row (log-softmax of
// f32[4096, 4096] on two cores: 25-30% faster).
#pragma once

#include <optional>
#include <vector>

#include "codegen/elemental/elemental.hpp"
#include "codegen/elemental/loops.hpp"

namespace jx::codegen::cpu {

struct RowStash {
  ElementalEmitter::GivenGenerators values;  // none when nothing is stashed
  bool in_output = false;                    // stashed in the output's rows
  // Stashed on the stack in two rows, the output to be written a row behind.
  struct Behind {
    const hlo::Instruction* value;         // the stashed value, or none
    ElementGenerator load;                 // its stashed element, at an index of the output
    std::size_t kept;                      // the output's leading dims, which index its rows
    const hlo::Instruction* chunked;       // the reduction whose chunks write the last row's
    ElementalEmitter::ChunkHook prefetch;  // of the next row, by chunk
  };
  std::optional<Behind> behind;
};

// A generator standing in for one such value of `fusion` (one output, not written over an
// operand, into `out`, which streams if `out_streams`), or none when no value qualifies: one
// with the output's shape and dtype that holds a math function, is reduced over trailing dims
// (never dim 0, so that each thread's rows are its own), is otherwise read only through
// elementwise ops at the output's own index, and not only by the reduction. Of several, the last
// in the fusion's order. With none, a streamed output may still be written behind (`behind`,
// no value). `buffers` are the fusion's operands, as `params` read them.
RowStash stash_row_values(ElementalEmitter& em, const hlo::Instruction& fusion,
                          const std::vector<ElementGenerator>& params,
                          const std::vector<llvm::Value*>& buffers, llvm::Value* out,
                          bool out_streams);

// Writes the output of a fusion stashed a row behind (`stash.behind`), rows [rows.begin,
// rows.end) of dim 0 or all: each row's reductions, the sum's loop writing the last row's output
// by chunks, and the last row after the loop. The output's stores stream.
void emit_rows_behind(ElementalEmitter& em, const RowStash& stash, const hlo::Instruction& fusion,
                      const std::vector<ElementGenerator>& params, llvm::Value* out,
                      const std::optional<OuterRange>& rows);

}  // namespace jx::codegen::cpu
