// How many iterations of a vectorized elementwise loop run side by side (LLVM's interleave
// count). A core starts a floating-point operation on each of its pipes every cycle and finishes
// it a few cycles later, so it needs pipes × latency independent operations at hand to stay busy.
// An iteration whose operations mostly depend on one another (gelu: 22 operations, 18 in a chain)
// has too few, and the out-of-order window cannot find enough in the iterations after it: the
// loop runs at its chain's latency instead of its operations' throughput. Interleaving k
// iterations puts k independent operations at every step of the chain. Measured on one core
// (AVX-512, f32[65536] in cache): gelu 3.27 → 2.48 ns per 16 elements, three gelus in a row
// 17.4 → 7.7 ns, exp 1.66 → 1.32 ns; a body with many independent operations gains little
// and each copy costs compile time, so the count follows the body's shape, and stays within a
// budget of operations and a loop's known length: a chain of 1000 sin, mul and add equations on
// f32[256] compiled in 6.7 s at 8 against 0.86 s at 1.
#pragma once

#include <cstdint>
#include <optional>

#include <llvm/ADT/ArrayRef.h>

#include "codegen/llvm_headers.hpp"

namespace jx::codegen {

// The interleave count for a loop whose scalar body is `body` (its blocks in emission order), of
// `trips` iterations where known: the smallest power of two, at most 8, that gives every step of
// the body's longest chain of dependent floating-point operations 8 independent ones (2 pipes ×
// a 4-cycle latency), within 1024 operations in all and one copy per 256 iterations; 1 for a body
// without such operations or holding a loop of its own.
int interleave_count(llvm::ArrayRef<llvm::BasicBlock*> body, std::optional<std::int64_t> trips);

}  // namespace jx::codegen
