// The part of cuBLAS and cuBLASLt jx uses, declared here so that jx builds without the CUDA
// toolkit: handle types, enum values, and X-macro lists of entry points.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/cuda/driver_api.hpp"

namespace jx::runtime::cuda {

enum cublasStatus_t {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_ARCH_MISMATCH = 8,
  CUBLAS_STATUS_MAPPING_ERROR = 11,
  CUBLAS_STATUS_EXECUTION_FAILED = 13,
  CUBLAS_STATUS_INTERNAL_ERROR = 14,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
  CUBLAS_STATUS_LICENSE_ERROR = 16,
};

enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };

// How a GEMM computes: FAST_TF32 rounds f32 operands to TF32 on the tensor cores (XLA's choice
// at precision DEFAULT and HIGH), 32F is full single precision (HIGHEST).
enum cublasComputeType_t {
  CUBLAS_COMPUTE_32F = 68,
  CUBLAS_COMPUTE_64F = 70,
  CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
};
enum cudaDataType_t { CUDA_R_32F = 0, CUDA_R_64F = 1, CUDA_R_16F = 2, CUDA_R_16BF = 14 };
enum cublasGemmAlgo_t { CUBLAS_GEMM_DEFAULT = -1 };

struct cublasContext;
using cublasHandle_t = cublasContext*;
using cudaStream_t = CUstream;  // the runtime API's stream is the driver's

// X(field, exported symbol, signature); every one is required.
#define JX_CUBLAS_FUNCTIONS(X)                                                                     \
  X(cublasCreate, cublasCreate_v2, cublasStatus_t(cublasHandle_t*))                                \
  X(cublasDestroy, cublasDestroy_v2, cublasStatus_t(cublasHandle_t))                               \
  X(cublasSetStream, cublasSetStream_v2, cublasStatus_t(cublasHandle_t, cudaStream_t))             \
  X(cublasSetWorkspace, cublasSetWorkspace_v2, cublasStatus_t(cublasHandle_t, void*, std::size_t)) \
  X(cublasGemmStridedBatchedEx, cublasGemmStridedBatchedEx,                                        \
    cublasStatus_t(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,            \
                   const void*, const void*, cudaDataType_t, int, long long, const void*,          \
                   cudaDataType_t, int, long long, const void*, void*, cudaDataType_t, int,        \
                   long long, int, cublasComputeType_t, cublasGemmAlgo_t))

// Entry points older releases lack; null when missing.
#define JX_CUBLAS_OPTIONAL_FUNCTIONS(X)                                    \
  X(cublasGetStatusName, cublasGetStatusName, const char*(cublasStatus_t)) \
  X(cublasGetStatusString, cublasGetStatusString, const char*(cublasStatus_t))

struct CublasApi {
  static constexpr const char* kLibrary = "cuBLAS";
  JX_CUBLAS_FUNCTIONS(JX_API_FIELD)
  JX_CUBLAS_OPTIONAL_FUNCTIONS(JX_API_FIELD)
  template <class Library>
  void bind(const Library& library) {
    JX_CUBLAS_FUNCTIONS(JX_API_REQUIRED)
    JX_CUBLAS_OPTIONAL_FUNCTIONS(JX_API_OPTIONAL)
  }
};

// cuBLASLt: a matmul with a fused epilogue (bias, relu, gelu).

enum cublasLtMatmulDescAttributes_t {
  CUBLASLT_MATMUL_DESC_TRANSA = 3,        // int32_t
  CUBLASLT_MATMUL_DESC_TRANSB = 4,        // int32_t
  CUBLASLT_MATMUL_DESC_EPILOGUE = 7,      // uint32_t
  CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,  // const void*
};

enum cublasLtMatrixLayoutAttribute_t {
  CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,           // int32_t
  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6,  // int64_t, in elements
};

enum cublasLtMatmulPreferenceAttributes_t {
  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,  // uint64_t
};

enum cublasLtEpilogue_t {
  CUBLASLT_EPILOGUE_DEFAULT = 1,
  CUBLASLT_EPILOGUE_RELU = 2,
  CUBLASLT_EPILOGUE_BIAS = 4,
  CUBLASLT_EPILOGUE_RELU_BIAS = 6,
  CUBLASLT_EPILOGUE_GELU = 32,
  CUBLASLT_EPILOGUE_GELU_BIAS = 36,
};

struct cublasLtContext;
using cublasLtHandle_t = cublasLtContext*;
struct cublasLtMatmulDescOpaque_t;
using cublasLtMatmulDesc_t = cublasLtMatmulDescOpaque_t*;
struct cublasLtMatrixLayoutOpaque_t;
using cublasLtMatrixLayout_t = cublasLtMatrixLayoutOpaque_t*;
struct cublasLtMatmulPreferenceOpaque_t;
using cublasLtMatmulPreference_t = cublasLtMatmulPreferenceOpaque_t*;

struct cublasLtMatmulAlgo_t {
  std::uint64_t data[8];
};

struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  std::size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};

#define JX_CUBLASLT_FUNCTIONS(X)                                                                  \
  X(cublasLtCreate, cublasLtCreate, cublasStatus_t(cublasLtHandle_t*))                            \
  X(cublasLtDestroy, cublasLtDestroy, cublasStatus_t(cublasLtHandle_t))                           \
  X(cublasLtMatmulDescCreate, cublasLtMatmulDescCreate,                                           \
    cublasStatus_t(cublasLtMatmulDesc_t*, cublasComputeType_t, cudaDataType_t))                   \
  X(cublasLtMatmulDescDestroy, cublasLtMatmulDescDestroy, cublasStatus_t(cublasLtMatmulDesc_t))   \
  X(cublasLtMatmulDescSetAttribute, cublasLtMatmulDescSetAttribute,                               \
    cublasStatus_t(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void*,             \
                   std::size_t))                                                                  \
  X(cublasLtMatrixLayoutCreate, cublasLtMatrixLayoutCreate,                                       \
    cublasStatus_t(cublasLtMatrixLayout_t*, cudaDataType_t, std::uint64_t, std::uint64_t,         \
                   std::int64_t))                                                                 \
  X(cublasLtMatrixLayoutDestroy, cublasLtMatrixLayoutDestroy,                                     \
    cublasStatus_t(cublasLtMatrixLayout_t))                                                       \
  X(cublasLtMatrixLayoutSetAttribute, cublasLtMatrixLayoutSetAttribute,                           \
    cublasStatus_t(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, const void*,          \
                   std::size_t))                                                                  \
  X(cublasLtMatmulPreferenceCreate, cublasLtMatmulPreferenceCreate,                               \
    cublasStatus_t(cublasLtMatmulPreference_t*))                                                  \
  X(cublasLtMatmulPreferenceDestroy, cublasLtMatmulPreferenceDestroy,                             \
    cublasStatus_t(cublasLtMatmulPreference_t))                                                   \
  X(cublasLtMatmulPreferenceSetAttribute, cublasLtMatmulPreferenceSetAttribute,                   \
    cublasStatus_t(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t, const void*, \
                   std::size_t))                                                                  \
  X(cublasLtMatmulAlgoGetHeuristic, cublasLtMatmulAlgoGetHeuristic,                               \
    cublasStatus_t(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,                \
                   cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,        \
                   cublasLtMatmulPreference_t, int, cublasLtMatmulHeuristicResult_t*, int*))      \
  X(cublasLtMatmul, cublasLtMatmul,                                                               \
    cublasStatus_t(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*,              \
                   cublasLtMatrixLayout_t, const void*, cublasLtMatrixLayout_t, const void*,      \
                   const void*, cublasLtMatrixLayout_t, void*, cublasLtMatrixLayout_t,            \
                   const cublasLtMatmulAlgo_t*, void*, std::size_t, cudaStream_t))

#define JX_CUBLASLT_OPTIONAL_FUNCTIONS(X)                                      \
  X(cublasLtGetStatusName, cublasLtGetStatusName, const char*(cublasStatus_t)) \
  X(cublasLtGetStatusString, cublasLtGetStatusString, const char*(cublasStatus_t))

struct CublasLtApi {
  static constexpr const char* kLibrary = "cuBLASLt";
  JX_CUBLASLT_FUNCTIONS(JX_API_FIELD)
  JX_CUBLASLT_OPTIONAL_FUNCTIONS(JX_API_FIELD)
  template <class Library>
  void bind(const Library& library) {
    JX_CUBLASLT_FUNCTIONS(JX_API_REQUIRED)
    JX_CUBLASLT_OPTIONAL_FUNCTIONS(JX_API_OPTIONAL)
  }
};

}  // namespace jx::runtime::cuda
