// Prefetches that read a kernel's operands ahead of its loops. An operand of the output's shape
// is read at the output's own linear index, so the lines a loop reads next are known. Asking for
// them a little ahead, a chunk of lines at a time, keeps more of them in flight than the core's
// own prefetchers do once the loop's math slows its demand: gelu of f32[16M] streaming from
// memory runs 20-25% faster on one or two cores, exp 15%, a copy 5% (docs/performance.md).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "codegen/elemental/loops.hpp"

namespace jx::codegen::cpu {

// hook(first, count) asks for the cache lines of elements [first + ahead, first + ahead + count)
// of every operand of `kernel` whose dims are `dims`, one prefetch a line (`buffers` being the
// kernel's operands). Past a buffer's end a prefetch fetches nothing.
ElementalEmitter::RowChunkHook read_ahead(ElementalEmitter& em, const hlo::Instruction& kernel,
                                          const std::vector<llvm::Value*>& buffers,
                                          const Shape& dims, std::int64_t ahead);

// The chunks of a loop nest whose output streams (streaming_stores.hpp), `line` being the
// output's elements in a cache line: 32 lines each, reading the operands half a chunk ahead;
// none where no operand has the output's shape (a fill stays one memset).
// (gelu of f32[16M] from memory on two cores, medians of six runs: 5.65 ms without; chunks of
// 16, 32 and 64 lines 5.2, 4.4 and 4.4 ms; 32 lines ahead by 0, 8 and 16 lines 5.7, 4.3, 4.4.)
std::optional<LoopChunks> streaming_chunks(ElementalEmitter& em, const hlo::Instruction& kernel,
                                           const std::vector<llvm::Value*>& buffers,
                                           const Shape& dims, std::int64_t line);

}  // namespace jx::codegen::cpu
