// Dot canonicalization (XLA's DotDecomposer): a floating dot whose dims do not already read as a
// (batched) matrix product, [batch..., m, k] x [batch..., k, n] with its batch dims leading in
// order (hlo::as_gemm), becomes one. Each operand is transposed to its batch dims, then its free
// and contracting dims (or contracting and free, when it already holds them in that order: the
// GEMMs read either), and reshaped to one free and one contracting dim; the product is reshaped
// back to dot_general's (batch, lhs free, rhs free) dims. The GEMM paths (the CPU's blocked
// kernel, BLAS, cuBLAS) then take it, where the elemental dot would compute one output element at
// a time. Batch dims of size 1 become free dims (a batched product splits over the threads by
// its batch entries). A dot with an operand of no free dims (a matrix-vector product) is left as
// it is.
#pragma once

#include "passes/pass.hpp"

namespace jx::passes {

class DotCanonicalizer final : public Pass {
 public:
  std::string name() const override { return "dot-canonicalizer"; }
  bool run(hlo::Module& module) override;
};

}  // namespace jx::passes
