// cuDNN, loaded at run time, and the forward convolution that a convolution in its form
// (hlo::DnnConvolution) becomes on the GPU.
#pragma once

#include <string>
#include <vector>

#include "runtime/cuda/cudnn_api.hpp"

namespace jx::hlo {
struct DnnConvolution;
}  // namespace jx::hlo

namespace jx::runtime::cuda {

// load_api<CudnnApi>(candidates). Throws jx::Error "cuDNN unavailable: cannot load <path>:
// <dlerror>" (naming the other candidates too) or "cuDNN unavailable: <path> has no <symbol>".
CudnnApi load_cudnn(const std::vector<std::string>& candidates);

// libcudnn.so.9, then libcudnn.so.
const std::vector<std::string>& cudnn_libraries();

// The process's cuDNN, loaded once from cudnn_libraries(); a failure is remembered and every
// call rethrows its message.
const CudnnApi& cudnn();

// "CUDNN_STATUS_NOT_SUPPORTED" (the library's own text), or "cuDNN status 3000" where it has none.
std::string describe(const CudnnApi& api, cudnnStatus_t status);

// Throws jx::Error "cuDNN error in <what>: <describe(api, status)>" unless it succeeded.
void check(const CudnnApi& api, cudnnStatus_t status, const char* what);

// What the descriptors of a convolution hold: x and y as (batch, feature, spatial...) dims with
// the strides of their layout, the filter's (out, in, spatial...) dims and its format, and the
// convolution's padding (the same on both sides), strides, dilations and groups.
struct CudnnConvolutionCall {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  std::vector<int> x_dims, x_strides, w_dims, y_dims, y_strides;
  cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;  // of the filter
  std::vector<int> padding, strides, dilation;
  int groups = 1;
  // FMA for HIGHEST precision; else DEFAULT, which lets f32 round to TF32 (as cuBLAS does).
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};
// Throws jx::Error when a dimension does not fit cuDNN's 32-bit int.
CudnnConvolutionCall cudnn_convolution_call(const hlo::DnnConvolution& conv);

// Enqueues conv(x, w) into y on the handle's stream (cross-correlation, as XLA's convolution
// is), through the first algorithm the library ranks that runs within `workspace_bytes` of
// `workspace`. Nothing is enqueued for an empty output.
void convolve(const CudnnApi& api, cudnnHandle_t handle, const hlo::DnnConvolution& conv,
              const void* x, const void* w, void* y, void* workspace, std::size_t workspace_bytes);

}  // namespace jx::runtime::cuda
