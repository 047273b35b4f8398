// FakeCuda's cuDNN: handles and descriptors tracked, every tensor checked to lie in live device
// memory, and the forward convolution computed on the host (in double) when its stream runs, as
// cuDNN's documentation defines it (cross-correlation, symmetric padding, groups), so that
// programs made of library calls give real values.
#include <algorithm>
#include <functional>

#include "support/fake_cuda_state.hpp"

namespace jx::testing {
namespace {

using namespace runtime::cuda;

// What the fake's algorithm ranking offers, best first: an algorithm whose workspace no caller
// has (jx must pass it over), one on the tensor cores unless the math is FMA, and one without a
// workspace.
struct FakeAlgorithm {
  int algo;
  std::size_t memory;
};
constexpr FakeAlgorithm kRanked[] = {{5, std::size_t{1} << 30}, {1, 4096}, {0, 0}};

std::size_t workspace_of(int algo) {
  for (const FakeAlgorithm& a : kRanked)
    if (a.algo == algo) return a.memory;
  return 0;
}

template <class T>
cudnnStatus_t create(T* out, HandleKind kind) {
  JX_FAKE_LIBRARY_ENTRY;
  *out = s.as_handle<T>(s.make(kind));
  return CUDNN_STATUS_SUCCESS;
}

template <class T>
cudnnStatus_t destroy(T handle, HandleKind kind, const char* entry) {
  JX_FAKE_LIBRARY_ENTRY;
  FakeHandle* h = s.live(id(handle), kind, entry);
  if (!h) return CUDNN_STATUS_BAD_PARAM;
  h->live = false;
  return CUDNN_STATUS_SUCCESS;
}

std::vector<int> array(const int* values, int n) { return {values, values + n}; }

std::int64_t product(const std::vector<int>& v, std::size_t from = 0) {
  std::int64_t p = 1;
  for (std::size_t k = from; k < v.size(); ++k) p *= v[k];
  return p;
}

// The bytes a tensor of `dims` with `strides` spans.
std::size_t extent(const std::vector<int>& dims, const std::vector<int>& strides, int type) {
  std::int64_t last = 0;
  for (std::size_t k = 0; k < dims.size(); ++k) last += std::int64_t{dims[k] - 1} * strides[k];
  return static_cast<std::size_t>(last + 1) * (type == CUDNN_DATA_DOUBLE ? 8 : 4);
}

// Walks every multi-index below `dims`, row-major.
void walk(const std::vector<int>& dims, const std::function<void(const std::vector<int>&)>& f) {
  if (product(dims) == 0) return;
  std::vector<int> idx(dims.size(), 0);
  for (;;) {
    f(idx);
    std::size_t d = dims.size();
    while (d > 0 && ++idx[d - 1] == dims[d - 1]) idx[--d] = 0;
    if (d == 0) return;
  }
}

// One forward convolution, as cuDNN defines it: y[n, k, o...] = alpha · Σ over the group's input
// features c and filter taps r... of x[n, g·C/G + c, o·stride + r·dilation - pad] · w[k, c, r...]
// + beta · y, with g = k / (K/G) and the filter packed as its format says.
struct Convolution {
  std::vector<int> x_dims, x_strides, w_dims, y_dims, y_strides, pad, stride, dilation;
  int format = CUDNN_TENSOR_NCHW, groups = 1;
  double alpha = 1, beta = 0;
  const void *x = nullptr, *w = nullptr;
  void* y = nullptr;

  template <class T>
  void run() const {
    const auto* xs = static_cast<const T*>(x);
    const auto* ws = static_cast<const T*>(w);
    auto* ys = static_cast<T*>(y);
    const std::size_t n = pad.size();
    const int per_group = y_dims[1] / groups, in = w_dims[1];
    std::vector<int> taps(w_dims.begin() + 2, w_dims.end());
    const std::int64_t tap_count = product(taps);
    walk(y_dims, [&](const std::vector<int>& o) {
      const int group = o[1] / per_group;
      double sum = 0;
      std::int64_t tap = 0;
      walk(taps, [&](const std::vector<int>& r) {
        std::int64_t x_at = std::int64_t{o[0]} * x_strides[0];
        for (std::size_t d = 0; d < n; ++d) {
          int p = o[d + 2] * stride[d] + r[d] * dilation[d] - pad[d];
          if (p < 0 || p >= x_dims[d + 2]) return ++tap, void();
          x_at += std::int64_t{p} * x_strides[d + 2];
        }
        for (int c = 0; c < in; ++c) {
          std::int64_t w_at = format == CUDNN_TENSOR_NCHW
                                  ? (std::int64_t{o[1]} * in + c) * tap_count + tap
                                  : (std::int64_t{o[1]} * tap_count + tap) * in + c;
          sum += double(xs[x_at + std::int64_t{group * in + c} * x_strides[1]]) * double(ws[w_at]);
        }
        ++tap;
      });
      std::int64_t y_at = 0;
      for (std::size_t k = 0; k < o.size(); ++k) y_at += std::int64_t{o[k]} * y_strides[k];
      ys[y_at] = static_cast<T>(alpha * sum + (beta != 0 ? beta * double(ys[y_at]) : 0.0));
    });
  }
};

double scalar(const void* p, int type) {
  return type == CUDNN_DATA_DOUBLE ? *static_cast<const double*>(p) : *static_cast<const float*>(p);
}

cudnnStatus_t forward(cudnnHandle_t handle, const void* alpha, cudnnTensorDescriptor_t x_desc,
                      const void* x, cudnnFilterDescriptor_t w_desc, const void* w,
                      cudnnConvolutionDescriptor_t conv_desc, cudnnConvolutionFwdAlgo_t algo,
                      void* workspace, std::size_t workspace_bytes, const void* beta,
                      cudnnTensorDescriptor_t y_desc, void* y) {
  const char* entry = "cudnnConvolutionForward";
  JX_FAKE_LIBRARY_ENTRY;
  FakeHandle* h = s.live(id(handle), HandleKind::kCudnn, entry);
  FakeHandle* xd = s.live(id(x_desc), HandleKind::kCudnnTensor, entry);
  FakeHandle* wd = s.live(id(w_desc), HandleKind::kCudnnFilter, entry);
  FakeHandle* cd = s.live(id(conv_desc), HandleKind::kCudnnConvolution, entry);
  FakeHandle* yd = s.live(id(y_desc), HandleKind::kCudnnTensor, entry);
  if (!h || !xd || !wd || !cd || !yd) return CUDNN_STATUS_BAD_PARAM;
  Convolution c;
  c.x_dims = xd->arrays.at("dims"), c.x_strides = xd->arrays.at("strides");
  c.y_dims = yd->arrays.at("dims"), c.y_strides = yd->arrays.at("strides");
  c.w_dims = wd->arrays.at("dims");
  c.pad = cd->arrays.at("pad"), c.stride = cd->arrays.at("stride");
  c.dilation = cd->arrays.at("dilation");
  c.format = wd->arrays.at("format")[0];
  c.groups = cd->arrays.count("groups") ? cd->arrays.at("groups")[0] : 1;
  const int type = xd->arrays.at("type")[0];
  if (yd->arrays.at("type")[0] != type || wd->arrays.at("type")[0] != type ||
      cd->arrays.at("type")[0] != type)
    return s.violate(CUDNN_STATUS_BAD_PARAM, std::string(entry) + ": mixed data types");
  const std::size_t n = c.pad.size();
  if (c.x_dims.size() != n + 2 || c.w_dims.size() != n + 2 || c.y_dims.size() != n + 2)
    return s.violate(CUDNN_STATUS_BAD_PARAM, std::string(entry) + ": ranks differ");
  // The output cuDNN computes for these descriptors, which y must have.
  std::vector<int> expected = {c.x_dims[0], c.w_dims[0]};
  for (std::size_t d = 0; d < n; ++d) {
    int window = (c.w_dims[d + 2] - 1) * c.dilation[d] + 1;
    expected.push_back((c.x_dims[d + 2] + 2 * c.pad[d] - window) / c.stride[d] + 1);
  }
  if (expected != c.y_dims || c.x_dims[1] != c.w_dims[1] * c.groups || c.w_dims[0] % c.groups != 0)
    return s.violate(CUDNN_STATUS_BAD_PARAM,
                     std::string(entry) + ": the descriptors do not make one convolution");
  if (workspace_of(algo) > workspace_bytes)
    return s.violate(CUDNN_STATUS_BAD_PARAM,
                     std::string(entry) + ": algorithm " + std::to_string(algo) + " needs " +
                         std::to_string(workspace_of(algo)) + " bytes of workspace, given " +
                         std::to_string(workspace_bytes));
  std::vector<int> w_strides(n + 2, 1);
  for (std::size_t k = n + 2; k-- > 1;) w_strides[k - 1] = w_strides[k] * c.w_dims[k];
  FakeOp op{entry, {}, nullptr};
  const std::pair<const char*, std::pair<const void*, std::size_t>> tensors[] = {
      {"x", {x, extent(c.x_dims, c.x_strides, type)}},
      {"w", {w, extent(c.w_dims, w_strides, type)}},
      {"y", {y, extent(c.y_dims, c.y_strides, type)}},
      {"the workspace", {workspace, workspace_of(algo)}}};
  for (const auto& [name, at] : tensors) {
    if (!s.in_live_memory(addr(at.first), at.second, false, entry, name))
      return CUDNN_STATUS_BAD_PARAM;
    if (at.second) op.touches.push_back({addr(at.first), at.second});
  }
  c.alpha = scalar(alpha, type), c.beta = scalar(beta, type);
  c.x = x, c.w = w, c.y = y;
  op.run = [c, type] { type == CUDNN_DATA_DOUBLE ? c.run<double>() : c.run<float>(); };
  if (!s.enqueue(h->stream, std::move(op), entry)) return CUDNN_STATUS_EXECUTION_FAILED;
  s.convolutions.push_back({algo, static_cast<cudnnMathType_t>(cd->arrays.at("math")[0]), c.groups,
                            static_cast<cudnnTensorFormat_t>(c.format), c.x_dims, c.w_dims,
                            c.y_dims});
  return CUDNN_STATUS_SUCCESS;
}

const char* status_text(cudnnStatus_t status) {
  switch (status) {
    case CUDNN_STATUS_SUCCESS:
      return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_BAD_PARAM:
      return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_NOT_SUPPORTED:
      return "CUDNN_STATUS_NOT_SUPPORTED";
    default:
      return "";
  }
}

CudnnApi make_cudnn_api() {
  CudnnApi a;
  a.cudnnCreate = [](cudnnHandle_t* h) { return create(h, HandleKind::kCudnn); };
  a.cudnnDestroy = [](cudnnHandle_t h) { return destroy(h, HandleKind::kCudnn, "cudnnDestroy"); };
  a.cudnnSetStream = [](cudnnHandle_t handle, cudaStream_t stream) {
    JX_FAKE_LIBRARY_ENTRY;
    FakeHandle* h = s.live(id(handle), HandleKind::kCudnn, "cudnnSetStream");
    if (!h || !s.live(id(stream), HandleKind::kStream, "cudnnSetStream"))
      return CUDNN_STATUS_BAD_PARAM;
    h->stream = id(stream);
    return CUDNN_STATUS_SUCCESS;
  };
  a.cudnnGetErrorString = status_text;
  a.cudnnCreateTensorDescriptor = [](cudnnTensorDescriptor_t* d) {
    return create(d, HandleKind::kCudnnTensor);
  };
  a.cudnnDestroyTensorDescriptor = [](cudnnTensorDescriptor_t d) {
    return destroy(d, HandleKind::kCudnnTensor, "cudnnDestroyTensorDescriptor");
  };
  a.cudnnSetTensorNdDescriptor = [](cudnnTensorDescriptor_t d, cudnnDataType_t type, int n,
                                    const int* dims, const int* strides) {
    JX_FAKE_LIBRARY_ENTRY;
    FakeHandle* h = s.live(id(d), HandleKind::kCudnnTensor, "cudnnSetTensorNdDescriptor");
    if (!h) return CUDNN_STATUS_BAD_PARAM;
    if (n < 4 || n > 5 || std::any_of(dims, dims + n, [](int v) { return v < 1; }) ||
        std::any_of(strides, strides + n, [](int v) { return v < 1; }))
      return s.violate(CUDNN_STATUS_BAD_PARAM,
                       "cudnnSetTensorNdDescriptor: a convolution's tensor has 4 or 5 positive "
                       "dims and strides");
    h->arrays = {{"type", {type}}, {"dims", array(dims, n)}, {"strides", array(strides, n)}};
    return CUDNN_STATUS_SUCCESS;
  };
  a.cudnnCreateFilterDescriptor = [](cudnnFilterDescriptor_t* d) {
    return create(d, HandleKind::kCudnnFilter);
  };
  a.cudnnDestroyFilterDescriptor = [](cudnnFilterDescriptor_t d) {
    return destroy(d, HandleKind::kCudnnFilter, "cudnnDestroyFilterDescriptor");
  };
  a.cudnnSetFilterNdDescriptor = [](cudnnFilterDescriptor_t d, cudnnDataType_t type,
                                    cudnnTensorFormat_t format, int n, const int* dims) {
    JX_FAKE_LIBRARY_ENTRY;
    FakeHandle* h = s.live(id(d), HandleKind::kCudnnFilter, "cudnnSetFilterNdDescriptor");
    if (!h) return CUDNN_STATUS_BAD_PARAM;
    if (n < 4 || n > 5 || std::any_of(dims, dims + n, [](int v) { return v < 1; }))
      return s.violate(CUDNN_STATUS_BAD_PARAM,
                       "cudnnSetFilterNdDescriptor: a filter has 4 or 5 positive dims");
    h->arrays = {{"type", {type}}, {"format", {format}}, {"dims", array(dims, n)}};
    return CUDNN_STATUS_SUCCESS;
  };
  a.cudnnCreateConvolutionDescriptor = [](cudnnConvolutionDescriptor_t* d) {
    return create(d, HandleKind::kCudnnConvolution);
  };
  a.cudnnDestroyConvolutionDescriptor = [](cudnnConvolutionDescriptor_t d) {
    return destroy(d, HandleKind::kCudnnConvolution, "cudnnDestroyConvolutionDescriptor");
  };
  a.cudnnSetConvolutionNdDescriptor = [](cudnnConvolutionDescriptor_t d, int n, const int* pad,
                                         const int* stride, const int* dilation,
                                         cudnnConvolutionMode_t mode, cudnnDataType_t type) {
    const char* entry = "cudnnSetConvolutionNdDescriptor";
    JX_FAKE_LIBRARY_ENTRY;
    FakeHandle* h = s.live(id(d), HandleKind::kCudnnConvolution, entry);
    if (!h) return CUDNN_STATUS_BAD_PARAM;
    if (mode != CUDNN_CROSS_CORRELATION)
      return s.violate(CUDNN_STATUS_BAD_PARAM,
                       std::string(entry) + ": XLA's convolution is a cross-correlation");
    if (std::any_of(pad, pad + n, [](int v) { return v < 0; }) ||
        std::any_of(stride, stride + n, [](int v) { return v < 1; }) ||
        std::any_of(dilation, dilation + n, [](int v) { return v < 1; }))
      return s.violate(CUDNN_STATUS_BAD_PARAM, std::string(entry) + ": a bad window");
    h->arrays["pad"] = array(pad, n);
    h->arrays["stride"] = array(stride, n);
    h->arrays["dilation"] = array(dilation, n);
    h->arrays["type"] = {type};
    h->arrays.emplace("math", std::vector<int>{CUDNN_DEFAULT_MATH});
    return CUDNN_STATUS_SUCCESS;
  };
  a.cudnnSetConvolutionGroupCount = [](cudnnConvolutionDescriptor_t d, int groups) {
    JX_FAKE_LIBRARY_ENTRY;
    FakeHandle* h = s.live(id(d), HandleKind::kCudnnConvolution, "cudnnSetConvolutionGroupCount");
    if (!h || groups < 1) return CUDNN_STATUS_BAD_PARAM;
    h->arrays["groups"] = {groups};
    return CUDNN_STATUS_SUCCESS;
  };
  a.cudnnSetConvolutionMathType = [](cudnnConvolutionDescriptor_t d, cudnnMathType_t math) {
    JX_FAKE_LIBRARY_ENTRY;
    FakeHandle* h = s.live(id(d), HandleKind::kCudnnConvolution, "cudnnSetConvolutionMathType");
    if (!h) return CUDNN_STATUS_BAD_PARAM;
    h->arrays["math"] = {math};
    return CUDNN_STATUS_SUCCESS;
  };
  a.cudnnGetConvolutionForwardAlgorithm_v7 =
      [](cudnnHandle_t handle, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
         cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, int requested, int* found,
         cudnnConvolutionFwdAlgoPerf_t* results) {
        const char* entry = "cudnnGetConvolutionForwardAlgorithm_v7";
        JX_FAKE_LIBRARY_ENTRY;
        FakeHandle* cd = s.live(id(conv), HandleKind::kCudnnConvolution, entry);
        if (!s.live(id(handle), HandleKind::kCudnn, entry) ||
            !s.live(id(x), HandleKind::kCudnnTensor, entry) ||
            !s.live(id(w), HandleKind::kCudnnFilter, entry) || !cd ||
            !s.live(id(y), HandleKind::kCudnnTensor, entry))
          return CUDNN_STATUS_BAD_PARAM;
        const auto math = static_cast<cudnnMathType_t>(cd->arrays.at("math")[0]);
        *found = 0;
        for (const FakeAlgorithm& algo : kRanked) {
          if (*found == requested) break;
          cudnnConvolutionFwdAlgoPerf_t& r = results[(*found)++];
          r = {};
          r.algo = static_cast<cudnnConvolutionFwdAlgo_t>(algo.algo);
          r.status = CUDNN_STATUS_SUCCESS;
          r.memory = algo.memory;
          r.mathType = algo.algo == 1 && math != CUDNN_FMA_MATH ? CUDNN_TENSOR_OP_MATH : math;
        }
        return CUDNN_STATUS_SUCCESS;
      };
  a.cudnnConvolutionForward = forward;
  return a;
}

}  // namespace

const CudnnApi& fake_cudnn_api() {
  static const CudnnApi api = make_cudnn_api();
  return api;
}

const CudnnApi& missing_cudnn_api() {
  throw Error("cuDNN unavailable: cannot load libcudnn.so.9: no such file (the fake has none)");
}

}  // namespace jx::testing
