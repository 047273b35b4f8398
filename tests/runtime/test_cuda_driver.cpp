// Loading the CUDA driver: the exact messages when it is missing or is not a driver, every entry
// point resolving in the toolkit's stub libcuda, and an unavailable backend reported the same
// way on every call. Where a GPU is present, a round trip through it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "jx/errors.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/driver.hpp"
#include "support/cuda_test_kernels.hpp"
#include "support/error_of.hpp"
#include "support/shared_libraries.hpp"

namespace jx::runtime::cuda {
namespace {

using jx::testing::dlopen_error;
using jx::testing::error_of;
using jx::testing::kAddOnePtx;
using jx::testing::zlib_path;

const char* const kStubDriver = "/usr/local/cuda/lib64/stubs/libcuda.so";

TEST_CASE("load_driver: a missing library is reported with dlerror's reason", "[cuda]") {
  const std::string path = "/nonexistent/libcuda.so.1";
  std::string reason = dlopen_error(path);
  REQUIRE(!reason.empty());
  CHECK(error_of<Error>([&] { load_driver(path); }) ==
        "CUDA backend unavailable: cannot load " + path + ": " + reason);
}

TEST_CASE("load_driver: a library without the driver's symbols names the first missing one",
          "[cuda]") {
  std::string path = zlib_path();
  CHECK(error_of<Error>([&] { load_driver(path); }) ==
        "CUDA backend unavailable: " + path + " has no cuInit");
}

TEST_CASE("load_driver: every entry point resolves in the toolkit's stub driver", "[cuda]") {
  if (!std::filesystem::exists(kStubDriver)) {
    WARN("no CUDA toolkit stub driver at " << kStubDriver << ": skipped");
    return;
  }
  DriverApi api = load_driver(kStubDriver);
#define JX_CHECK_BOUND(field, symbol, signature) CHECK(api.field != nullptr);
  JX_CUDA_DRIVER_FUNCTIONS(JX_CHECK_BOUND)
#undef JX_CHECK_BOUND
  // The stub fails every call with CUDA_ERROR_STUB_LIBRARY, cuInit first.
  std::string name = describe(api, CUDA_ERROR_STUB_LIBRARY);
  CHECK((name == "CUresult 34" || name.rfind("CUDA_ERROR_STUB_LIBRARY", 0) == 0));
  CHECK(error_of<Error>([&] { init_driver(kStubDriver); }) ==
        "CUDA backend unavailable: CUDA error in cuInit: " + name);
}

TEST_CASE("driver: an unavailable backend throws the same message on every call", "[cuda]") {
  if (device_count() > 0) {
    CHECK_NOTHROW(driver());
    CHECK(gpu_context(0).sm_count() > 0);
    return;
  }
  std::string message = error_of<Error>([] { driver(); });
  CHECK(message.rfind("CUDA backend unavailable: ", 0) == 0);
  CHECK(error_of<Error>([] { driver(); }) == message);
  CHECK(error_of<Error>([] { gpu_context(0); }) == message);
  CHECK(error_of<Error>([] { DeviceBuffer(0, 16); }) == message);
  // Without JX_CUDA_DRIVER and without libcuda (this is a machine with no GPU), the message is
  // the loader's.
  std::string reason = dlopen_error("libcuda.so.1");
  if (!std::getenv("JX_CUDA_DRIVER") && !reason.empty())
    CHECK(message == "CUDA backend unavailable: cannot load libcuda.so.1: " + reason);
}

TEST_CASE("GpuContext: copies and a PTX kernel and a replayed graph", "[cuda]") {
  if (device_count() == 0) {
    WARN("no GPU: skipped");
    return;
  }
  GpuContext& gpu = gpu_context(0);
  CHECK(&gpu_context(0) == &gpu);
  CHECK(gpu.compute_capability_major() > 0);
  CHECK(!gpu.name().empty());
  CHECK(error_of<Error>([] { gpu_context(device_count()); }) ==
        "GPU ordinal " + std::to_string(device_count()) +
            " out of range: " + std::to_string(device_count()) + " GPU(s) found");

  const unsigned n = 1000;
  std::vector<float> host(n), back(n);
  for (unsigned i = 0; i < n; ++i) host[i] = static_cast<float>(i);
  DeviceBuffer a(0, n * sizeof(float)), b(0, n * sizeof(float));
  gpu.copy_to_device(a.data(), host.data(), a.bytes());
  gpu.copy_on_device(b.data(), a.data(), a.bytes());
  gpu.copy_to_host(back.data(), b.data(), b.bytes());
  CHECK(back == host);

  Module module = gpu.load_ptx(kAddOnePtx);
  CUfunction add_one = gpu.function(module, "add_one");
  void* x = b.data();
  unsigned count = n;
  void* args[] = {&x, &count};
  gpu.launch(add_one, {(n + 255) / 256}, {256}, 0, args);
  gpu.begin_capture();
  gpu.launch(add_one, {(n + 255) / 256}, {256}, 0, args);
  Graph graph = gpu.end_capture();
  gpu.replay(graph);
  gpu.replay(graph);
  gpu.copy_to_host(back.data(), b.data(), b.bytes());
  for (unsigned i = 0; i < n; ++i) host[i] += 3;
  CHECK(back == host);
  graph.reset();
  module.reset();

  module = gpu.load_ptx(kAddOnePtx);
  CHECK(error_of<CompileError>([&] { gpu.function(module, "missing"); }) ==
        "the PTX module has no kernel missing");
  module.reset();
  // The driver's error log follows the error's name.
  std::string bad =
      error_of<CompileError>([&] { gpu.load_ptx(".version 7.0\n.target sm_70\nnonsense\n"); });
  CHECK(bad.rfind("CUDA could not load the PTX: CUDA_ERROR_INVALID_PTX", 0) == 0);
  CHECK(bad.find('\n') != std::string::npos);
}

}  // namespace
}  // namespace jx::runtime::cuda
