#include "runtime/cuda/cudnn.hpp"

#include <algorithm>
#include <climits>
#include <utility>

#include "hlo/convolution.hpp"
#include "jx/errors.hpp"
#include "runtime/cuda/shared_library.hpp"

namespace jx::runtime::cuda {

CudnnApi load_cudnn(const std::vector<std::string>& candidates) {
  return load_api<CudnnApi>(candidates);
}

const std::vector<std::string>& cudnn_libraries() {
  static const std::vector<std::string> names = {"libcudnn.so.9", "libcudnn.so"};
  return names;
}

const CudnnApi& cudnn() {
  static const auto* loaded =
      new ProcessLibrary<CudnnApi>([] { return load_cudnn(cudnn_libraries()); });
  return loaded->get();
}

std::string describe(const CudnnApi& api, cudnnStatus_t status) {
  const char* text = api.cudnnGetErrorString(status);
  return text && *text ? std::string(text) : "cuDNN status " + std::to_string(status);
}

void check(const CudnnApi& api, cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw Error(std::string("cuDNN error in ") + what + ": " + describe(api, status));
}

namespace {

int as_int(std::int64_t v) {
  if (v < 0 || v > INT_MAX)
    throw Error("cuDNN convolution: " + std::to_string(v) + " does not fit a 32-bit int");
  return static_cast<int>(v);
}

std::vector<int> ints(const std::vector<std::int64_t>& v) {
  std::vector<int> out;
  for (std::int64_t x : v) out.push_back(as_int(x));
  return out;
}

// The strides of (batch, feature, spatial...) dims stored in the library's layout
// (hlo::dnn_layout): each the product of the dims stored inside it.
std::vector<int> layout_strides(const std::vector<int>& dims, bool features_last) {
  std::vector<std::int64_t> at = hlo::dnn_layout(dims.size() - 2, features_last);
  std::vector<int> strides(dims.size());
  for (std::size_t k = 0; k < dims.size(); ++k) {
    std::int64_t stride = 1;
    for (std::size_t j = 0; j < dims.size(); ++j)
      if (at[j] > at[k]) stride *= std::max(dims[j], 1);
    strides[k] = as_int(stride);
  }
  return strides;
}

// A cuDNN descriptor, destroyed with its scope.
template <class Handle>
class Descriptor {
 public:
  Descriptor(const CudnnApi& api, cudnnStatus_t (*create)(Handle*),
             cudnnStatus_t (*destroy)(Handle), const char* what)
      : destroy_(destroy) {
    check(api, create(&handle_), what);
  }
  Descriptor(Descriptor&& other) noexcept
      : destroy_(other.destroy_), handle_(std::exchange(other.handle_, nullptr)) {}
  ~Descriptor() {
    if (handle_) destroy_(handle_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  Handle get() const { return handle_; }

 private:
  cudnnStatus_t (*destroy_)(Handle);
  Handle handle_ = nullptr;
};

Descriptor<cudnnTensorDescriptor_t> tensor_descriptor(const CudnnApi& api, cudnnDataType_t type,
                                                      const std::vector<int>& dims,
                                                      const std::vector<int>& strides) {
  Descriptor<cudnnTensorDescriptor_t> d(api, api.cudnnCreateTensorDescriptor,
                                        api.cudnnDestroyTensorDescriptor,
                                        "cudnnCreateTensorDescriptor");
  check(api,
        api.cudnnSetTensorNdDescriptor(d.get(), type, static_cast<int>(dims.size()), dims.data(),
                                       strides.data()),
        "cudnnSetTensorNdDescriptor");
  return d;
}

}  // namespace

CudnnConvolutionCall cudnn_convolution_call(const hlo::DnnConvolution& conv) {
  CudnnConvolutionCall c;
  c.type = conv.dtype == float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  c.x_dims = ints(conv.lhs);
  c.w_dims = ints(conv.rhs);
  c.y_dims = ints(conv.out);
  c.x_strides = layout_strides(c.x_dims, conv.features_last);
  c.y_strides = layout_strides(c.y_dims, conv.features_last);
  c.format = conv.features_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  c.padding = ints(conv.padding);
  c.strides = ints(conv.strides);
  c.dilation = ints(conv.rhs_dilation);
  c.groups = as_int(conv.groups);
  c.math = conv.dtype == float64 || conv.precision == hlo::GemmPrecision::kHighest
               ? CUDNN_FMA_MATH
               : CUDNN_DEFAULT_MATH;
  return c;
}

void convolve(const CudnnApi& api, cudnnHandle_t handle, const hlo::DnnConvolution& conv,
              const void* x, const void* w, void* y, void* workspace, std::size_t workspace_bytes) {
  if (shape_size(conv.out) == 0) return;
  const CudnnConvolutionCall c = cudnn_convolution_call(conv);
  const int rank = static_cast<int>(c.x_dims.size());
  Descriptor<cudnnTensorDescriptor_t> x_desc =
      tensor_descriptor(api, c.type, c.x_dims, c.x_strides);
  Descriptor<cudnnTensorDescriptor_t> y_desc =
      tensor_descriptor(api, c.type, c.y_dims, c.y_strides);
  Descriptor<cudnnFilterDescriptor_t> w_desc(api, api.cudnnCreateFilterDescriptor,
                                             api.cudnnDestroyFilterDescriptor,
                                             "cudnnCreateFilterDescriptor");
  Descriptor<cudnnConvolutionDescriptor_t> conv_desc(api, api.cudnnCreateConvolutionDescriptor,
                                                     api.cudnnDestroyConvolutionDescriptor,
                                                     "cudnnCreateConvolutionDescriptor");
  check(api, api.cudnnSetFilterNdDescriptor(w_desc.get(), c.type, c.format, rank, c.w_dims.data()),
        "cudnnSetFilterNdDescriptor");
  check(api,
        api.cudnnSetConvolutionNdDescriptor(conv_desc.get(), rank - 2, c.padding.data(),
                                            c.strides.data(), c.dilation.data(),
                                            CUDNN_CROSS_CORRELATION, c.type),
        "cudnnSetConvolutionNdDescriptor");
  check(api, api.cudnnSetConvolutionGroupCount(conv_desc.get(), c.groups),
        "cudnnSetConvolutionGroupCount");
  check(api, api.cudnnSetConvolutionMathType(conv_desc.get(), c.math),
        "cudnnSetConvolutionMathType");

  cudnnConvolutionFwdAlgoPerf_t ranked[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  check(api,
        api.cudnnGetConvolutionForwardAlgorithm_v7(
            handle, x_desc.get(), w_desc.get(), conv_desc.get(), y_desc.get(),
            CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, ranked),
        "cudnnGetConvolutionForwardAlgorithm_v7");
  // Under FMA math (HIGHEST), no tensor-core algorithm: those round f32 to TF32.
  auto fits = [&](const cudnnConvolutionFwdAlgoPerf_t& p) {
    bool tensor_ops =
        p.mathType == CUDNN_TENSOR_OP_MATH || p.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    return p.status == CUDNN_STATUS_SUCCESS && p.memory <= workspace_bytes &&
           !(c.math == CUDNN_FMA_MATH && tensor_ops);
  };
  const cudnnConvolutionFwdAlgoPerf_t* chosen = nullptr;
  for (int k = 0; k < found && !chosen; ++k)
    if (fits(ranked[k])) chosen = &ranked[k];
  if (!chosen)
    throw Error("cuDNN has no forward algorithm for this convolution within " +
                std::to_string(workspace_bytes >> 20) + " MiB of workspace");
  // An algorithm runs in the math type it was ranked for: TF32 where DEFAULT allowed it.
  if (chosen->mathType != c.math)
    check(api, api.cudnnSetConvolutionMathType(conv_desc.get(), chosen->mathType),
          "cudnnSetConvolutionMathType");
  // alpha and beta are doubles for a double convolution, floats otherwise.
  const float one_f = 1, zero_f = 0;
  const double one_d = 1, zero_d = 0;
  const bool f64 = c.type == CUDNN_DATA_DOUBLE;
  const void* one = f64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = f64 ? static_cast<const void*>(&zero_d) : &zero_f;
  check(
      api,
      api.cudnnConvolutionForward(handle, one, x_desc.get(), x, w_desc.get(), w, conv_desc.get(),
                                  chosen->algo, workspace, workspace_bytes, zero, y_desc.get(), y),
      "cudnnConvolutionForward");
}

}  // namespace jx::runtime::cuda
