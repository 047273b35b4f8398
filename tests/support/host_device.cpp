// The strict host-memory device: its ledger, storage and runtime, and the backend that checks
// every kernel's and GEMM's buffers against the ledger before running them.
#include "support/host_device.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <sstream>

namespace jx::testing {
namespace {

std::string hex(const void* p) {
  std::ostringstream os;
  os << p;
  return os.str();
}

std::mutex active_mutex;
std::shared_ptr<HostMemoryLedger> active_ledger;

// A thunk whose buffers are checked against the ledger before it runs: on a GPU, a kernel
// given a stale or foreign address faults; here it throws, naming the thunk and the buffer.
class CheckedThunk : public runtime::Thunk {
 public:
  CheckedThunk(std::unique_ptr<runtime::Thunk> inner, std::vector<runtime::Allocation> buffers,
               std::shared_ptr<HostMemoryLedger> ledger, Device device, std::atomic<int>* counter)
      : inner_(std::move(inner)),
        buffers_(std::move(buffers)),
        ledger_(std::move(ledger)),
        device_(device),
        counter_(counter) {}
  void execute(const runtime::ExecutionContext& ctx) const override {
    for (const runtime::Allocation& a : buffers_)
      ledger_->check(ctx.resolve(a), static_cast<std::size_t>(a.size), device_,
                     inner_->str() + ": buffer " + a.str());
    ++*counter_;
    inner_->execute(ctx);
  }
  std::string str() const override { return inner_->str(); }
  bool reads_back() const override { return inner_->reads_back(); }

 private:
  std::unique_ptr<runtime::Thunk> inner_;
  std::vector<runtime::Allocation> buffers_;
  std::shared_ptr<HostMemoryLedger> ledger_;
  Device device_;
  std::atomic<int>* counter_;
};

// The CPU's backend on a HostDeviceRuntime, its kernels and GEMMs checked.
class CheckedBackend : public backend::Backend {
 public:
  CheckedBackend(const Device& device, std::shared_ptr<HostDeviceCounts> counts,
                 std::shared_ptr<HostMemoryLedger> ledger)
      : inner_(
            backend::make_cpu_backend(std::make_shared<HostDeviceRuntime>(device, counts, ledger))),
        counts_(std::move(counts)),
        ledger_(std::move(ledger)) {}
  Device device() const override { return inner_->device(); }
  void compile(const std::vector<codegen::KernelRequest>& requests, const std::string& module_name,
               const std::string& dump_prefix, backend::CodeSlot code) override {
    inner_->compile(requests, module_name, dump_prefix, code);
  }
  std::unique_ptr<runtime::Thunk> kernel_thunk(std::size_t index,
                                               std::vector<runtime::Allocation> buffers,
                                               std::int64_t rows) const override {
    auto inner = inner_->kernel_thunk(index, buffers, rows);
    return std::make_unique<CheckedThunk>(std::move(inner), std::move(buffers), ledger_, device(),
                                          &counts_->kernels);
  }
  std::unique_ptr<runtime::Thunk> gemm_thunk(runtime::LibraryGemm gemm) const override {
    std::vector<runtime::Allocation> buffers{gemm.lhs, gemm.rhs, gemm.out};
    if (gemm.bias) buffers.push_back(*gemm.bias);
    return std::make_unique<CheckedThunk>(inner_->gemm_thunk(std::move(gemm)), std::move(buffers),
                                          ledger_, device(), &counts_->gemms);
  }
  std::unique_ptr<runtime::Thunk> convolution_thunk(
      runtime::LibraryConvolution conv) const override {
    return inner_->convolution_thunk(std::move(conv));
  }
  bool dnn_convolutions() const override { return inner_->dnn_convolutions(); }
  std::shared_ptr<const void> code() const override { return inner_->code(); }
  std::string code_target() const override { return inner_->code_target(); }
  std::shared_ptr<const runtime::DeviceRuntime> runtime() const override {
    return inner_->runtime();
  }

 private:
  std::unique_ptr<backend::Backend> inner_;
  std::shared_ptr<HostDeviceCounts> counts_;
  std::shared_ptr<HostMemoryLedger> ledger_;
};

}  // namespace

void HostMemoryLedger::add(const void* base, std::size_t bytes, const Device& device) {
  if (bytes == 0) return;
  std::lock_guard lock(mutex_);
  blocks_[reinterpret_cast<std::uintptr_t>(base)] = {bytes, device};
}

void HostMemoryLedger::remove(const void* base) {
  std::lock_guard lock(mutex_);
  blocks_.erase(reinterpret_cast<std::uintptr_t>(base));
}

void HostMemoryLedger::check(const void* p, std::size_t bytes, const Device& device,
                             const std::string& what) const {
  if (bytes == 0) return;
  auto address = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard lock(mutex_);
  auto it = blocks_.upper_bound(address);
  if (it != blocks_.begin()) {
    --it;
    if (address + bytes <= it->first + it->second.bytes && it->second.device == device) return;
  }
  throw HostDeviceError(what + ": " + std::to_string(bytes) + " bytes at " + hex(p) +
                        " are not in live memory of " + device.str());
}

std::vector<std::string> HostMemoryLedger::live() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [base, block] : blocks_)
    out.push_back(block.device.str() + ": " + std::to_string(block.bytes) + " bytes at " +
                  hex(reinterpret_cast<const void*>(base)));
  return out;
}

HostStorage::HostStorage(Device device, std::size_t nbytes,
                         std::shared_ptr<HostMemoryLedger> ledger)
    : device_(device), buffer_(nbytes, Buffer::Uninitialized{}), ledger_(std::move(ledger)) {
  if (ledger_) ledger_->add(buffer_.data(), nbytes, device_);
}

HostStorage::~HostStorage() {
  if (ledger_) ledger_->remove(buffer_.data());
}

void HostStorage::copy_to_host(void* dst) const {
  if (ledger_) ledger_->check(buffer_.data(), nbytes(), device_, "reading an array back");
  std::memcpy(dst, buffer_.data(), nbytes());
}

std::shared_ptr<DeviceStorage> HostDeviceRuntime::allocate(std::size_t nbytes) const {
  ++counts_->allocations;
  return std::make_shared<HostStorage>(device_, nbytes, ledger_);
}

void HostDeviceRuntime::copy(void* dst, const void* src, std::size_t nbytes) const {
  ++counts_->copies;
  ledger_->check(src, nbytes, device_, "copy source");
  ledger_->check(dst, nbytes, device_, "copy destination");
  std::memmove(dst, src, nbytes);
}

void HostDeviceRuntime::read(void* host_dst, const void* src, std::size_t nbytes) const {
  ++counts_->reads;
  ledger_->check(src, nbytes, device_, "read source");
  std::memcpy(host_dst, src, nbytes);
}

void HostDeviceRuntime::write(void* dst, const void* host_src, std::size_t nbytes) const {
  ++counts_->writes;
  ledger_->check(dst, nbytes, device_, "write destination");
  std::memcpy(dst, host_src, nbytes);
}

void HostDeviceRuntime::replay(std::span<void* const>, const std::function<void()>& enqueue) const {
  ++counts_->replays;
  enqueue();
}

HostGpus::HostGpus()
    : counts(std::make_shared<HostDeviceCounts>()), ledger(std::make_shared<HostMemoryLedger>()) {
  {
    std::lock_guard lock(active_mutex);
    REQUIRE(active_ledger == nullptr);
    active_ledger = ledger;
  }
  backend::set_backend_factory(Platform::gpu, [c = counts, l = ledger](const Device& d) {
    return std::make_unique<CheckedBackend>(d, c, l);
  });
}

HostGpus::~HostGpus() {
  backend::set_backend_factory(Platform::gpu, nullptr);
  {
    std::lock_guard lock(active_mutex);
    active_ledger = nullptr;
  }
  std::vector<std::string> leaked = ledger->live();
  for (const std::string& block : leaked) UNSCOPED_INFO("still allocated: " << block);
  CHECK(leaked.empty());
}

std::shared_ptr<HostMemoryLedger> active_host_ledger() {
  std::lock_guard lock(active_mutex);
  return active_ledger;
}

}  // namespace jx::testing
