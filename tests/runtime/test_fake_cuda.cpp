// The strict fake CUDA driver catches what a GPU would fault on (a use after unload or free, a
// double release, a launch or copy outside live memory, a wait on a stream being captured, a
// leak), with the real driver's error codes; and GpuContext's copies, staging, graphs and GEMMs
// give right values on it.
#include <catch2/catch.hpp>

#include <vector>

#include "hlo/gemm.hpp"
#include "jx/errors.hpp"
#include "runtime/cuda/context.hpp"
#include "support/cuda_test_kernels.hpp"
#include "support/error_of.hpp"
#include "support/fake_cuda.hpp"

namespace jx::runtime::cuda {
namespace {

using jx::testing::error_of;
using jx::testing::FakeCuda;
using jx::testing::kAddOnePtx;

std::string id_of(const void* handle) {
  return std::to_string(reinterpret_cast<std::uintptr_t>(handle));
}

bool starts_ends(const std::string& s, const std::string& begin, const std::string& end) {
  return s.rfind(begin, 0) == 0 && s.size() >= end.size() &&
         s.compare(s.size() - end.size(), end.size(), end) == 0;
}

TEST_CASE("fake CUDA: a module used after unloading or unloaded twice is a violation",
          "[cuda][fake]") {
  FakeCuda fake;
  const DriverApi& api = *fake.libraries().driver;
  CUmodule module = nullptr;
  REQUIRE(api.cuModuleLoadDataEx(&module, kAddOnePtx, 0, nullptr, nullptr) == CUDA_SUCCESS);
  CUfunction add_one = nullptr;
  REQUIRE(api.cuModuleGetFunction(&add_one, module, "add_one") == CUDA_SUCCESS);
  CUfunction missing = nullptr;
  CHECK(api.cuModuleGetFunction(&missing, module, "missing") == CUDA_ERROR_NOT_FOUND);
  CHECK(fake.violations().empty());

  REQUIRE(api.cuModuleUnload(module) == CUDA_SUCCESS);
  const std::string m = "module #" + id_of(module);
  CHECK(api.cuModuleGetFunction(&add_one, module, "add_one") == CUDA_ERROR_INVALID_HANDLE);
  CHECK(api.cuModuleUnload(module) == CUDA_ERROR_INVALID_HANDLE);
  void* args[] = {nullptr, nullptr};
  CHECK(api.cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr) ==
        CUDA_ERROR_INVALID_HANDLE);
  CHECK(fake.take_violations() ==
        std::vector<std::string>{
            "cuModuleGetFunction: " + m + " was unloaded", "cuModuleUnload: " + m + " was unloaded",
            "cuLaunchKernel: kernel add_one of " + m + ", which was unloaded"});
}

TEST_CASE("fake CUDA: a launch or copy outside live device memory is an illegal address",
          "[cuda][fake]") {
  FakeCuda fake;
  const DriverApi& api = *fake.libraries().driver;
  CUmodule module = nullptr;
  CUfunction add_one = nullptr;
  CUstream stream = nullptr;
  REQUIRE(api.cuModuleLoadDataEx(&module, kAddOnePtx, 0, nullptr, nullptr) == CUDA_SUCCESS);
  REQUIRE(api.cuModuleGetFunction(&add_one, module, "add_one") == CUDA_SUCCESS);
  REQUIRE(api.cuStreamCreate(&stream, 0) == CUDA_SUCCESS);
  CUdeviceptr buffer = 0;
  REQUIRE(api.cuMemAlloc(&buffer, 64) == CUDA_SUCCESS);

  float host[16] = {};
  void* x = host;
  unsigned n = 16;
  void* args[] = {&x, &n};
  CHECK(api.cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, stream, args, nullptr) ==
        CUDA_ERROR_ILLEGAL_ADDRESS);
  x = reinterpret_cast<void*>(buffer + 16);  // inside the allocation: fine
  CHECK(api.cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, stream, args, nullptr) == CUDA_SUCCESS);
  CHECK(fake.launches() == 1);
  CHECK(api.cuMemcpyHtoDAsync(buffer + 32, host, 64, stream) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(api.cuStreamSynchronize(stream) == CUDA_SUCCESS);
  REQUIRE(api.cuMemFree(buffer) == CUDA_SUCCESS);
  CHECK(api.cuMemFree(buffer) == CUDA_ERROR_INVALID_VALUE);
  CHECK(api.cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, stream, args, nullptr) ==
        CUDA_ERROR_ILLEGAL_ADDRESS);

  std::vector<std::string> v = fake.take_violations();
  REQUIRE(v.size() == 4);
  CHECK(starts_ends(v[0], "cuLaunchKernel: kernel add_one's parameter 0 at 0x",
                    " is not device memory"));
  CHECK(starts_ends(v[1], "cuMemcpyHtoDAsync: the destination at 0x",
                    " (64 bytes) reaches past the end of allocation #1 (64 bytes)"));
  CHECK(v[2] == "cuMemFree: device memory of allocation #1 freed twice");
  CHECK(starts_ends(v[3], "cuLaunchKernel: kernel add_one's parameter 0 at 0x",
                    " lies in allocation #1, which was freed"));
  REQUIRE(api.cuStreamDestroy(stream) == CUDA_SUCCESS);
  REQUIRE(api.cuModuleUnload(module) == CUDA_SUCCESS);
}

TEST_CASE("fake CUDA: what is still live at the end is a leak", "[cuda][fake]") {
  FakeCuda fake;
  const DriverApi& api = *fake.libraries().driver;
  CUstream stream = nullptr;
  CUdeviceptr buffer = 0;
  CUcontext context = nullptr;
  REQUIRE(api.cuStreamCreate(&stream, 0) == CUDA_SUCCESS);
  REQUIRE(api.cuMemAlloc(&buffer, 100) == CUDA_SUCCESS);
  REQUIRE(api.cuDevicePrimaryCtxRetain(&context, 3) == CUDA_SUCCESS);
  CHECK(fake.leaks() == std::vector<std::string>{"allocation #1 (100 bytes)",
                                                 "stream #" + id_of(stream),
                                                 "the primary context of device 3 (retained 1 "
                                                 "time(s))"});
  REQUIRE(api.cuMemFree(buffer) == CUDA_SUCCESS);
  REQUIRE(api.cuStreamDestroy(stream) == CUDA_SUCCESS);
  REQUIRE(api.cuDevicePrimaryCtxRelease(3) == CUDA_SUCCESS);
  CHECK(fake.leaks().empty());
  CHECK(api.cuDevicePrimaryCtxRelease(3) == CUDA_ERROR_INVALID_CONTEXT);
  CHECK(fake.take_violations() ==
        std::vector<std::string>{"cuDevicePrimaryCtxRelease: device 3's primary context released "
                                 "more often than retained"});
}

TEST_CASE("fake CUDA: work runs when the host waits and a captured graph replays it",
          "[cuda][fake]") {
  FakeCuda fake;
  const DriverApi& api = *fake.libraries().driver;
  CUstream stream = nullptr;
  REQUIRE(api.cuStreamCreate(&stream, 0) == CUDA_SUCCESS);
  CUdeviceptr buffer = 0;
  REQUIRE(api.cuMemAlloc(&buffer, 4) == CUDA_SUCCESS);
  unsigned char back[4] = {};
  REQUIRE(api.cuMemsetD8Async(buffer, 7, 4, stream) == CUDA_SUCCESS);
  CHECK(reinterpret_cast<unsigned char*>(buffer)[0] != 7);                  // not run yet
  REQUIRE(api.cuMemcpyDtoHAsync(back, buffer, 4, stream) == CUDA_SUCCESS);  // waits: pageable
  CHECK(back[3] == 7);

  REQUIRE(api.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED) == CUDA_SUCCESS);
  REQUIRE(api.cuMemsetD8Async(buffer, 9, 4, stream) == CUDA_SUCCESS);
  CHECK(api.cuStreamSynchronize(stream) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  REQUIRE(api.cuStreamEndCapture(stream, &graph) == CUDA_SUCCESS);
  REQUIRE(api.cuGraphInstantiate(&exec, graph, 0) == CUDA_SUCCESS);
  REQUIRE(api.cuGraphDestroy(graph) == CUDA_SUCCESS);
  REQUIRE(api.cuMemcpyDtoHAsync(back, buffer, 4, stream) == CUDA_SUCCESS);
  CHECK(back[0] == 7);  // captured, not run
  REQUIRE(api.cuGraphLaunch(exec, stream) == CUDA_SUCCESS);
  REQUIRE(api.cuMemcpyDtoHAsync(back, buffer, 4, stream) == CUDA_SUCCESS);
  CHECK(back[0] == 9);
  CHECK(fake.graph_launches() == 1);
  CHECK(fake.take_violations() == std::vector<std::string>{"cuStreamSynchronize: stream #" +
                                                           id_of(stream) + " is being captured"});
  // A graph replaying freed memory is caught when its work runs.
  REQUIRE(api.cuMemFree(buffer) == CUDA_SUCCESS);
  REQUIRE(api.cuGraphLaunch(exec, stream) == CUDA_SUCCESS);
  REQUIRE(api.cuStreamSynchronize(stream) == CUDA_SUCCESS);
  std::vector<std::string> v = fake.take_violations();
  REQUIRE(v.size() == 1);
  CHECK(starts_ends(v[0], "stream work: cuMemsetD8Async at 0x",
                    " lies in allocation #1, which was freed"));
  REQUIRE(api.cuGraphExecDestroy(exec) == CUDA_SUCCESS);
  CHECK(api.cuGraphExecDestroy(exec) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(fake.take_violations() == std::vector<std::string>{"cuGraphExecDestroy: graph exec #" +
                                                           id_of(exec) + " was destroyed"});
  REQUIRE(api.cuStreamDestroy(stream) == CUDA_SUCCESS);
}

TEST_CASE("GpuContext on the fake: copies through staging keep each upload's bytes",
          "[cuda][fake]") {
  FakeCuda fake;
  {
    GpuContext gpu(fake.libraries(), 2);
    CHECK(gpu.ordinal() == 2);
    CHECK(gpu.compute_capability_major() == 9);
    const std::size_t n = 1000;
    std::vector<float> first(n), second(n), back(n);
    for (std::size_t i = 0; i < n; ++i) first[i] = float(i), second[i] = -float(i);
    DeviceBuffer a(gpu, n * 4), b(gpu, n * 4), c(gpu, n * 4);
    // Both uploads go through the same pinned staging: the second may only overwrite it once
    // the first has run (the fake runs it when the context waits for its event).
    gpu.copy_to_device(a.data(), first.data(), n * 4);
    gpu.copy_to_device(b.data(), second.data(), n * 4);
    gpu.copy_on_device(c.data(), a.data(), n * 4);
    gpu.copy_to_host(back.data(), c.data(), n * 4);
    CHECK(back == first);
    gpu.copy_to_host(back.data(), b.data(), n * 4);
    CHECK(back == second);
    gpu.memset(b.data(), 0, n * 4);
    gpu.copy_to_host(back.data(), b.data(), n * 4);
    CHECK(back == std::vector<float>(n, 0.0f));
  }
  CHECK(fake.leaks().empty());
  CHECK(fake.violations().empty());
}

// Row-major out[b] = lhs[b] · rhs[b], the definition GemmShape's GEMM is checked against.
std::vector<float> product(const std::vector<float>& lhs, const std::vector<float>& rhs, int m,
                           int n, int k) {
  std::vector<float> out(static_cast<std::size_t>(m * n));
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int l = 0; l < k; ++l) sum += double(lhs[i * k + l]) * rhs[l * n + j];
      out[i * n + j] = float(sum);
    }
  return out;
}

TEST_CASE("GpuContext on the fake: GEMMs compute the product in the precision asked for",
          "[cuda][fake]") {
  FakeCuda fake;
  GpuContext gpu(fake.libraries(), 0);
  const int m = 5, n = 3, k = 4;
  std::vector<float> lhs(m * k), rhs(k * n), bias(n), back(m * n);
  for (int i = 0; i < m * k; ++i) lhs[i] = 0.5f * float(i % 7) - 1;
  for (int i = 0; i < k * n; ++i) rhs[i] = float(i % 5) - 2;
  for (int i = 0; i < n; ++i) bias[i] = float(i) - 10;
  DeviceBuffer l(gpu, lhs.size() * 4), r(gpu, rhs.size() * 4), b(gpu, bias.size() * 4),
      out(gpu, back.size() * 4);
  gpu.copy_to_device(l.data(), lhs.data(), l.bytes());
  gpu.copy_to_device(r.data(), rhs.data(), r.bytes());
  gpu.copy_to_device(b.data(), bias.data(), b.bytes());
  hlo::GemmShape shape{.dtype = float32, .m = m, .n = n, .k = k};
  gpu.gemm(shape, l.data(), r.data(), out.data());
  gpu.copy_to_host(back.data(), out.data(), out.bytes());
  std::vector<float> want = product(lhs, rhs, m, n, k);
  CHECK(back == want);

  shape.precision = hlo::GemmPrecision::kHighest;
  gpu.gemm_epilogue(shape, l.data(), r.data(), out.data(), hlo::GemmActivation::kRelu, b.data());
  gpu.copy_to_host(back.data(), out.data(), out.bytes());
  for (int i = 0; i < m * n; ++i) want[i] = std::max(0.0f, want[i] + bias[i % n]);
  CHECK(back == want);

  std::vector<jx::testing::GemmRecord> gemms = fake.gemms();
  REQUIRE(gemms.size() == 2);
  // Column-major terms: the product is computed as outᵀ = rhsᵀ · lhsᵀ, n × m.
  CHECK(gemms[0].library == "cuBLAS");
  CHECK(gemms[0].compute_type == CUBLAS_COMPUTE_32F_FAST_TF32);
  CHECK((gemms[0].m == n && gemms[0].n == m && gemms[0].k == k));
  CHECK(gemms[1].library == "cuBLASLt");
  CHECK(gemms[1].compute_type == CUBLAS_COMPUTE_32F);
  CHECK(gemms[1].epilogue == CUBLASLT_EPILOGUE_RELU_BIAS);
  // A GEMM reaching past its buffers never runs. (The caching allocator rounds blocks to 512
  // bytes: lhs's 80 lie in one of 512.)
  shape.m = 40;
  CHECK(error_of<Error>([&] { gpu.gemm(shape, l.data(), r.data(), out.data()); }) ==
        "cuBLAS error in cublasGemmStridedBatchedEx: CUBLAS_STATUS_INVALID_VALUE: the fake "
        "cuBLAS's status");
  hlo::GemmShape ints{.dtype = int32, .m = 2, .n = 2, .k = 2};
  CHECK(error_of<Error>([&] { gpu.gemm(ints, l.data(), r.data(), out.data()); }) ==
        "cuBLAS GEMM takes f32 or f64, not int32");
  std::vector<std::string> v = fake.take_violations();
  REQUIRE(v.size() == 1);
  CHECK(starts_ends(v[0], "cublasGemmStridedBatchedEx: matrix B at 0x",
                    " (640 bytes) reaches past the end of allocation #1 (512 bytes)"));
}

}  // namespace
}  // namespace jx::runtime::cuda
