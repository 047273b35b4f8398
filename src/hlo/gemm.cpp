#include "hlo/gemm.hpp"

namespace jx::hlo {

GemmPrecision operand_precision(const Instruction& product) {
  if (!product.attrs.has("operand_precision")) return GemmPrecision::kDefault;
  const std::string& p = product.attrs.get_string("operand_precision");
  return p == "highest" ? GemmPrecision::kHighest
         : p == "high"  ? GemmPrecision::kHigh
                        : GemmPrecision::kDefault;
}

std::optional<GemmShape> as_gemm(const Instruction& dot) {
  if (dot.opcode != Opcode::kDot) return std::nullopt;
  const HloShape& lhs = dot.operands[0]->shape;
  const HloShape& rhs = dot.operands[1]->shape;
  DType dt = dot.shape.dtype;
  bool sixteen_bit = dt == float32 && k16BitFloating.contains(lhs.dtype);
  if ((dt != float32 && dt != float64) || lhs.dtype != rhs.dtype ||
      (lhs.dtype != dt && !sixteen_bit))
    return std::nullopt;
  const auto& lb = dot.attrs.get_ints("lhs_batch_dims");
  const auto& rb = dot.attrs.get_ints("rhs_batch_dims");
  const auto& lc = dot.attrs.get_ints("lhs_contracting_dims");
  const auto& rc = dot.attrs.get_ints("rhs_contracting_dims");
  auto nb = static_cast<std::int64_t>(lb.size());
  if (lhs.rank() != nb + 2 || rhs.rank() != nb + 2 || lc.size() != 1 || rc.size() != 1)
    return std::nullopt;
  for (std::int64_t i = 0; i < nb; ++i)
    if (lb[i] != i || rb[i] != i) return std::nullopt;
  GemmShape g;
  g.dtype = dt;
  g.operand_dtype = lhs.dtype;
  g.precision = operand_precision(dot);
  for (std::int64_t i = 0; i < nb; ++i) g.batch *= lhs.dims[i];
  g.transpose_lhs = lc[0] == nb;
  g.transpose_rhs = rc[0] == nb + 1;
  g.m = lhs.dims[g.transpose_lhs ? nb + 1 : nb];
  g.k = lhs.dims[lc[0]];
  g.n = rhs.dims[g.transpose_rhs ? nb : nb + 1];
  return g;
}

}  // namespace jx::hlo
