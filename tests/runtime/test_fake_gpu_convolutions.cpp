// Convolutions on the GPU backend over the strict fake CUDA (support/fake_cuda.hpp): one in
// cuDNN's layouts is one cuDNN call, whose values the fake computes; others are transposed into
// those layouts; kernel gradients, and every convolution where cuDNN is missing, are patches and
// a cuBLAS GEMM.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <jx/jx.hpp>

#include "support/config_guard.hpp"
#include "support/fake_cuda.hpp"

namespace jx::testing {
namespace {

using runtime::cuda::CUDNN_FMA_MATH;
using runtime::cuda::CUDNN_TENSOR_NCHW;
using runtime::cuda::CUDNN_TENSOR_NHWC;
using runtime::cuda::CUDNN_TENSOR_OP_MATH;

const Device kGpu{Platform::gpu, 3};

void check_close(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(got[i] - want[i]) <= 1e-4f * (1 + std::abs(want[i])));
  }
}

// f(a, b) on the GPU against f(a, b) on the CPU.
void check_gpu_against_cpu(const std::function<Array(const Array&, const Array&)>& f,
                           const Array& a, const Array& b) {
  std::vector<float> want = jit(f)(a, b).to_vector<float>();
  check_close(jit(f, {.device = kGpu})(device_put(a, kGpu), device_put(b, kGpu)).to_vector<float>(),
              want);
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_CASE("fake GPU convolutions: one in cuDNN's layout is one cuDNN call with the CPU's values",
          "[cuda][fake][devices][conv]") {
  FakeCudaGpus gpus;
  Array x = random::normal(random::key(1), {2, 4, 9, 8});  // NCHW
  SECTION("strided, dilated, padded evenly") {
    Array w = random::normal(random::key(2), {6, 4, 3, 3});  // OIHW
    auto f = [](const Array& a, const Array& b) {
      return lax::conv_general_dilated(a, b, {1, 2}, {{1, 1}, {2, 2}}, {}, {1, 2});
    };
    check_gpu_against_cpu(f, x, w);
    CHECK(gpus.fake().launches() == 0);
    REQUIRE(gpus.fake().convolutions().size() == 1);
    ConvolutionRecord c = gpus.fake().convolutions()[0];
    CHECK(c.format == CUDNN_TENSOR_NCHW);
    CHECK(c.x_dims == std::vector<int>{2, 4, 9, 8});
    CHECK(c.w_dims == std::vector<int>{6, 4, 3, 3});
    CHECK(c.y_dims == std::vector<int>{2, 6, 9, 4});
    CHECK(c.groups == 1);
    // The fake ranks first an algorithm needing 1 GiB of workspace, then one on the tensor
    // cores: jx passes over the first and runs the second in the math it was ranked for.
    CHECK(c.algo == 1);
    CHECK(c.math == CUDNN_TENSOR_OP_MATH);
  }
  SECTION("feature groups, at HIGHEST precision") {
    Array w = random::normal(random::key(3), {6, 2, 3, 3});
    auto f = [](const Array& a, const Array& b) {
      return lax::conv_general_dilated(a, b, {1, 1}, {{1, 1}, {1, 1}}, {}, {}, {}, 2, 1,
                                       lax::Precision::kHighest);
    };
    check_gpu_against_cpu(f, x, w);
    REQUIRE(gpus.fake().convolutions().size() == 1);
    CHECK(gpus.fake().convolutions()[0].groups == 2);
    CHECK(gpus.fake().convolutions()[0].math == CUDNN_FMA_MATH);
  }
  SECTION("features last, the kernel as (out, spatial..., in)") {
    Array xh = random::normal(random::key(4), {2, 11, 10, 5});  // NHWC
    Array w = random::normal(random::key(5), {8, 3, 3, 5});     // OHWI
    auto f = [](const Array& a, const Array& b) {
      return lax::conv_general_dilated(a, b, {2, 2}, "VALID", {}, {}, {"NHWC", "OHWI", "NHWC"});
    };
    check_gpu_against_cpu(f, xh, w);
    CHECK(gpus.fake().launches() == 0);
    REQUIRE(gpus.fake().convolutions().size() == 1);
    CHECK(gpus.fake().convolutions()[0].format == CUDNN_TENSOR_NHWC);
    CHECK(gpus.fake().convolutions()[0].x_dims == std::vector<int>{2, 5, 11, 10});
    CHECK(gpus.fake().convolutions()[0].y_dims == std::vector<int>{2, 8, 5, 4});
  }
  gpus.destroy_contexts();
  CHECK(gpus.fake().leaks().empty());
}

TEST_CASE("fake GPU convolutions: --gpu_graphs replays a recorded cuDNN call with its values",
          "[cuda][fake][devices][conv]") {
  ConfigGuard guard;
  config().gpu_graphs = true;
  FakeCudaGpus gpus;
  Array x = random::normal(random::key(1), {2, 4, 9, 8});
  Array w = random::normal(random::key(2), {6, 4, 3, 3});
  auto conv = [](const Array& a, const Array& b) { return lax::conv(a, b, {1, 1}, "SAME"); };
  std::vector<float> want = jit(conv)(x, w).to_vector<float>();
  auto f = jit(conv);
  Array xg = device_put(x, kGpu), wg = device_put(w, kGpu);
  // Each call's output is dropped before the next, which then gets the same buffers: seen once,
  // then captured, then replayed.
  for (int call = 0; call < 3; ++call) {
    INFO("call " << call);
    check_close(f(xg, wg).to_vector<float>(), want);
  }
  CHECK(gpus.fake().graph_launches() == 2);
  CHECK(gpus.fake().launches() == 0);
  CHECK(gpus.fake().convolutions().size() == 2);  // once run, once captured
}

TEST_CASE("fake GPU convolutions: other layouts are transposed, uneven padding is a pad",
          "[cuda][fake][devices][conv]") {
  FakeCudaGpus gpus;
  Array x = random::normal(random::key(1), {2, 8, 8, 16});   // NHWC
  Array w = random::normal(random::key(2), {2, 2, 16, 32});  // HWIO: transposed to OHWI
  auto f = jit(
      [](const Array& a, const Array& b) {
        return lax::conv_general_dilated(a, b, {1, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"});
      },
      {.device = kGpu});
  std::string thunks = f.lower(device_put(x, kGpu), device_put(w, kGpu)).compile().thunk_sequence();
  INFO(thunks);
  CHECK(count(thunks, "cudnn convolution") == 1);
  CHECK(count(thunks, "NHWC lhs=[2, 16, 9, 9] rhs=[32, 16, 2, 2] out=[2, 32, 8, 8] pad=0,0") == 1);
  CHECK(count(thunks, "cublas gemm") == 0);
  CHECK(count(thunks, "launch ") == 1);  // one kernel transposes w and pads x by (0, 1)
  gpus.destroy_contexts();
  CHECK(gpus.fake().leaks().empty());
}

TEST_CASE("fake GPU convolutions: an input gradient is cuDNN's, a kernel gradient a GEMM",
          "[cuda][fake][devices][conv]") {
  FakeCudaGpus gpus;
  Array x = random::normal(random::key(1), {4, 8, 8, 16});
  Array w = random::normal(random::key(2), {3, 3, 16, 16});
  auto loss = [](const Array& a, const Array& b) {
    return np::sum(
        lax::conv_general_dilated(a, b, {1, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"}));
  };
  auto dx = jit(grad(loss, 0), {.device = kGpu});
  auto dw = jit(grad(loss, 1), {.device = kGpu});
  std::string input = dx.lower(x, w).compile().thunk_sequence();
  std::string kernel = dw.lower(x, w).compile().thunk_sequence();
  INFO(input << "\n" << kernel);
  CHECK(count(input, "cudnn convolution") == 1);
  CHECK(count(kernel, "cudnn convolution") == 0);
  CHECK(count(kernel, "cublas gemm") == 1);
  gpus.destroy_contexts();
}

TEST_CASE("fake GPU convolutions: without cuDNN a convolution is patches and a cuBLAS GEMM",
          "[cuda][fake][devices][conv]") {
  FakeCudaGpus gpus;
  gpus.fake().remove_cudnn();
  Array x = random::normal(random::key(1), {4, 16, 9, 8});
  Array w = random::normal(random::key(2), {16, 16, 3, 3});
  auto f = jit(
      [](const Array& a, const Array& b) {
        return lax::conv(a, b, {1, 1}, "SAME");
      },
      {.device = kGpu});
  CHECK(f(device_put(x, kGpu), device_put(w, kGpu)).shape() == Shape{4, 16, 9, 8});
  CHECK(gpus.fake().convolutions().empty());
  CHECK(gpus.fake().gemms().size() == 1);
  CHECK(count(f.lower(x, w).compile().thunk_sequence(), "cudnn") == 0);
  gpus.destroy_contexts();
  CHECK(gpus.fake().leaks().empty());
}

}  // namespace
}  // namespace jx::testing
