// Reduction kernels, for reduces whose reduced extent is large: threads of a block share the
// reduced elements of an output element, each folding a strided part of them; the partial
// results meet through warp shuffles and shared memory, and one thread applies the init value
// and stores. Every thread starts from an element of its own, so the init value is applied once,
// as the eager fold does, whatever it is. Floats may reassociate, as on the CPU.
//
// Row reductions (the operand's last dim reduced): a block per output element; consecutive
// threads read consecutive elements. Column reductions (the last dim kept): a block per 32
// consecutive output elements, a lane each, and its warps split the reduced elements; a warp
// again reads consecutive elements.
#include <optional>
#include <string>

#include "codegen/gpu/kernel.hpp"
#include "codegen/gpu/kernel_plan.hpp"
#include "codegen/gpu/nvvm.hpp"

namespace jx::codegen::gpu {
namespace {

using hlo::Instruction;

constexpr int kMaxBlock = 256;
constexpr int kColumnWarps = 8;

// One reduce of the kernel: its generators and where its partial results meet.
struct Reduction {
  const Instruction* reduce;
  ElementGenerator operand, init;
  llvm::GlobalVariable* partials;
  llvm::AllocaInst* acc;
};

DType dtype_of(const Reduction& r) { return r.reduce->shape.dtype; }

llvm::Value* combine(ElementalEmitter& em, const Reduction& r, llvm::Value* a, llvm::Value* b) {
  llvm::IRBuilderBase::FastMathFlagGuard guard(em.b());
  llvm::FastMathFlags reassociate;
  reassociate.setAllowReassoc();
  em.b().setFastMathFlags(reassociate);
  return em.apply(*r.reduce->called[0], {a, b});
}

class ReductionEmitter {
 public:
  ReductionEmitter(KernelBody& k, int partials_per_reduce)
      : k_(k), em_(k.em()), shape_(reduction_shape(*computed_outputs(k.root()).front())) {
    std::vector<const Instruction*> reduces = computed_outputs(k.root());
    std::vector<const Instruction*> wanted;
    for (const Instruction* r : reduces) {
      wanted.push_back(r->operands[0]);
      wanted.push_back(r->operands[1]);
    }
    std::vector<ElementGenerator> gens = k.generators_of(wanted);
    for (std::size_t j = 0; j < reduces.size(); ++j) {
      llvm::Type* storage = storage_type(em_.ctx(), reduces[j]->shape.dtype);
      reductions_.push_back(
          {reduces[j], gens[2 * j], gens[2 * j + 1],
           shared_array(em_.module(), storage, static_cast<std::uint64_t>(partials_per_reduce),
                        "partials" + std::to_string(j)),
           em_.entry_alloca(em_.type(reduces[j]->shape.dtype), "acc" + std::to_string(j))});
    }
    out_shape_ = reduces.front()->shape.dims;
  }

  GpuLaunch emit_row();
  GpuLaunch emit_column();

 private:
  // Every reduction's accumulator = its element `k` of output `out`; then, for each later k
  // from `next` to the end `step` apart, acc = acc op element.
  void fold(const IrIndex& out, llvm::Value* k, llvm::Value* next, std::int64_t step);
  IrIndex operand_index(const IrIndex& out, llvm::Value* k, const std::string& name,
                        std::optional<LoopIndex>& reduced);
  // Thread 0 of the group: init op (partial 0 op ... op partial n-1), stored at output `o`.
  void finish(const std::vector<llvm::Value*>& inits, llvm::Value* o, int partials,
              llvm::Value* first_partial, int partial_stride);
  llvm::Value* load(const Reduction& r, llvm::Value* at) {
    return em_.load(dtype_of(r), r.partials, at);
  }

  KernelBody& k_;
  ElementalEmitter& em_;
  ReductionShape shape_;
  Shape out_shape_;
  std::vector<Reduction> reductions_;
};

IrIndex ReductionEmitter::operand_index(const IrIndex& out, llvm::Value* k, const std::string& name,
                                        std::optional<LoopIndex>& reduced) {
  reduced.emplace(em_, k, shape_.reduced, name);
  const IrIndex& r = reduced->index();
  IrIndex x{std::vector<llvm::Value*>(shape_.operand.size()), nullptr};
  for (std::size_t j = 0; j < shape_.split.kept.size(); ++j)
    x.dims[static_cast<std::size_t>(shape_.split.kept[j])] = out.dims[j];
  for (std::size_t j = 0; j < shape_.split.reduced.size(); ++j)
    x.dims[static_cast<std::size_t>(shape_.split.reduced[j])] = r.dims[j];
  // Kept dims leading: the operand's linear index is out * reduced_size + k.
  const auto& kept = shape_.split.kept;
  if (kept.empty() || kept.back() + 1 == static_cast<std::int64_t>(kept.size())) {
    auto& b = em_.b();
    x.linear = b.CreateAdd(b.CreateMul(em_.linear_index(out, out_shape_),
                                       em_.i64(shape_.reduced_size), "", true, true),
                           k, "", true, true);
  }
  return x;
}

void ReductionEmitter::fold(const IrIndex& out, llvm::Value* k, llvm::Value* next,
                            std::int64_t step) {
  auto& b = em_.b();
  {
    std::optional<LoopIndex> reduced;
    IrIndex x = operand_index(out, k, "first", reduced);
    for (Reduction& r : reductions_) b.CreateStore(r.operand(x), r.acc);
  }
  emit_strided_loop(em_, next, shape_.reduced_size, step, "fold", [&](llvm::Value* kk) {
    std::optional<LoopIndex> reduced;
    IrIndex x = operand_index(out, kk, "k", reduced);
    for (Reduction& r : reductions_) {
      llvm::Value* element = r.operand(x);
      b.CreateStore(combine(em_, r, b.CreateLoad(r.acc->getAllocatedType(), r.acc), element),
                    r.acc);
    }
  });
}

void ReductionEmitter::finish(const std::vector<llvm::Value*>& inits, llvm::Value* o, int partials,
                              llvm::Value* first_partial, int partial_stride) {
  auto& b = em_.b();
  for (std::size_t j = 0; j < reductions_.size(); ++j) {
    const Reduction& r = reductions_[j];
    llvm::Value* total = load(r, first_partial);
    for (int p = 1; p < partials; ++p)
      total =
          combine(em_, r, total,
                  load(r, b.CreateAdd(first_partial, em_.i64(std::int64_t{p} * partial_stride))));
    em_.store(dtype_of(r), combine(em_, r, inits[j], total), k_.output(j), o);
  }
}

GpuLaunch ReductionEmitter::emit_row() {
  auto& b = em_.b();
  // A power of two no larger than the reduced extent: every thread has an element.
  int block = kMaxBlock;
  while (block > shape_.reduced_size) block /= 2;
  int warps = block / kWarpSize;
  GpuLaunch launch{grid_for(shape_.outputs), block, 0};
  llvm::Value* tid = thread_id(em_);
  llvm::Value* lane = b.CreateAnd(tid, em_.i64(kWarpSize - 1), "lane");
  llvm::Value* warp = b.CreateLShr(tid, em_.i64(5), "warp");
  emit_strided_loop(em_, block_id(em_), shape_.outputs, launch.grid, "row", [&](llvm::Value* o) {
    LoopIndex out(em_, o, out_shape_, "out");
    std::vector<llvm::Value*> inits;
    for (Reduction& r : reductions_) inits.push_back(r.init(em_.scalar_index()));
    fold(out.index(), tid, b.CreateAdd(tid, em_.i64(block)), block);
    for (Reduction& r : reductions_) {
      llvm::Type* type = r.acc->getAllocatedType();
      for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
        llvm::Value* mine = b.CreateLoad(type, r.acc);
        b.CreateStore(combine(em_, r, mine, shuffle_down(em_, mine, offset)), r.acc);
      }
    }
    emit_if(em_, b.CreateICmpEQ(lane, em_.i64(0)), "warp_total", [&] {
      for (Reduction& r : reductions_)
        em_.store(dtype_of(r), b.CreateLoad(r.acc->getAllocatedType(), r.acc), r.partials, warp);
    });
    barrier(em_);
    emit_if(em_, b.CreateICmpEQ(tid, em_.i64(0)), "store",
            [&] { finish(inits, o, warps, em_.i64(0), 1); });
    barrier(em_);  // the next output element reuses the partials
  });
  return launch;
}

GpuLaunch ReductionEmitter::emit_column() {
  auto& b = em_.b();
  int block = kColumnWarps * kWarpSize;
  std::int64_t tiles = ceil_div(shape_.outputs, kWarpSize);
  GpuLaunch launch{grid_for(tiles), block, 0};
  llvm::Value* tid = thread_id(em_);
  llvm::Value* lane = b.CreateAnd(tid, em_.i64(kWarpSize - 1), "lane");
  llvm::Value* warp = b.CreateLShr(tid, em_.i64(5), "warp");
  emit_strided_loop(em_, block_id(em_), tiles, launch.grid, "tile", [&](llvm::Value* tile) {
    llvm::Value* o =
        b.CreateAdd(b.CreateMul(tile, em_.i64(kWarpSize), "", true, true), lane, "o", true, true);
    // Lanes past the last output compute it again, and store nothing.
    llvm::Value* clamped = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, o,
                                                   em_.i64(shape_.outputs - 1), nullptr, "o");
    LoopIndex out(em_, clamped, out_shape_, "out");
    std::vector<llvm::Value*> inits;
    for (Reduction& r : reductions_) inits.push_back(r.init(em_.scalar_index()));
    fold(out.index(), warp, b.CreateAdd(warp, em_.i64(kColumnWarps)), kColumnWarps);
    llvm::Value* slot = b.CreateAdd(b.CreateMul(warp, em_.i64(kWarpSize)), lane);
    for (Reduction& r : reductions_)
      em_.store(dtype_of(r), b.CreateLoad(r.acc->getAllocatedType(), r.acc), r.partials, slot);
    barrier(em_);
    llvm::Value* stores =
        b.CreateAnd(b.CreateICmpEQ(warp, em_.i64(0)), b.CreateICmpULT(o, em_.i64(shape_.outputs)));
    emit_if(em_, stores, "store", [&] { finish(inits, o, kColumnWarps, lane, kWarpSize); });
    barrier(em_);
  });
  return launch;
}

}  // namespace

GpuLaunch emit_reduction_kernel(KernelBody& k, KernelKind kind) {
  bool row = kind == KernelKind::kRowReduction;
  ReductionEmitter emitter(k, row ? kMaxBlock / kWarpSize : kColumnWarps * kWarpSize);
  return row ? emitter.emit_row() : emitter.emit_column();
}

}  // namespace jx::codegen::gpu
