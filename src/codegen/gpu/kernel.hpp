// Emits one GPU kernel for a KernelRequest (gpu_compiler.hpp gives its ABI), and what the kernel
// kinds share while they emit its body.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/elemental/elemental.hpp"
#include "codegen/gpu/gpu_compiler.hpp"
#include "codegen/gpu/kernel_plan.hpp"

namespace jx::codegen::gpu {

// Throws jx::CompileError for instructions the GPU cannot compute.
GpuLaunch emit_kernel(llvm::Module& module, const KernelRequest& request, const std::string& symbol,
                      const MathTable& math);

// A kernel under construction: the emitter sits in its entry block.
class KernelBody {
 public:
  KernelBody(const hlo::Instruction& root, ElementalEmitter& em,
             std::vector<ElementGenerator> operands, std::vector<llvm::Value*> outputs);

  const hlo::Instruction& root() const { return root_; }
  ElementalEmitter& em() { return em_; }
  // The output buffers, one per output of the root.
  llvm::Value* output(std::size_t k) const { return outputs_.at(k); }
  const std::vector<const hlo::HloShape*>& output_shapes() const { return shapes_; }
  // Generators of the root's outputs.
  std::vector<ElementGenerator> output_generators();
  // Generators of instructions inside the kernel (of the fused computation, or the root and its
  // operands), with `given` ones standing in for the heroes the kernel computes itself. Build
  // all that one kernel needs in one call: what they share is then emitted once per element.
  std::vector<ElementGenerator> generators_of(const std::vector<const hlo::Instruction*>& insts,
                                              ElementalEmitter::GivenGenerators given = {});

 private:
  const hlo::Instruction& root_;
  ElementalEmitter& em_;
  std::vector<ElementGenerator> operands_;
  std::vector<llvm::Value*> outputs_;
  std::vector<const hlo::HloShape*> shapes_;
};

// The kernel kinds (kernel_plan.hpp says which computes a root and names its heroes), one file
// each: *_kernel.cpp. Each emits the body and returns the launch it was written for.
GpuLaunch emit_loop_kernel(KernelBody& k);
GpuLaunch emit_row_kernel(KernelBody& k, const KernelPlan& plan);
GpuLaunch emit_column_kernel(KernelBody& k, const std::vector<const hlo::Instruction*>& reduces);
GpuLaunch emit_transpose_kernel(KernelBody& k, const hlo::Instruction& transpose);
GpuLaunch emit_scatter_kernel(KernelBody& k);
GpuLaunch emit_scan_kernel(KernelBody& k, const hlo::Instruction& scan);

// At most this many blocks: a grid-stride loop runs the rest in later iterations.
inline constexpr std::int64_t kMaxBlocks = 65536;
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
inline std::int64_t grid_for(std::int64_t work_items) {
  return std::clamp<std::int64_t>(work_items, 1, kMaxBlocks);
}

}  // namespace jx::codegen::gpu
