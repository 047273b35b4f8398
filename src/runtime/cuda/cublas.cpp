#include "runtime/cuda/cublas.hpp"

#include <algorithm>
#include <climits>

#include "hlo/gemm.hpp"
#include "jx/errors.hpp"
#include "runtime/cuda/shared_library.hpp"
#include "support/check.hpp"

namespace jx::runtime::cuda {

CublasApi load_cublas(const std::vector<std::string>& candidates) {
  return load_api<CublasApi>(candidates);
}

const std::vector<std::string>& cublas_libraries() {
  static const std::vector<std::string> names = {"libcublas.so.13", "libcublas.so.12",
                                                 "libcublas.so.11", "libcublas.so"};
  return names;
}

const CublasApi& cublas() {
  static const auto* loaded =
      new ProcessLibrary<CublasApi>([] { return load_cublas(cublas_libraries()); });
  return loaded->get();
}

std::string describe_status(Entry<const char*(cublasStatus_t)> name,
                            Entry<const char*(cublasStatus_t)> text, cublasStatus_t status) {
  const char* n = name ? name(status) : nullptr;
  if (!n) return "cuBLAS status " + std::to_string(static_cast<int>(status));
  const char* t = text ? text(status) : nullptr;
  return t ? std::string(n) + ": " + t : std::string(n);
}

std::string describe(const CublasApi& api, cublasStatus_t status) {
  return describe_status(api.cublasGetStatusName, api.cublasGetStatusString, status);
}

void check(const CublasApi& api, cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS error in ") + what + ": " + describe(api, status));
}

namespace {

int as_int(std::int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX)
    throw Error("cuBLAS GEMM " + std::string(what) + " " + std::to_string(v) +
                " does not fit a 32-bit int");
  return static_cast<int>(v);
}

}  // namespace

// cuBLAS is column-major, and a row-major [r, c] matrix read column-major is its transpose,
// [c, r] with leading dimension c. Read column-major, row-major out = op(lhs) · op(rhs) is
// outᵀ = op(rhs)ᵀ · op(lhs)ᵀ, an [n, m] product: rhs goes first, m and n swap. An untransposed
// operand read column-major is already the transpose that product needs (rhs stored [k, n]
// reads as rhsᵀ), so each operand keeps its own transpose flag. A leading dimension is the row
// length of the matrix as stored: n (k when transposed) for rhs, k (m) for lhs, n for out; at
// least 1, as cuBLAS asks even of empty matrices.
CublasGemmCall cublas_gemm_call(const hlo::GemmShape& shape, const void* lhs, const void* rhs,
                                void* out) {
  auto ld = [](std::int64_t row_length) {
    return as_int(std::max<std::int64_t>(row_length, 1), "leading dimension");
  };
  CublasGemmCall call;
  call.m = as_int(shape.n, "n");
  call.n = as_int(shape.m, "m");
  call.k = as_int(shape.k, "k");
  call.batch = as_int(shape.batch, "batch");
  call.a = rhs;
  call.transa = shape.transpose_rhs ? CUBLAS_OP_T : CUBLAS_OP_N;
  call.lda = ld(shape.transpose_rhs ? shape.k : shape.n);
  call.stride_a = shape.k * shape.n;
  call.b = lhs;
  call.transb = shape.transpose_lhs ? CUBLAS_OP_T : CUBLAS_OP_N;
  call.ldb = ld(shape.transpose_lhs ? shape.m : shape.k);
  call.stride_b = shape.m * shape.k;
  call.c = out;
  call.ldc = ld(shape.n);
  call.stride_c = shape.m * shape.n;
  return call;
}

cublasComputeType_t compute_type(const hlo::GemmShape& shape) {
  if (shape.dtype == float64) return CUBLAS_COMPUTE_64F;
  if (shape.operand_dtype != float32) return CUBLAS_COMPUTE_32F;  // 16-bit: tensor cores
  return shape.precision == hlo::GemmPrecision::kHighest ? CUBLAS_COMPUTE_32F
                                                         : CUBLAS_COMPUTE_32F_FAST_TF32;
}

void gemm(const CublasApi& api, cublasHandle_t handle, const hlo::GemmShape& shape, const void* lhs,
          const void* rhs, void* out) {
  if (shape.batch == 0 || shape.m == 0 || shape.n == 0) return;
  JX_CHECK(shape.k > 0, "an empty contraction is zeroed by the caller");
  if (shape.dtype != float32 && shape.dtype != float64)
    throw Error("cuBLAS GEMM takes f32 or f64, not " + std::string(dtype_name(shape.dtype)));
  CublasGemmCall c = cublas_gemm_call(shape, lhs, rhs, out);
  const cudaDataType_t type = shape.dtype == float32 ? CUDA_R_32F : CUDA_R_64F;
  // bf16 and f16 operands of an f32 product: read as they are, accumulated in f32.
  const cudaDataType_t in = shape.operand_dtype == bfloat16 ? CUDA_R_16BF
                            : shape.operand_dtype == float16 ? CUDA_R_16F
                                                             : type;
  // alpha and beta in the compute type's precision: f32 for both f32 compute types.
  const float one_f = 1, zero_f = 0;
  const double one_d = 1, zero_d = 0;
  const bool f32 = shape.dtype == float32;
  const void* one = f32 ? static_cast<const void*>(&one_f) : &one_d;
  const void* zero = f32 ? static_cast<const void*>(&zero_f) : &zero_d;
  check(api,
        api.cublasGemmStridedBatchedEx(handle, c.transa, c.transb, c.m, c.n, c.k, one, c.a, in,
                                       c.lda, c.stride_a, c.b, in, c.ldb, c.stride_b, zero, c.c,
                                       type, c.ldc, c.stride_c, c.batch, compute_type(shape),
                                       CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
}

}  // namespace jx::runtime::cuda
