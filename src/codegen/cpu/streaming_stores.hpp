// Streaming stores: a large output a kernel writes once, in order, is written with non-temporal
// stores. A store to a line not in the cache otherwise reads the line first, and fills the caches
// with lines no later kernel finds there once the output outgrows them.
#pragma once

#include <cstdint>

#include "codegen/cpu/cpu_isa.hpp"
#include "codegen/llvm_headers.hpp"

namespace jx::codegen::cpu {

// Whether an output of `bytes` streams: one larger than the last-level cache leaves it before a
// next kernel could read it there (at 2x the cache, 20% faster; at 1x, no faster, and slower when
// a next kernel reads it; docs/performance.md).
inline bool streams(const CpuIsa& isa, std::int64_t bytes) { return bytes > isa.last_level_cache; }

// Marks the load of an output's buffer pointer: stores into that buffer may stream, and it is
// 64-byte aligned (Buffer::kAlignment, to which the runtime's arena offsets are rounded too).
void mark_streaming(llvm::LoadInst& buffer);

// After optimization: each vector store into a marked buffer that is known aligned to its size
// becomes non-temporal, as does a memset into one of whole lines from a line on (a fill), and a
// function that has any ends with a store fence, so that its stores are visible to whichever
// thread next reads the buffer.
void emit_streaming_stores(llvm::Module& module);

}  // namespace jx::codegen::cpu
