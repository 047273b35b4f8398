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
  Shape row_dims(x.begin(), x.end() - 1);
  if (n == 0) return;
  llvm::Value* begin = columns ? columns->begin : em.i64(0);
  llvm::Value* end = columns ? columns->end : em.i64(n);
  llvm::Value* start = init(em.scalar_index());
  emit_for(em, begin, end, "column.init", [&](llvm::Value* j) { em.store(dtype, start, out, j); });
  auto combine = [&](llvm::Value* a, llvm::Value* c) {
    return em.apply(*reduce.called[0], {a, c});
  };
  // out[j] op= the values of `rows` (flat row indices) at column j, combined pairwise first.
  auto fold_rows = [&](const std::vector<llvm::Value*>& rows, const std::string& name) {
    std::vector<IrIndex> at;
    for (llvm::Value* r : rows) at.push_back(em.delinearize(r, row_dims));
    emit_for(em, begin, end, name, [&](llvm::Value* j) {
      std::vector<llvm::Value*> values;
      for (std::size_t k = 0; k < rows.size(); ++k) {
        IrIndex xi{at[k].dims,
                   b.CreateAdd(b.CreateMul(rows[k], em.i64(n), "", true, true), j, "", true, true)};
        xi.dims.push_back(j);
        values.push_back(operand(xi));
      }
      for (std::size_t width = values.size(); width > 1; width = (width + 1) / 2)
        for (std::size_t k = 0; 2 * k < width; ++k)
          values[k] = 2 * k + 1 < width ? combine(values[2 * k], values[2 * k + 1]) : values[2 * k];
      em.store(dtype, combine(em.load(dtype, out, j), values[0]), out, j);
    });
  };
  std::int64_t rows = shape_size(row_dims), groups = rows / kColumnRowGroup;
  emit_for(
      em, em.i64(0), em.i64(groups), "column.group",
      [&](llvm::Value* g) {
        std::vector<llvm::Value*> group;
        for (std::int64_t k = 0; k < kColumnRowGroup; ++k)
          group.push_back(b.CreateAdd(b.CreateMul(g, em.i64(kColumnRowGroup), "", true, true),
                                      em.i64(k), "", true, true));
        fold_rows(group, "column");
      },
      /*vectorize=*/false);
  emit_for(
      em, em.i64(groups * kColumnRowGroup), em.i64(rows), "column.row",
      [&](llvm::Value* r) { fold_rows({r}, "column.last"); }, /*vectorize=*/false);
}

}  // namespace jx::codegen::cpu
