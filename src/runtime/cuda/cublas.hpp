// cuBLAS, loaded at run time, and the row-major batched GEMM that a dot becomes on the GPU.
#pragma once

#include <string>
#include <vector>

#include "runtime/cuda/cublas_api.hpp"

namespace jx::hlo {
struct GemmShape;
}  // namespace jx::hlo

namespace jx::runtime::cuda {

// load_api<CublasApi>(candidates): the first that loads, with every entry point looked up.
// Throws jx::Error "cuBLAS unavailable: cannot load <path>: <dlerror>" (naming the other
// candidates too) or "cuBLAS unavailable: <path> has no <symbol>".
CublasApi load_cublas(const std::vector<std::string>& candidates);

// libcublas.so.13, .12, .11, then libcublas.so.
const std::vector<std::string>& cublas_libraries();

// The process's cuBLAS, loaded once from cublas_libraries(); a failure is remembered and every
// call rethrows its message.
const CublasApi& cublas();

// "CUBLAS_STATUS_NOT_SUPPORTED: the functionality requested is not supported", or
// "cuBLAS status 15" where this cuBLAS cannot name it.
std::string describe(const CublasApi& api, cublasStatus_t status);

// describe's text from a library's name and description functions (either may be null).
std::string describe_status(Entry<const char*(cublasStatus_t)> name,
                            Entry<const char*(cublasStatus_t)> text, cublasStatus_t status);

// Throws jx::Error "cuBLAS error in <what>: <describe(api, status)>" unless it succeeded.
void check(const CublasApi& api, cublasStatus_t status, const char* what);

// One cublasGemmStridedBatchedEx call, with alpha = 1 and beta = 0: for each batch b,
// c[b] = op_a(a[b]) · op_b(b[b]), every matrix column-major.
struct CublasGemmCall {
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  int m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int lda = 1;
  long long stride_a = 0;
  const void* b = nullptr;
  int ldb = 1;
  long long stride_b = 0;
  void* c = nullptr;
  int ldc = 1;
  long long stride_c = 0;
  int batch = 1;
};

// The call computing `shape`'s row-major out[b] = op(lhs[b]) · op(rhs[b]). Throws jx::Error when
// a dimension does not fit cuBLAS's 32-bit int.
CublasGemmCall cublas_gemm_call(const hlo::GemmShape& shape, const void* lhs, const void* rhs,
                                void* out);

// How cuBLAS computes `shape`: f64 in f64; f32 in TF32 unless its precision is HIGHEST, as XLA
// does on the GPU (JAX's default precision is TF32 there).
cublasComputeType_t compute_type(const hlo::GemmShape& shape);

// Enqueues cublas_gemm_call(shape, ...) on the handle's stream (f32 or f64), computing in
// compute_type(shape). Nothing is enqueued for an empty output; an empty contraction (k == 0)
// is the caller's to zero.
void gemm(const CublasApi& api, cublasHandle_t handle, const hlo::GemmShape& shape, const void* lhs,
          const void* rhs, void* out);

}  // namespace jx::runtime::cuda
