#include "runtime/cuda/cublas.hpp"

#include <algorithm>
#include <climits>
#include <variant>

#include "hlo/gemm.hpp"
#include "jx/errors.hpp"
#include "runtime/cuda/shared_library.hpp"
#include "support/check.hpp"

namespace jx::runtime::cuda {

CublasApi load_cublas(const std::vector<std::string>& candidates) {
  SharedLibrary lib = open_first(candidates, "cuBLAS");
  CublasApi api;
  try {
#define JX_BIND(field, symbol, signature) lib.bind(api.field, #symbol);
    JX_CUBLAS_FUNCTIONS(JX_BIND)
#undef JX_BIND
  } catch (const Error&) {
    lib.close();
    throw;
  }
#define JX_BIND_OPTIONAL(field, symbol, signature) lib.bind_optional(api.field, #symbol);
  JX_CUBLAS_OPTIONAL_FUNCTIONS(JX_BIND_OPTIONAL)
#undef JX_BIND_OPTIONAL
  return api;
}

const std::vector<std::string>& cublas_libraries() {
  static const std::vector<std::string> names = {"libcublas.so.13", "libcublas.so.12",
                                                 "libcublas.so.11", "libcublas.so"};
  return names;
}

const CublasApi& cublas() {
  // Never destroyed, like the driver: GPU work may run from static destructors.
  static const auto* loaded = []() -> std::variant<CublasApi, std::string>* {
    try {
      return new std::variant<CublasApi, std::string>(load_cublas(cublas_libraries()));
    } catch (const Error& e) {
      return new std::variant<CublasApi, std::string>(std::string(e.what()));
    }
  }();
  if (const auto* message = std::get_if<std::string>(loaded)) throw Error(*message);
  return std::get<CublasApi>(*loaded);
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

void gemm(const CublasApi& api, cublasHandle_t handle, const hlo::GemmShape& shape, const void* lhs,
          const void* rhs, void* out) {
  if (shape.batch == 0 || shape.m == 0 || shape.n == 0) return;
  JX_CHECK(shape.k > 0, "an empty contraction is zeroed by the caller");
  CublasGemmCall c = cublas_gemm_call(shape, lhs, rhs, out);
  if (shape.dtype == float32) {
    const float one = 1, zero = 0;
    check(api,
          api.cublasSgemmStridedBatched(handle, c.transa, c.transb, c.m, c.n, c.k, &one,
                                        static_cast<const float*>(c.a), c.lda, c.stride_a,
                                        static_cast<const float*>(c.b), c.ldb, c.stride_b, &zero,
                                        static_cast<float*>(c.c), c.ldc, c.stride_c, c.batch),
          "cublasSgemmStridedBatched");
  } else if (shape.dtype == float64) {
    const double one = 1, zero = 0;
    check(api,
          api.cublasDgemmStridedBatched(handle, c.transa, c.transb, c.m, c.n, c.k, &one,
                                        static_cast<const double*>(c.a), c.lda, c.stride_a,
                                        static_cast<const double*>(c.b), c.ldb, c.stride_b, &zero,
                                        static_cast<double*>(c.c), c.ldc, c.stride_c, c.batch),
          "cublasDgemmStridedBatched");
  } else {
    throw Error("cuBLAS GEMM takes f32 or f64, not " + std::string(dtype_name(shape.dtype)));
  }
}

}  // namespace jx::runtime::cuda
