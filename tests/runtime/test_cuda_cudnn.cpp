// cuDNN: the exact messages when it is missing or is not cuDNN, every declared entry point
// resolving in an installed cuDNN (a warning where there is none), a convolution's descriptors
// from its form, and, where a GPU is present, a convolution through cuDNN against the CPU's.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <jx/jx.hpp>

#include "hlo/convolution.hpp"
#include "jx/errors.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/cudnn.hpp"
#include "runtime/cuda/driver.hpp"
#include "support/error_of.hpp"
#include "support/shared_libraries.hpp"

namespace jx::runtime::cuda {
namespace {

using jx::testing::dlopen_error;
using jx::testing::error_of;
using jx::testing::zlib_path;

TEST_CASE("load_cudnn: missing libraries and a library that is not cuDNN", "[cuda]") {
  const std::string a = "/nonexistent/libcudnn.so.9", b = "/nonexistent/libcudnn.so";
  std::string reason = dlopen_error(a);
  CHECK(error_of<Error>([&] { load_cudnn({a}); }) ==
        "cuDNN unavailable: cannot load " + a + ": " + reason);
  CHECK(error_of<Error>([&] {
          load_cudnn({a, b});
        }) == "cuDNN unavailable: cannot load " + a + ": " + reason + " (nor " + b + ")");
  std::string zlib = zlib_path();
  CHECK(error_of<Error>([&] { load_cudnn({zlib}); }) ==
        "cuDNN unavailable: " + zlib + " has no cudnnCreate");
  CHECK(cudnn_libraries().front() == "libcudnn.so.9");
}

TEST_CASE("cudnn: the installed cuDNN has every declared entry point", "[cuda]") {
  std::string message = error_of<Error>([] { cudnn(); });
  if (message != "<no exception>") {
    WARN("no cuDNN here: " << message);
    CHECK(message.rfind("cuDNN unavailable: cannot load " + cudnn_libraries()[0] + ": ", 0) == 0);
    CHECK(error_of<Error>([] { cudnn(); }) == message);
    return;
  }
  const CudnnApi& api = cudnn();
#define JX_CHECK_BOUND(field, symbol, signature) CHECK(api.field != nullptr);
  JX_CUDNN_FUNCTIONS(JX_CHECK_BOUND)
#undef JX_CHECK_BOUND
  // Naming a status needs no GPU.
  CHECK(describe(api, CUDNN_STATUS_NOT_SUPPORTED) == "CUDNN_STATUS_NOT_SUPPORTED");
  CHECK(error_of<Error>([&] { check(api, CUDNN_STATUS_BAD_PARAM, "cudnnConvolutionForward"); }) ==
        "cuDNN error in cudnnConvolutionForward: CUDNN_STATUS_BAD_PARAM");
}

hlo::DnnConvolution nhwc_convolution() {
  hlo::DnnConvolution c;
  c.features_last = true;
  c.lhs = {8, 6, 10, 12};  // (batch, feature, spatial...)
  c.rhs = {4, 3, 3, 5};
  c.out = {8, 4, 5, 12};
  c.padding = {1, 2};
  c.strides = {2, 1};
  c.rhs_dilation = {1, 1};
  c.groups = 2;
  return c;
}

TEST_CASE("cudnn_convolution_call: dims in cuDNN's order, strides of the layout", "[cuda]") {
  hlo::DnnConvolution conv = nhwc_convolution();
  CudnnConvolutionCall c = cudnn_convolution_call(conv);
  CHECK(c.type == CUDNN_DATA_FLOAT);
  CHECK(c.x_dims == std::vector<int>{8, 6, 10, 12});
  // Stored (batch, height, width, feature): the feature innermost.
  CHECK(c.x_strides == std::vector<int>{10 * 12 * 6, 1, 12 * 6, 6});
  CHECK(c.y_strides == std::vector<int>{5 * 12 * 4, 1, 12 * 4, 4});
  CHECK(c.w_dims == std::vector<int>{4, 3, 3, 5});
  CHECK(c.format == CUDNN_TENSOR_NHWC);
  CHECK(c.padding == std::vector<int>{1, 2});
  CHECK(c.strides == std::vector<int>{2, 1});
  CHECK(c.groups == 2);
  CHECK(c.math == CUDNN_DEFAULT_MATH);

  conv.features_last = false;
  conv.dtype = float64;
  c = cudnn_convolution_call(conv);
  CHECK(c.type == CUDNN_DATA_DOUBLE);
  CHECK(c.x_strides == std::vector<int>{6 * 10 * 12, 10 * 12, 12, 1});
  CHECK(c.format == CUDNN_TENSOR_NCHW);
  CHECK(c.math == CUDNN_FMA_MATH);  // no tensor cores for f64

  conv.dtype = float32;
  conv.precision = hlo::GemmPrecision::kHighest;
  CHECK(cudnn_convolution_call(conv).math == CUDNN_FMA_MATH);

  conv.lhs[0] = std::int64_t{1} << 31;
  CHECK(error_of<Error>([&] { cudnn_convolution_call(conv); }) ==
        "cuDNN convolution: 2147483648 does not fit a 32-bit int");
}

// Small integers: every product and sum is exact in f32.
Array small_integers(const Shape& shape, int seed) {
  std::vector<float> v(static_cast<std::size_t>(shape_size(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7 + seed) % 9) - 4;
  return np::array(v, shape);
}

TEST_CASE("GpuContext::convolve: a convolution through cuDNN equals the CPU's", "[cuda]") {
  if (device_count() == 0 || !gpu_context(0).has_cudnn()) {
    WARN("no GPU with cuDNN: skipped");
    return;
  }
  const Device gpu{Platform::gpu, 0};
  Array x = small_integers({4, 9, 10, 6}, 1), w = small_integers({3, 3, 3, 8}, 2);
  auto f = [](const Array& a, const Array& b) {
    return lax::conv_general_dilated(a, b, {1, 2}, "SAME", {}, {1, 2}, {"NHWC", "HWIO", "NHWC"}, 2,
                                     1, lax::Precision::kHighest);
  };
  std::vector<float> want = jit(f)(x, w).to_vector<float>();
  auto on_gpu = jit(f, {.device = gpu});
  CHECK(on_gpu.lower(x, w).compile().thunk_sequence().find("cudnn convolution") !=
        std::string::npos);
  std::vector<float> got = on_gpu(x, w).to_vector<float>();
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == want[i]);
}

}  // namespace
}  // namespace jx::runtime::cuda
