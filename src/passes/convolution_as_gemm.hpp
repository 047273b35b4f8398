// Convolution as GEMM: every HLO convolution becomes patches and a dot (or, for the CPU, the
// implicit GEMM described below), so a convolution runs on the backend's GEMM (the blocked
// kernel, BLAS, cuBLAS) with the patch extraction fused into one loop kernel. lhs goes to (batch,
// spatial..., feature) and is padded (lhs dilation as interior padding); the patches are a [batch ·
// positions, taps · features] matrix (im2col), built from strided slices, one per tap or one per
// window, whichever are fewer (a forward convolution has few taps, a kernel gradient few windows),
// or, when both are many, one gather. The kernel goes to [taps · in features, out features]; groups
// become a dot batch dim. A 1×1 window at stride 1 needs no patches.
#pragma once

#include "passes/pass.hpp"

namespace jx::passes {

class ConvolutionAsGemm final : public Pass {
 public:
  // With `implicit_gemms` (the CPU), a float32 convolution of one group and enough input
  // features becomes instead a convolution the matrix kernel computes in place
  // (hlo::as_implicit_gemm), no patches written: its padding left to the kernel where each run
  // is all padding or none (hlo::ImplicitGemm::Bound), else its lhs padded (and dilated) in its
  // own layout; its rhs and output transposed to have their out features innermost where they
  // do not. A forward convolution and both its gradients read their large operands where they lie.
  //
  // With `dnn_library` (a GPU with cuDNN), a convolution the library computes
  // (hlo::fits_dnn_convolution) whose window is no larger than its output stays one, its operands
  // and output transposed into the library's layouts and its uneven padding applied to lhs
  // (hlo::as_dnn_convolution). A kernel gradient still becomes patches and a dot.
  explicit ConvolutionAsGemm(bool implicit_gemms = false, bool dnn_library = false)
      : implicit_gemms_(implicit_gemms), dnn_library_(dnn_library) {}
  std::string name() const override { return "convolution-as-gemm"; }
  bool run(hlo::Module& module) override;

 private:
  bool implicit_gemms_, dnn_library_;
};

}  // namespace jx::passes
