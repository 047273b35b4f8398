#include "runtime/control_flow_thunks.hpp"

#include <cstdint>

#include "core/buffer.hpp"
#include "support/check.hpp"

namespace jx::runtime {
namespace {

std::vector<void*> resolve_all(const ExecutionContext& ctx, const std::vector<Allocation>& as) {
  std::vector<void*> out;
  out.reserve(as.size());
  for (const Allocation& a : as) out.push_back(ctx.resolve(a));
  return out;
}

void copy_all(const ExecutionContext& ctx, const std::vector<void*>& from,
              const std::vector<void*>& to, const std::vector<Allocation>& sizes) {
  for (std::size_t k = 0; k < sizes.size(); ++k)
    if (from[k] != to[k]) ctx.copy(to[k], from[k], static_cast<std::size_t>(sizes[k].size));
}

std::string thunks_str(const Executable& e) { return std::to_string(e.num_thunks()) + " thunks"; }

}  // namespace

WhileThunk::WhileThunk(std::string name, std::shared_ptr<const Executable> condition,
                       std::shared_ptr<const Executable> body, std::vector<Allocation> init,
                       std::vector<Allocation> carry, std::vector<Allocation> spare,
                       std::optional<std::int64_t> trip_count)
    : name_(std::move(name)),
      condition_(std::move(condition)),
      body_(std::move(body)),
      init_(std::move(init)),
      carry_(std::move(carry)),
      spare_(std::move(spare)),
      trip_count_(trip_count) {
  JX_CHECK(init_.size() == carry_.size() && spare_.size() == carry_.size());
}

void WhileThunk::execute(const ExecutionContext& ctx) const {
  std::vector<void*> outputs = resolve_all(ctx, carry_);
  std::vector<void*> current = outputs, next = resolve_all(ctx, spare_);
  copy_all(ctx, resolve_all(ctx, init_), current, carry_);
  // A kernel's buffer, aligned as every other (KernelThunk::execute).
  alignas(Buffer::kAlignment) bool more = false;
  // On a device the condition writes its flag there, and each step waits to read it.
  std::shared_ptr<DeviceStorage> device_flag = ctx.device ? ctx.device->allocate(1) : nullptr;
  void* flag = device_flag ? device_flag->data() : &more;
  for (std::int64_t step = 0;; ++step) {
    if (trip_count_) {
      if (step == *trip_count_) break;
    } else {
      condition_->run(current, {&flag, 1});
      if (device_flag) ctx.read(&more, flag, 1);
      if (!more) break;
    }
    body_->run(current, next);
    std::swap(current, next);
  }
  copy_all(ctx, current, outputs, carry_);
}

std::string WhileThunk::str() const {
  return "while %" + name_ +
         (trip_count_ ? " (" + std::to_string(*trip_count_) + " trips"
                      : " (cond: " + thunks_str(*condition_)) +
         ", body: " + thunks_str(*body_) + ")";
}

ConditionalThunk::ConditionalThunk(std::string name,
                                   std::vector<std::shared_ptr<const Executable>> branches,
                                   Allocation index, std::vector<Allocation> operands,
                                   std::vector<Allocation> outputs)
    : name_(std::move(name)),
      branches_(std::move(branches)),
      index_(index),
      operands_(std::move(operands)),
      outputs_(std::move(outputs)) {
  JX_CHECK(!branches_.empty());
}

void ConditionalThunk::execute(const ExecutionContext& ctx) const {
  std::int32_t index = 0;
  ctx.read(&index, ctx.resolve(index_), sizeof index);
  auto n = static_cast<std::int32_t>(branches_.size());
  if (index < 0 || index >= n) index = n - 1;  // XLA's rule
  ResolvedBuffers operands(ctx, operands_), outputs(ctx, outputs_);
  branches_[static_cast<std::size_t>(index)]->run(operands.span(), outputs.span());
}

std::string ConditionalThunk::str() const {
  std::string s = "conditional %" + name_ + " (branches:";
  for (std::size_t k = 0; k < branches_.size(); ++k)
    s += (k ? ", " : " ") + thunks_str(*branches_[k]);
  return s + ")";
}

}  // namespace jx::runtime
