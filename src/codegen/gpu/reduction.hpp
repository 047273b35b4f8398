// What the row and column kernels share: the reduces a block computes together, each thread
// folding a strided part of the reduced elements into its accumulator, and the generators of the
// kernel's outputs, which read each reduce as the value the block computed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/gpu/kernel.hpp"
#include "codegen/gpu/kernel_plan.hpp"
#include "codegen/gpu/nvvm.hpp"

namespace jx::codegen::gpu {

struct Reduction {
  const hlo::Instruction* reduce;
  ReductionShape shape;
  ElementGenerator operand, init;
  llvm::GlobalVariable* partials;  // shared memory for the threads' partial results
  llvm::AllocaInst* acc;           // this thread's partial result
  llvm::Value* value = nullptr;    // the result, once the block has it: what readers see
};

class BlockReductions {
 public:
  // Each reduce gets `partials` elements of shared memory.
  BlockReductions(KernelBody& k, const std::vector<const hlo::Instruction*>& reduces,
                  std::uint64_t partials);
  BlockReductions(const BlockReductions&) = delete;
  BlockReductions& operator=(const BlockReductions&) = delete;

  std::vector<Reduction>& reductions() { return reductions_; }
  // Generators of the kernel's outputs.
  const std::vector<ElementGenerator>& outputs() const { return outputs_; }

  // Each reduction's acc = its element `first` (of the reduced elements, row-major) for output
  // element `out`, then acc = acc op element for `next`, next + step, ... to the end. Every
  // thread starts from an element of its own, so the init value is left for the final combine.
  void fold(const std::vector<Reduction*>& rs, const IrIndex& out, llvm::Value* first,
            llvm::Value* next, std::int64_t step);
  // a op b with the reduce's computation; floats may reassociate, as on the CPU.
  llvm::Value* combine(const Reduction& r, llvm::Value* a, llvm::Value* b);
  // acc op acc of the lanes below, until lane 0 holds its warp's result.
  void reduce_warp(Reduction& r);
  llvm::Value* load_acc(const Reduction& r);
  llvm::Value* load_partial(const Reduction& r, llvm::Value* at);
  void store_partial(const Reduction& r, llvm::Value* v, llvm::Value* at);

 private:
  IrIndex operand_index(const ReductionShape& s, const IrIndex& out, llvm::Value* k,
                        const std::string& name, std::optional<LoopIndex>& reduced);

  ElementalEmitter& em_;
  std::vector<Reduction> reductions_;  // never resized: the outputs' generators point into it
  std::vector<ElementGenerator> outputs_;
};

}  // namespace jx::codegen::gpu
