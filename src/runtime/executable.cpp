#include "runtime/executable.hpp"

#include "core/array_impl.hpp"
#include "support/check.hpp"

namespace jx::runtime {

std::vector<Array> Executable::execute(const std::vector<Array>& args) const {
  JX_CHECK(args.size() == in_avals_.size());
  ExecutionContext ctx;
  for (const auto& a : args)
    ctx.parameters.push_back(const_cast<void*>(concrete_buffer(a, "jit dispatch").data()));
  for (const auto& c : constants_) ctx.constants.push_back(concrete_buffer(c, "constant").data());
  std::vector<Array> outs;
  for (const auto& aval : out_avals_) {
    outs.push_back(make_array(aval));
    ctx.outputs.push_back(outs.back().impl()->buffer->data());
  }
  // The arena lives for one execution; thread-local reuse keeps dispatch free of allocation.
  thread_local std::unique_ptr<Buffer> arena;
  if (arena_bytes_ > 0) {
    if (!arena || arena->nbytes() < static_cast<std::size_t>(arena_bytes_))
      arena = std::make_unique<Buffer>(static_cast<std::size_t>(arena_bytes_));
    ctx.arena = static_cast<std::byte*>(arena->data());
  }
  for (const auto& t : thunks_) t->execute(ctx);
  return outs;
}

std::string Executable::thunk_sequence() const {
  std::string s;
  for (const auto& t : thunks_) s += t->str() + "\n";
  return s;
}

}  // namespace jx::runtime
