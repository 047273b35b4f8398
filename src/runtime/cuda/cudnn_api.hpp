// The part of cuDNN jx uses (its convolution API), declared here so that jx builds without cuDNN:
// handle and descriptor types, enum values, and the X-macro list of entry points.
#pragma once

#include <cstddef>

#include "runtime/cuda/cublas_api.hpp"

namespace jx::runtime::cuda {

enum cudnnStatus_t {
  CUDNN_STATUS_SUCCESS = 0,
  CUDNN_STATUS_NOT_INITIALIZED = 1001,
  CUDNN_STATUS_BAD_PARAM = 2000,
  CUDNN_STATUS_NOT_SUPPORTED = 3000,
  CUDNN_STATUS_INTERNAL_ERROR = 4000,
  CUDNN_STATUS_EXECUTION_FAILED = 5000,
};

enum cudnnDataType_t { CUDNN_DATA_FLOAT = 0, CUDNN_DATA_DOUBLE = 1 };
enum cudnnTensorFormat_t { CUDNN_TENSOR_NCHW = 0, CUDNN_TENSOR_NHWC = 1 };
enum cudnnConvolutionMode_t { CUDNN_CONVOLUTION = 0, CUDNN_CROSS_CORRELATION = 1 };
// DEFAULT lets float32 convolutions round their operands to TF32 on the tensor cores (JAX's
// default precision on the GPU); FMA computes in full precision (HIGHEST).
enum cudnnMathType_t {
  CUDNN_DEFAULT_MATH = 0,
  CUDNN_TENSOR_OP_MATH = 1,
  CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION = 2,
  CUDNN_FMA_MATH = 3,
};
enum cudnnDeterminism_t { CUDNN_NON_DETERMINISTIC = 0, CUDNN_DETERMINISTIC = 1 };
// The forward algorithms (0 to 7); jx takes whichever the library ranks first and fits.
enum cudnnConvolutionFwdAlgo_t { CUDNN_CONVOLUTION_FWD_ALGO_COUNT = 8 };

struct cudnnConvolutionFwdAlgoPerf_t {
  cudnnConvolutionFwdAlgo_t algo;
  cudnnStatus_t status;
  float time;
  std::size_t memory;
  cudnnDeterminism_t determinism;
  cudnnMathType_t mathType;
  int reserved[3];
};

struct cudnnContext;
using cudnnHandle_t = cudnnContext*;
struct cudnnTensorStruct;
using cudnnTensorDescriptor_t = cudnnTensorStruct*;
struct cudnnFilterStruct;
using cudnnFilterDescriptor_t = cudnnFilterStruct*;
struct cudnnConvolutionStruct;
using cudnnConvolutionDescriptor_t = cudnnConvolutionStruct*;

// X(field, exported symbol, signature); every one is required.
#define JX_CUDNN_FUNCTIONS(X)                                                                      \
  X(cudnnCreate, cudnnCreate, cudnnStatus_t(cudnnHandle_t*))                                       \
  X(cudnnDestroy, cudnnDestroy, cudnnStatus_t(cudnnHandle_t))                                      \
  X(cudnnSetStream, cudnnSetStream, cudnnStatus_t(cudnnHandle_t, cudaStream_t))                    \
  X(cudnnGetErrorString, cudnnGetErrorString, const char*(cudnnStatus_t))                          \
  X(cudnnCreateTensorDescriptor, cudnnCreateTensorDescriptor,                                      \
    cudnnStatus_t(cudnnTensorDescriptor_t*))                                                       \
  X(cudnnSetTensorNdDescriptor, cudnnSetTensorNdDescriptor,                                        \
    cudnnStatus_t(cudnnTensorDescriptor_t, cudnnDataType_t, int, const int*, const int*))          \
  X(cudnnDestroyTensorDescriptor, cudnnDestroyTensorDescriptor,                                    \
    cudnnStatus_t(cudnnTensorDescriptor_t))                                                        \
  X(cudnnCreateFilterDescriptor, cudnnCreateFilterDescriptor,                                      \
    cudnnStatus_t(cudnnFilterDescriptor_t*))                                                       \
  X(cudnnSetFilterNdDescriptor, cudnnSetFilterNdDescriptor,                                        \
    cudnnStatus_t(cudnnFilterDescriptor_t, cudnnDataType_t, cudnnTensorFormat_t, int, const int*)) \
  X(cudnnDestroyFilterDescriptor, cudnnDestroyFilterDescriptor,                                    \
    cudnnStatus_t(cudnnFilterDescriptor_t))                                                        \
  X(cudnnCreateConvolutionDescriptor, cudnnCreateConvolutionDescriptor,                            \
    cudnnStatus_t(cudnnConvolutionDescriptor_t*))                                                  \
  X(cudnnSetConvolutionNdDescriptor, cudnnSetConvolutionNdDescriptor,                              \
    cudnnStatus_t(cudnnConvolutionDescriptor_t, int, const int*, const int*, const int*,           \
                  cudnnConvolutionMode_t, cudnnDataType_t))                                        \
  X(cudnnSetConvolutionGroupCount, cudnnSetConvolutionGroupCount,                                  \
    cudnnStatus_t(cudnnConvolutionDescriptor_t, int))                                              \
  X(cudnnSetConvolutionMathType, cudnnSetConvolutionMathType,                                      \
    cudnnStatus_t(cudnnConvolutionDescriptor_t, cudnnMathType_t))                                  \
  X(cudnnDestroyConvolutionDescriptor, cudnnDestroyConvolutionDescriptor,                          \
    cudnnStatus_t(cudnnConvolutionDescriptor_t))                                                   \
  X(cudnnGetConvolutionForwardAlgorithm_v7, cudnnGetConvolutionForwardAlgorithm_v7,                \
    cudnnStatus_t(cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,                 \
                  cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, int, int*,                \
                  cudnnConvolutionFwdAlgoPerf_t*))                                                 \
  X(cudnnConvolutionForward, cudnnConvolutionForward,                                              \
    cudnnStatus_t(cudnnHandle_t, const void*, cudnnTensorDescriptor_t, const void*,                \
                  cudnnFilterDescriptor_t, const void*, cudnnConvolutionDescriptor_t,              \
                  cudnnConvolutionFwdAlgo_t, void*, std::size_t, const void*,                      \
                  cudnnTensorDescriptor_t, void*))

struct CudnnApi {
  static constexpr const char* kLibrary = "cuDNN";
  JX_CUDNN_FUNCTIONS(JX_API_FIELD)
  template <class Library>
  void bind(const Library& library) {
    JX_CUDNN_FUNCTIONS(JX_API_REQUIRED)
  }
};

}  // namespace jx::runtime::cuda
