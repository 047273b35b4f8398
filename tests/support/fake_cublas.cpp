// FakeCuda's cuBLAS and cuBLASLt: handles and descriptors tracked, every matrix checked to lie
// in live device memory, and the GEMM computed on the host (in double) when its stream runs, as
// BLAS defines it, so that programs made of library calls give real values.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "support/fake_cuda_state.hpp"

namespace jx::testing {
namespace {

using namespace runtime::cuda;

std::size_t element_size(cudaDataType_t type) {
  return type == CUDA_R_64F ? 8 : type == CUDA_R_32F ? 4 : 2;
}

// A column-major matrix as stored: rows × cols with leading dimension ld, `batch` of them
// `stride` elements apart.
struct Matrix {
  const void* data;
  std::int64_t rows, cols, ld, stride;
  std::size_t extent(int batch, cudaDataType_t type) const {
    if (rows == 0 || cols == 0 || batch == 0) return 0;
    auto last = (batch - 1) * stride + (cols - 1) * ld + rows;
    return static_cast<std::size_t>(last) * element_size(type);
  }
};

// The whole product, as BLAS defines it: d = act(alpha · op(a) · op(b) + beta · c + bias).
struct Product {
  cudaDataType_t type = CUDA_R_32F;     // of c, d and the bias
  cudaDataType_t in_type = CUDA_R_32F;  // of a and b: type, or 16-bit floats of an f32 product
  bool ta = false, tb = false;
  int m = 0, n = 0, k = 0, batch = 1;
  double alpha = 1, beta = 0;
  Matrix a{}, b{}, c{}, d{};
  const void* bias = nullptr;
  unsigned epilogue = CUBLASLT_EPILOGUE_DEFAULT;

  template <class T, class In = T>
  void run() const {
    for (int p = 0; p < batch; ++p) {
      auto* ap = static_cast<const In*>(a.data) + p * a.stride;
      auto* bp = static_cast<const In*>(b.data) + p * b.stride;
      auto* cp = static_cast<const T*>(c.data) + p * c.stride;
      auto* dp = static_cast<T*>(const_cast<void*>(d.data)) + p * d.stride;
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          double sum = 0;
          for (int l = 0; l < k; ++l)
            sum += double(ta ? ap[l + i * a.ld] : ap[i + l * a.ld]) *
                   double(tb ? bp[j + l * b.ld] : bp[l + j * b.ld]);
          double v = alpha * sum + (beta != 0 ? beta * double(cp[i + j * c.ld]) : 0.0);
          if (bias) v += double(static_cast<const T*>(bias)[i]);
          dp[i + j * d.ld] = static_cast<T>(activate(v));
        }
    }
  }

  double activate(double v) const {
    if (epilogue == CUBLASLT_EPILOGUE_RELU || epilogue == CUBLASLT_EPILOGUE_RELU_BIAS)
      return v > 0 ? v : 0;
    if (epilogue == CUBLASLT_EPILOGUE_GELU || epilogue == CUBLASLT_EPILOGUE_GELU_BIAS)
      return 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    return v;
  }
};

// Checks the product's matrices against live memory and enqueues it on `stream`.
cublasStatus_t enqueue_product(FakeCudaState& s, const Product& p, std::uint64_t stream,
                               const char* entry, cublasComputeType_t compute) {
  bool f32 = p.type == CUDA_R_32F;
  bool sixteen_bit = p.in_type == CUDA_R_16F || p.in_type == CUDA_R_16BF;
  bool compute_ok = sixteen_bit ? compute == CUBLAS_COMPUTE_32F
                    : f32
                        ? (compute == CUBLAS_COMPUTE_32F || compute == CUBLAS_COMPUTE_32F_FAST_TF32)
                        : compute == CUBLAS_COMPUTE_64F;
  if (!compute_ok)
    return s.violate(CUBLAS_STATUS_NOT_SUPPORTED, std::string(entry) + ": compute type " +
                                                      std::to_string(compute) +
                                                      " does not fit the data type");
  if (p.a.ld < std::max<std::int64_t>(1, p.a.rows) ||
      p.b.ld < std::max<std::int64_t>(1, p.b.rows) || p.d.ld < std::max<std::int64_t>(1, p.d.rows))
    return s.violate(CUBLAS_STATUS_INVALID_VALUE,
                     std::string(entry) + ": a leading dimension is shorter than its rows");
  FakeOp op{entry, {}, nullptr};
  for (auto [name, matrix] : {std::pair{"A", &p.a}, {"B", &p.b}, {"C", &p.c}, {"D", &p.d}}) {
    if (!matrix->data) continue;
    bool input = matrix == &p.a || matrix == &p.b;
    std::size_t bytes = matrix->extent(p.batch, input ? p.in_type : p.type);
    if (!s.in_live_memory(addr(matrix->data), bytes, false, entry, std::string("matrix ") + name))
      return CUBLAS_STATUS_INVALID_VALUE;
    op.touches.push_back({addr(matrix->data), bytes});
  }
  if (p.bias) {
    std::size_t bytes = static_cast<std::size_t>(p.m) * element_size(p.type);
    if (!s.in_live_memory(addr(p.bias), bytes, false, entry, "the bias"))
      return CUBLAS_STATUS_INVALID_VALUE;
    op.touches.push_back({addr(p.bias), bytes});
  }
  op.run = [p, f32] {
    if (p.in_type == CUDA_R_16BF)
      p.run<float, BFloat16>();
    else if (p.in_type == CUDA_R_16F)
      p.run<float, Float16>();
    else
      f32 ? p.run<float>() : p.run<double>();
  };
  if (!s.enqueue(stream, std::move(op), entry)) return CUBLAS_STATUS_EXECUTION_FAILED;
  s.gemms.push_back({std::string(entry).rfind("cublasLt", 0) == 0 ? "cuBLASLt" : "cuBLAS", compute,
                     p.type, p.in_type, p.m, p.n, p.k, p.batch, p.epilogue});
  return CUBLAS_STATUS_SUCCESS;
}

double scalar(const void* p, cudaDataType_t type) {
  return type == CUDA_R_64F ? *static_cast<const double*>(p) : *static_cast<const float*>(p);
}

cublasStatus_t gemm_ex(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                       int m, int n, int k, const void* alpha, const void* a, cudaDataType_t at,
                       int lda, long long stride_a, const void* b, cudaDataType_t bt, int ldb,
                       long long stride_b, const void* beta, void* c, cudaDataType_t ct, int ldc,
                       long long stride_c, int batch, cublasComputeType_t compute,
                       cublasGemmAlgo_t) {
  JX_FAKE_LIBRARY_ENTRY;
  FakeHandle* h = s.live(id(handle), HandleKind::kCublas, "cublasGemmStridedBatchedEx");
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  bool sixteen_bit_inputs = (at == CUDA_R_16F || at == CUDA_R_16BF) && ct == CUDA_R_32F;
  if (at != bt || (at != ct && !sixteen_bit_inputs))
    return s.violate(CUBLAS_STATUS_NOT_SUPPORTED,
                     "cublasGemmStridedBatchedEx: mixed data types are not what jx asks for");
  Product p;
  p.type = ct;
  p.in_type = at;
  p.ta = transa == CUBLAS_OP_T;
  p.tb = transb == CUBLAS_OP_T;
  p.m = m, p.n = n, p.k = k, p.batch = batch;
  // Scalars are read at the call, as cuBLAS's host pointer mode does; they are f32 for both f32
  // compute types.
  p.alpha = scalar(alpha, ct);
  p.beta = scalar(beta, ct);
  p.a = {a, p.ta ? k : m, p.ta ? m : k, lda, stride_a};
  p.b = {b, p.tb ? n : k, p.tb ? k : n, ldb, stride_b};
  p.c = {p.beta != 0 ? c : nullptr, m, n, ldc, stride_c};
  p.d = {c, m, n, ldc, stride_c};
  return enqueue_product(s, p, h->stream, "cublasGemmStridedBatchedEx", compute);
}

std::int64_t value_of(const void* buffer, std::size_t bytes) {
  std::int64_t v = 0;
  std::memcpy(&v, buffer, std::min(bytes, sizeof v));
  return v;
}

// A layout's matrix at `data`.
Matrix layout_matrix(const FakeHandle& l, const void* data) {
  return {data, l.values.at(-1), l.values.at(-2), l.values.at(-3),
          l.values.count(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET)
              ? l.values.at(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET)
              : 0};
}

cublasStatus_t lt_matmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                         const void* a, cublasLtMatrixLayout_t al, const void* b,
                         cublasLtMatrixLayout_t bl, const void* beta, const void* c,
                         cublasLtMatrixLayout_t cl, void* d, cublasLtMatrixLayout_t dl,
                         const cublasLtMatmulAlgo_t*, void*, std::size_t, cudaStream_t stream) {
  JX_FAKE_LIBRARY_ENTRY;
  const char* entry = "cublasLtMatmul";
  FakeHandle* h = s.live(id(handle), HandleKind::kCublasLt, entry);
  FakeHandle* md = s.live(id(desc), HandleKind::kLtMatmulDesc, entry);
  FakeHandle* la = s.live(id(al), HandleKind::kLtLayout, entry);
  FakeHandle* lb = s.live(id(bl), HandleKind::kLtLayout, entry);
  FakeHandle* lc = s.live(id(cl), HandleKind::kLtLayout, entry);
  FakeHandle* ld = s.live(id(dl), HandleKind::kLtLayout, entry);
  if (!h || !md || !la || !lb || !lc || !ld) return CUBLAS_STATUS_NOT_INITIALIZED;
  auto get = [&](const FakeHandle& x, int key, std::int64_t fallback) {
    return x.values.count(key) ? x.values.at(key) : fallback;
  };
  Product p;
  p.type = static_cast<cudaDataType_t>(get(*ld, -4, CUDA_R_32F));
  p.in_type = p.type;
  p.ta = get(*md, CUBLASLT_MATMUL_DESC_TRANSA, 0) == CUBLAS_OP_T;
  p.tb = get(*md, CUBLASLT_MATMUL_DESC_TRANSB, 0) == CUBLAS_OP_T;
  p.epilogue = static_cast<unsigned>(get(*md, CUBLASLT_MATMUL_DESC_EPILOGUE, 1));
  p.bias = reinterpret_cast<const void*>(get(*md, CUBLASLT_MATMUL_DESC_BIAS_POINTER, 0));
  p.a = layout_matrix(*la, a);
  p.b = layout_matrix(*lb, b);
  p.d = layout_matrix(*ld, d);
  p.m = static_cast<int>(p.d.rows);
  p.n = static_cast<int>(p.d.cols);
  p.k = static_cast<int>(p.ta ? p.a.rows : p.a.cols);
  p.batch = static_cast<int>(get(*ld, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 1));
  p.alpha = scalar(alpha, p.type);
  p.beta = scalar(beta, p.type);
  p.c = p.beta != 0 ? layout_matrix(*lc, c) : Matrix{nullptr, 0, 0, 1, 0};
  auto compute = static_cast<cublasComputeType_t>(get(*md, -1, 0));
  return enqueue_product(s, p, id(stream), entry, compute);
}

// Creates a handle of `kind` in *out, with `values` set.
template <class T>
cublasStatus_t create(T* out, HandleKind kind, std::map<int, std::int64_t> values = {}) {
  JX_FAKE_LIBRARY_ENTRY;
  std::uint64_t h = s.make(kind);
  s.handles[h].values = std::move(values);
  *out = s.as_handle<T>(h);
  return CUBLAS_STATUS_SUCCESS;
}

template <class T>
cublasStatus_t destroy(T handle, HandleKind kind, const char* entry) {
  JX_FAKE_LIBRARY_ENTRY;
  FakeHandle* h = s.live(id(handle), kind, entry);
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  h->live = false;
  return CUBLAS_STATUS_SUCCESS;
}

template <class T>
cublasStatus_t set_value(T handle, HandleKind kind, int attribute, const void* buffer,
                         std::size_t bytes, const char* entry) {
  JX_FAKE_LIBRARY_ENTRY;
  FakeHandle* h = s.live(id(handle), kind, entry);
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  h->values[attribute] = value_of(buffer, bytes);
  return CUBLAS_STATUS_SUCCESS;
}

const char* status_name(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    default:
      return nullptr;
  }
}

CublasApi make_cublas_api() {
  CublasApi a;
  a.cublasCreate = [](cublasHandle_t* h) { return create(h, HandleKind::kCublas); };
  a.cublasDestroy = [](cublasHandle_t h) {
    return destroy(h, HandleKind::kCublas, "cublasDestroy");
  };
  a.cublasSetStream = [](cublasHandle_t handle, cudaStream_t stream) {
    JX_FAKE_LIBRARY_ENTRY;
    FakeHandle* h = s.live(id(handle), HandleKind::kCublas, "cublasSetStream");
    if (!h || !s.live(id(stream), HandleKind::kStream, "cublasSetStream"))
      return CUBLAS_STATUS_NOT_INITIALIZED;
    h->stream = id(stream);
    return CUBLAS_STATUS_SUCCESS;
  };
  a.cublasSetWorkspace = [](cublasHandle_t handle, void* workspace, std::size_t bytes) {
    JX_FAKE_LIBRARY_ENTRY;
    if (!s.live(id(handle), HandleKind::kCublas, "cublasSetWorkspace"))
      return CUBLAS_STATUS_NOT_INITIALIZED;
    return s.in_live_memory(addr(workspace), bytes, false, "cublasSetWorkspace", "the workspace")
               ? CUBLAS_STATUS_SUCCESS
               : CUBLAS_STATUS_INVALID_VALUE;
  };
  a.cublasGemmStridedBatchedEx = gemm_ex;
  a.cublasGetStatusName = status_name;
  a.cublasGetStatusString = [](cublasStatus_t status) -> const char* {
    return status_name(status) ? "the fake cuBLAS's status" : nullptr;
  };
  return a;
}

CublasLtApi make_cublas_lt_api() {
  CublasLtApi a;
  a.cublasLtCreate = [](cublasLtHandle_t* h) { return create(h, HandleKind::kCublasLt); };
  a.cublasLtDestroy = [](cublasLtHandle_t h) {
    return destroy(h, HandleKind::kCublasLt, "cublasLtDestroy");
  };
  a.cublasLtMatmulDescCreate = [](cublasLtMatmulDesc_t* d, cublasComputeType_t compute,
                                  cudaDataType_t scale) {
    return create(d, HandleKind::kLtMatmulDesc, {{-1, compute}, {-2, scale}});
  };
  a.cublasLtMatmulDescDestroy = [](cublasLtMatmulDesc_t d) {
    return destroy(d, HandleKind::kLtMatmulDesc, "cublasLtMatmulDescDestroy");
  };
  a.cublasLtMatmulDescSetAttribute = [](cublasLtMatmulDesc_t d,
                                        cublasLtMatmulDescAttributes_t attribute, const void* buf,
                                        std::size_t bytes) {
    return set_value(d, HandleKind::kLtMatmulDesc, attribute, buf, bytes,
                     "cublasLtMatmulDescSetAttribute");
  };
  a.cublasLtMatrixLayoutCreate = [](cublasLtMatrixLayout_t* l, cudaDataType_t type,
                                    std::uint64_t rows, std::uint64_t cols, std::int64_t ld) {
    return create(l, HandleKind::kLtLayout,
                  {{-1, static_cast<std::int64_t>(rows)},
                   {-2, static_cast<std::int64_t>(cols)},
                   {-3, ld},
                   {-4, type}});
  };
  a.cublasLtMatrixLayoutDestroy = [](cublasLtMatrixLayout_t l) {
    return destroy(l, HandleKind::kLtLayout, "cublasLtMatrixLayoutDestroy");
  };
  a.cublasLtMatrixLayoutSetAttribute = [](cublasLtMatrixLayout_t l,
                                          cublasLtMatrixLayoutAttribute_t attribute,
                                          const void* buf, std::size_t bytes) {
    return set_value(l, HandleKind::kLtLayout, attribute, buf, bytes,
                     "cublasLtMatrixLayoutSetAttribute");
  };
  a.cublasLtMatmulPreferenceCreate = [](cublasLtMatmulPreference_t* p) {
    return create(p, HandleKind::kLtPreference);
  };
  a.cublasLtMatmulPreferenceDestroy = [](cublasLtMatmulPreference_t p) {
    return destroy(p, HandleKind::kLtPreference, "cublasLtMatmulPreferenceDestroy");
  };
  a.cublasLtMatmulPreferenceSetAttribute = [](cublasLtMatmulPreference_t p,
                                              cublasLtMatmulPreferenceAttributes_t attribute,
                                              const void* buf, std::size_t bytes) {
    return set_value(p, HandleKind::kLtPreference, attribute, buf, bytes,
                     "cublasLtMatmulPreferenceSetAttribute");
  };
  a.cublasLtMatmulAlgoGetHeuristic = [](cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                        cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                        cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                        cublasLtMatmulPreference_t preference, int requested,
                                        cublasLtMatmulHeuristicResult_t* results, int* found) {
    JX_FAKE_LIBRARY_ENTRY;
    const char* entry = "cublasLtMatmulAlgoGetHeuristic";
    if (!s.live(id(handle), HandleKind::kCublasLt, entry) ||
        !s.live(id(desc), HandleKind::kLtMatmulDesc, entry) ||
        !s.live(id(preference), HandleKind::kLtPreference, entry))
      return CUBLAS_STATUS_NOT_INITIALIZED;
    *found = requested > 0 ? 1 : 0;
    if (*found) results[0] = {};
    return CUBLAS_STATUS_SUCCESS;
  };
  a.cublasLtMatmul = lt_matmul;
  a.cublasLtGetStatusName = status_name;
  a.cublasLtGetStatusString = [](cublasStatus_t status) -> const char* {
    return status_name(status) ? "the fake cuBLASLt's status" : nullptr;
  };
  return a;
}

}  // namespace

const CublasApi& fake_cublas_api() {
  static const CublasApi api = make_cublas_api();
  return api;
}

const CublasLtApi& fake_cublas_lt_api() {
  static const CublasLtApi api = make_cublas_lt_api();
  return api;
}

}  // namespace jx::testing
