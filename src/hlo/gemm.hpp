// A dot read as a (batched) matrix product: the form both the BLAS thunk and the CPU backend's
// blocked kernel take; and a dense layer's activation(x · w + b) read as one GEMM with an
// epilogue, the form cuBLASLt takes.
#pragma once

#include <cstdint>
#include <optional>

#include "hlo/ir.hpp"

namespace jx::hlo {

// JAX's lax.Precision of a dot, from its HLO attribute operand_precision (absent: kDefault).
// Only the GPU reads it: below kHighest, cuBLAS may round f32 operands to TF32.
enum class GemmPrecision { kDefault, kHigh, kHighest };
GemmPrecision operand_precision(const Instruction& product);  // of a dot or a convolution

// out[b] = op(lhs[b]) · op(rhs[b]), row-major, b over the flattened batch dims.
struct GemmShape {
  DType dtype = float32;          // of the product
  DType operand_dtype = float32;  // dtype, or bf16/f16 operands of an f32 product (tensor cores)
  GemmPrecision precision = GemmPrecision::kDefault;
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transpose_lhs = false;  // lhs stored as [k, m] instead of [m, k]
  bool transpose_rhs = false;  // rhs stored as [n, k] instead of [k, n]

  std::int64_t macs() const { return batch * m * n * k; }
};

// The dot as a GEMM when it is one: f32 or f64 throughout, or bf16 or f16 operands of an f32
// product (a 16-bit dot that upcast-16bit-dots left to a GPU library), [batch..., m, k] x
// [batch..., k, n]
// with leading batch dims in order and each operand's contracting dim among its last two (a
// transposed operand is fine).
std::optional<GemmShape> as_gemm(const Instruction& dot);

// GELU is the tanh form (jx::nn::gelu's default), as cuBLASLt's epilogue computes it.
enum class GemmActivation { kNone, kRelu, kGelu };

// What an elementwise computation makes of a matrix product's value: activation(value + bias).
// `bias`, when there is one, is the vector broadcast along the product's last dim.
struct EpilogueMatch {
  GemmActivation activation = GemmActivation::kNone;
  const Instruction* bias = nullptr;
};

// Whether `root` computes activation(value + bias) (not `value` alone, unless `value` rounds the
// product to 16 bits: epilogue_value) from `value`, a rank-2 array: value + broadcast(b) with b a
// vector along the last dim; relu as jx::nn::relu writes it (where(x <= 0, 0, x)) or as
// maximum(x, 0); gelu's tanh form with any grouping of its sums and products. Constants match to
// float32 precision.
std::optional<EpilogueMatch> match_epilogue(const Instruction& root, const Instruction& value);

// Whether `dot` is a product an epilogue may follow: an f32 matrix product (of f32 operands, or
// of 16-bit ones that a backend reads as they are), no batch. Which of them a backend fuses is
// its own choice (passes::GemmEpilogueFusion's `fuses`).
bool fits_gemm_epilogue(const Instruction& dot);

// The product's value as an epilogue in `c` reads it: `product` itself, or its conversion to a
// 16-bit float where that is its only reader (a bf16 layer rounds its product, then adds the
// bias and applies the activation in f32, rounding once more where it stores).
const Instruction& epilogue_value(const Computation& c, const Instruction& product);

// A fusion computing activation(lhs · rhs + bias) from a float32 matrix product of two of its
// parameters (no batch dims), a bias parameter or none: what one cuBLASLt call computes (of f32
// operands into f32) or one CPU kernel. `out`: the fusion's dtype, f32 or the 16-bit float the
// product is rounded to (epilogue_value).
struct GemmEpilogue {
  GemmShape shape;
  GemmActivation activation = GemmActivation::kNone;
  int lhs = 0, rhs = 1, bias = -1;  // the fusion's operands (bias -1: none)
  DType out = float32;
};
std::optional<GemmEpilogue> as_gemm_epilogue(const Instruction& fusion);

}  // namespace jx::hlo
