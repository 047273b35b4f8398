// What the fusion passes after instruction fusion look at: which entry instructions become
// kernels, and how a fusion reads its operands.
#pragma once

#include "hlo/ir.hpp"

namespace jx::passes::fusion {

// Instructions the backends run as an emitted loop over their output (fusions, and unfused ops
// other than dots, which may be BLAS calls, sorts, which run on the host, and scatters, whose
// kernels walk their updates): what horizontal and multi-output fusion may join.
bool is_kernel(const hlo::Instruction& inst);

// Whether `fusion` reads operand `k` at most once per element it computes: no broadcast that
// repeats elements, no dot.
bool reads_once(const hlo::Instruction& fusion, std::size_t k);

}  // namespace jx::passes::fusion
