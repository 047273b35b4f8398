// dot as a generator: one output element = a loop nest over the contracting dims accumulating
// lhs * rhs in the output dtype. Generic dimension numbers; output = batch, lhs free, rhs free.
// Large matmuls never get here: they go to BLAS (CPU) or cuBLAS (GPU).
#include <algorithm>
#include <string>

#include "codegen/elemental/elemental.hpp"
#include "codegen/elemental/loops.hpp"
#include "jx/errors.hpp"

namespace jx::codegen {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using Ints = std::vector<std::int64_t>;
using Gens = std::vector<ElementGenerator>;

Ints dims_attr(const Instruction& inst, const char* name) {
  return inst.attrs.has(name) ? inst.attrs.get_ints(name) : Ints{};
}

// Where each dim of one operand comes from: the output (batch and free dims) or the
// contracting loop nest.
struct OperandMap {
  Ints batch, free, contracting;
};

OperandMap operand_map(const Instruction& inst, std::size_t rank, const Ints& batch,
                       const Ints& contracting) {
  OperandMap m{batch, {}, contracting};
  std::vector<int> uses(rank, 0);
  for (const Ints* v : {&batch, &contracting})
    for (std::int64_t d : *v) {
      if (d < 0 || d >= static_cast<std::int64_t>(rank)) fail(inst, "dimension out of range");
      ++uses[static_cast<std::size_t>(d)];
    }
  for (std::size_t d = 0; d < rank; ++d) {
    if (uses[d] > 1) fail(inst, "a dimension is used twice");
    if (!uses[d]) m.free.push_back(static_cast<std::int64_t>(d));
  }
  return m;
}

// The operand's index: batch dims from out[0..], free dims from out[free_at..], contracting
// dims from the loop nest's index.
IrIndex operand_index(const OperandMap& m, std::size_t rank, const IrIndex& out,
                      std::size_t free_at, const IrIndex& c) {
  IrIndex index{std::vector<llvm::Value*>(rank), nullptr};
  for (std::size_t k = 0; k < m.batch.size(); ++k)
    index.dims[static_cast<std::size_t>(m.batch[k])] = out.dims[k];
  for (std::size_t k = 0; k < m.free.size(); ++k)
    index.dims[static_cast<std::size_t>(m.free[k])] = out.dims[free_at + k];
  for (std::size_t k = 0; k < m.contracting.size(); ++k)
    index.dims[static_cast<std::size_t>(m.contracting[k])] = c.dims[k];
  if (rank == 0) index.linear = c.linear;  // both 0
  return index;
}

ElementGenerator emit_dot(ElementalEmitter& em, const Instruction& inst, const Gens& ops) {
  const hlo::HloShape &lhs = inst.operands[0]->shape, &rhs = inst.operands[1]->shape;
  Ints lc = dims_attr(inst, "lhs_contracting_dims"), rc = dims_attr(inst, "rhs_contracting_dims");
  Ints lb = dims_attr(inst, "lhs_batch_dims"), rb = dims_attr(inst, "rhs_batch_dims");
  if (lc.size() != rc.size() || lb.size() != rb.size()) fail(inst, "unpaired dimension numbers");
  OperandMap l = operand_map(inst, lhs.dims.size(), lb, lc);
  OperandMap r = operand_map(inst, rhs.dims.size(), rb, rc);
  Shape out, contracted;
  for (std::size_t k = 0; k < lb.size(); ++k) {
    if (lhs.dims[static_cast<std::size_t>(lb[k])] != rhs.dims[static_cast<std::size_t>(rb[k])])
      fail(inst, "batch dimension sizes differ");
    out.push_back(lhs.dims[static_cast<std::size_t>(lb[k])]);
  }
  for (auto d : l.free) out.push_back(lhs.dims[static_cast<std::size_t>(d)]);
  for (auto d : r.free) out.push_back(rhs.dims[static_cast<std::size_t>(d)]);
  for (std::size_t k = 0; k < lc.size(); ++k) {
    if (lhs.dims[static_cast<std::size_t>(lc[k])] != rhs.dims[static_cast<std::size_t>(rc[k])])
      fail(inst, "contracting dimension sizes differ");
    contracted.push_back(lhs.dims[static_cast<std::size_t>(lc[k])]);
  }
  if (out != inst.shape.dims) fail(inst, "the output shape is not (batch, lhs free, rhs free)");
  DType d = inst.shape.dtype;
  if (d == bool_ || lhs.dtype == bool_ || rhs.dtype == bool_) fail(inst, "pred operands");
  auto at = [&em, ops, l, r, lhs, rhs, contracted, d](const IrIndex& index) {
    auto& b = em.b();
    llvm::Type* type = em.type(d);
    llvm::AllocaInst* acc = em.entry_alloca(type, "dot.acc");
    b.CreateStore(llvm::Constant::getNullValue(type), acc);
    std::size_t lfree_at = l.batch.size(), rfree_at = l.batch.size() + l.free.size();
    // Summed in row-major order of the contracting dims, without fusing the multiply-add (as
    // the eager loop): integers wrap.
    emit_loop_nest(em, contracted, "dot", [&](const IrIndex& c) {
      llvm::Value* x = emit_convert(
          b, ops[0](operand_index(l, lhs.dims.size(), index, lfree_at, c)), lhs.dtype, d);
      llvm::Value* y = emit_convert(
          b, ops[1](operand_index(r, rhs.dims.size(), index, rfree_at, c)), rhs.dtype, d);
      llvm::Value* a = b.CreateLoad(type, acc);
      b.CreateStore(
          is_floating(d) ? b.CreateFAdd(a, b.CreateFMul(x, y)) : b.CreateAdd(a, b.CreateMul(x, y)),
          acc);
    });
    return b.CreateLoad(type, acc, "dot");
  };
  return [&em, &inst, at](const IrIndex& index) { return em.hoisted(inst, index, at); };
}

}  // namespace

void add_dot_emitter(EmitterTable& t) { t.set(Opcode::kDot, emit_dot); }

}  // namespace jx::codegen
