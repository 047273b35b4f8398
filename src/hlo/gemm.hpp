// A dot read as a (batched) matrix product: the form both the BLAS thunk and the CPU backend's
// blocked kernel take.
#pragma once

#include <cstdint>
#include <optional>

#include "hlo/ir.hpp"

namespace jx::hlo {

// out[b] = op(lhs[b]) · op(rhs[b]), row-major, b over the flattened batch dims.
struct GemmShape {
  DType dtype = float32;
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transpose_lhs = false;  // lhs stored as [k, m] instead of [m, k]
  bool transpose_rhs = false;  // rhs stored as [n, k] instead of [k, n]

  std::int64_t macs() const { return batch * m * n * k; }
};

// The dot as a GEMM when it is one: f32 or f64 throughout, [batch..., m, k] x [batch..., k, n]
// with leading batch dims in order and each operand's contracting dim among its last two (a
// transposed operand is fine).
std::optional<GemmShape> as_gemm(const Instruction& dot);

}  // namespace jx::hlo
