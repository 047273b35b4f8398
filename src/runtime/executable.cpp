#include "runtime/executable.hpp"

#include <cstring>

#include "core/array_impl.hpp"
#include "support/check.hpp"

namespace jx::runtime {

// Per-thread scratch for one execution (pointer tables and the arena), reused by the next so
// that dispatch allocates only the outputs. Executions nest (a while's body, a kernel that calls
// back into jx): each nesting depth has its own scratch, so a loop's body reuses the same one
// every iteration.
struct Scratch {
  ExecutionContext ctx;
  std::unique_ptr<Buffer> arena;
};

namespace {

// The buffer of donated argument `arg`, which it gives up: its own when nothing else holds it,
// else a copy.
std::shared_ptr<Buffer> take_donated(const std::vector<Array>& args, int arg) {
  const Array& a = args[static_cast<std::size_t>(arg)];
  std::shared_ptr<Buffer>& held = a.impl()->buffer;
  const Buffer& source = concrete_buffer(a, "jit dispatch");
  bool shared = held.use_count() > 1;
  for (std::size_t k = 0; k < args.size() && !shared; ++k)
    shared = k != static_cast<std::size_t>(arg) && args[k].impl()->buffer == held;
  std::shared_ptr<Buffer> out = held;
  if (shared) {
    out = std::make_shared<Buffer>(source.nbytes(), Buffer::Uninitialized{});
    std::memcpy(out->data(), source.data(), source.nbytes());
  }
  held.reset();  // the argument is deleted
  return out;
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
  ~ScratchLease() { --depth(); }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  Scratch& get() { return *scratch_; }

 private:
  // unique_ptr: a deeper execution may grow the stack while this one holds its scratch.
  static std::vector<std::unique_ptr<Scratch>>& stack_of_thread() {
    thread_local std::vector<std::unique_ptr<Scratch>> stack;
    return stack;
  }
  static std::size_t& depth() {
    thread_local std::size_t d = 0;
    return d;
  }
  std::size_t depth_;
  Scratch* scratch_;
};

}  // namespace

void Executable::run_thunks(Scratch& scratch) const {
  ExecutionContext& ctx = scratch.ctx;
  for (const auto& c : constants_) ctx.constants.push_back(concrete_buffer(c, "constant").data());
  std::unique_ptr<Buffer>& arena = scratch.arena;
  if (arena_bytes_ > 0) {
    if (!arena || arena->nbytes() < static_cast<std::size_t>(arena_bytes_))
      arena = std::make_unique<Buffer>(static_cast<std::size_t>(arena_bytes_));
    ctx.arena = static_cast<std::byte*>(arena->data());
  }
  for (const auto& t : thunks_) t->execute(ctx);
}

std::vector<Array> Executable::execute(const std::vector<Array>& args) const {
  JX_CHECK(args.size() == in_avals_.size());
  ScratchLease lease;
  ExecutionContext& ctx = lease.get().ctx;
  for (const auto& a : args)
    ctx.parameters.push_back(const_cast<void*>(concrete_buffer(a, "jit dispatch").data()));
  std::vector<Array> outs;
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
