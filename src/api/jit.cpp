// jx::jit's dispatch: per-function state, the hit path, tracing, calls staged under a trace,
// and statistics. A miss compiles in jit_miss.cpp; AOT lowering is jit_aot.cpp.
#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <tuple>
#include <typeindex>

#include "api/device.hpp"
#include "api/jit_state.hpp"
#include "backend/backend.hpp"
#include "core/array_impl.hpp"
#include "jx/config.hpp"
#include "jx/jit.hpp"
#include "primitives/call.hpp"
#include "support/format.hpp"
#include "support/hot_thread_local.hpp"
#include "support/profiler.hpp"
#include "trace/staging.hpp"
#include "trace/tracer.hpp"

namespace jx::detail {

std::string argnums_str(const std::vector<int>& xs) { return detail::tuple_str(xs); }

[[noreturn]] void throw_arg_error(const JitState& st, const CallArgs& ca) {
  std::string arg = "Argument " + std::to_string(ca.error_argnum) + " of " + st.trace_name;
  switch (ca.error) {
    case ArgError::not_a_pytree:
      throw TypeError(arg +
                      " is not a valid jx type (a pytree of Arrays and scalars): mark it "
                      "static with jx::Static or JitOptions::static_argnums");
    case ArgError::unhashable_static:
      throw TypeError("Non-hashable static arguments are not supported: " + arg +
                      " is in static_argnums, but its type has no std::hash or ==");
    case ArgError::scalar_not_traced:
      throw TypeError(arg +
                      " holds C++ scalars, which the function takes as they are, so it "
                      "cannot be traced: mark it static (jx::Static or "
                      "JitOptions::static_argnums) or take jx::Arrays instead");
    case ArgError::none:
      break;
  }
  throw Error("internal: bad ArgError");
}

// Which leaves belong to the arguments in donate_argnums.
std::vector<bool> donated_leaves(const JitState& st, const CallArgs& ca) {
  std::vector<bool> donated(ca.leaves.size(), false);
  for (int a : st.donate_argnums) {
    auto k = static_cast<std::size_t>(a);
    if (k >= ca.arg_leaf_begin.size()) continue;
    std::size_t end =
        k + 1 < ca.arg_leaf_begin.size() ? ca.arg_leaf_begin[k + 1] : ca.leaves.size();
    for (std::size_t i = ca.arg_leaf_begin[k]; i < end; ++i) donated[i] = true;
  }
  return donated;
}

// Traces the function at the call's avals; counts the trace and its time.
std::shared_ptr<const ClosedJaxprData> trace_call(JitState& st, const CallArgs& ca,
                                                  const MissHandler& miss,
                                                  std::shared_ptr<const void>& out_proto,
                                                  double& trace_ms) {
  {
    std::lock_guard lock(st.mu);
    ++st.stats.traces;
  }
  profiler::detail::ScopedSpan span("trace", st.program_name, "compile");
  auto t0 = Clock::now();
  auto fn = [&](const std::vector<Array>& tracers) { return miss.trace(tracers, out_proto); };
  ClosedJaxprData data = trace::trace_to_jaxpr(fn, avals_of(ca.leaves), st.trace_name);
  trace_ms = ms_since(t0);
  {
    std::lock_guard lock(st.mu);
    st.stats.trace_ms += trace_ms;
  }
  return std::make_shared<const ClosedJaxprData>(std::move(data));
}

bool closes_over_tracer(const ClosedJaxprData& j) {
  return std::any_of(j.consts.begin(), j.consts.end(),
                     [](const Array& c) { return c.is_tracer(); });
}

namespace {

// Where a call runs: the jit's device, else the device its committed arguments share, else
// the CPU.
Device call_device(const JitState& st, const std::vector<Array>& leaves) {
  std::optional<Device> committed = committed_device(leaves, st.trace_name);
  if (!st.device) return committed.value_or(Device{});
  if (committed && *committed != *st.device) {
    for (std::size_t k = 0; k < leaves.size(); ++k)
      if (leaves[k].impl()->committed && leaves[k].impl()->device() != *st.device)
        throw ValueError(st.trace_name + " runs on " + st.device->str() + ", but argument " +
                         std::to_string(k) + " (" + leaves[k].aval().str() + ") is committed to " +
                         leaves[k].impl()->device().str() + "; move it with jx::device_put");
  }
  return *st.device;
}

// --debug_nans / --debug_infs: an invalid value in a jitted output runs the function again op by
// op, as JAX does, so that the error names the primitive that made it and its equation; when
// none does (only the compiled program made it, or an output is such a constant), it names the
// function.
void check_outputs(const JitState& st, const api::CacheEntry& entry,
                   const std::vector<Array>& leaves, const std::vector<Array>& outs) {
  try {
    trace::check_invalid_values(outs, st.trace_name);
  } catch (const FloatingPointError& e) {
    try {
      if (entry.jaxpr) eval_jaxpr_naming_equations(entry.jaxpr->jaxpr, entry.jaxpr->consts, leaves);
    } catch (const FloatingPointError&) {
      throw;
    } catch (const Error&) {
      // The arguments cannot run again (donated ones were deleted): the function is named.
    }
    throw FloatingPointError(std::string(e.what()) +
                             ". Run again op by op (as if not jitted), the function made no "
                             "invalid value: the compiled program's optimizations may have made "
                             "it, or an output is such a constant");
  }
}

// Under a trace, a call is one jit equation. Its jaxpr is cached by signature unless it closes
// over a tracer (valid only in this trace), so calls with one signature share one jaxpr.
api::JitCache::EntryPtr staged_entry(JitState& st, const CallArgs& ca, const MissHandler& miss) {
  {
    std::lock_guard lock(st.mu);
    if (auto entry = st.staged.find(ca)) return entry;
  }
  auto entry = std::make_shared<api::CacheEntry>();
  entry->sig = api::make_signature(ca, api::hash_call(ca), miss.structures());
  double trace_ms = 0;
  entry->jaxpr = trace_call(st, ca, miss, entry->out_proto, trace_ms);
  if (closes_over_tracer(*entry->jaxpr)) return entry;
  std::lock_guard lock(st.mu);
  return st.staged.insert(std::move(entry), st.capacity());
}

std::vector<Array> run_entry(const api::CacheEntry& e, const std::vector<Array>& leaves) {
  if (e.program) return (*e.program)(leaves);
  return eval_jaxpr(e.jaxpr->jaxpr, e.jaxpr->consts, leaves);
}

JX_HOT_THREAD_LOCAL std::vector<std::unique_ptr<CallArgs>> call_args_pool;

}  // namespace

void CallArgs::clear() {
  type_token = nullptr;
  num_args = 0;
  leaves.clear();
  arg_leaf_begin.clear();
  structure.clear();
  statics.clear();
  error = ArgError::none;
  error_argnum = 0;
}

CallArgsLease::CallArgsLease() {
  if (call_args_pool.empty()) {
    args_ = new CallArgs;
  } else {
    args_ = call_args_pool.back().release();
    call_args_pool.pop_back();
  }
}

CallArgsLease::~CallArgsLease() {
  args_->clear();
  call_args_pool.emplace_back(args_);
}

namespace {

// The states of stateless callables (CallableId) by identity and options, kept for the process's
// life as JAX keeps a function's caches while the function lives; never destroyed, so that no
// program outlives at exit the runtime it runs on. A replaced backend (tests replace them) takes
// its programs out of them.
struct SharedStates {
  using Key = std::tuple<std::type_index, std::uintptr_t, std::string>;
  std::mutex mu;
  std::map<Key, std::shared_ptr<JitState>> by_key;
};

SharedStates& shared_states() {
  static auto* states = [] {
    auto* s = new SharedStates;
    backend::on_backend_factory_change([s](Platform platform) {
      std::lock_guard lock(s->mu);
      for (auto& [key, st] : s->by_key) {
        std::lock_guard state_lock(st->mu);
        platform == Platform::cpu ? st->cache.clear() : st->gpu_caches.clear();
      }
    });
    return s;
  }();
  return *states;
}

std::string options_key(const JitOptions& o) {
  return o.name + "\n" + argnums_str(o.static_argnums) + argnums_str(o.donate_argnums) + "\n" +
         (o.device ? o.device->str() : "-") + "\n" + o.persistent_key + "\n" +
         std::to_string(o.cache_capacity) + " " + std::to_string(o.max_retraces);
}

}  // namespace

std::shared_ptr<JitState> make_jit_state(const JitOptions& options, std::optional<CallableId> id) {
  if (id) {
    SharedStates& shared = shared_states();
    SharedStates::Key key{*id->type, id->address, options_key(options)};
    std::lock_guard lock(shared.mu);
    auto it = shared.by_key.find(key);
    if (it != shared.by_key.end()) return it->second;
    std::shared_ptr<JitState> st = make_jit_state(options);
    shared.by_key.emplace(std::move(key), st);
    return st;
  }
  auto st = std::make_shared<JitState>();
  st->name = options.name;
  st->program_name = "jit_" + options.name;
  st->trace_name = "jit(" + options.name + ")";
  st->static_argnums = options.static_argnums;
  st->donate_argnums = options.donate_argnums;
  if (options.device) api::check_device(*options.device);
  st->device = options.device;
  st->persistent_key = options.persistent_key;
  if (options.cache_capacity < 0)
    throw Error("jit: cache_capacity must be positive (0 takes --cache_capacity), got " +
                std::to_string(options.cache_capacity));
  st->cache_capacity = options.cache_capacity;
  st->max_retraces = options.max_retraces;
  for (int i : options.static_argnums) {
    if (i < 0 || i >= 64)
      throw Error("jit: static_argnums must be argument positions in [0, 64), got " +
                  std::to_string(i));
    st->static_mask |= std::uint64_t{1} << i;
  }
  for (int i : options.donate_argnums) {
    if (i < 0)
      throw Error("jit: donate_argnums must be argument positions, got " + std::to_string(i));
    if (std::find(options.static_argnums.begin(), options.static_argnums.end(), i) !=
        options.static_argnums.end())
      throw Error("jit: argument " + std::to_string(i) +
                  " is in both static_argnums and donate_argnums");
  }
  return st;
}

std::uint64_t static_mask(const JitState& state) { return state.static_mask; }

void throw_too_few_args(const JitState& st, int num_args) {
  throw Error("jitted function " + st.trace_name +
              " has static_argnums=" + argnums_str(st.static_argnums) +
              ", but was called with only " + std::to_string(num_args) + " positional arguments");
}

namespace {

// A miss on a signature another thread is compiling waits for that compile and takes its entry
// (a hit, after all): concurrent first calls trace and compile once, and count one miss.
api::JitCache::EntryPtr compile_once(JitState& st, const CallArgs& ca, const MissHandler& miss,
                                     const Device& device) {
  std::pair<std::string, std::uint64_t> key{device.str(), api::hash_call(ca)};
  std::promise<void> done;
  std::shared_future<void> pending;
  {
    std::lock_guard lock(st.mu);
    auto [it, mine] = st.compiling.try_emplace(key, done.get_future().share());
    if (!mine) pending = it->second;
  }
  if (pending.valid()) {
    pending.wait();
    {
      std::lock_guard lock(st.mu);
      if (api::JitCache::EntryPtr entry = st.cache_for(device).find(ca)) {
        --st.stats.misses;
        ++st.stats.hits;
        return entry;
      }
    }
    return compile_miss(st, ca, miss, device);  // it failed, or hashed alike but differs
  }
  auto finish = [&] {
    std::lock_guard lock(st.mu);
    st.compiling.erase(key);
    done.set_value();
  };
  try {
    api::JitCache::EntryPtr entry = compile_miss(st, ca, miss, device);
    finish();
    return entry;
  } catch (...) {
    finish();
    throw;
  }
}

}  // namespace

CallResult jit_call(JitState& st, CallArgs& ca, const MissHandler& miss) {
  CallResult r;
  const Config& cfg = config();
  if (cfg.disable_jit) {
    r.run_inline = true;
    return r;
  }
  if (ca.error != ArgError::none) throw_arg_error(st, ca);
  for (const Array& x : ca.leaves) impl_of(x);  // an empty Array is an error here
  if (trace::tracing()) {
    api::JitCache::EntryPtr entry = staged_entry(st, ca, miss);
    r.outs = bind_jit(entry->jaxpr, ca.leaves, st.name);
    const void* proto = entry->out_proto.get();
    r.out_proto = std::shared_ptr<const void>(std::move(entry), proto);
    return r;
  }
  Device device = call_device(st, ca.leaves);
  api::JitCache::EntryPtr entry;
  {
    std::lock_guard lock(st.mu);
    entry = st.cache_for(device).find(ca);
    ++(entry ? st.stats.hits : st.stats.misses);
  }
  if (!entry) entry = compile_once(st, ca, miss, device);
  r.outs = run_entry(*entry, ca.leaves);
  if (cfg.debug_nans || cfg.debug_infs) check_outputs(st, *entry, ca.leaves, r.outs);
  const void* proto = entry->out_proto.get();
  r.out_proto = std::shared_ptr<const void>(std::move(entry), proto);  // keeps the entry alive
  return r;
}

CacheInfo cache_info(const JitState& state) {
  auto& st = const_cast<JitState&>(state);  // the lock only
  std::lock_guard lock(st.mu);
  CacheInfo info = st.stats;
  info.entries = static_cast<std::int64_t>(st.cache.size());
  info.evictions = st.cache.evictions();
  for (const auto& [id, cache] : st.gpu_caches) {
    info.entries += static_cast<std::int64_t>(cache.size());
    info.evictions += cache.evictions();
  }
  return info;
}

std::vector<CacheMiss> cache_misses(const JitState& state) {
  auto& st = const_cast<JitState&>(state);  // the lock only
  std::lock_guard lock(st.mu);
  return st.misses;
}

void clear_cache(JitState& st) {
  std::lock_guard lock(st.mu);
  st.cache.clear();
  st.gpu_caches.clear();
  st.staged.clear();
}

}  // namespace jx::detail
