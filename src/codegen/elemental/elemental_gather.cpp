// Where an element of a gather's result or of a scatter's updates meets the operand, in IR: the
// map core/slice_map.hpp writes for the eager impls and the evaluator. A gather is then a
// generator (it fuses like a slice); the scatter kernels (CPU and GPU) walk the updates with it.
#include "codegen/elemental/elemental.hpp"
#include "jx/errors.hpp"

namespace jx::codegen {

SliceMap gather_slice_map(const hlo::Instruction& gather) {
  const hlo::Attrs& a = gather.attrs;
  return {a.get_ints("offset_dims"), a.get_ints("collapsed_slice_dims"),
          a.get_ints("start_index_map"), a.get_ints("operand_batching_dims"),
          a.get_ints("start_indices_batching_dims")};
}

SliceMap scatter_slice_map(const hlo::Instruction& scatter) {
  const hlo::Attrs& a = scatter.attrs;
  return {a.get_ints("update_window_dims"), a.get_ints("inserted_window_dims"),
          a.get_ints("scatter_dims_to_operand_dims"), a.get_ints("input_batching_dims"),
          a.get_ints("scatter_indices_batching_dims")};
}

SliceTarget emit_slice_target(ElementalEmitter& em, const SliceMap& m, const Shape& operand,
                              const Shape& window, DType index_dtype,
                              const ElementGenerator& indices, const IrIndex& element) {
  auto& b = em.b();
  std::vector<std::int64_t> batch = batch_dims_of(m, element.dims.size());
  std::vector<std::int64_t> walk = window_operand_dims(m, operand.size());
  std::vector<llvm::Value*> start(operand.size(), em.i64(0)), position;
  for (std::int64_t d : batch) position.push_back(element.dims[static_cast<std::size_t>(d)]);
  for (std::size_t k = 0; k < m.start_index_map.size(); ++k) {
    position.push_back(em.i64(static_cast<std::int64_t>(k)));
    llvm::Value* v = indices(IrIndex{position, nullptr});
    position.pop_back();
    start[static_cast<std::size_t>(m.start_index_map[k])] =
        is_unsigned(index_dtype) ? b.CreateZExtOrTrunc(v, b.getInt64Ty())
                                 : b.CreateSExtOrTrunc(v, b.getInt64Ty());
  }
  for (std::size_t k = 0; k < m.operand_batching_dims.size(); ++k)
    start[static_cast<std::size_t>(m.operand_batching_dims[k])] =
        position[static_cast<std::size_t>(m.indices_batching_dims[k])];
  SliceTarget t{{}, b.getTrue()};
  for (std::size_t d = 0; d < operand.size(); ++d) {
    // 0 <= start <= operand - window, as one unsigned comparison; never when the window is
    // larger than the dim (a scatter into an empty dim).
    std::int64_t room = operand[d] - window[d], hi = std::max<std::int64_t>(room, 0);
    t.in_bounds =
        room < 0 ? b.getFalse() : b.CreateAnd(t.in_bounds, b.CreateICmpULE(start[d], em.i64(hi)));
    llvm::Value* s = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, start[d], em.i64(hi));
    t.dims.push_back(b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, s, em.i64(0)));
  }
  for (std::size_t j = 0; j < walk.size(); ++j) {
    llvm::Value*& dim = t.dims[static_cast<std::size_t>(walk[j])];
    dim =
        b.CreateAdd(dim, element.dims[static_cast<std::size_t>(m.window_dims[j])], "", true, true);
  }
  return t;
}

namespace {

// Each result element reads the operand where its (clamped) start vector and offset put it.
ElementGenerator emit_gather(ElementalEmitter& em, const hlo::Instruction& inst,
                             const std::vector<ElementGenerator>& ops) {
  if (inst.operands.size() != 2) fail(inst, "needs an operand and indices");
  SliceMap m = gather_slice_map(inst);
  Shape operand = inst.operands[0]->shape.dims;
  Shape window = inst.attrs.get_ints("slice_sizes");
  if (window.size() != operand.size()) fail(inst, "slice_sizes do not fit the operand");
  DType index_dtype = inst.operands[1]->shape.dtype;
  return [&em, m, operand, window, index_dtype, ops](const IrIndex& index) {
    SliceTarget t = emit_slice_target(em, m, operand, window, index_dtype, ops[1], index);
    return ops[0](IrIndex{t.dims, t.dims.empty() ? em.i64(0) : nullptr});
  };
}

}  // namespace

void add_gather_emitter(EmitterTable& t) { t.set(hlo::Opcode::kGather, emit_gather); }

}  // namespace jx::codegen
