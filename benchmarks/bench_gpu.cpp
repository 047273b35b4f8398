// GPU benchmarks, each a ratio against a reference timed in the same run on the same GPU:
//   fused gelu over 256M float32  vs a device-to-device copy of the same bytes (goal >= 0.85)
//   dense relu(x @ W + b) at 4096 vs the cuBLAS GEMM alone                   (goal >= 0.95)
//   an MLP train step (784-512-512-10, batch 1024, Adam): ms per step; with --jax_ms=M (from
//   benchmarks/jax_mlp_step.py on the same machine) also JAX's time over jx's
//   kernel launches per step, and the step with and without CUDA-graph replay (--gpu_graphs)
// Without a GPU it says so and measures nothing.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

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

struct Mlp {
  nn::Dense hidden1, hidden2, out;
};
JX_PYTREE(Mlp, hidden1, hidden2, out)

Array loss(const Mlp& p, const Array& x, const Array& y) {
  Array h = nn::relu(np::matmul(x, p.hidden1.w) + p.hidden1.b);
  h = nn::relu(np::matmul(h, p.hidden2.w) + p.hidden2.b);
  return np::mean(nn::softmax_cross_entropy(np::matmul(h, p.out.w) + p.out.b, y));
}

double median_ms(const std::function<void()>& call) {
  return bench::summarize(bench::sample_interleaved({call}, 1)[0]).median_ms;
}

void gelu_vs_copy(const jx::Device& gpu, jx::runtime::cuda::GpuContext& ctx) {
  const std::int64_t n = 256LL << 20;
  Array x = jx::device_put(jx::random::normal(jx::random::key(0), {n}), gpu);
  auto gelu = jx::jit([](const Array& v) { return nn::gelu(v); });
  double jx_ms = median_ms([&] { gelu(x).block_until_ready(); });
  std::size_t bytes = static_cast<std::size_t>(n) * 4;
  jx::runtime::cuda::DeviceBuffer dst(gpu.id(), bytes);
  double copy_ms = median_ms([&] {
    ctx.copy_on_device(dst.data(), x.impl()->storage->data(), bytes);
    ctx.synchronize();
  });
  std::printf("gelu f32[%lld]: jx %.3f ms, device copy %.3f ms: ratio %.2f (goal >= 0.85)\n",
              static_cast<long long>(n), jx_ms, copy_ms, copy_ms / jx_ms);
}

void dense_vs_cublas(const jx::Device& gpu, jx::runtime::cuda::GpuContext& ctx) {
  const std::int64_t d = 4096;
  auto key = jx::random::split<3>(jx::random::key(1));
  Array x = jx::device_put(jx::random::normal(key[0], {d, d}), gpu);
  Array w = jx::device_put(jx::random::normal(key[1], {d, d}), gpu);
  Array b = jx::device_put(jx::random::normal(key[2], {d}), gpu);
  auto dense = jx::jit([](const Array& a, const Array& m, const Array& v) {
    return nn::relu(np::matmul(a, m) + v);
  });
  double jx_ms = median_ms([&] { dense(x, w, b).block_until_ready(); });
  jx::runtime::cuda::DeviceBuffer out(gpu.id(), static_cast<std::size_t>(d * d) * 4);
  jx::hlo::GemmShape shape{jx::float32, 1, d, d, d, false, false};
  double gemm_ms = median_ms([&] {
    ctx.gemm(shape, x.impl()->storage->data(), w.impl()->storage->data(), out.data());
    ctx.synchronize();
  });
  std::printf("relu(x @ W + b) f32[%lld]^2: jx %.3f ms, cuBLAS GEMM alone %.3f ms: ratio %.2f "
              "(goal >= 0.95)\n",
              static_cast<long long>(d), jx_ms, gemm_ms, gemm_ms / jx_ms);
}

void train_step(const jx::Device& gpu, double jax_ms) {
  auto keys = jx::random::split<5>(jx::random::key(2));
  Mlp params{nn::dense_init(keys[0], 784, 512, nn::Init::he_normal),
             nn::dense_init(keys[1], 512, 512, nn::Init::he_normal),
             nn::dense_init(keys[2], 512, 10)};
  params = jx::tree::map([&](const Array& a) { return jx::device_put(a, gpu); }, params);
  Array x = jx::device_put(jx::random::normal(keys[3], {1024, 784}), gpu);
  Array y = jx::device_put(jx::random::randint(keys[4], {1024}, 0, 10), gpu);
  auto opt = jx::optim::adam(1e-3);
  auto state = opt.init(params);
  auto step = jx::jit([&opt](const Mlp& p, const decltype(state)& s, const Array& xs,
                             const Array& ys) {
    auto [value, grads] = jx::value_and_grad(loss)(p, xs, ys);
    auto [updates, new_state] = opt.update(grads, s, p);
    return std::tuple{jx::optim::apply_updates(p, updates), new_state, value};
  });
  std::string thunks = step.lower(params, state, x, y).compile().thunk_sequence();
  int launches = 0;
  for (std::size_t at = 0; (at = thunks.find('\n', at)) != std::string::npos; ++at) ++launches;
  auto run = [&] { std::get<2>(step(params, state, x, y)).block_until_ready(); };
  jx::config().gpu_graphs = false;
  double plain_ms = median_ms(run);
  jx::config().gpu_graphs = true;
  double graph_ms = median_ms(run);
  jx::config().gpu_graphs = false;
  std::printf("MLP train step, batch 1024: %d thunks; %.3f ms, %.3f ms replayed as a CUDA graph "
              "(%.2f us per launch saved)\n",
              launches, plain_ms, graph_ms, 1e3 * (plain_ms - graph_ms) / launches);
  if (jax_ms > 0)
    std::printf("  JAX jax.jit %.3f ms: JAX / jx = %.2f\n", jax_ms,
                jax_ms / std::min(plain_ms, graph_ms));
}

}  // namespace

int main(int argc, char** argv) {
  double jax_ms = 0;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--jax_ms=", 9) == 0) jax_ms = std::atof(argv[i] + 9);
  if (jx::runtime::cuda::device_count() == 0) {
    try {
      jx::gpu(0);
    } catch (const jx::Error& e) {
      std::printf("bench_gpu: no GPU, nothing measured (%s)\n", e.what());
    }
    return 0;
  }
  jx::Device gpu = jx::gpu(0);
  auto& ctx = jx::runtime::cuda::gpu_context(0);
  std::printf("bench_gpu on %s (sm_%d%d, %d SMs)\n", ctx.name().c_str(),
              ctx.compute_capability_major(), ctx.compute_capability_minor(), ctx.sm_count());
  gelu_vs_copy(gpu, ctx);
  dense_vs_cublas(gpu, ctx);
  train_step(gpu, jax_ms);
}
