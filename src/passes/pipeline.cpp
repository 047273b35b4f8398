// PassPipeline (verify between passes, dump after matching ones) and THE pipeline.
#include "passes/pipeline.hpp"

#include <optional>
#include <regex>

#include "passes/algebraic_simplifier.hpp"
#include "passes/constant_folding.hpp"
#include "passes/convolution_as_gemm.hpp"
#include "passes/cse.hpp"
#include "passes/dce.hpp"
#include "passes/dot_canonicalizer.hpp"
#include "passes/fusion/fusion_merger.hpp"
#include "passes/fusion/gemm_epilogue_fusion.hpp"
#include "passes/fusion/horizontal_fusion.hpp"
#include "passes/fusion/instruction_fusion.hpp"
#include "passes/fusion/multi_output_fusion.hpp"
#include "passes/splat_constants.hpp"
#include "passes/split_column_reductions.hpp"
#include "passes/upcast_16bit_dots.hpp"

namespace jx::passes {
namespace {

void verify_after(const hlo::Module& module, const std::string& what) {
  try {
    hlo::verify(module);
  } catch (const CompileError& e) {
    throw CompileError(what + ": " + e.what());
  }
}

// Which passes the dump hook sees; none without a hook.
std::optional<std::regex> dump_regex(const PipelineOptions& options) {
  if (!options.dump) return std::nullopt;
  try {
    return std::regex(options.dump_pass_re);
  } catch (const std::regex_error& e) {
    throw Error("bad dump_hlo_pass_re '" + options.dump_pass_re + "': " + e.what());
  }
}

}  // namespace

PassPipeline::PassPipeline(std::string name, const PipelineOptions& options)
    : name_(std::move(name)), options_(options) {}

bool PassPipeline::run(hlo::Module& module) {
  std::optional<std::regex> dump_re = dump_regex(options_);
  if (options_.verify) verify_after(module, "before pipeline " + name_);
  bool changed = false;
  for (const auto& pass : passes_) {
    changed |= pass->run(module);
    std::string name = pass->name();
    if (options_.verify) verify_after(module, "after pass " + name);
    if (dump_re && std::regex_search(name, *dump_re)) options_.dump(name, hlo::to_string(module));
  }
  return changed;
}

// Read top to bottom: each stage is one pipeline.
void run_pipeline(hlo::Module& module, const PipelineOptions& options) {
  // Rewrites into what the backends run (convolutions as patches and a dot or as the CPU's
  // implicit GEMMs, 16-bit dots in float32): before simplification, which folds what they add.
  PassPipeline widen("widening", options);
  widen.add<ConvolutionAsGemm>(options.implicit_gemm_convolutions, options.dnn_convolutions);
  widen.add<DotCanonicalizer>();
  widen.add<Upcast16BitDots>(options.reads_16bit_operands);
  widen.run(module);

  // Simplification, to a fixed point: each pass can expose work for the others (a folded
  // constant enables a simplification, which leaves duplicates for CSE and dead code for DCE).
  PassPipeline simplify("simplification", options);
  simplify.add<AlgebraicSimplifier>();
  simplify.add<ConstantFolding>();
  simplify.add<Cse>();
  simplify.add<Dce>();
  for (int round = 0; round < options.max_iterations; ++round)
    if (!simplify.run(module)) break;

  // Fusion: producers into consumers, then whole kernels into each other, then siblings and
  // small independent kernels into shared launches.
  PassPipeline fuse("fusion", options);
  if (options.split_column_reductions) fuse.add<SplitColumnReductions>();
  fuse.add<SplatConstants>();
  fuse.add<InstructionFusion>();
  fuse.add<FusionMerger>();
  if (options.gemm_epilogues) fuse.add<GemmEpilogueFusion>(options.gemm_epilogues);
  fuse.add<MultiOutputFusion>();
  fuse.add<HorizontalFusion>(options.kernel_batch_key, options.max_batched_read_bytes);
  fuse.add<Dce>();
  fuse.run(module);
}

}  // namespace jx::passes
