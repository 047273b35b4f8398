// What the contractions (dot_general, conv_general_dilated) share: JAX's lax.Precision as a
// param, and the output dtype rule with preferred_element_type.
#pragma once

#include <optional>
#include <string>

#include "core/params.hpp"
#include "jx/lax.hpp"

namespace jx::contraction {

// The param is a pair (one per operand), printed "(Precision.HIGHEST, Precision.HIGHEST)";
// None or absent means none. Only the GPU's GEMM reads it.
Param precision_param(lax::Precision p);
// `op`'s precision param; jx::TypeError naming `op` when it is not None or an equal pair.
std::optional<lax::Precision> precision_of(const std::string& op, const Params& params);
const char* precision_word(lax::Precision p);  // the flag's and HLO's: "highest"
// The precision a contraction without one gets: --default_matmul_precision, read as JAX reads
// jax_default_matmul_precision, when it is traced.
std::optional<lax::Precision> default_precision();

// Equal numeric operand dtypes; preferred_element_type (None: the operands') may widen, and
// integers may go to floats. JAX's messages, naming `op`.
DType out_dtype(const std::string& op, DType lhs, DType rhs, const Param& preferred);

}  // namespace jx::contraction
