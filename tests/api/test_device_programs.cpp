// Whole programs on a device against the same programs on the CPU: gradients, vmap and an MLP
// training step with Adam. Each runs on a HostDeviceRuntime "GPU" (the device paths of the
// runtime, CPU code), through the GPU backend on the fake CUDA driver where the fake can tell
// (library calls compute; kernels are only checked), and, when one is present, on a real GPU.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <jx/jx.hpp>

#include "support/config_guard.hpp"
#include "support/fake_cuda.hpp"
#include "support/gpu_testing.hpp"
#include "support/host_device.hpp"

namespace jx_device_test {
struct Mlp {
  jx::nn::Dense hidden, out;
};
JX_PYTREE(Mlp, hidden, out)
}  // namespace jx_device_test

namespace jx::testing {
namespace {

using jx_device_test::Mlp;

Array loss(const Mlp& p, const Array& x, const Array& y) {
  Array h = nn::relu(np::matmul(x, p.hidden.w) + p.hidden.b);
  return np::mean(nn::softmax_cross_entropy(np::matmul(h, p.out.w) + p.out.b, y));
}

Mlp init_mlp() {
  auto keys = random::split<2>(random::key(0));
  return {nn::dense_init(keys[0], 20, 64, nn::Init::he_normal), nn::dense_init(keys[1], 64, 5)};
}

void check_close(const Array& got, const Array& want, double tol) {
  REQUIRE(got.aval() == want.aval());
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  std::size_t bad = 0;  // the first element that differs: one report per array
  while (bad < g.size() && std::abs(g[bad] - w[bad]) <= tol * (1 + std::abs(w[bad]))) ++bad;
  std::ostringstream first;
  if (bad < g.size()) first << "element " << bad << ": " << g[bad] << " vs " << w[bad];
  INFO(first.str());
  CHECK(bad == g.size());
}

// The whole train step under one jit, on `d`; `opt` must outlive it.
template <class Optimizer>
auto train_step(const Optimizer& opt, const Device& d) {
  return jit(
      [&opt](const Mlp& p, const auto& s, const Array& xs, const Array& ys) {
        auto [value, grads] = value_and_grad(loss)(p, xs, ys);
        auto [updates, new_state] = opt.update(grads, s, p);
        return std::tuple{optim::apply_updates(p, updates), new_state, value};
      },
      {.device = d});
}

// Products computed in full on every device, as on the CPU: a GPU's default lets cuBLAS round
// f32 operands to TF32.
struct FullPrecision {
  ConfigGuard guard;
  FullPrecision() { config().default_matmul_precision = "highest"; }
};

// Three Adam steps of the whole train step under one jit, on `device` and on the CPU.
void check_training_agrees(const Device& device) {
  FullPrecision full;
  Array x = random::normal(random::key(1), {32, 20});
  Array y = random::randint(random::key(2), {32}, 0, 5);
  auto opt = optim::adam(1e-2);
  auto step = [&opt](const Device& d) { return train_step(opt, d); };
  auto on_device = step(device);
  auto on_cpu = step(cpu());
  Mlp p_dev = init_mlp(), p_cpu = init_mlp();
  auto s_dev = opt.init(p_dev);
  auto s_cpu = opt.init(p_cpu);
  for (int i = 0; i < 3; ++i) {
    auto [p1, s1, l1] = on_device(p_dev, s_dev, x, y);
    auto [p2, s2, l2] = on_cpu(p_cpu, s_cpu, x, y);
    CHECK(l1.device() == device);
    CHECK(l1.item<float>() == Approx(l2.item<float>()).epsilon(1e-4));
    p_dev = p1, s_dev = s1, p_cpu = p2, s_cpu = s2;
  }
  check_close(p_dev.hidden.w, p_cpu.hidden.w, 1e-4);
  check_close(p_dev.out.b, p_cpu.out.b, 1e-4);
}

// Per-example gradients (vmap of grad) and a Hessian-vector product, on `device` and the CPU.
void check_transforms_agree(const Device& device) {
  FullPrecision full;
  Array xs = random::normal(random::key(3), {8, 6});
  auto per_example = [](const Array& w, const Array& x) {
    return np::sum(np::tanh(np::matmul(x, w)) * np::sin(np::sum(x)));
  };
  Array w = random::normal(random::key(4), {6, 3});
  auto grads = [&](const Device& d) {
    return jit(vmap(grad(per_example), {none, 0}), {.device = d})(w, xs);
  };
  check_close(grads(device), grads(cpu()), 1e-5);
  auto hvp = [&](const Device& d) {
    auto f = [&](const Array& v) {
      auto g = [&](const Array& ww) { return np::sum(grad(per_example)(ww, xs) * v); };
      return grad(g)(w);
    };
    return jit(f, {.device = d})(np::ones({6, 3}));
  };
  check_close(hvp(device), hvp(cpu()), 1e-5);
}

// Dense layers whose bias and activation the GPU's GEMM library applies as it writes: one GEMM
// thunk per layer, no kernel, and the CPU's results.
void check_dense_epilogues(const Device& device) {
  FullPrecision full;
  Array x = random::normal(random::key(5), {64, 96});
  Array w = random::normal(random::key(6), {96, 48}) * 0.2f;
  Array b = random::normal(random::key(7), {48});
  std::vector<std::pair<std::string, std::function<Array(const Array&)>>> activations{
      {"relu", nn::relu},
      {"gelu", [](const Array& v) { return nn::gelu(v); }},
      {"bias=", [](const Array& v) { return v; }}};
  for (const auto& [name, act] : activations) {
    INFO(name);
    auto dense = [act](const Array& xs, const Array& ws, const Array& bs) {
      return act(np::matmul(xs, ws) + bs);
    };
    auto on_device = jit(dense, {.device = device}).lower(x, w, b).compile();
    std::string thunks = on_device.thunk_sequence();
    INFO(thunks);
    CHECK(thunks.find(" bias=param") != std::string::npos);
    CHECK(thunks.find(name) != std::string::npos);
    CHECK(thunks.find("kernel") == std::string::npos);
    CHECK(thunks.find("launch") == std::string::npos);
    check_close(on_device(x, w, b), jit(dense)(x, w, b), 1e-5);
  }
}

TEST_CASE("device programs: a training step on a host-memory device agrees with the CPU",
          "[devices]") {
  HostGpus host_gpus;
  check_training_agrees(Device{Platform::gpu, 7});
}

TEST_CASE("device programs: vmap and grad on a host-memory device agree with the CPU",
          "[devices]") {
  HostGpus host_gpus;
  check_transforms_agree(Device{Platform::gpu, 7});
}

TEST_CASE("device programs: dense layers on a host-memory device are GEMMs with epilogues",
          "[devices]") {
  HostGpus host_gpus;
  check_dense_epilogues(Device{Platform::gpu, 7});
}

TEST_CASE(
    "device programs: dense layers on a fake CUDA device are cuBLASLt GEMMs with the CPU's "
    "values",
    "[devices][fake]") {
  FakeCudaGpus gpus;
  check_dense_epilogues(Device{Platform::gpu, 7});
  CHECK(gpus.fake().gemms().size() == 3);
  CHECK(gpus.fake().launches() == 0);
}

// What failed on an H200 after the host-memory device tests had run in the same process: the
// per-thread scratch kept the host device's arena, and the GPU's kernels were handed it, a host
// address (CUDA_ERROR_ILLEGAL_ADDRESS). The fake driver checks every kernel's buffers.
TEST_CASE(
    "device programs: a training step on a fake CUDA GPU after one on a host-memory device "
    "uses only GPU memory",
    "[devices][fake]") {
  {
    HostGpus host_gpus;
    check_training_agrees(Device{Platform::gpu, 7});
  }
  FakeCudaGpus gpus;
  const Device gpu{Platform::gpu, 7};
  auto opt = optim::adam(1e-2);
  auto step = train_step(opt, gpu);
  Mlp p = init_mlp();
  auto s = opt.init(p);
  Array x = random::normal(random::key(1), {32, 20});
  Array y = random::randint(random::key(2), {32}, 0, 5);
  for (int i = 0; i < 2; ++i) {
    auto [p1, s1, l1] = step(p, s, x, y);  // kernels do not run on the fake: values unchecked
    CHECK(l1.device() == gpu);
    p = p1, s = s1;
  }
  CHECK(gpus.fake().launches() > 0);
  CHECK(gpus.fake().violations().empty());
}

// ctest reports these as skipped where there is no GPU (the output names the reason).
TEST_CASE("device programs: a training step on the GPU agrees with the CPU", "[devices][gpu]") {
  JX_REQUIRE_GPU();
  check_training_agrees(gpu(0));
}

TEST_CASE("device programs: vmap and grad on the GPU agree with the CPU", "[devices][gpu]") {
  JX_REQUIRE_GPU();
  check_transforms_agree(gpu(0));
}

TEST_CASE("device programs: dense layers on the GPU are cuBLASLt GEMMs with epilogues",
          "[devices][gpu]") {
  JX_REQUIRE_GPU();
  check_dense_epilogues(gpu(0));
}

// Outputs large enough that each thread takes several elements per turn (and a tail one at a
// time), in f32 and bf16, against the CPU.
TEST_CASE("device programs: large elementwise programs on the GPU agree with the CPU",
          "[devices][gpu]") {
  JX_REQUIRE_GPU();
  for (const Shape& shape : {Shape{(1 << 20) + 3}, Shape{1030, 1031}}) {
    for (DType dtype : {float32, bfloat16}) {
      INFO(shape_str(shape) << " " << dtype_name(dtype));
      Array x = random::normal(random::key(9), shape).astype(dtype);
      auto f = [](const Array& v) { return nn::gelu(v) * v + 0.25f; };
      check_close(jit(f, {.device = gpu(0)})(x), f(x), dtype == bfloat16 ? 1e-2 : 1e-5);
    }
  }
}

// Prefix scans long enough to take several tiles per row (a look-back over the tiles before), or
// many rows (a thread per row), against the CPU's sequential ones. Integer-valued floats keep
// every partial sum exact, whatever order the GPU adds in. Three calls: each launch's tiles tell
// theirs from the last launch's.
TEST_CASE("device programs: long prefix scans on the GPU agree with the CPU", "[devices][gpu]") {
  JX_REQUIRE_GPU();
  struct Scan {
    Shape shape;
    std::int64_t axis;
  };
  std::vector<Scan> scans{
      {{70001}, 0}, {{3, 5000}, 1}, {{5000, 3}, 0}, {{40, 600}, 0}, {{20, 20000}, 0}};
  using ScanFn = Array (*)(const Array&, std::int64_t, bool);
  std::vector<std::pair<std::string, ScanFn>> ops{
      {"cumsum", lax::cumsum}, {"cummax", lax::cummax}, {"cumlogsumexp", lax::cumlogsumexp}};
  for (const Scan& sc : scans) {
    Array ints = random::randint(random::key(8), sc.shape, -3, 4);
    for (DType dtype : {float32, int32}) {
      Array x = ints.astype(dtype);
      for (const auto& [name, op] : ops) {
        if (name == "cumlogsumexp" && dtype == int32) continue;
        for (bool reverse : {false, true}) {
          INFO(name << " " << dtype_name(dtype) << " " << shape_str(sc.shape) << " axis " << sc.axis
                    << (reverse ? " reverse" : ""));
          auto f = [op = op, axis = sc.axis, reverse](const Array& v) {
            return op(v, axis, reverse);
          };
          // cumlogsumexp rounds at every step: against float64, where the CPU's own f32 fold
          // drifts by more than the GPU's tree of partial results.
          bool rounds = name == "cumlogsumexp";
          Array want = rounds ? f(x.astype(float64)).astype(dtype) : f(x);
          auto on_gpu = jit(f, {.device = gpu(0)});
          for (int call = 0; call < 3; ++call) check_close(on_gpu(x), want, rounds ? 2e-5 : 0);
        }
      }
    }
  }
}

}  // namespace
}  // namespace jx::testing
