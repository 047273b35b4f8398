// NVVM IR building blocks for GPU kernels: thread and block ids, barriers, fences, warp shuffles,
// shared and global memory, kernel annotations, grid-stride loops and the indices they walk.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "codegen/elemental/elemental.hpp"
#include "codegen/elemental/loops.hpp"

namespace jx::codegen::gpu {

inline constexpr int kWarpSize = 32;

// %tid.x and %ctaid.x as i64.
llvm::Value* thread_id(ElementalEmitter& em);
llvm::Value* block_id(ElementalEmitter& em);
// bar.sync 0: every thread of the block waits for the others.
void barrier(ElementalEmitter& em);
// The value of `v` in lane (lane + offset) of the warp, every lane taking part (shfl.sync.down);
// lanes past the end read their own. Any integer or float type of up to 64 bits.
llvm::Value* shuffle_down(ElementalEmitter& em, llvm::Value* v, int offset);
// The value of `v` in lane (lane - offset) (shfl.sync.up); lanes below `offset` read their own.
llvm::Value* shuffle_up(ElementalEmitter& em, llvm::Value* v, int offset);
// A block's static shared memory: `count` elements of `type`.
llvm::GlobalVariable* shared_array(llvm::Module& module, llvm::Type* type, std::uint64_t count,
                                   const std::string& name);
// Device memory of the module: `count` elements of `type`, zero when the module loads, and
// keeping what kernels leave in it from one launch to the next.
llvm::GlobalVariable* global_array(llvm::Module& module, llvm::Type* type, std::uint64_t count,
                                   const std::string& name);
// The address of element `index` of a shared or global array.
llvm::Value* array_element(ElementalEmitter& em, llvm::GlobalVariable* array, llvm::Value* index);
// membar.gl: this thread's writes to global memory are seen by the whole GPU before its later
// writes are.
void fence_device(ElementalEmitter& em);
// Marks `f` a kernel entry launched with at most `max_threads` threads per block.
void mark_kernel(llvm::Function& f, int max_threads);

// for (i = start; i < end; i += step) body(i) over i64 values, registered as a loop with the
// emitter, so generators may hoist work out of it. `start` may differ between threads.
void emit_strided_loop(ElementalEmitter& em, llvm::Value* start, std::int64_t end,
                       std::int64_t step, const std::string& name,
                       const std::function<void(llvm::Value*)>& body);

// The same loop taking `unroll` values of i per turn while all of them are below `end`, then one
// at a time: body gets i, i + step, ... Their loads can all be in flight at once.
void emit_unrolled_loop(ElementalEmitter& em, llvm::Value* start, std::int64_t end,
                        std::int64_t step, int unroll, const std::string& name,
                        const std::function<void(const std::vector<llvm::Value*>&)>& body);

// The index into `shape` of a row-major linear one, computed in 32 bits when the shape allows
// (64-bit division is slow on GPUs). While it lives its dims count as loop induction variables
// for ElementalEmitter::hoisted: what depends on some dims only, such as a row's reduction under
// a loop over the row's elements, is computed before that inner loop.
class LoopIndex {
 public:
  LoopIndex(ElementalEmitter& em, llvm::Value* linear, const Shape& shape, const std::string& name);
  ~LoopIndex();
  LoopIndex(const LoopIndex&) = delete;
  LoopIndex& operator=(const LoopIndex&) = delete;

  const IrIndex& index() const { return index_; }

 private:
  ElementalEmitter& em_;
  IrIndex index_;
  int pushed_ = 0;
};

}  // namespace jx::codegen::gpu
