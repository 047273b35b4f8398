#include "codegen/cpu/column_reduction.hpp"

namespace jx::codegen::cpu {

bool is_column_reduction(const hlo::Instruction& reduce) {
  if (reduce.opcode != hlo::Opcode::kReduce || reduce.operands.size() != 2) return false;
  const Shape& x = reduce.operands[0]->shape.dims;
  ReduceSplit s = split_reduce_dims(reduce);
  return x.size() >= 2 &&
         s.kept == std::vector<std::int64_t>{static_cast<std::int64_t>(x.size()) - 1};
}

void emit_column_reduction(ElementalEmitter& em, const hlo::Instruction& reduce,
                           const ElementGenerator& operand, const ElementGenerator& init,
                           llvm::Value* out, const std::optional<OuterRange>& columns) {
  auto& b = em.b();
  const Shape& x = reduce.operands[0]->shape.dims;
  DType dtype = reduce.shape.dtype;
  std::int64_t n = x.back();
  Shape rows(x.begin(), x.end() - 1);
  if (n == 0) return;
  llvm::Value* begin = columns ? columns->begin : em.i64(0);
  llvm::Value* end = columns ? columns->end : em.i64(n);
  llvm::Value* start = init(em.scalar_index());
  emit_for(em, begin, end, "column.init", [&](llvm::Value* j) { em.store(dtype, start, out, j); });
  emit_loop_nest(em, rows, "column.row", [&](const IrIndex& row) {
    llvm::Value* row_start = b.CreateMul(row.linear, em.i64(n), "", true, true);
    emit_for(em, begin, end, "column", [&](llvm::Value* j) {
      IrIndex xi{row.dims, b.CreateAdd(row_start, j, "", true, true)};
      xi.dims.push_back(j);
      llvm::Value* sum = em.apply(*reduce.called[0], {em.load(dtype, out, j), operand(xi)});
      em.store(dtype, sum, out, j);
    });
  });
}

}  // namespace jx::codegen::cpu
