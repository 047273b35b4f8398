// GPU benchmarks: each case is timed interleaved with its reference, in the same run on the same
// GPU, and reported as a ratio (reference / jx: 1 is as fast as the reference):
//   gelu over 256M float32          vs a device-to-device copy of the same bytes   (goal >= 0.9)
//   dense relu(x @ W + b) at 4096   vs the cuBLAS GEMM alone, at the same precision (goal >= 0.95)
//   x @ W, bf16 at 8192 into f32    vs the cuBLAS bf16 GEMM alone                  (goal >= 0.8)
//   a bf16 elementwise chain, 16M   vs a device copy of the same bytes
//   cumsum over f32[16M]            vs a device copy of the same bytes
//   an embedding lookup (4096 of 50 000 rows x 512 f32) and its gradient (scatter-add into a zero
//   table)                          vs device copies of the bytes they must move
//   a 3x3 conv, NHWC, batch 64, 32x32, 64 -> 64 channels, forward and forward + both gradients:
//                                   GFLOP/s, and the peers' times
//   an MLP train step (784-512-512-10, batch 1024, Adam): ms per step, with and without CUDA-graph
//   replay (--gpu_graphs)
// Inputs are made on the GPU by jitted programs. With --jax_ms=case:ms,... and --torch_ms=...
// (benchmarks/peers.py prints them, measured on the same machine) it prints each peer's
// time over jx's as well. --only=GROUP runs one group: gelu, dense, bf16_gemm, conv, memory, step.
// Without a GPU it says so and measures nothing.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <jx/jx.hpp>

#include "bench_peers.hpp"
#include "bench_stats.hpp"
#include "core/array_impl.hpp"
#include "hlo/gemm.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/driver.hpp"

namespace {

using jx::Array;
namespace np = jx::np;
namespace nn = jx::nn;
using bench::PeerTimes;
using bench::print_peers;
using jx::runtime::cuda::GpuContext;

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
  print_peers(peers, "gelu", jx_ms);
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
  if (highest) print_peers(peers, "dense", jx_ms);
}

// A bf16 product accumulated in f32 (preferred_element_type, the mixed-precision layer's form)
// against the same cuBLAS GEMM of bf16 operands alone.
void bf16_gemm_vs_cublas(const jx::Device& gpu, GpuContext& ctx,
                         const std::vector<PeerTimes>& peers) {
  const std::int64_t d = 8192;
  Array x = normal_on(gpu, 4, {d, d}).astype(jx::bfloat16);
  Array w = normal_on(gpu, 5, {d, d}).astype(jx::bfloat16);
  auto product = jx::jit([](const Array& a, const Array& m) {
    return jx::lax::dot_general(a, m, {{1}, {0}, {}, {}}, jx::float32);
  });
  jx::runtime::cuda::DeviceBuffer out(ctx, static_cast<std::size_t>(d * d) * 4);
  jx::hlo::GemmShape shape{
      .dtype = jx::float32, .operand_dtype = jx::bfloat16, .m = d, .n = d, .k = d};
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
  print_peers(peers, "bf16_gemm", jx_ms);
}

// `f` on the GPU against a device-to-device copy of `bytes` (the bytes f must at least move).
void vs_copy(GpuContext& ctx, const char* what, const char* peer_case, std::size_t bytes,
             const std::function<void()>& f, const std::vector<PeerTimes>& peers) {
  jx::runtime::cuda::DeviceBuffer src(ctx, bytes), dst(ctx, bytes);
  auto [jx_ms, copy_ms] = medians(f, [&] {
    ctx.copy_on_device(dst.data(), src.data(), bytes);
    ctx.synchronize();
  });
  std::printf("%s: jx %.3f ms, device copy of %.1f MB %.3f ms: ratio %.2f\n", what, jx_ms,
              static_cast<double>(bytes) / 1e6, copy_ms, copy_ms / jx_ms);
  print_peers(peers, peer_case, jx_ms);
}

// Memory-bound programs: a bf16 elementwise chain, cumsum, an embedding lookup and its gradient.
void memory_bound(const jx::Device& gpu, GpuContext& ctx, const std::vector<PeerTimes>& peers) {
  const std::int64_t n = 16LL << 20;
  Array h = normal_on(gpu, 7, {n}).astype(jx::bfloat16);
  auto chain = jx::jit([](const Array& v) { return nn::relu(v * 1.5f + 0.25f) * v; });
  vs_copy(
      ctx, "relu(x * 1.5 + 0.25) * x, bf16[16M]", "bf16_chain", static_cast<std::size_t>(n) * 2,
      [&] { chain(h).block_until_ready(); }, peers);

  Array x = normal_on(gpu, 8, {n});
  auto cumsum = jx::jit([](const Array& v) { return np::cumsum(v); });
  vs_copy(
      ctx, "cumsum f32[16M]", "cumsum", static_cast<std::size_t>(n) * 4,
      [&] { cumsum(x).block_until_ready(); }, peers);

  const std::int64_t rows = 50000, width = 512, lookups = 4096;
  Array table = normal_on(gpu, 9, {rows, width});
  Array ids =
      jx::jit([&](const Array& key) { return jx::random::randint(key, {lookups}, 0, rows); },
              {.device = gpu})(jx::random::key(10));
  auto lookup = jx::jit([](const Array& t, const Array& i) { return np::take(t, i, 0); });
  std::size_t rows_bytes = static_cast<std::size_t>(lookups * width) * 4;
  vs_copy(
      ctx, "embedding lookup, 4096 of 50000 rows x 512 f32", "embed", rows_bytes,
      [&] { lookup(table, ids).block_until_ready(); }, peers);
  Array updates = normal_on(gpu, 11, {lookups, width});
  auto scatter = jx::jit([rows](const Array& i, const Array& u) {
    return np::zeros({rows, u.shape()[1]}).at(i).add(u);
  });
  // The floor writes the zero table once and adds the rows into it.
  vs_copy(
      ctx, "its gradient: 4096 rows x 512 scatter-added into a zero f32[50000, 512]", "embed_grad",
      static_cast<std::size_t>(rows * width) * 4 + rows_bytes,
      [&] { scatter(ids, updates).block_until_ready(); }, peers);
}

// A 3x3 convolution, NHWC / HWIO, SAME: forward, and forward with the gradients of the sum with
// respect to the input and the kernel, at the default precision (TF32 on tensor cores, as JAX's
// and PyTorch's defaults).
void conv(const jx::Device& gpu, const std::vector<PeerTimes>& peers) {
  const std::int64_t batch = 64, hw = 32, in = 64, out = 64;
  Array x = normal_on(gpu, 12, {batch, hw, hw, in});
  Array w = normal_on(gpu, 13, {3, 3, in, out}) * 0.05f;
  auto conv_of = [](const Array& xs, const Array& ws) {
    return jx::lax::conv_general_dilated(xs, ws, {1, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"});
  };
  auto forward = jx::jit(conv_of);
  auto both = jx::jit([conv_of](const Array& xs, const Array& ws) {
    return jx::grad<0, 1>(
        [conv_of](const Array& a, const Array& b) { return np::sum(conv_of(a, b)); })(xs, ws);
  });
  double flops = 2.0 * batch * hw * hw * in * out * 9;
  // cuDNN where libcudnn.so.9 loads; else patches and a cuBLAS GEMM.
  bool cudnn =
      forward.lower(x, w).compile().thunk_sequence().find("cudnn convolution") != std::string::npos;
  std::printf("convolutions through %s\n", cudnn ? "cuDNN" : "patches and cuBLAS (no cuDNN)");
  auto time_case = [&](const char* what, const char* peer_case, double case_flops,
                       const std::function<void()>& f) {
    auto samples = bench::sample_interleaved({f}, 1);
    double ms = bench::summarize(samples[0]).median_ms;
    std::printf("%s: jx %.3f ms, %.0f GFLOP/s\n", what, ms, case_flops / (ms * 1e6));
    print_peers(peers, peer_case, ms);
  };
  time_case("conv 3x3 NHWC f32, 64x32x32x64 -> 64, forward", "conv", flops,
            [&] { forward(x, w).block_until_ready(); });
  time_case("  forward + gradients of input and kernel", "conv_grad", 3 * flops, [&] {
    auto [gx, gw] = both(x, w);
    gw.block_until_ready();
  });
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
  print_peers(peers, "step", std::min(plain_ms, graph_ms));
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<PeerTimes> peers = bench::parse_peers(argc, argv);
  std::string only;  // --only=GROUP: gelu, dense, bf16_gemm, conv, memory or step
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--only=", 7) == 0) only = argv[i] + 7;
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
  auto wanted = [&](const char* group) { return only.empty() || only == group; };
  if (wanted("gelu")) gelu_vs_copy(gpu, ctx, peers);
  if (wanted("dense")) {
    dense_vs_cublas(gpu, ctx, jx::lax::Precision::kDefault, peers);
    dense_vs_cublas(gpu, ctx, jx::lax::Precision::kHighest, peers);
  }
  if (wanted("bf16_gemm")) bf16_gemm_vs_cublas(gpu, ctx, peers);
  if (wanted("conv")) conv(gpu, peers);
  if (wanted("memory")) memory_bound(gpu, ctx, peers);
  if (wanted("step")) train_step(gpu, peers);
}
