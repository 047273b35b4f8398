// Counted loops and row-major loop nests over a shape: the CPU's kernels, the GPU's grid-stride
// loops, and the inner loops of the reduce and dot generators on both backends. Every loop is
// registered with the ElementalEmitter while its body is emitted, so generators can hoist work
// out of it.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "codegen/elemental/elemental.hpp"

namespace jx::codegen {

// for (i = begin; i < end; ++i) body(i), with i an i64. Constant bounds that give no iteration
// emit nothing; other bounds are checked before entering. Loops are never unrolled, and
// vectorized only when `vectorize`: a reduction's four vectors at a time, an elementwise body's
// as many as interleave_count gives (interleave.hpp).
void emit_for(ElementalEmitter& em, llvm::Value* begin, llvm::Value* end, const std::string& name,
              const std::function<void(llvm::Value*)>& body, bool vectorize = true);
void emit_for(ElementalEmitter& em, std::int64_t n, const std::string& name,
              const std::function<void(llvm::Value*)>& body, bool vectorize = true);
// for (i = begin; i < end; i += step) body(i), under emit_for's rules (step > 0).
void emit_strided_for(ElementalEmitter& em, llvm::Value* begin, llvm::Value* end, std::int64_t step,
                      const std::string& name, const std::function<void(llvm::Value*)>& body,
                      bool vectorize = true);

// while (cond()) body(): cond's code runs first and again after every body, so what it
// computes is seen by the body of that iteration.
void emit_while(ElementalEmitter& em, const std::string& name,
                const std::function<llvm::Value*()>& cond, const std::function<void()>& body);

// if (cond) then_fn(). What generators compute inside is not reused after it.
void emit_if(ElementalEmitter& em, llvm::Value* cond, const std::string& name,
             const std::function<void()>& then_fn);
// if (cond) then_fn() else else_fn(), as emit_if.
void emit_if_else(ElementalEmitter& em, llvm::Value* cond, const std::string& name,
                  const std::function<void()>& then_fn, const std::function<void()>& else_fn);

// Below this many elements a loop nest is not vectorized: the vector loop would save less run
// time than it costs to compile (measured: about 5 ms for a 10-op chain with sin on f32[16]).
inline constexpr std::int64_t kMinVectorizedElements = 64;

// The rows [begin, end) of dimension 0 a loop nest covers; the whole shape when absent.
struct OuterRange {
  llvm::Value* begin;
  llvm::Value* end;
};

// Whether a loop nest's innermost loop is vectorized: kIfLarge when it has a range (its size is
// known only as it runs) or at least kMinVectorizedElements elements; kNo for code that rarely
// runs; kYes for a nest run many times inside other loops.
enum class Vectorize { kIfLarge, kYes, kNo };

// The vector loop of a loop nest run in chunks of `size` iterations, `before(first, count)`
// emitted ahead of each: `first` the chunk's first linear index, `count` `size` (a last chunk
// may hold fewer). A loop over an innermost dimension of at most `size` runs whole, `before`
// ahead of it with that dimension's length (cpu/read_ahead.hpp).
struct LoopChunks {
  std::int64_t size;
  ElementalEmitter::ChunkHook before;
};

// body(index) for every index of `shape` in row-major order, the innermost dimension innermost;
// nothing for a shape with a 0-sized dimension. Size-1 dimensions get no loop (unless ranged).
// The index carries its linear form, computed incrementally. With `aligned` (a power of two),
// the innermost loop's vectorized part starts and ends at multiples of it, scalar loops taking
// the iterations before and after: where the innermost dimension's size is a multiple too, the
// vector loop's linear indices are then known multiples of `aligned` (streaming_stores.hpp);
// that part runs in `chunks` where given (a multiple of `aligned`).
void emit_loop_nest(ElementalEmitter& em, const Shape& shape, const std::string& name,
                    const std::function<void(const IrIndex&)>& body,
                    const std::optional<OuterRange>& outer = std::nullopt, std::int64_t aligned = 1,
                    Vectorize vectorize = Vectorize::kIfLarge, const LoopChunks* chunks = nullptr);

// The same indices with dim `d` (not the last) and the last dim cut into tiles of `tile`: the
// tiles' loops in the dims' places, then d's run within a tile, then the last dim's run
// innermost. A transpose that brings its operand's last dim to d reads each operand line within
// one tile, from the first-level cache, where the plain nest reads a line per element.
void emit_tiled_loop_nest(ElementalEmitter& em, const Shape& shape, std::size_t d,
                          std::int64_t tile, const std::string& name,
                          const std::function<void(const IrIndex&)>& body,
                          const std::optional<OuterRange>& outer = std::nullopt);

}  // namespace jx::codegen
