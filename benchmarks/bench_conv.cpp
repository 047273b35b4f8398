// bench_conv: convolutions in jx against libtorch eager (CPU, channels_last, with whichever
// convolution kernels the installed build has: oneDNN or its own im2col + BLAS) and against the
// machine's GEMM rate (OpenBLAS cblas_sgemm of a large square matrix), all measured in one run:
//   (a) one 3x3 convolution, batch 64, 32x32, 64 -> 64 channels, NHWC, stride 1, SAME: forward,
//       and forward with the gradients of input and kernel (jx: jit of a vjp; libtorch:
//       conv2d and autograd::grad);
//   (b) the fashion_cnn example's train step at batch 128 (conv 32 - pool - conv 64 - pool -
//       dense 128 - dense 10, softmax cross-entropy, Adam), jx's one jit against the same model
//       in libtorch.
// Each case is first checked to compute the same values in both. Reported: median wall ms,
// GFLOP/s (multiply-adds counted as 2), that rate as a share of the GEMM rate, and libtorch's
// time over jx's. Every framework gets the same threads.
// Usage: bench_conv [repetition scale, default 1]. Exits with an error only when the two
// disagree.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <cblas.h>

#include <jx/jx.hpp>

#include "bench_machine.hpp"
#include "bench_stats.hpp"
#include "bench_versus.hpp"

#if JX_HAVE_TORCH
#include <torch/torch.h>
#endif

namespace np = jx::np;
namespace nn = jx::nn;
using jx::Array;

// The fashion_cnn example's model.
struct Cnn {
  nn::Conv conv1, conv2;
  nn::Dense hidden, out;
};
JX_PYTREE(Cnn, conv1, conv2, hidden, out)

namespace {

using bench::Case;
using bench::g_sink;
using bench::uniform;

// (a): the single convolution.
constexpr int kB = 64, kHW = 32, kC = 64, kK = 3;
// (b): the train step.
constexpr int kStepBatch = 128, kClasses = 10, kHidden = 128, kFlat = 7 * 7 * 64;
constexpr double kLr = 1e-3;
constexpr int kGemmN = 2048, kGemmReps = 10;
constexpr double kTolerance = 1e-3;  // relative, jx against libtorch
constexpr int kRounds = 6;

// Multiply-adds of a SAME, stride-1 2-D convolution, times 2.
double conv_flops(double batch, double hw, double in, double out, double k) {
  return 2 * batch * hw * hw * out * in * k * k;
}
const double kConvFlops = conv_flops(kB, kHW, kC, kC, kK);
// A backward pass costs two forwards (input and kernel gradients); conv1 needs no input
// gradient, as its input is the data.
double step_flops() {
  double conv1 = conv_flops(kStepBatch, 28, 1, 32, 3),
         conv2 = conv_flops(kStepBatch, 14, 32, 64, 3);
  double dense = 2.0 * kStepBatch * (kFlat * kHidden + kHidden * kClasses);
  return 3 * (conv1 + conv2 + dense) - conv1;
}

#if JX_HAVE_TORCH
void check(const char* what, double rel) {
  bench::check_agreement("bench_conv", what, rel, kTolerance);
}
#endif

// ---- the host data every framework starts from -------------------------------------------------

struct HostConv {
  std::vector<float> x, w, ct;  // x, ct: NHWC [64, 32, 32, 64]; w: HWIO [3, 3, 64, 64]
};
HostConv make_host_conv() {
  std::mt19937 gen(7);
  HostConv h;
  h.x = uniform(gen, std::size_t(kB) * kHW * kHW * kC, -1, 1);
  h.w = uniform(gen, std::size_t(kK) * kK * kC * kC, -0.05f, 0.05f);
  h.ct = uniform(gen, h.x.size(), -1, 1);
  return h;
}

struct HostStep {
  std::vector<float> w1, b1, w2, b2, w3, b3, w4, b4;  // HWIO kernels, [in, out] dense weights
  std::vector<std::uint8_t> pixels;                   // [128, 784]
  std::vector<std::int32_t> labels;                   // [128]
};
HostStep make_host_step() {
  std::mt19937 gen(11);
  HostStep h;
  auto he = [&](std::size_t n, double fan_in) {
    float limit = static_cast<float>(std::sqrt(6 / fan_in));
    return uniform(gen, n, -limit, limit);
  };
  h.w1 = he(3 * 3 * 1 * 32, 9), h.b1 = uniform(gen, 32, -0.1f, 0.1f);
  h.w2 = he(3 * 3 * 32 * 64, 9 * 32), h.b2 = uniform(gen, 64, -0.1f, 0.1f);
  h.w3 = he(std::size_t(kFlat) * kHidden, kFlat), h.b3 = uniform(gen, kHidden, -0.1f, 0.1f);
  h.w4 = he(std::size_t(kHidden) * kClasses, kHidden), h.b4 = uniform(gen, kClasses, -0.1f, 0.1f);
  std::uniform_int_distribution<int> pixel(0, 255), label(0, kClasses - 1);
  for (int i = 0; i < kStepBatch * 784; ++i)
    h.pixels.push_back(static_cast<std::uint8_t>(pixel(gen)));
  for (int i = 0; i < kStepBatch; ++i) h.labels.push_back(label(gen));
  return h;
}

// ---- jx ----------------------------------------------------------------------------------------

Array conv_nhwc(const Array& x, const Array& w) {
  return jx::lax::conv_general_dilated(x, w, {1, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"});
}

// The example's network, as examples/fashion_cnn.cpp has it.
Array logits(const Cnn& p, const Array& pixels) {
  Array x = np::reshape(pixels.astype(jx::float32) / 255.0, {pixels.shape()[0], 28, 28, 1});
  x = nn::max_pool(nn::relu(nn::conv(p.conv1, x)), {2, 2}, {2, 2});
  x = nn::max_pool(nn::relu(nn::conv(p.conv2, x)), {2, 2}, {2, 2});
  x = np::reshape(x, {x.shape()[0], kFlat});
  x = nn::relu(np::matmul(x, p.hidden.w) + p.hidden.b);
  return np::matmul(x, p.out.w) + p.out.b;
}

Array loss(const Cnn& p, const Array& pixels, const Array& labels) {
  return np::mean(nn::softmax_cross_entropy(logits(p, pixels), labels));
}

Cnn jx_model(const HostStep& h) {
  return {nn::Conv{np::array(h.w1, {3, 3, 1, 32}), np::array(h.b1)},
          nn::Conv{np::array(h.w2, {3, 3, 32, 64}), np::array(h.b2)},
          nn::Dense{np::array(h.w3, {kFlat, kHidden}), np::array(h.b3)},
          nn::Dense{np::array(h.w4, {kHidden, kClasses}), np::array(h.b4)}};
}

using JxStep = bench::JxAdamStep<Cnn, loss>;

// ---- libtorch ----------------------------------------------------------------------------------

#if JX_HAVE_TORCH
// A [rows..., in, out] (HWIO) host kernel as libtorch's OIHW, stored channels_last.
torch::Tensor oihw(const std::vector<float>& hwio, int k, int in, int out) {
  auto t = torch::from_blob(const_cast<float*>(hwio.data()), {k, k, in, out}, torch::kFloat32);
  return t.permute({3, 2, 0, 1}).contiguous(torch::MemoryFormat::ChannelsLast);
}
// An NHWC host array as libtorch's NCHW, stored channels_last (the same bytes).
torch::Tensor nchw(const std::vector<float>& nhwc, int n, int hw, int c) {
  return torch::from_blob(const_cast<float*>(nhwc.data()), {n, hw, hw, c}, torch::kFloat32)
      .permute({0, 3, 1, 2})
      .clone(torch::MemoryFormat::ChannelsLast);
}
// NCHW (channels_last) back to NHWC host order.
std::vector<float> nhwc_values(const torch::Tensor& t) {
  torch::Tensor c = t.permute({0, 2, 3, 1}).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

struct TorchCnnImpl : torch::nn::Module {
  TorchCnnImpl()
      : conv1(register_module("conv1",
                              torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 32, 3).padding(1)))),
        conv2(register_module("conv2",
                              torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 64, 3).padding(1)))),
        hidden(register_module("hidden", torch::nn::Linear(kFlat, kHidden))),
        out(register_module("out", torch::nn::Linear(kHidden, kClasses))) {}
  // Pixels uint8 [batch, 784] → logits; flattened in NHWC order, as jx's model.
  torch::Tensor forward(const torch::Tensor& pixels) {
    auto x = (pixels.to(torch::kFloat32) / 255.0)
                 .reshape({pixels.size(0), 1, 28, 28})
                 .contiguous(torch::MemoryFormat::ChannelsLast);
    x = torch::max_pool2d(torch::relu(conv1->forward(x)), 2);
    x = torch::max_pool2d(torch::relu(conv2->forward(x)), 2);
    x = x.permute({0, 2, 3, 1}).reshape({x.size(0), kFlat});
    return out->forward(torch::relu(hidden->forward(x)));
  }
  torch::nn::Conv2d conv1, conv2;
  torch::nn::Linear hidden, out;
};

class TorchStep {
 public:
  explicit TorchStep(const HostStep& h)
      : model_(std::make_shared<TorchCnnImpl>()),
        opt_(model_->parameters(), torch::optim::AdamOptions(kLr)) {
    torch::NoGradGuard no_grad;
    // The kernels stored channels_last, as the activations are (Module::to takes no layout).
    for (torch::nn::Conv2d* c : {&model_->conv1, &model_->conv2})
      (*c)->weight.set_data((*c)->weight.contiguous(torch::MemoryFormat::ChannelsLast));
    model_->conv1->weight.copy_(oihw(h.w1, 3, 1, 32));
    model_->conv1->bias.copy_(vec(h.b1));
    model_->conv2->weight.copy_(oihw(h.w2, 3, 32, 64));
    model_->conv2->bias.copy_(vec(h.b2));
    model_->hidden->weight.copy_(matrix(h.w3, kFlat, kHidden).t());
    model_->hidden->bias.copy_(vec(h.b3));
    model_->out->weight.copy_(matrix(h.w4, kHidden, kClasses).t());
    model_->out->bias.copy_(vec(h.b4));
    x_ = torch::from_blob(const_cast<std::uint8_t*>(h.pixels.data()), {kStepBatch, 784},
                          torch::kUInt8)
             .clone();
    y_ = torch::from_blob(const_cast<std::int32_t*>(h.labels.data()), {kStepBatch}, torch::kInt32)
             .to(torch::kLong);
  }
  double step() {
    opt_.zero_grad();
    torch::Tensor l = torch::nn::functional::cross_entropy(model_->forward(x_), y_);
    l.backward();
    opt_.step();
    return l.item<double>();
  }

 private:
  static torch::Tensor vec(const std::vector<float>& v) {
    return torch::from_blob(const_cast<float*>(v.data()), {std::int64_t(v.size())},
                            torch::kFloat32);
  }
  static torch::Tensor matrix(const std::vector<float>& v, int rows, int cols) {
    return torch::from_blob(const_cast<float*>(v.data()), {rows, cols}, torch::kFloat32);
  }
  std::shared_ptr<TorchCnnImpl> model_;
  torch::optim::Adam opt_;
  torch::Tensor x_, y_;
};
#endif

}  // namespace

int main(int argc, char** argv) {
  const int scale = argc > 1 ? std::max(1, std::atoi(argv[1])) : 1;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf(
      "jx bench_conv: (a) 3x3 conv, batch %d, %dx%d, %d -> %d channels, NHWC, stride 1, "
      "SAME; (b) the fashion_cnn train step, batch %d, Adam; f32\n",
      kB, kHW, kHW, kC, kC, kStepBatch);
  bench::share_threads();
  std::printf(
      "wall ms: median over >= %d calls of each case, each framework's cases "
      "interleaved in %d turns of >= %.1f s in all (x%d), the frameworks alternating\n\n",
      bench::kMinReps, kRounds, bench::kMinMeasureMs / 1e3, scale);

  const double gemm = bench::gemm_gflops(kGemmN, kGemmReps);

  // ---- (a) one convolution ----
  const HostConv hc = make_host_conv();
  Array x = np::array(hc.x, {kB, kHW, kHW, kC}), w = np::array(hc.w, {kK, kK, kC, kC});
  Array ct = np::array(hc.ct, {kB, kHW, kHW, kC});
  auto jx_forward = jx::jit(conv_nhwc, {.name = "conv"});
  auto jx_backward = jx::jit(
      [](const Array& a, const Array& k, const Array& c) {
        auto [y, back] = jx::vjp(conv_nhwc, a, k);
        auto [da, dk] = back(c);
        return std::tuple{y, da, dk};
      },
      {.name = "conv_vjp"});
  std::vector<std::vector<Case>> conv_groups = {
      {{"jx: jit(conv)", kConvFlops,
        [&] { g_sink = double(jx_forward(x, w).block_until_ready().size()); }},
       {"jx: jit(conv + vjp: input and kernel gradients)", 3 * kConvFlops,
        [&] { g_sink = double(std::get<2>(jx_backward(x, w, ct)).block_until_ready().size()); }}}};
#if JX_HAVE_TORCH
  torch::Tensor tx = nchw(hc.x, kB, kHW, kC), tw = oihw(hc.w, kK, kC, kC);
  torch::Tensor tct = nchw(hc.ct, kB, kHW, kC);
  torch::Tensor tx_grad = tx.clone(torch::MemoryFormat::ChannelsLast).requires_grad_(true);
  torch::Tensor tw_grad = tw.clone(torch::MemoryFormat::ChannelsLast).requires_grad_(true);
  auto torch_forward = [&] {
    torch::NoGradGuard no_grad;
    return torch::conv2d(tx, tw, {}, 1, 1);
  };
  auto torch_backward = [&] {
    torch::Tensor y = torch::conv2d(tx_grad, tw_grad, {}, 1, 1);
    auto g = torch::autograd::grad({y}, {tx_grad, tw_grad}, {tct});
    return std::tuple{y.detach(), g[0], g[1]};
  };
  std::printf("Correctness (untimed): jx against libtorch\n");
  check("(a) forward",
        bench::max_rel_diff(jx_forward(x, w).to_vector<float>(), nhwc_values(torch_forward())));
  {
    auto [y, dx, dw] = jx_backward(x, w, ct);
    auto [ty, tdx, tdw] = torch_backward();
    check("(a) input gradient", bench::max_rel_diff(dx.to_vector<float>(), nhwc_values(tdx)));
    torch::Tensor tdw_hwio = tdw.permute({2, 3, 1, 0}).contiguous();
    check("(a) kernel gradient",
          bench::max_rel_diff(dw.to_vector<float>(),
                              std::vector<float>(tdw_hwio.data_ptr<float>(),
                                                 tdw_hwio.data_ptr<float>() + tdw_hwio.numel())));
  }
  conv_groups.push_back({{"libtorch: conv2d, channels_last", kConvFlops,
                          [&] { g_sink = double(torch_forward().numel()); }},
                         {"libtorch: conv2d + autograd::grad (input, kernel)", 3 * kConvFlops,
                          [&] { g_sink = double(std::get<2>(torch_backward()).numel()); }}});
#endif

  // ---- (b) the train step ----
  const HostStep hs = make_host_step();
  JxStep jxs(jx_model(hs), np::array(hs.pixels, {kStepBatch, 784}), np::array(hs.labels), kLr);
#if JX_HAVE_TORCH
  TorchStep tos(hs);
  double worst = bench::loss_agreement(jxs, tos, 3);
  check("(b) train step: losses of 3 steps from the same start", worst);
  std::printf("\n");
#endif
  std::vector<std::vector<Case>> step_groups = {{{"jx: jit(value_and_grad + adam + apply_updates)",
                                                  step_flops(), [&] { g_sink = jxs.step(); }}}};
#if JX_HAVE_TORCH
  step_groups.push_back({{"libtorch: zero_grad, forward, loss, backward, Adam", step_flops(),
                          [&] { g_sink = tos.step(); }}});
#endif

  auto conv_t = bench::time_rotation(conv_groups, scale, kRounds);
  std::printf("(a) 3x3 conv, %.2f GFLOP forward, %.2f with both gradients\n", kConvFlops / 1e9,
              3 * kConvFlops / 1e9);
  for (std::size_t g = 0; g < conv_groups.size(); ++g)
    for (std::size_t c = 0; c < conv_groups[g].size(); ++c)
      bench::print_row(conv_groups[g][c], conv_t[g][c], gemm);
  auto step_t = bench::time_rotation(step_groups, scale, kRounds);
  std::printf("(b) fashion_cnn train step, batch %d, %.2f GFLOP\n", kStepBatch, step_flops() / 1e9);
  for (std::size_t g = 0; g < step_groups.size(); ++g)
    bench::print_row(step_groups[g][0], step_t[g][0], gemm);

  std::printf("\nRatios: libtorch's time / jx's (above 1: jx is faster)\n");
#if JX_HAVE_TORCH
  bench::print_ratio("(a) forward", conv_t[1][0], conv_t[0][0]);
  bench::print_ratio("(a) forward + both gradients", conv_t[1][1], conv_t[0][1]);
  bench::print_ratio("(b) train step", step_t[1][0], step_t[0][0]);
#else
  std::printf("  libtorch not installed: no ratios\n");
#endif
  std::printf("  load average %s\n", bench::load_average().c_str());
  return 0;
}
