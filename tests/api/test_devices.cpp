// Devices: jx::devices, cpu, gpu, device_put, committed arrays, and programs whose buffers live
// on a device. Without a GPU, the device paths run on a HostDeviceRuntime: a "GPU" whose memory
// is the host's, compiled with the CPU's code generator.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

#include <jx/jx.hpp>

#include "runtime/cuda/driver.hpp"
#include "support/config_guard.hpp"
#include "support/error_of.hpp"
#include "support/host_device.hpp"

namespace jx::testing {
namespace {

const Device kHostGpu{Platform::gpu, 7};

TEST_CASE("devices: the CPU comes first and then each GPU the driver reports", "[devices]") {
  std::vector<Device> all = devices();
  REQUIRE(all.front() == cpu());
  CHECK(cpu().str() == "cpu:0");
  std::ostringstream os;
  os << Device{Platform::gpu, 1};
  CHECK(os.str() == "gpu:1");
  int gpus = runtime::cuda::device_count();
  CHECK(all.size() == static_cast<std::size_t>(1 + gpus));
  if (gpus == 0) {
    std::string msg = error_of<Error>([] { gpu(0); });
    INFO(msg);
    CHECK(msg.rfind("CUDA backend unavailable: ", 0) == 0);
  } else {
    CHECK(gpu(0) == all[1]);
    CHECK(error_of<Error>([&] { gpu(gpus); }) == "GPU ordinal " + std::to_string(gpus) +
                                                     " out of range: " + std::to_string(gpus) +
                                                     " GPU(s) found");
  }
}

TEST_CASE("devices: device_put to the CPU commits an array there", "[devices]") {
  Array x = np::array(std::vector<float>{1, 2, 3});
  CHECK(x.device() == cpu());
  CHECK_FALSE(x.committed());
  Array y = device_put(x, cpu());
  CHECK(y.committed());
  CHECK(y.device() == cpu());
  CHECK(y.to_vector<float>() == std::vector<float>{1, 2, 3});
  // Results of operations on committed arrays stay committed.
  CHECK((y + 1.0f).committed());
  CHECK_FALSE((x + 1.0f).committed());
  // A device jx::devices() does not list is an error, not cpu:0.
  CHECK_THROWS_MATCHES(device_put(x, Device(Platform::cpu, 7)), ValueError,
                       Catch::Message("Unknown device cpu:7: the CPU is cpu:0"));
  CHECK_THROWS_MATCHES(jit([](const Array& a) { return a; }, {.device = Device(Platform::cpu, 1)}),
                       ValueError, Catch::Message("Unknown device cpu:1: the CPU is cpu:0"));
}

TEST_CASE("devices: a tracer has no device", "[devices]") {
  auto f = jit([](const Array& x) {
    (void)x.device();
    return x;
  });
  CHECK(error_of<ConcretizationError>([&] {
          f(np::array(std::vector<float>{1}));
        }).find("device()") != std::string::npos);
}

TEST_CASE("devices: arrays committed to different devices do not mix", "[devices]") {
  Array on_gpu = host_device_array<float>(kHostGpu, {2}, {1, 2});
  Array on_cpu = device_put(np::array(std::vector<float>{3, 4}), cpu());
  CHECK(on_gpu.device() == kHostGpu);
  CHECK(on_gpu.to_vector<float>() == std::vector<float>{1, 2});  // read through the host copy
  CHECK(error_of<ValueError>([&] { lax::add(on_gpu, on_cpu); }) ==
        "Received incompatible devices for add: argument 0 (f32[2]) is on gpu:7 and argument 1 "
        "(f32[2]) is on cpu:0; move one with jx::device_put");
  auto f = jit([](const Array& a, const Array& b) { return a + b; });
  CHECK(error_of<ValueError>([&] { f(on_gpu, on_cpu); }) ==
        "Received incompatible devices for jit(f): argument 0 (f32[2]) is on gpu:7 and argument "
        "1 (f32[2]) is on cpu:0; move one with jx::device_put");
  auto on_cpu_only = jit([](const Array& a) { return a * 2.0f; }, {.device = cpu()});
  CHECK(error_of<ValueError>([&] { on_cpu_only(on_gpu); }) ==
        "jit(f) runs on cpu:0, but argument 0 (f32[2]) is committed to gpu:7; move it with "
        "jx::device_put");
}

TEST_CASE("devices: without its backend a GPU program is a clear error", "[devices]") {
  if (runtime::cuda::device_count() > 0) return;  // a real GPU would run it
  Array on_gpu = host_device_array<float>(kHostGpu, {2}, {1, 2});
  auto f = jit([](const Array& a) { return a * 2.0f; });
  std::string msg = error_of<Error>([&] { f(on_gpu); });
  INFO(msg);
  CHECK(msg.rfind("CUDA backend unavailable: ", 0) == 0);
  // An eager operation runs on the array's device too: the same error, not the host's impl.
  CHECK(error_of<Error>([&] { np::sin(on_gpu); }) == msg);
}

TEST_CASE("devices: a program runs where its committed arguments live", "[devices]") {
  HostGpus gpus;
  std::vector<float> xs{0.5f, -1.0f, 2.0f}, ys{3.0f, 4.0f, -5.0f};
  Array x = host_device_array<float>(kHostGpu, {3}, xs);
  Array y = np::array(ys);  // uncommitted: copied to the device for the call
  auto f = jit([](const Array& a, const Array& b) { return np::sin(a) * b + 1.0f; });
  Array out = f(x, y);
  CHECK(out.device() == kHostGpu);
  CHECK(out.committed());
  std::vector<float> got = out.to_vector<float>();
  for (std::size_t i = 0; i < xs.size(); ++i)
    CHECK(got[i] == Approx(std::sin(xs[i]) * ys[i] + 1.0f).epsilon(1e-6));
  CHECK(gpus.counts->writes >= 1);  // y went to the device
  int replays = gpus.counts->replays;
  f(x, y);
  CHECK(f.cache_info().hits == 1);
  CHECK(gpus.counts->replays == replays + 1);  // nothing reads back: replayable as a whole
  // The same signature on the CPU is another program.
  CHECK(f(np::array(xs), y).device() == cpu());
  CHECK(f.cache_info().entries == 2);
}

TEST_CASE("devices: jit's device option moves uncommitted arguments there", "[devices]") {
  HostGpus gpus;
  auto f = jit([](const Array& a) { return np::sum(a * a); }, {.device = kHostGpu});
  Array out = f(np::array(std::vector<double>{1, 2, 3}));
  CHECK(out.device() == kHostGpu);
  CHECK(out.item<double>() == 14.0);
}

TEST_CASE("devices: loops and conditionals and sorts read their flags back from the device",
          "[devices]") {
  HostGpus gpus;
  Array x = host_device_array<float>(kHostGpu, {4}, {3, 1, 4, 1});
  auto f = jit([](const Array& a) {
    Array doubled = lax::while_loop([](const Array& c) { return np::sum(c) < 100.0f; },
                                    [](const Array& c) { return c * 2.0f; }, a);
    Array picked = lax::cond(
        np::sum(a) > 5.0f, [](const Array& c) { return c + 1.0f; },
        [](const Array& c) { return c - 1.0f; }, a);
    return std::pair{np::sort(doubled), picked};
  });
  auto [sorted, picked] = f(x);
  // sum 9 doubles to 144 in 4 steps: x * 16.
  CHECK(sorted.to_vector<float>() == std::vector<float>{16, 16, 48, 64});
  CHECK(picked.to_vector<float>() == std::vector<float>{4, 2, 5, 2});
  CHECK(sorted.device() == kHostGpu);
  CHECK(gpus.counts->reads >= 5 + 1);  // 5 loop conditions and the branch index
  // A sequence that reads back is not recorded for replay (a loop's body alone may be).
  int replays = gpus.counts->replays;
  CHECK(jit([](const Array& a) { return np::sort(a); })(x).to_vector<float>() ==
        std::vector<float>{1, 1, 3, 4});
  CHECK(gpus.counts->replays == replays);
}

TEST_CASE("devices: a donated device argument's storage becomes the output's", "[devices]") {
  HostGpus gpus;
  Array x = host_device_array<float>(kHostGpu, {3}, {1, 2, 3});
  void* before = x.impl()->storage->data();
  auto f = jit([](const Array& a) { return a * 3.0f; }, {.donate_argnums = {0}});
  Array out = f(x);
  CHECK(x.is_deleted());
  CHECK(out.impl()->storage->data() == before);
  CHECK(out.to_vector<float>() == std::vector<float>{3, 6, 9});
}

TEST_CASE("devices: an eager operation on a device array runs as a cached program there",
          "[devices]") {
  std::vector<std::string> log;
  ConfigGuard guard;
  config().log_compiles = true;
  config().log = [&log](const std::string& line) { log.push_back(line); };
  HostGpus gpus;
  std::vector<float> xs{0.5f, -1.0f, 2.0f};
  Array x = host_device_array<float>(kHostGpu, {3}, xs);
  const int kernels = gpus.counts->kernels;
  Array y = np::sin(x);
  CHECK(y.device() == kHostGpu);
  CHECK(gpus.counts->kernels == kernels + 1);  // the device program's kernel: not the host's impl
  std::vector<float> got = y.to_vector<float>();
  for (std::size_t i = 0; i < xs.size(); ++i) CHECK(got[i] == Approx(std::sin(xs[i])));
  // The same primitive on the same avals reuses the program.
  Array again = np::sin(host_device_array<float>(kHostGpu, {3}, {0.0f, 1.0f, 3.0f}));
  CHECK(again.to_vector<float>()[2] == Approx(std::sin(3.0f)));
  CHECK(std::count(log.begin(), log.end(), "jx: compiled eager sin on gpu:7") == 1);
  // A host operand (here a weak scalar) is copied to the device for the call.
  Array scaled = x * 2.0f;
  CHECK(scaled.device() == kHostGpu);
  CHECK(scaled.to_vector<float>() == std::vector<float>{1.0f, -2.0f, 4.0f});
}

}  // namespace
}  // namespace jx::testing
