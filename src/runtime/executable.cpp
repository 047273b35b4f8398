#include "runtime/executable.hpp"

#include <algorithm>
#include <cstring>

#include "core/array_impl.hpp"
#include "support/check.hpp"
#include "support/float_environment.hpp"
#include "support/hot_thread_local.hpp"
#include "support/profiler.hpp"

namespace jx::runtime {

// Per-thread scratch for one execution (pointer tables and the host arena), reused by the next
// so that dispatch allocates only the outputs. Executions nest (a while's body, a kernel that
// calls back into jx): each nesting depth has its own scratch, so a loop's body reuses the same
// one every iteration. Nothing of a device is kept here: the next execution at this depth may
// run on another device (or another runtime of the same one), and a device's memory must not
// outlive the execution that uses it.
struct Scratch {
  ExecutionContext ctx;
  std::unique_ptr<Buffer> arena;
  std::vector<Array> staged;  // arguments copied to the device for this execution
};

namespace {

// Whether another argument of the call is the same array as argument `arg` (passed twice, or a
// constant the function closed over): deleting it would delete that one too.
bool passed_again(const std::vector<Array>& args, int arg) {
  const auto* impl = args[static_cast<std::size_t>(arg)].impl().get();
  for (std::size_t k = 0; k < args.size(); ++k)
    if (k != static_cast<std::size_t>(arg) && args[k].impl().get() == impl) return true;
  return false;
}

// The buffer of donated argument `arg`, which the program updates in place: the argument's own,
// which it gives up (it is deleted), when nothing else holds it; else a copy. An argument passed
// again is not deleted, as JAX leaves a donation it cannot use.
std::shared_ptr<Buffer> take_donated(const std::vector<Array>& args, int arg) {
  const Array& a = args[static_cast<std::size_t>(arg)];
  std::shared_ptr<Buffer>& held = a.impl()->buffer;
  const Buffer& source = concrete_buffer(a, "jit dispatch");
  bool again = passed_again(args, arg);
  if (!again && held.use_count() == 1) return std::move(held);
  auto copy = std::make_shared<Buffer>(source.nbytes(), Buffer::Uninitialized{});
  std::memcpy(copy->data(), source.data(), source.nbytes());
  if (!again) held.reset();  // another array shares the buffer: it stays as it is
  return copy;
}

// Holds the scratch of the current nesting depth for one execution.
class ScratchLease {
 public:
  ScratchLease() : depth_(depth()++) {
    auto& stack = stack_of_thread();
    if (stack.size() == depth_) stack.push_back(std::make_unique<Scratch>());
    scratch_ = stack[depth_].get();
    scratch_->ctx.parameters.clear();
    scratch_->ctx.constants.clear();
    scratch_->ctx.outputs.clear();
  }
  // The staged arguments go with the execution (enqueued work that reads them is ordered
  // before their memory's next use), even when it throws.
  ~ScratchLease() {
    scratch_->staged.clear();
    --depth();
  }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  Scratch& get() { return *scratch_; }

 private:
  // unique_ptr: a deeper execution may grow the stack while this one holds its scratch.
  static std::vector<std::unique_ptr<Scratch>>& stack_of_thread() {
    JX_HOT_THREAD_LOCAL std::vector<std::unique_ptr<Scratch>> stack;
    return stack;
  }
  static std::size_t& depth() {
    JX_HOT_THREAD_LOCAL std::size_t d = 0;
    return d;
  }
  std::size_t depth_;
  Scratch* scratch_;
};

}  // namespace

Executable::Executable(std::string name, std::vector<std::unique_ptr<Thunk>> thunks,
                       std::int64_t arena_bytes, std::vector<ShapedArray> in_avals,
                       std::vector<ShapedArray> out_avals, std::vector<Array> constants,
                       std::vector<std::pair<int, int>> donations, std::shared_ptr<const void> code,
                       std::shared_ptr<const DeviceRuntime> device)
    : name_(std::move(name)),
      thunks_(std::move(thunks)),
      arena_bytes_(arena_bytes),
      in_avals_(std::move(in_avals)),
      out_avals_(std::move(out_avals)),
      constants_(std::move(constants)),
      donations_(std::move(donations)),
      code_(std::move(code)),
      device_(std::move(device)) {
  if (!device_) return;
  for (const Array& c : constants_) {
    const Buffer& host = concrete_buffer(c, "constant");
    device_constants_.push_back(device_->allocate(host.nbytes()));
    device_->write(device_constants_.back()->data(), host.data(), host.nbytes());
  }
  replayable_ =
      std::none_of(thunks_.begin(), thunks_.end(), [](const auto& t) { return t->reads_back(); });
}

void Executable::run_thunks(Scratch& scratch) const {
  ExecutionContext& ctx = scratch.ctx;
  ctx.device = device_.get();
  if (device_) {
    for (const auto& c : device_constants_) ctx.constants.push_back(c->data());
    // The device's allocator makes this cheap, and releasing it once the work is enqueued is
    // safe: its next user is enqueued after that work.
    auto bytes = static_cast<std::size_t>(arena_bytes_);
    std::shared_ptr<DeviceStorage> arena = bytes > 0 ? device_->allocate(bytes) : nullptr;
    ctx.arena = arena ? static_cast<std::byte*>(arena->data()) : nullptr;
    auto enqueue = [&] { run_each(ctx); };
    if (!replayable_ || profiler::detail::active()) return enqueue();
    std::vector<void*> buffers = ctx.parameters;
    buffers.insert(buffers.end(), ctx.outputs.begin(), ctx.outputs.end());
    buffers.push_back(ctx.arena);
    return device_->replay(buffers, enqueue);
  }
  for (const auto& c : constants_) ctx.constants.push_back(concrete_buffer(c, "constant").data());
  std::unique_ptr<Buffer>& arena = scratch.arena;
  if (arena_bytes_ > 0) {
    if (!arena || arena->nbytes() < static_cast<std::size_t>(arena_bytes_))
      arena = std::make_unique<Buffer>(static_cast<std::size_t>(arena_bytes_));
    ctx.arena = static_cast<std::byte*>(arena->data());
  }
  detail::ScopedFlushDenormals flush;
  run_each(ctx);
}

double DeviceRuntime::timed_ms(const std::function<void()>& enqueue) const {
  std::int64_t start = profiler::detail::now_ns();
  enqueue();
  synchronize();
  return static_cast<double>(profiler::detail::now_ns() - start) / 1e6;
}

// Runs the thunks in order. While a trace records, each is a span named after its instruction,
// of its kind (the first word of its line), with its program and line as args; on a device
// each waits for its work, and the span lasts the device's time for it (CUDA events).
void Executable::run_each(const ExecutionContext& ctx) const {
  if (!profiler::detail::active()) {
    for (const auto& t : thunks_) t->execute(ctx);
    return;
  }
  using profiler::detail::json_escape;
  for (const auto& t : thunks_) {
    std::int64_t start = profiler::detail::now_ns(), end = 0;
    if (device_) {
      double ms = device_->timed_ms([&] { t->execute(ctx); });
      end = start + static_cast<std::int64_t>(ms * 1e6);
    } else {
      t->execute(ctx);
      end = profiler::detail::now_ns();
    }
    std::string line = t->str();
    std::string kind = line.substr(0, line.find(' '));
    profiler::detail::record(
        t->label().empty() ? kind : t->label(), kind, start, end,
        "\"program\": \"" + json_escape(name_) + "\", \"thunk\": \"" + json_escape(line) + "\"");
  }
}

// Arguments on this executable's device are used where they are; any other is copied there
// for the call. Outputs are fresh device arrays (or donated arguments' storage).
void Executable::execute_on_device(const std::vector<Array>& args, Scratch& scratch,
                                   std::vector<Array>& outs) const {
  ExecutionContext& ctx = scratch.ctx;
  scratch.staged.clear();
  for (const Array& a : args) {
    const detail::ArrayImpl& impl = impl_of(a);
    if (impl.storage && impl.device() == device_->device()) {
      ctx.parameters.push_back(impl.storage->data());
      continue;
    }
    const Buffer& host = concrete_buffer(a, "jit dispatch");
    Array staged = make_device_array(a.aval(), device_->allocate(host.nbytes()));
    device_->write(staged.impl()->storage->data(), host.data(), host.nbytes());
    ctx.parameters.push_back(staged.impl()->storage->data());
    scratch.staged.push_back(std::move(staged));
  }
  for (std::size_t k = 0; k < out_avals_.size(); ++k) {
    const ShapedArray& aval = out_avals_[k];
    std::shared_ptr<DeviceStorage> storage;
    for (auto [arg, out] : donations_) {
      if (out != static_cast<int>(k)) continue;
      const detail::ArrayImpl& donor = impl_of(args[static_cast<std::size_t>(arg)]);
      if (donor.storage && donor.device() == device_->device() && donor.storage.use_count() == 1 &&
          !passed_again(args, arg)) {
        storage = donor.storage;
        args[static_cast<std::size_t>(arg)].impl()->storage.reset();  // the argument is deleted
      }
    }
    if (!storage)
      storage = device_->allocate(static_cast<std::size_t>(aval.size()) * itemsize(aval.dtype));
    ctx.outputs.push_back(storage->data());
    outs.push_back(make_device_array(aval, std::move(storage)));
  }
  run_thunks(scratch);
}

std::vector<Array> Executable::execute(const std::vector<Array>& args) const {
  JX_CHECK(args.size() == in_avals_.size());
  ScratchLease lease;
  ExecutionContext& ctx = lease.get().ctx;
  std::vector<Array> outs;
  if (device_) {
    outs.reserve(out_avals_.size());
    execute_on_device(args, lease.get(), outs);
    return outs;
  }
  for (const auto& a : args)
    ctx.parameters.push_back(const_cast<void*>(concrete_buffer(a, "jit dispatch").data()));
  outs.reserve(out_avals_.size());
  for (std::size_t k = 0; k < out_avals_.size(); ++k) {
    const ShapedArray& aval = out_avals_[k];
    std::shared_ptr<Buffer> buffer;
    for (auto [arg, out] : donations_)
      if (out == static_cast<int>(k)) buffer = take_donated(args, arg);
    // Every output byte is written by a thunk: no zero-fill.
    auto bytes = static_cast<std::size_t>(aval.size()) * itemsize(aval.dtype);
    if (!buffer) buffer = std::make_shared<Buffer>(bytes, Buffer::Uninitialized{});
    ctx.outputs.push_back(buffer->data());
    outs.push_back(make_array(aval, std::move(buffer)));
  }
  run_thunks(lease.get());
  return outs;
}

void Executable::run(std::span<void* const> params, std::span<void* const> outputs) const {
  JX_CHECK(params.size() == in_avals_.size() && outputs.size() == out_avals_.size());
  ScratchLease lease;
  ExecutionContext& ctx = lease.get().ctx;
  ctx.parameters.assign(params.begin(), params.end());
  ctx.outputs.assign(outputs.begin(), outputs.end());
  run_thunks(lease.get());
}

std::string Executable::thunk_sequence() const {
  std::string s;
  for (const auto& t : thunks_) s += t->str() + "\n";
  return s;
}

}  // namespace jx::runtime
