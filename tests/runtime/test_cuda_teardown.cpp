// Releasing CUDA resources never throws: the owning types cannot be copied (a copy would release
// twice), a failed release is logged, and the context's next call throws it once.
#include <catch2/catch.hpp>

#include <type_traits>
#include <vector>

#include "jx/config.hpp"
#include "jx/errors.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/gpu/gpu_storage.hpp"
#include "support/config_guard.hpp"
#include "support/cuda_test_kernels.hpp"
#include "support/error_of.hpp"
#include "support/fake_cuda.hpp"

namespace jx::runtime::cuda {
namespace {

using jx::testing::ConfigGuard;
using jx::testing::error_of;
using jx::testing::FakeCuda;
using jx::testing::kAddOnePtx;

template <class T>
constexpr bool owns_once = !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T> &&
                           std::is_nothrow_destructible_v<T>;
static_assert(owns_once<Module> && std::is_nothrow_move_constructible_v<Module> &&
              std::is_nothrow_move_assignable_v<Module>);
static_assert(owns_once<Graph> && std::is_nothrow_move_constructible_v<Graph>);
static_assert(owns_once<DeviceBuffer> && std::is_nothrow_move_constructible_v<DeviceBuffer>);
static_assert(owns_once<GpuContext> && !std::is_move_constructible_v<GpuContext>);
static_assert(owns_once<gpu::GpuStorage>);
static_assert(noexcept(std::declval<GpuContext&>().release(nullptr)));

// Collects what jx logs while it lives.
struct LogCapture {
  ConfigGuard guard;
  std::vector<std::string> lines;
  LogCapture() {
    config().log = [this](const std::string& line) { lines.push_back(line); };
  }
};

TEST_CASE("teardown: a module moved from is unloaded once by its last owner", "[cuda][fake]") {
  FakeCuda fake;
  GpuContext gpu(fake.libraries(), 0);
  Module a = gpu.load_ptx(kAddOnePtx);
  CUmodule handle = a.get();
  Module b = std::move(a);
  CHECK(!a);
  CHECK(b.get() == handle);
  a = std::move(b);
  a.reset();
  b.reset();  // empty: nothing to unload
  CHECK(fake.violations().empty());
  CHECK(error_of<Error>([&] {
          gpu.function(a, "add_one");
        }).rfind("CUDA error in cuModuleGetFunction: CUDA_ERROR_INVALID_HANDLE", 0) == 0);
  fake.take_violations();  // the null module: "was never created"
}

TEST_CASE("teardown: a failed unload is logged and the context's next call throws it",
          "[cuda][fake]") {
  FakeCuda fake;
  LogCapture log;
  GpuContext gpu(fake.libraries(), 0);
  Module module = gpu.load_ptx(kAddOnePtx);
  CUmodule handle = module.get();
  fake.fail_next("cuModuleUnload", CUDA_ERROR_ILLEGAL_ADDRESS);
  CHECK_NOTHROW(module.reset());
  const std::string message =
      "CUDA error in cuModuleUnload (releasing a resource): CUDA_ERROR_ILLEGAL_ADDRESS: an illegal "
      "memory access was encountered";
  CHECK(log.lines == std::vector<std::string>{"jx: " + message});
  CHECK(error_of<Error>([&] { gpu.synchronize(); }) == message);
  CHECK_NOTHROW(gpu.synchronize());                                          // reported once
  REQUIRE(fake.libraries().driver->cuModuleUnload(handle) == CUDA_SUCCESS);  // the fake's books
}

TEST_CASE("teardown: memory the context did not hand out is reported and not thrown",
          "[cuda][fake]") {
  FakeCuda fake;
  LogCapture log;
  GpuContext gpu(fake.libraries(), 0);
  int not_a_block = 0;
  CHECK_NOTHROW(gpu.release(&not_a_block));
  REQUIRE(log.lines.size() == 1);
  CHECK(log.lines[0].find("releasing a block this allocator did not hand out") !=
        std::string::npos);
  CHECK(error_of<Error>([&] { gpu.allocate(16); }) == log.lines[0].substr(4));
  CHECK_NOTHROW(gpu.release(gpu.allocate(16)));
}

TEST_CASE("teardown: a context whose teardown fails logs each failure and throws nothing",
          "[cuda][fake]") {
  FakeCuda fake;
  LogCapture log;
  CUstream stream = nullptr;
  {
    GpuContext gpu(fake.libraries(), 1);
    stream = gpu.stream();
    DeviceBuffer kept(gpu, 1000);  // released before the context, as it must be
    fake.fail_next("cuStreamDestroy", CUDA_ERROR_UNKNOWN);
  }
  CHECK(log.lines == std::vector<std::string>{"jx: CUDA error in cuStreamDestroy (releasing a "
                                              "resource): CUDA_ERROR_UNKNOWN: unknown error"});
  REQUIRE(fake.leaks() ==
          std::vector<std::string>{"stream #" +
                                   std::to_string(reinterpret_cast<std::uintptr_t>(stream))});
  REQUIRE(fake.libraries().driver->cuStreamDestroy(stream) == CUDA_SUCCESS);
}

TEST_CASE("teardown: memory still in use when a context ends is reported", "[cuda][fake]") {
  FakeCuda fake;
  LogCapture log;
  void* leaked = nullptr;
  {
    GpuContext gpu(fake.libraries(), 0);
    leaked = gpu.allocate(1000);
  }
  CHECK(log.lines ==
        std::vector<std::string>{"jx: 1024 bytes of GPU memory still in use when GPU 0's context "
                                 "was destroyed"});
  REQUIRE(fake.leaks() == std::vector<std::string>{"allocation #1 (1024 bytes)"});
  REQUIRE(fake.libraries().driver->cuMemFree(reinterpret_cast<CUdeviceptr>(leaked)) ==
          CUDA_SUCCESS);
}

}  // namespace
}  // namespace jx::runtime::cuda
