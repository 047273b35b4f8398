// bench_transformer: a transformer block's train step in jx against libtorch eager (CPU) and the
// machine's GEMM rate (OpenBLAS cblas_sgemm of a large square matrix), in one run: token
// embeddings, layer norm, causal self-attention of 4 heads, layer norm, a gelu MLP 4x wide, both
// with residuals, the vocabulary's logits, softmax cross-entropy, Adam; 16 sequences of 128
// tokens, width 256, 1000 tokens. jx's step is one jit (value_and_grad, the optimizer's update),
// libtorch's the usual zero_grad, forward, backward, step. The two are first checked to give the
// same losses over 3 steps from the same start. Reported: median wall ms, GFLOP/s (multiply-adds
// counted as 2; a backward pass as two forwards), that rate as a share of the GEMM rate, and
// libtorch's time over jx's. Every framework gets the same threads.
// Usage: bench_transformer [repetition scale, default 1]. Exits with an error only when the two
// disagree.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <tuple>
#include <vector>

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

struct Block {
  nn::LayerNorm ln1, ln2;
  Array wqkv, wo, w1, b1, w2, b2;
};
JX_PYTREE(Block, ln1, ln2, wqkv, wo, w1, b1, w2, b2)
struct Transformer {
  Array embedding;
  Block block;
  Array unembedding;
};
JX_PYTREE(Transformer, embedding, block, unembedding)

namespace {

using bench::Case;
using bench::g_sink;

constexpr int kBatch = 16, kTokens = 128, kWidth = 256, kHeads = 4, kVocab = 1000;
constexpr int kHeadWidth = kWidth / kHeads;
constexpr double kLr = 1e-3, kEpsilon = 1e-6;  // Adam's rate; layer norm's epsilon (flax's)
constexpr int kGemmN = 2048, kGemmReps = 10, kRounds = 6;
constexpr double kTolerance = 1e-3;  // relative, jx's losses against libtorch's

// Multiply-adds of one forward pass, times 2, times 3 for the step (the backward pass costs two
// forwards: both operands' gradients of every product).
double step_flops() {
  double rows = double(kBatch) * kTokens;
  double dense = rows * (kWidth * 3.0 * kWidth + kWidth * kWidth + 2 * kWidth * 4.0 * kWidth +
                         kWidth * double(kVocab));
  double attention = 2 * double(kBatch) * kHeads * kTokens * kTokens * kHeadWidth;
  return 3 * 2 * (dense + attention);
}

// ---- the host data every framework starts from -------------------------------------------------

struct HostModel {
  std::vector<float> embedding, wqkv, wo, w1, b1, w2, b2, unembedding;  // [in, out] weights
  std::vector<std::int32_t> tokens, labels;                             // [batch, tokens]
};
HostModel make_host_model() {
  std::mt19937 gen(13);
  auto scaled = [&](std::size_t n, double fan_in) {
    auto limit = static_cast<float>(std::sqrt(3 / fan_in));
    return bench::uniform(gen, n, -limit, limit);
  };
  HostModel h;
  h.embedding = bench::uniform(gen, std::size_t(kVocab) * kWidth, -0.05f, 0.05f);
  h.wqkv = scaled(std::size_t(kWidth) * 3 * kWidth, kWidth);
  h.wo = scaled(std::size_t(kWidth) * kWidth, kWidth);
  h.w1 = scaled(std::size_t(kWidth) * 4 * kWidth, kWidth);
  h.b1 = bench::uniform(gen, 4 * kWidth, -0.05f, 0.05f);
  h.w2 = scaled(std::size_t(4) * kWidth * kWidth, 4 * kWidth);
  h.b2 = bench::uniform(gen, kWidth, -0.05f, 0.05f);
  h.unembedding = scaled(std::size_t(kWidth) * kVocab, kWidth);
  std::uniform_int_distribution<int> token(0, kVocab - 1);
  for (int i = 0; i < kBatch * kTokens; ++i) h.tokens.push_back(token(gen));
  for (int i = 0; i < kBatch * kTokens; ++i) h.labels.push_back(token(gen));
  return h;
}

// ---- jx ----------------------------------------------------------------------------------------

// q, k or v of every head, [batch, tokens, heads, head width], from the projections.
Array head_part(const Array& qkv, int part) {
  Array x = qkv[{jx::slice(), jx::slice(), jx::slice(part * kWidth, (part + 1) * kWidth)}];
  return np::reshape(x, {kBatch, kTokens, kHeads, kHeadWidth});
}

Array logits(const Transformer& m, const Array& tokens) {
  const Block& b = m.block;
  Array x = np::take(m.embedding, tokens, 0);  // [batch, tokens, width]
  Array qkv = np::matmul(nn::layer_norm(b.ln1, x, kEpsilon), b.wqkv);
  Array q = head_part(qkv, 0), k = head_part(qkv, 1), v = head_part(qkv, 2);
  Array scores = np::einsum("bthd,bshd->bhts", {q, k}) / std::sqrt(float(kHeadWidth));
  Array causal = np::tril(np::ones({kTokens, kTokens}));
  Array weights = nn::softmax(np::where(causal > 0.0f, scores, -1e9f), -1);
  Array heads = np::einsum("bhts,bshd->bthd", {weights, v});
  x = x + np::matmul(np::reshape(heads, {kBatch, kTokens, kWidth}), b.wo);
  Array h = nn::layer_norm(b.ln2, x, kEpsilon);
  x = x + np::matmul(nn::gelu(np::matmul(h, b.w1) + b.b1), b.w2) + b.b2;
  return np::reshape(np::matmul(x, m.unembedding), {kBatch * kTokens, kVocab});
}

Array loss(const Transformer& m, const Array& tokens, const Array& labels) {
  return np::mean(nn::softmax_cross_entropy(logits(m, tokens), np::reshape(labels, {-1})));
}

Transformer jx_model(const HostModel& h) {
  return {np::array(h.embedding, {kVocab, kWidth}),
          Block{nn::layer_norm_init(kWidth), nn::layer_norm_init(kWidth),
                np::array(h.wqkv, {kWidth, 3 * kWidth}), np::array(h.wo, {kWidth, kWidth}),
                np::array(h.w1, {kWidth, 4 * kWidth}), np::array(h.b1),
                np::array(h.w2, {4 * kWidth, kWidth}), np::array(h.b2)},
          np::array(h.unembedding, {kWidth, kVocab})};
}

using JxStep = bench::JxAdamStep<Transformer, loss>;

// ---- libtorch ----------------------------------------------------------------------------------

#if JX_HAVE_TORCH
torch::Tensor parameter(const std::vector<float>& v, std::vector<std::int64_t> shape) {
  return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat32)
      .clone()
      .requires_grad_(true);
}

class TorchStep {
 public:
  explicit TorchStep(const HostModel& h)
      : embedding_(parameter(h.embedding, {kVocab, kWidth})),
        ln1_scale_(torch::ones({kWidth}).requires_grad_(true)),
        ln1_bias_(torch::zeros({kWidth}).requires_grad_(true)),
        ln2_scale_(torch::ones({kWidth}).requires_grad_(true)),
        ln2_bias_(torch::zeros({kWidth}).requires_grad_(true)),
        wqkv_(parameter(h.wqkv, {kWidth, 3 * kWidth})),
        wo_(parameter(h.wo, {kWidth, kWidth})),
        w1_(parameter(h.w1, {kWidth, 4 * kWidth})),
        b1_(parameter(h.b1, {4 * kWidth})),
        w2_(parameter(h.w2, {4 * kWidth, kWidth})),
        b2_(parameter(h.b2, {kWidth})),
        unembedding_(parameter(h.unembedding, {kWidth, kVocab})),
        opt_({embedding_, ln1_scale_, ln1_bias_, ln2_scale_, ln2_bias_, wqkv_, wo_, w1_, b1_, w2_,
              b2_, unembedding_},
             torch::optim::AdamOptions(kLr)) {
    auto ints = [](const std::vector<std::int32_t>& v) {
      return torch::from_blob(const_cast<std::int32_t*>(v.data()), {std::int64_t(v.size())},
                              torch::kInt32)
          .to(torch::kLong);
    };
    tokens_ = ints(h.tokens), labels_ = ints(h.labels);
    causal_ = torch::ones({kTokens, kTokens}).tril().to(torch::kBool);
  }

  double step() {
    opt_.zero_grad();
    torch::Tensor l = torch::nn::functional::cross_entropy(forward(), labels_);
    l.backward();
    opt_.step();
    return l.item<double>();
  }

 private:
  torch::Tensor forward() {
    namespace F = torch::nn::functional;
    auto norm = [](const torch::Tensor& x, const torch::Tensor& scale, const torch::Tensor& bias) {
      return torch::layer_norm(x, {kWidth}, scale, bias, kEpsilon);
    };
    torch::Tensor x = embedding_.index_select(0, tokens_).view({kBatch, kTokens, kWidth});
    torch::Tensor qkv = norm(x, ln1_scale_, ln1_bias_).matmul(wqkv_);
    auto head = [&](int part) {
      return qkv.narrow(2, part * kWidth, kWidth)
          .view({kBatch, kTokens, kHeads, kHeadWidth})
          .permute({0, 2, 1, 3});
    };
    torch::Tensor q = head(0), k = head(1), v = head(2);
    torch::Tensor scores = q.matmul(k.transpose(-1, -2)) / std::sqrt(float(kHeadWidth));
    torch::Tensor weights = torch::softmax(scores.masked_fill(causal_.logical_not(), -1e9), -1);
    torch::Tensor heads =
        weights.matmul(v).permute({0, 2, 1, 3}).reshape({kBatch, kTokens, kWidth});
    x = x + heads.matmul(wo_);
    torch::Tensor h = norm(x, ln2_scale_, ln2_bias_);
    x = x + torch::gelu(h.matmul(w1_) + b1_, "tanh").matmul(w2_) + b2_;
    return x.matmul(unembedding_).view({kBatch * kTokens, kVocab});
  }

  torch::Tensor embedding_, ln1_scale_, ln1_bias_, ln2_scale_, ln2_bias_, wqkv_, wo_, w1_, b1_, w2_,
      b2_, unembedding_;
  torch::optim::Adam opt_;
  torch::Tensor tokens_, labels_, causal_;
};
#endif

}  // namespace

int main(int argc, char** argv) {
  const int scale = argc > 1 ? std::max(1, std::atoi(argv[1])) : 1;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf(
      "jx bench_transformer: a transformer block's train step, %d sequences of %d tokens, width "
      "%d, %d heads, MLP %d wide, %d tokens in the vocabulary, Adam; f32\n",
      kBatch, kTokens, kWidth, kHeads, 4 * kWidth, kVocab);
  bench::share_threads();
  std::printf(
      "wall ms: median over >= %d steps of each framework, in %d turns of >= %.1f s in all "
      "(x%d), the frameworks alternating\n\n",
      bench::kMinReps, kRounds, bench::kMinMeasureMs / 1e3, scale);

  const double gemm = bench::gemm_gflops(kGemmN, kGemmReps);

  const HostModel h = make_host_model();
  JxStep jxs(jx_model(h), np::array(h.tokens, {kBatch, kTokens}),
             np::array(h.labels, {kBatch, kTokens}), kLr);
  std::vector<std::vector<Case>> groups = {{{"jx: jit(value_and_grad + adam + apply_updates)",
                                             step_flops(), [&] { g_sink = jxs.step(); }}}};
#if JX_HAVE_TORCH
  TorchStep tos(h);
  double worst = bench::loss_agreement(jxs, tos, 3);
  std::printf("Correctness (untimed): jx against libtorch\n");
  bench::check_agreement("bench_transformer", "losses of 3 steps from the same start", worst,
                         kTolerance);
  std::printf("\n");
  groups.push_back({{"libtorch: zero_grad, forward, loss, backward, Adam", step_flops(),
                     [&] { g_sink = tos.step(); }}});
#endif

  auto t = bench::time_rotation(groups, scale, kRounds);
  std::printf("train step, %.2f GFLOP\n", step_flops() / 1e9);
  for (std::size_t g = 0; g < groups.size(); ++g) bench::print_row(groups[g][0], t[g][0], gemm);
  std::printf("\nRatio: libtorch's time / jx's (above 1: jx is faster)\n");
#if JX_HAVE_TORCH
  bench::print_ratio("train step", t[1][0], t[0][0]);
#else
  std::printf("  libtorch not installed: no ratio\n");
#endif
  std::printf("  load average %s\n", bench::load_average().c_str());
  return 0;
}
