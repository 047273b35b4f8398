#include "runtime/cuda/cublas_lt.hpp"

#include <cstdint>

#include "hlo/gemm.hpp"
#include "jx/errors.hpp"
#include "runtime/cuda/cublas.hpp"
#include "runtime/cuda/shared_library.hpp"
#include "runtime/cuda/teardown.hpp"
#include "support/check.hpp"

namespace jx::runtime::cuda {

CublasLtApi load_cublas_lt(const std::vector<std::string>& candidates) {
  return load_api<CublasLtApi>(candidates);
}

const std::vector<std::string>& cublas_lt_libraries() {
  static const std::vector<std::string> names = {"libcublasLt.so.13", "libcublasLt.so.12",
                                                 "libcublasLt.so.11", "libcublasLt.so"};
  return names;
}

namespace {

const ProcessLibrary<CublasLtApi>& loaded() {
  static const auto* loaded =
      new ProcessLibrary<CublasLtApi>([] { return load_cublas_lt(cublas_lt_libraries()); });
  return *loaded;
}

// A cuBLASLt descriptor, destroyed with the function that goes with it. A failure to destroy
// one is logged, never thrown: the GEMM it described has been enqueued or has failed already.
template <class T>
class Descriptor {
 public:
  explicit Descriptor(Entry<cublasStatus_t(T)> destroy) : destroy_(destroy) {}
  ~Descriptor() {
    if (!handle_) return;
    if (cublasStatus_t status = destroy_(handle_); status != CUBLAS_STATUS_SUCCESS)
      log_teardown_error("cuBLASLt status " + std::to_string(static_cast<int>(status)) +
                         " destroying a descriptor");
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  T* out() { return &handle_; }
  T get() const { return handle_; }

 private:
  Entry<cublasStatus_t(T)> destroy_;
  T handle_ = nullptr;
};

}  // namespace

const CublasLtApi& cublas_lt() { return loaded().get(); }

bool has_cublas_lt() { return loaded().ok(); }

cublasLtEpilogue_t lt_epilogue(GemmActivation activation, bool bias) {
  switch (activation) {
    case GemmActivation::kNone:
      return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    case GemmActivation::kRelu:
      return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case GemmActivation::kGelu:
      return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  }
  JX_CHECK(false, "unknown activation");
  return CUBLASLT_EPILOGUE_DEFAULT;
}

std::string describe(const CublasLtApi& api, cublasStatus_t status) {
  return describe_status(api.cublasLtGetStatusName, api.cublasLtGetStatusString, status);
}

void check(const CublasLtApi& api, cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLASLt error in ") + what + ": " + describe(api, status));
}

// The operands are cublas_gemm_call's (see cublas.cpp for the row-major to column-major
// mapping). The bias is added to each row of the column-major result: a row of it is a
// column of the row-major output, hence one bias element per output column.
void gemm_lt(const CublasLtApi& api, cublasLtHandle_t handle, cudaStream_t stream,
             const hlo::GemmShape& shape, GemmActivation activation, const void* bias,
             const void* lhs, const void* rhs, void* out, void* workspace,
             std::size_t workspace_bytes) {
  if (shape.batch == 0 || shape.m == 0 || shape.n == 0) return;
  JX_CHECK(shape.k > 0, "an empty contraction is the caller's");
  if (shape.dtype != float32 && shape.dtype != float64)
    throw Error("cuBLASLt GEMM takes f32 or f64, not " + std::string(dtype_name(shape.dtype)));
  const bool f32 = shape.dtype == float32;
  const cudaDataType_t type = f32 ? CUDA_R_32F : CUDA_R_64F;
  CublasGemmCall c = cublas_gemm_call(shape, lhs, rhs, out);

  Descriptor<cublasLtMatmulDesc_t> desc(api.cublasLtMatmulDescDestroy);
  check(api, api.cublasLtMatmulDescCreate(desc.out(), compute_type(shape), type),
        "cublasLtMatmulDescCreate");
  auto set = [&](cublasLtMatmulDescAttributes_t attribute, const auto& value) {
    check(api, api.cublasLtMatmulDescSetAttribute(desc.get(), attribute, &value, sizeof value),
          "cublasLtMatmulDescSetAttribute");
  };
  set(CUBLASLT_MATMUL_DESC_TRANSA, static_cast<std::int32_t>(c.transa));
  set(CUBLASLT_MATMUL_DESC_TRANSB, static_cast<std::int32_t>(c.transb));
  set(CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<std::uint32_t>(lt_epilogue(activation, bias)));
  if (bias) set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);

  // A layout describes the matrix as stored: op(A) is m × k, so A is k × m when transposed.
  auto layout = [&](Descriptor<cublasLtMatrixLayout_t>& l, int rows, int cols, int ld,
                    long long stride) {
    check(api,
          api.cublasLtMatrixLayoutCreate(l.out(), type, static_cast<std::uint64_t>(rows),
                                         static_cast<std::uint64_t>(cols), ld),
          "cublasLtMatrixLayoutCreate");
    if (c.batch == 1) return;
    std::int32_t count = c.batch;
    std::int64_t offset = stride;
    check(api,
          api.cublasLtMatrixLayoutSetAttribute(l.get(), CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                               sizeof count),
          "cublasLtMatrixLayoutSetAttribute");
    check(api,
          api.cublasLtMatrixLayoutSetAttribute(l.get(), CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                               &offset, sizeof offset),
          "cublasLtMatrixLayoutSetAttribute");
  };
  Descriptor<cublasLtMatrixLayout_t> a(api.cublasLtMatrixLayoutDestroy),
      b(api.cublasLtMatrixLayoutDestroy), d(api.cublasLtMatrixLayoutDestroy);
  const bool ta = c.transa == CUBLAS_OP_T, tb = c.transb == CUBLAS_OP_T;
  layout(a, ta ? c.k : c.m, ta ? c.m : c.k, c.lda, c.stride_a);
  layout(b, tb ? c.n : c.k, tb ? c.k : c.n, c.ldb, c.stride_b);
  layout(d, c.m, c.n, c.ldc, c.stride_c);

  Descriptor<cublasLtMatmulPreference_t> preference(api.cublasLtMatmulPreferenceDestroy);
  check(api, api.cublasLtMatmulPreferenceCreate(preference.out()),
        "cublasLtMatmulPreferenceCreate");
  std::uint64_t max_workspace = workspace_bytes;
  check(api,
        api.cublasLtMatmulPreferenceSetAttribute(preference.get(),
                                                 CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &max_workspace, sizeof max_workspace),
        "cublasLtMatmulPreferenceSetAttribute");
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  check(api,
        api.cublasLtMatmulAlgoGetHeuristic(handle, desc.get(), a.get(), b.get(), d.get(), d.get(),
                                           preference.get(), 1, &heuristic, &found),
        "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0)
    throw Error("cuBLASLt has no algorithm for this GEMM and epilogue (" +
                std::string(dtype_name(shape.dtype)) + ")");

  const float one_f = 1, zero_f = 0;
  const double one_d = 1, zero_d = 0;
  const void* one = f32 ? static_cast<const void*>(&one_f) : &one_d;
  const void* zero = f32 ? static_cast<const void*>(&zero_f) : &zero_d;
  check(api,
        api.cublasLtMatmul(handle, desc.get(), one, c.a, a.get(), c.b, b.get(), zero, c.c, d.get(),
                           c.c, d.get(), &heuristic.algo, workspace, workspace_bytes, stream),
        "cublasLtMatmul");
}

}  // namespace jx::runtime::cuda
