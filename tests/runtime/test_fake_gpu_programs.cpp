// Whole jitted programs through the real GPU backend (NVPTX kernels, cuBLAS thunks, CUDA graphs)
// on the strict fake CUDA driver: every module, launch, buffer and graph is checked, and what is
// made of library calls computes real values.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <vector>

#include <jx/jx.hpp>

#include "support/config_guard.hpp"
#include "support/fake_cuda.hpp"
#include "support/scratch_dir.hpp"

namespace jx::testing {
namespace {

const Device kGpu{Platform::gpu, 7};

void check_close(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(got[i] - want[i]) <= 1e-4f * (1 + std::abs(want[i])));
  }
}

// What broke every jitted GPU program: the module was unloaded by a temporary as it was
// loaded, so looking its kernels up failed (CUDA_ERROR_INVALID_HANDLE), and it was unloaded a
// second time later.
TEST_CASE("fake GPU programs: a program's module is loaded once and unloaded once with it",
          "[cuda][fake][devices]") {
  FakeCudaGpus gpus;
  {
    auto f =
        jit([](const Array& a, const Array& b) { return np::sin(a) * b + 1.0f; }, {.device = kGpu});
    Array out = f(np::ones({1000}), np::ones({1000}));
    CHECK(out.device() == kGpu);
    CHECK(out.shape() == Shape{1000});
    const int launches = gpus.fake().launches();
    CHECK(launches >= 1);
    f(np::ones({1000}), np::zeros({1000}));
    CHECK(f.cache_info().hits == 1);
    CHECK(gpus.fake().launches() == 2 * launches);
  }
  CHECK(gpus.fake().violations().empty());
  gpus.destroy_contexts();
  CHECK(gpus.fake().leaks().empty());
}

TEST_CASE("fake GPU programs: a first call on another device is a new_device miss",
          "[cuda][fake][devices][misses]") {
  FakeCudaGpus gpus;
  {
    auto f = jit([](const Array& a) { return a * 2.0f; }, {.name = "twice"});
    Array x = np::ones({4});
    f(x);                           // on the CPU: first_call
    f(device_put(x, kGpu));         // committed to the GPU: compiled again there
    f(device_put(x * 3.0f, kGpu));  // a hit
    std::vector<CacheMiss> m = f.cache_misses();
    REQUIRE(m.size() == 2);
    CHECK(m[0].reason == MissReason::first_call);
    CHECK(m[1].reason == MissReason::new_device);
    CHECK(m[1].str() == "jit(twice): new_device");
  }
  gpus.destroy_contexts();
  CHECK(gpus.fake().leaks().empty());
}

TEST_CASE("fake GPU programs: --gpu_graphs replays a program's recorded GEMM with its values",
          "[cuda][fake][devices]") {
  ConfigGuard guard;
  config().gpu_graphs = true;
  FakeCudaGpus gpus;
  Array a = random::normal(random::key(1), {64, 48});
  Array w = random::normal(random::key(2), {48, 40});
  std::vector<float> want =
      jit([](const Array& x, const Array& y) { return np::matmul(x, y); })(a, w).to_vector<float>();
  Array a_gpu = device_put(a, kGpu), w_gpu = device_put(w, kGpu);
  auto f = jit([](const Array& x, const Array& y) { return np::matmul(x, y); });
  // The output of each call is dropped before the next, so the next gets the same block: the
  // same buffers, once seen, then captured, then replayed.
  for (int call = 0; call < 3; ++call) {
    INFO("call " << call);
    check_close(f(a_gpu, w_gpu).to_vector<float>(), want);
  }
  CHECK(gpus.fake().graph_launches() == 2);
  CHECK(gpus.fake().launches() == 0);      // one cuBLAS call, no kernel
  CHECK(gpus.fake().gemms().size() == 2);  // once run, once captured
}

TEST_CASE("fake GPU programs: an eager operation on a GPU array runs on the GPU",
          "[cuda][fake][devices]") {
  FakeCudaGpus gpus;
  Array x = device_put(np::ones({4096}), kGpu);
  Array y = np::exp(x);  // one kernel launch, not the host's reference exp
  CHECK(y.device() == kGpu);
  CHECK(gpus.fake().launches() == 1);
  // A product large enough for cuBLAS, which the fake computes: the GPU's values.
  Array a = random::normal(random::key(3), {40, 40}), b = random::normal(random::key(4), {40, 40});
  Array c = lax::dot_general(device_put(a, kGpu), device_put(b, kGpu), {{1}, {0}, {}, {}});
  CHECK(c.device() == kGpu);
  CHECK(gpus.fake().gemms().size() == 1);
  check_close(c.to_vector<float>(), lax::dot_general(a, b, {{1}, {0}, {}, {}}).to_vector<float>());
}

}  // namespace
}  // namespace jx::testing

namespace jx::testing {
namespace {

// A 16-bit product with an f32 result (preferred_element_type, as mixed-precision layers ask) is
// one cuBLAS GEMM that reads the bf16/f16 operands as they are and accumulates in f32
// (CUBLAS_COMPUTE_32F: tensor cores on a GPU), with no kernel: the fake computes it, and it
// equals the CPU's f32 product of the same values. (A 16-bit result adds a conversion kernel,
// which the fake driver does not run.)
TEST_CASE("fake GPU programs: a 16-bit matmul is one cuBLAS GEMM of 16-bit operands",
          "[cuda][fake][devices]") {
  for (DType d : {bfloat16, float16}) {
    INFO(dtype_name(d));
    FakeCudaGpus gpus;
    Array a = random::normal(random::key(1), {64, 48}).astype(d);
    Array w = random::normal(random::key(2), {48, 40}).astype(d);
    auto product = [](const Array& x, const Array& y) {
      return lax::dot_general(x, y, {{1}, {0}, {}, {}}, float32);
    };
    std::vector<float> want = jit(product)(a, w).to_vector<float>();
    Array got = jit(product)(device_put(a, kGpu), device_put(w, kGpu));
    CHECK(got.dtype() == float32);
    check_close(got.to_vector<float>(), want);
    CHECK(gpus.fake().launches() == 0);
    std::vector<GemmRecord> gemms = gpus.fake().gemms();
    REQUIRE(gemms.size() == 1);
    CHECK(gemms[0].library == "cuBLAS");
    CHECK(gemms[0].operand_data_type ==
          (d == bfloat16 ? runtime::cuda::CUDA_R_16BF : runtime::cuda::CUDA_R_16F));
    CHECK(gemms[0].data_type == runtime::cuda::CUDA_R_32F);
    CHECK(gemms[0].compute_type == runtime::cuda::CUBLAS_COMPUTE_32F);
    CHECK(gpus.fake().violations().empty());
  }
}

// The persistent compilation cache on a GPU: a program's PTX and launches are stored, and a new
// jit (a new process) loads them into the driver instead of compiling; its kernels launch as
// the first program's did.
TEST_CASE("fake GPU programs: a program's PTX comes back from the persistent cache",
          "[cuda][fake][devices][persistent_cache]") {
  ConfigGuard guard;
  ScratchDir dir;
  config().compilation_cache_dir = dir.dir.string();
  FakeCudaGpus gpus;
  auto program = [](const Array& a, const Array& b) { return np::sin(a) * b + 1.0f; };
  Array a = device_put(np::ones({1000}), kGpu), b = device_put(np::ones({1000}), kGpu);
  jit(std::function(program))(a, b);
  const int launches = gpus.fake().launches();
  CHECK(launches >= 1);
  CHECK(dir.files().size() == 1);

  auto loaded = jit(std::function(program));
  Array out = loaded(a, b);
  CHECK(out.device() == kGpu);
  CHECK(loaded.cache_info().disk_hits == 1);
  CHECK(gpus.fake().launches() == 2 * launches);
  CHECK(gpus.fake().violations().empty());
}

}  // namespace
}  // namespace jx::testing
