// The non-template interface between jx::jit's templates (jit.hpp) and its implementation in
// libjx (src/api/jit*.cpp): the cache key of one call, and what the cache asks of a miss.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "jx/array.hpp"
#include "jx/tree.hpp"

namespace jx {

struct JitOptions;
struct CacheInfo;
struct CacheMiss;
struct CostAnalysis;
struct MemoryAnalysis;

namespace detail {

// Type-erased operations on a static argument's type (one constant table per type).
struct StaticOps {
  bool (*equal)(const void* a, const void* b);
  std::shared_ptr<const void> (*copy)(const void* value);
  std::string (*str)(const void* value);
};

// A static argument of the current call: it points at the caller's value.
struct StaticRef {
  int argnum;
  std::size_t hash;
  const StaticOps* ops;
  const void* value;
};

// Why the templates could not key an argument; the implementation throws with the name.
enum class ArgError : std::uint8_t { none, not_a_pytree, unhashable_static, scalar_not_traced };

// One call's arguments as the cache sees them: the C++ argument types (one token per pack),
// the leaves, the runtime structure, the static values. Pooled per thread, so a cache hit
// allocates nothing.
struct CallArgs {
  const void* type_token = nullptr;
  int num_args = 0;
  std::vector<Array> leaves;
  std::vector<std::size_t> arg_leaf_begin;  // per argument: its first leaf's index
  tree::CompactStructure structure;
  std::vector<StaticRef> statics;
  ArgError error = ArgError::none;
  int error_argnum = 0;
  void clear();
};

// Borrows a CallArgs from this thread's pool for one call (calls nest while tracing).
class CallArgsLease {
 public:
  CallArgsLease();
  ~CallArgsLease();
  CallArgsLease(const CallArgsLease&) = delete;
  CallArgsLease& operator=(const CallArgsLease&) = delete;
  CallArgs& args() { return *args_; }

 private:
  CallArgs* args_;
};

// What the cache needs from the templates on a miss.
class MissHandler {
 public:
  // Each argument's full structure; static arguments are static_value nodes.
  virtual std::vector<tree::TreeDef> structures() const = 0;
  // Calls the function on `leaves` (tracers), returns its flat outputs and sets `out_proto` to
  // an output of the same structure (with empty leaves) to rebuild results from.
  virtual std::vector<Array> trace(const std::vector<Array>& leaves,
                                   std::shared_ptr<const void>& out_proto) const = 0;
  // The structure of an output prototype, and a prototype of a stored structure (null when it
  // is not one of the function's output type): what a persistent cache entry keeps of it.
  virtual tree::TreeDef out_structure(const void* out_proto) const = 0;
  virtual std::shared_ptr<const void> proto_from(const tree::TreeDef& structure) const = 0;

 protected:
  ~MissHandler() = default;
};

struct CallResult {
  bool run_inline = false;  // jit is disabled: call the function itself
  std::vector<Array> outs;
  std::shared_ptr<const void> out_proto;
};

class JitState;  // a jitted function's options, cache and statistics (src/api/jit_state.hpp)

// What identifies a stateless callable: its type, and a function pointer's address. jit wrappers
// of one identity and equal options share their state (cache, statistics, misses), as JAX keys
// its caches on the function: `for (...) jx::jit(&step)(x)` compiles once. A callable with state
// (captures) has none: its bytes may hold the address of a variable that a later one reuses, so
// sharing by them could run a program traced with another closure's values.
struct CallableId {
  const std::type_info* type = nullptr;
  std::uintptr_t address = 0;
};
template <class F>
std::optional<CallableId> callable_id(const F& f) {
  if constexpr (std::is_pointer_v<F> && std::is_function_v<std::remove_pointer_t<F>>)
    return CallableId{&typeid(F), reinterpret_cast<std::uintptr_t>(f)};
  else if constexpr (std::is_empty_v<F> && std::is_trivially_copyable_v<F>)
    return CallableId{&typeid(F), 0};
  else
    return std::nullopt;
}

// A new state, or with an identity, the state of that callable and options (made on first use).
std::shared_ptr<JitState> make_jit_state(const JitOptions& options,
                                         std::optional<CallableId> id = std::nullopt);
std::uint64_t static_mask(const JitState& state);
CallResult jit_call(JitState& state, CallArgs& args, const MissHandler& miss);
CacheInfo cache_info(const JitState& state);
std::vector<CacheMiss> cache_misses(const JitState& state);
void clear_cache(JitState& state);
[[noreturn]] void throw_too_few_args(const JitState& state, int num_args);

class CompiledCall;

// The AOT halves, type-erased; jx::Lowered<Out> and jx::Compiled<Out> wrap them.
class LoweredCall {
 public:
  struct Impl;
  explicit LoweredCall(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  const std::string& jaxpr_text() const;
  const std::string& hlo_text() const;
  const std::shared_ptr<const void>& out_proto() const;  // see MissHandler::trace
  CompiledCall compile() const;

 private:
  std::shared_ptr<const Impl> impl_;
};

class CompiledCall {
 public:
  struct Impl;
  explicit CompiledCall(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  const std::string& hlo_text() const;
  const std::shared_ptr<const void>& out_proto() const;
  CostAnalysis cost_analysis() const;
  MemoryAnalysis memory_analysis() const;
  const std::string& thunk_sequence() const;
  // Runs on the non-static arguments; throws jx::TypeError when they differ from the lowered
  // signature.
  std::vector<Array> run(const std::vector<Array>& leaves,
                         const std::vector<tree::TreeDef>& structures) const;

 private:
  std::shared_ptr<const Impl> impl_;
};

LoweredCall jit_lower(JitState& state, CallArgs& args, const MissHandler& miss);

}  // namespace detail
}  // namespace jx
