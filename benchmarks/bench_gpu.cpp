// GPU benchmarks: each case is timed interleaved with its reference, in the same run on the same
// GPU, and reported as a ratio (reference / jx: 1 is as fast as the reference):
//   gelu over 256M float32          vs a device-to-device copy of the same bytes   (goal >= 0.9)
//   dense relu(x @ W + b) at 4096   vs the cuBLAS GEMM alone, at the same precision (goal >= 0.95)
//   an MLP train step (784-512-512-10, batch 1024, Adam): ms per step, with and without CUDA-graph
//   replay (--gpu_graphs)
// Inputs are made on the GPU by jitted programs. With --jax_ms=GELU,DENSE,STEP and
// --torch_ms=GELU,DENSE,STEP (benchmarks/jax_mlp_step.py prints them, measured on the same
// machine; 0 or nothing skips a case) it prints each peer's time over jx's as well.
// Without a GPU it says so and measures nothing.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <jx/jx.hpp>

#include "bench_stats.hpp"
#include "core/array_impl.hpp"
#include "hlo/gemm.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/driver.hpp"

namespace {

using jx::Array;
namespace np = jx::np;
namespace nn = jx::nn;
using jx::runtime::cuda::GpuContext;

// A peer's times for the three cases, in ms (0: not measured).
struct PeerTimes {
  const char* name = "";
  double gelu = 0, dense = 0, step = 0;
};

PeerTimes parse_peer(const char* name, const char* list) {
  PeerTimes t{name};
  double* fields[] = {&t.gelu, &t.dense, &t.step};
  for (double* field : fields) {
    if (!*list) break;
    *field = std::strtod(list, nullptr);
    const char* comma = std::strchr(list, ',');
    if (!comma) break;
    list = comma + 1;
  }
  return t;
}

void print_peers(const std::vector<PeerTimes>& peers, double PeerTimes::*field, double jx_ms) {
  for (const PeerTimes& p : peers)
    if (p.*field > 0)
      std::printf("  %s %.3f ms: %s / jx = %.2f\n", p.name, p.*field, p.name, p.*field / jx_ms);
}

struct Mlp {
  nn::Dense hidden1, hidden2, out;
};
JX_PYTREE(Mlp, hidden1, hidden2, out)

Array loss(const Mlp& p, const Array& x, const Array& y) {
  Array h = nn::relu(np::matmul(x, p.hidden1.w) + p.hidden1.b);
  h = nn::relu(np::matmul(h, p.hidden2.w) + p.hidden2.b);
  return np::mean(nn::softmax_cross_entropy(np::matmul(h, p.out.w) + p.out.b, y));
}

// Medians of `jx_call` and `reference`, sampled in turns.
std::pair<double, double> medians(const std::function<void()>& jx_call,
                                  const std::function<void()>& reference) {
  auto samples = bench::sample_interleaved({jx_call, reference}, 1);
  return {bench::summarize(samples[0]).median_ms, bench::summarize(samples[1]).median_ms};
}

// Standard normal values of `shape` drawn on the GPU.
Array normal_on(const jx::Device& gpu, int seed, const jx::Shape& shape) {
  return jx::jit([shape](const Array& key) { return jx::random::normal(key, shape); },
                 {.device = gpu})(jx::random::key(seed));
}

void gelu_vs_copy(const jx::Device& gpu, GpuContext& ctx, const std::vector<PeerTimes>& peers) {
  const std::int64_t n = 256LL << 20;
  Array x = normal_on(gpu, 0, {n});
  auto gelu = jx::jit([](const Array& v) { return nn::gelu(v); });
  std::size_t bytes = static_cast<std::size_t>(n) * 4;
  jx::runtime::cuda::DeviceBuffer dst(ctx, bytes);
  auto [jx_ms, copy_ms] =
      medians([&] { gelu(x).block_until_ready(); },
              [&] {
                ctx.copy_on_device(dst.data(), x.impl()->storage->data(), bytes);
                ctx.synchronize();
              });
  std::printf("gelu f32[%lld]: jx %.3f ms, device copy %.3f ms: ratio %.2f (goal >= 0.9)\n",
              static_cast<long long>(n), jx_ms, copy_ms, copy_ms / jx_ms);
  print_peers(peers, &PeerTimes::gelu, jx_ms);
}

void dense_vs_cublas(const jx::Device& gpu, GpuContext& ctx, jx::lax::Precision precision,
                     const std::vector<PeerTimes>& peers) {
  const std::int64_t d = 4096;
  Array x = normal_on(gpu, 1, {d, d}), w = normal_on(gpu, 2, {d, d}), b = normal_on(gpu, 3, {d});
  auto dense = jx::jit([precision](const Array& a, const Array& m, const Array& v) {
    return nn::relu(np::matmul(a, m, precision) + v);
  });
  jx::runtime::cuda::DeviceBuffer out(ctx, static_cast<std::size_t>(d * d) * 4);
  bool highest = precision == jx::lax::Precision::kHighest;
  jx::hlo::GemmShape shape{
      .dtype = jx::float32,
      .precision = highest ? jx::hlo::GemmPrecision::kHighest : jx::hlo::GemmPrecision::kDefault,
      .m = d,
      .n = d,
      .k = d};
  auto [jx_ms, gemm_ms] =
      medians([&] { dense(x, w, b).block_until_ready(); },
              [&] {
                ctx.gemm(shape, x.impl()->storage->data(), w.impl()->storage->data(), out.data());
                ctx.synchronize();
              });
  std::printf(
      "relu(x @ W + b) f32[%lld]^2 at precision %s: jx %.3f ms, cuBLAS GEMM alone %.3f "
      "ms: ratio %.2f (goal >= 0.95)\n",
      static_cast<long long>(d), highest ? "highest (f32)" : "default (TF32)", jx_ms, gemm_ms,
      gemm_ms / jx_ms);
  // JAX's and PyTorch's figures are taken at highest (full f32), the one precision both have.
  if (highest) print_peers(peers, &PeerTimes::dense, jx_ms);
}

// A bf16 product accumulated in f32 (preferred_element_type, the mixed-precision layer's form)
// against the same cuBLAS GEMM of bf16 operands alone.
void bf16_gemm_vs_cublas(const jx::Device& gpu, GpuContext& ctx) {
  const std::int64_t d = 8192;
  Array x = normal_on(gpu, 4, {d, d}).astype(jx::bfloat16);
  Array w = normal_on(gpu, 5, {d, d}).astype(jx::bfloat16);
  auto product = jx::jit([](const Array& a, const Array& m) {
    return jx::lax::dot_general(a, m, {{1}, {0}, {}, {}}, jx::float32);
  });
  jx::runtime::cuda::DeviceBuffer out(ctx, static_cast<std::size_t>(d * d) * 4);
  jx::hlo::GemmShape shape{.dtype = jx::float32, .operand_dtype = jx::bfloat16, .m = d, .n = d,
                           .k = d};
  auto [jx_ms, gemm_ms] =
      medians([&] { product(x, w).block_until_ready(); },
              [&] {
                ctx.gemm(shape, x.impl()->storage->data(), w.impl()->storage->data(), out.data());
                ctx.synchronize();
              });
  std::printf(
      "x @ W, bf16[%lld]^2 into f32: jx %.3f ms, cuBLAS bf16 GEMM alone %.3f ms: ratio %.2f "
      "(goal >= 0.8)\n",
      static_cast<long long>(d), jx_ms, gemm_ms, gemm_ms / jx_ms);
}

void train_step(const jx::Device& gpu, const std::vector<PeerTimes>& peers) {
  auto keys = jx::random::split<3>(jx::random::key(4));
  Mlp params{nn::dense_init(keys[0], 784, 512, nn::Init::he_normal),
             nn::dense_init(keys[1], 512, 512, nn::Init::he_normal),
             nn::dense_init(keys[2], 512, 10)};
  params = jx::tree::map([&](const Array& a) { return jx::device_put(a, gpu); }, params);
  Array x = normal_on(gpu, 5, {1024, 784});
  Array y = jx::jit([](const Array& key) { return jx::random::randint(key, {1024}, 0, 10); },
                    {.device = gpu})(jx::random::key(6));
  auto opt = jx::optim::adam(1e-3);
  auto state = opt.init(params);
  auto step =
      jx::jit([&opt](const Mlp& p, const decltype(state)& s, const Array& xs, const Array& ys) {
        auto [value, grads] = jx::value_and_grad(loss)(p, xs, ys);
        auto [updates, new_state] = opt.update(grads, s, p);
        return std::tuple{jx::optim::apply_updates(p, updates), new_state, value};
      });
  std::string thunks = step.lower(params, state, x, y).compile().thunk_sequence();
  int launches = 0;
  for (std::size_t at = 0; (at = thunks.find('\n', at)) != std::string::npos; ++at) ++launches;
  auto run = [&](bool graphs) {
    return [&, graphs] {
      jx::config().gpu_graphs = graphs;
      std::get<2>(step(params, state, x, y)).block_until_ready();
    };
  };
  auto [plain_ms, graph_ms] = medians(run(false), run(true));
  jx::config().gpu_graphs = false;
  std::printf(
      "MLP train step, batch 1024, default precision: %d thunks; %.3f ms, %.3f ms "
      "replayed as a CUDA graph (%.2f us per launch saved)\n",
      launches, plain_ms, graph_ms, 1e3 * (plain_ms - graph_ms) / launches);
  print_peers(peers, &PeerTimes::step, std::min(plain_ms, graph_ms));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<PeerTimes> peers;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--jax_ms=", 9) == 0) peers.push_back(parse_peer("JAX", argv[i] + 9));
    if (std::strncmp(argv[i], "--torch_ms=", 11) == 0)
      peers.push_back(parse_peer("PyTorch", argv[i] + 11));
  }
  if (jx::runtime::cuda::device_count() == 0) {
    try {
      jx::gpu(0);
    } catch (const jx::Error& e) {
      std::printf("bench_gpu: no GPU, nothing measured (%s)\n", e.what());
    }
    return 0;
  }
  jx::Device gpu = jx::gpu(0);
  GpuContext& ctx = jx::runtime::cuda::gpu_context(0);
  std::printf("bench_gpu on %s (sm_%d%d, %d SMs)\n", ctx.name().c_str(),
              ctx.compute_capability_major(), ctx.compute_capability_minor(), ctx.sm_count());
  gelu_vs_copy(gpu, ctx, peers);
  dense_vs_cublas(gpu, ctx, jx::lax::Precision::kDefault, peers);
  dense_vs_cublas(gpu, ctx, jx::lax::Precision::kHighest, peers);
  bf16_gemm_vs_cublas(gpu, ctx);
  train_step(gpu, peers);
}
