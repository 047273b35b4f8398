// Block reductions' shared parts: generators with the reduces given as their computed values,
// the strided per-thread fold, and the warp-shuffle tree.
#include "codegen/gpu/reduction.hpp"

namespace jx::codegen::gpu {

using hlo::Instruction;

constexpr int kFoldUnroll = 4;

BlockReductions::BlockReductions(KernelBody& k, const std::vector<const Instruction*>& reduces,
                                 std::uint64_t partials)
    : em_(k.em()) {
  std::vector<const Instruction*> wanted;
  ElementalEmitter::GivenGenerators given;
  reductions_.reserve(reduces.size());
  for (const Instruction* r : reduces) {
    DType dtype = r->shape.dtype;
    std::string name = std::to_string(reductions_.size());
    reductions_.push_back(
        {r, reduction_shape(*r), nullptr, nullptr,
         shared_array(em_.module(), storage_type(em_.ctx(), dtype), partials, "partials" + name),
         em_.entry_alloca(em_.type(dtype), "acc" + name)});
    wanted.push_back(r->operands[0]);
    wanted.push_back(r->operands[1]);
    given[r] = [value = &reductions_.back().value](const IrIndex&) { return *value; };
  }
  std::vector<const Instruction*> outputs = computed_outputs(k.root());
  wanted.insert(wanted.end(), outputs.begin(), outputs.end());
  std::vector<ElementGenerator> gens = k.generators_of(wanted, std::move(given));
  for (std::size_t j = 0; j < reductions_.size(); ++j) {
    reductions_[j].operand = gens[2 * j];
    reductions_[j].init = gens[2 * j + 1];
  }
  outputs_.assign(gens.begin() + static_cast<std::ptrdiff_t>(2 * reductions_.size()), gens.end());
}

IrIndex BlockReductions::operand_index(const ReductionShape& s, const IrIndex& out, llvm::Value* k,
                                       const std::string& name, std::optional<LoopIndex>& reduced) {
  reduced.emplace(em_, k, s.reduced, name);
  IrIndex x{std::vector<llvm::Value*>(s.operand.size()), nullptr};
  for (std::size_t j = 0; j < s.split.kept.size(); ++j)
    x.dims[static_cast<std::size_t>(s.split.kept[j])] = out.dims[j];
  for (std::size_t j = 0; j < s.split.reduced.size(); ++j)
    x.dims[static_cast<std::size_t>(s.split.reduced[j])] = reduced->index().dims[j];
  // Kept dims leading: the operand's linear index is out * reduced_size + k.
  const auto& kept = s.split.kept;
  if (kept.empty() || kept.back() + 1 == static_cast<std::int64_t>(kept.size())) {
    Shape out_shape;
    for (std::int64_t d : kept) out_shape.push_back(s.operand[static_cast<std::size_t>(d)]);
    auto& b = em_.b();
    x.linear = b.CreateAdd(
        b.CreateMul(em_.linear_index(out, out_shape), em_.i64(s.reduced_size), "", true, true), k,
        "", true, true);
  }
  return x;
}

void BlockReductions::fold(const std::vector<Reduction*>& rs, const IrIndex& out,
                           llvm::Value* first, llvm::Value* next, std::int64_t step) {
  auto& b = em_.b();
  const ReductionShape& s = rs.front()->shape;
  {
    std::optional<LoopIndex> reduced;
    IrIndex x = operand_index(s, out, first, "first", reduced);
    for (Reduction* r : rs) b.CreateStore(r->operand(x), r->acc);
  }
  // kFoldUnroll elements a turn: their loads are in flight together, then fold in order.
  emit_unrolled_loop(em_, next, s.reduced_size, step, kFoldUnroll, "fold",
                     [&](const std::vector<llvm::Value*>& ks) {
                       std::vector<std::optional<LoopIndex>> reduced(ks.size());
                       std::vector<llvm::Value*> values;
                       for (std::size_t u = 0; u < ks.size(); ++u) {
                         IrIndex x = operand_index(s, out, ks[u], "k", reduced[u]);
                         for (Reduction* r : rs) values.push_back(r->operand(x));
                       }
                       for (std::size_t v = 0; v < values.size(); ++v) {
                         Reduction& r = *rs[v % rs.size()];
                         b.CreateStore(combine(r, load_acc(r), values[v]), r.acc);
                       }
                     });
}

llvm::Value* BlockReductions::combine(const Reduction& r, llvm::Value* a, llvm::Value* b) {
  llvm::IRBuilderBase::FastMathFlagGuard guard(em_.b());
  llvm::FastMathFlags reassociate;
  reassociate.setAllowReassoc();
  em_.b().setFastMathFlags(reassociate);
  return em_.apply(*r.reduce->called[0], {a, b});
}

void BlockReductions::reduce_warp(Reduction& r) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    llvm::Value* mine = load_acc(r);
    em_.b().CreateStore(combine(r, mine, shuffle_down(em_, mine, offset)), r.acc);
  }
}

llvm::Value* BlockReductions::load_acc(const Reduction& r) {
  return em_.b().CreateLoad(r.acc->getAllocatedType(), r.acc);
}

llvm::Value* BlockReductions::load_partial(const Reduction& r, llvm::Value* at) {
  return em_.load(r.reduce->shape.dtype, r.partials, at);
}

void BlockReductions::store_partial(const Reduction& r, llvm::Value* v, llvm::Value* at) {
  em_.store(r.reduce->shape.dtype, v, r.partials, at);
}

}  // namespace jx::codegen::gpu
