// Prefetches that read a kernel's operands ahead of its loops. An operand read at the output's
// own index (through elementwise ops) is read in the output's order, so the lines a loop reads
// next are known. Asking for them a little ahead, a chunk of lines at a time, keeps more of them
// in flight than the core's own prefetchers do once the loop's math slows its demand: gelu of
// f32[16M] streaming from memory runs 20-25% faster on one or two cores, exp 15%, a copy 5%
// (docs/performance.md).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "codegen/elemental/loops.hpp"

namespace jx::codegen::cpu {

inline constexpr std::int64_t kCacheLine = 64;

// A buffer a loop reads in order, and its elements' type.
struct ReadStream {
  llvm::Value* buffer;
  DType dtype;
};

// hook(first, count) asks for the cache lines of elements [first + ahead, first + ahead + count)
// of every stream, one prefetch a line. Past a buffer's end a prefetch fetches nothing.
ElementalEmitter::ChunkHook read_ahead(ElementalEmitter& em, std::vector<ReadStream> streams,
                                       std::int64_t ahead);

// The chunks of a loop kernel's nest whose outputs stream (streaming_stores.hpp), `output` one
// of them, `line` the narrowest one's elements in a cache line: 32 lines each, reading the
// operands the kernel reads only at the output's index (hlo::reads_only_at_output_index) half a
// chunk ahead; none where there is no such operand (a fill stays one memset). `buffers` are the
// kernel's operands. (gelu of f32[16M] from memory on two cores, medians of six runs: 5.65 ms
// without; chunks of 16, 32 and 64 lines 5.2, 4.4 and 4.4 ms; 32 lines ahead by 0, 8 and 16
// lines 5.7, 4.3, 4.4.)
std::optional<LoopChunks> streaming_chunks(ElementalEmitter& em, const hlo::Instruction& kernel,
                                           const std::vector<llvm::Value*>& buffers, int output,
                                           std::int64_t line);

}  // namespace jx::codegen::cpu
