// PassPipeline runs passes in order, verifying between them and dumping after the ones a regex
// names; run_pipeline is THE optimization pipeline, the same for every backend but for what
// PipelineOptions says a backend's libraries can do.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "hlo/ir.hpp"
#include "passes/pass.hpp"

namespace jx::passes {

// Verification between passes: on in debug builds, or with -DJX_VERIFY_PASSES=1.
#ifndef JX_VERIFY_PASSES
#ifdef NDEBUG
#define JX_VERIFY_PASSES 0
#else
#define JX_VERIFY_PASSES 1
#endif
#endif
inline constexpr bool kVerifyPassesByDefault = JX_VERIFY_PASSES;

// Receives a pass's name and the module's text after that pass; the caller writes the files.
using DumpFn = std::function<void(const std::string& pass_name, const std::string& module_text)>;

struct PipelineOptions {
  bool verify = kVerifyPassesByDefault;  // hlo::verify before the first pass and after each
  std::string dump_pass_re = ".*";       // which passes `dump` sees (std::regex_search)
  DumpFn dump;                           // none: no dumps
  int max_iterations = 4;                // of the simplification fixed-point loop
  // Set for a backend whose GEMMs apply epilogues: which dots' code takes them, for an epilogue
  // of which output dtype. Each such dot then takes in its bias and activation
  // (GemmEpilogueFusion).
  std::function<bool(const hlo::Instruction&, DType)> gemm_epilogues;
  // Which f32 products of bf16 or f16 operands the backend runs on those operands as they are
  // (cuBLAS's tensor cores; the CPU's bf16 pair multiply-adds or AMX tiles): upcast-16bit-dots
  // leaves them.
  std::function<bool(const hlo::Instruction&)> reads_16bit_operands;
  // Set for a backend whose matrix kernel computes convolutions in place (the CPU): the ones it
  // takes stay convolutions (ConvolutionAsGemm).
  bool implicit_gemm_convolutions = false;
  // Set for a backend that runs convolutions through a DNN library (a GPU with cuDNN): the ones
  // the library computes stay convolutions, in its layouts (ConvolutionAsGemm).
  bool dnn_convolutions = false;
  // Set for a backend whose batched kernels keep a cooperative plan only when their members share
  // it (the GPU): a kernel joins only batches of its key. A reduction batched with kernels of
  // other shapes would run as a loop, one output per thread, serially over the reduced elements.
  std::function<std::string(const hlo::Instruction&)> kernel_batch_key;
  // Set for a backend that splits a kernel over threads only when it runs alone (the CPU): a
  // kernel reading more bytes than this is not batched (HorizontalFusion).
  std::int64_t max_batched_read_bytes = std::numeric_limits<std::int64_t>::max();
  // Set for a backend that splits a column reduction over its columns (the CPU): large ones with
  // narrow rows become partial reductions over the first dim (SplitColumnReductions).
  bool split_column_reductions = false;
};

class PassPipeline {
 public:
  explicit PassPipeline(std::string name, const PipelineOptions& options = {});

  template <class T, class... Args>
  T& add(Args&&... args) {
    auto pass = std::make_unique<T>(std::forward<Args>(args)...);
    T& ref = *pass;
    passes_.push_back(std::move(pass));
    return ref;
  }

  const std::string& name() const { return name_; }
  // Runs every pass once, in order; true iff any changed the module. A pass that leaves the
  // module invalid throws jx::CompileError naming the pass (when verifying); a bad
  // dump_pass_re throws jx::Error.
  bool run(hlo::Module& module);

 private:
  std::string name_;
  PipelineOptions options_;
  std::vector<std::unique_ptr<Pass>> passes_;
};

// Simplification to a fixed point (at most options.max_iterations rounds), then fusion.
void run_pipeline(hlo::Module& module, const PipelineOptions& options = {});

}  // namespace jx::passes
