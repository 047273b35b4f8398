// What the fusion passes after instruction fusion look at: which entry instructions become
// kernels, and how a fusion reads its operands.
#pragma once

#include "hlo/ir.hpp"

namespace jx::passes::fusion {

// Instructions the backends run as an emitted loop over their output (fusions other than a dot's
// with its epilogue, hlo::as_gemm_epilogue: a library call or the matrix kernel, which joined to
// another would become a loop per element; and unfused ops other than dots, which may be BLAS
// calls, sorts, which run on the host, and scatters, whose kernels walk their updates): what
// horizontal and multi-output fusion may join.
bool is_kernel(const hlo::Instruction& inst);

// Whether `fusion` reads operand `k` at most once per element it computes: no broadcast that
// repeats elements, no dot, no reduce-window other than a prefix scan.
bool reads_once(const hlo::Instruction& fusion, std::size_t k);

// Whether a kernel computes a prefix scan (hlo::as_prefix_scan): such a kernel keeps it as its
// only output, so that codegen runs the scan's one pass; multi-output and horizontal fusion
// leave it alone.
bool computes_prefix_scan(const hlo::Instruction& kernel);

}  // namespace jx::passes::fusion
