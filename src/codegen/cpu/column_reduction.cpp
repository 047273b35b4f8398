#include "codegen/cpu/column_reduction.hpp"

namespace jx::codegen::cpu {

bool is_column_reduction(const hlo::Instruction& reduce) {
  if (reduce.opcode != hlo::Opcode::kReduce || reduce.operands.size() != 2) return false;
  const Shape& x = reduce.operands[0]->shape.dims;
  auto last = static_cast<std::int64_t>(x.size()) - 1;
  ReduceSplit s = split_reduce_dims(reduce);
  return (x.size() >= 2 && s.kept == std::vector<std::int64_t>{last}) ||
         (x.size() >= 3 && s.kept == std::vector<std::int64_t>{0, last});
}

void emit_column_reduction(ElementalEmitter& em, const hlo::Instruction& reduce,
                           const ElementGenerator& operand, const ElementGenerator& init,
                           llvm::Value* out, const std::optional<OuterRange>& part) {
  auto& b = em.b();
  const Shape& x = reduce.operands[0]->shape.dims;
  DType dtype = reduce.shape.dtype;
  std::int64_t n = x.back();
  const bool batched = reduce.shape.rank() == 2;
  Shape row_dims(x.begin() + (batched ? 1 : 0), x.end() - 1);
  if (n == 0) return;
  auto add = [&](llvm::Value* a, llvm::Value* c) { return b.CreateAdd(a, c, "", true, true); };
  auto mul = [&](llvm::Value* a, std::int64_t c) {
    return b.CreateMul(a, em.i64(c), "", true, true);
  };
  auto combine = [&](llvm::Value* a, llvm::Value* c) {
    return em.apply(*reduce.called[0], {a, c});
  };
  // The reduction of batch entry `batch` (a constant 0 unbatched) over columns [begin, end).
  auto reduce_columns = [&](llvm::Value* batch, llvm::Value* begin, llvm::Value* end) {
    llvm::Value* start = init(em.scalar_index());
    llvm::Value* out_row = mul(batch, n);
    emit_for(em, begin, end, "column.init",
             [&](llvm::Value* j) { em.store(dtype, start, out, add(out_row, j)); });
    // out[j] op= the values of `rows` (flat row indices) at column j, combined pairwise first.
    auto fold_rows = [&](const std::vector<llvm::Value*>& rows, const std::string& name) {
      std::vector<IrIndex> at;
      for (llvm::Value* r : rows) at.push_back(em.delinearize(r, row_dims));
      emit_for(em, begin, end, name, [&](llvm::Value* j) {
        std::vector<llvm::Value*> values;
        for (std::size_t k = 0; k < rows.size(); ++k) {
          IrIndex xi{{}, add(mul(add(mul(batch, shape_size(row_dims)), rows[k]), n), j)};
          if (batched) xi.dims.push_back(batch);
          xi.dims.insert(xi.dims.end(), at[k].dims.begin(), at[k].dims.end());
          xi.dims.push_back(j);
          values.push_back(operand(xi));
        }
        for (std::size_t width = values.size(); width > 1; width = (width + 1) / 2)
          for (std::size_t k = 0; 2 * k < width; ++k)
            values[k] =
                2 * k + 1 < width ? combine(values[2 * k], values[2 * k + 1]) : values[2 * k];
        llvm::Value* o = add(out_row, j);
        em.store(dtype, combine(em.load(dtype, out, o), values[0]), out, o);
      });
    };
    std::int64_t rows = shape_size(row_dims), groups = rows / kColumnRowGroup;
    emit_for(
        em, em.i64(0), em.i64(groups), "column.group",
        [&](llvm::Value* g) {
          std::vector<llvm::Value*> group;
          for (std::int64_t k = 0; k < kColumnRowGroup; ++k)
            group.push_back(add(mul(g, kColumnRowGroup), em.i64(k)));
          fold_rows(group, "column");
        },
        /*vectorize=*/false);
    emit_for(
        em, em.i64(groups * kColumnRowGroup), em.i64(rows), "column.row",
        [&](llvm::Value* r) { fold_rows({r}, "column.last"); }, /*vectorize=*/false);
  };
  if (!batched) {
    reduce_columns(em.i64(0), part ? part->begin : em.i64(0), part ? part->end : em.i64(n));
    return;
  }
  emit_for(
      em, part ? part->begin : em.i64(0), part ? part->end : em.i64(x[0]), "column.batch",
      [&](llvm::Value* batch) { reduce_columns(batch, em.i64(0), em.i64(n)); },
      /*vectorize=*/false);
}

}  // namespace jx::codegen::cpu
