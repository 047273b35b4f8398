// Prefix scans on the CPU: a reduce-window that is a cumulative reduction (hlo::as_prefix_scan:
// cumsum, cumprod, cummax, cummin, cumlogsumexp) computed in one pass with a running
// accumulator, where the window generator would fold up to n elements for each output element.
// Along a dim with dims after it, the accumulators are a row of them, one per inner position,
// updated a contiguous run at a time (so the loop vectorizes), each element in scan order: the
// generator's folds exactly. Along the last dim each row is scanned alone; a row of at least a
// vector's length whose combiner is one commutative opcode (add, multiply, maximum, minimum, and,
// or) is scanned a vector at a time, read from the operand's buffer when a kernel parameter is
// the operand, else a chunk at a time computed into a stack buffer first (a loop LLVM
// vectorizes): a prefix inside the vector in log2(width) steps, then the running value combined
// in, stored as one vector. That reassociates, as reduce's generator lets LLVM reassociate float
// sums: each output is init ⊕ (its block's carry) ⊕ (a tree over its block), so float sums may
// differ from the sequential order by rounding; it is what brings a long row to memory speed
// instead of one dependent add per element.
#pragma once

#include <optional>

#include "codegen/cpu/cpu_isa.hpp"
#include "codegen/elemental/elemental.hpp"
#include "codegen/elemental/loops.hpp"

namespace jx::codegen::cpu {

// A scan along the last dim with few long rows runs as tiles: its kernel's rows are the tiles
// (row by row), which its calls claim in order from a ticket in a scratch of 64-bit words, zero
// at the start of each run, whatever rows they were given: each call scans tiles until none is
// left. Every tile scans its positions from the combiner's identity and stores each value
// combined with P, the prefix before the tile (init for a row's first tile): known at the start
// when the tile before has published it, which it does as soon as it knows its own last value
// (always, on one thread). Otherwise the tile scans without storing, for its last value alone
// (reading its operand into L2), waits for P, publishes, and scans again from L2, storing. So
// every core scans at once, each reading the operand from memory and writing the output once
// (past the caches, when it outgrows them: cumsum of f32[16M] on two cores took 10-15% less
// time than when the late tiles stored their values and then combined P into them). Every tile
// a call waits for was claimed before by a call that is running, so none deadlocks; each value
// is P ⊕ (the tile's own scan) either way, and the last value is the same code's, so the values
// do not depend on the threads. Only for values stored as computed.
// How many tiles `scan` runs as, or 0 when it is not tiled.
std::int64_t scan_tiles(const hlo::Instruction& scan);
// The scratch words a scan of `tiles` tiles uses: its ticket, then per tile a flag (its prefix
// published) and its prefix.
inline std::int64_t scan_scratch_words(std::int64_t tiles) { return 1 + 2 * tiles; }

// What a thread's part of the columns of a scan down dimension 0 of a matrix is rounded to (a
// power of two; 1 for other scans): 8 KiB of a row, where the scan reads and writes a quarter of
// the last-level cache or more. Each thread reads its part of every row, and parts under two
// pages ran slower on two threads than the whole on one (Zen 5, f32 [4096, 1024]: 748-816 µs
// against 570-595; [65536, 64]: 1033-1125 against 520-562; [4096, 4096], 8 KiB parts: 2.49-2.68
// ms against 3.24-3.42). So such a matrix under 16 KiB a row scans on one thread. A smaller one,
// in the caches, still splits by lines: [1024, 256] took 14.2-22.0 µs on two threads and
// 18.3-18.8 on one.
std::int64_t scan_part_columns(const CpuIsa& isa, const hlo::Instruction& scan);

// out = the scan `scan` (hlo::as_prefix_scan holds) of operand, from init. `rows` is a thread's
// part of dimension 0 (with `rows_span_leading_dims`, of the dims before the axis taken
// together: a batch of one or a few still splits), or of dimension 1 for a scan along dimension
// 0; a tiled scan ignores it and takes `scratch` (scan_scratch_words of it). `source`, when given,
// is a buffer holding the operand as stored (its shape and dtype), which a scan along the last dim
// reads a vector at a time instead of computing it into a buffer of its own first. With `aligned`
// (a power of two) a scan in runs starts every run at a multiple of it, rounding the ends of a
// thread's part of the last dim (but the dim's end) down to one. With `streams` (its output
// streams past the caches) it prefetches the operand's runs ahead.
void emit_prefix_scan(ElementalEmitter& em, const hlo::Instruction& scan,
                      const ElementGenerator& operand, const ElementGenerator& init,
                      llvm::Value* out, const std::optional<OuterRange>& rows,
                      bool rows_span_leading_dims, llvm::Value* scratch,
                      llvm::Value* source = nullptr, std::int64_t aligned = 1,
                      bool streams = false);

}  // namespace jx::codegen::cpu
