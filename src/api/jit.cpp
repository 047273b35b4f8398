// jx::jit's dispatch: per-function state, the hit path, tracing and compiling on a miss,
// statistics, compile logs, cache-miss explanations, and the AOT lower/compile objects.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <tuple>
#include <typeindex>

#include "api/compile.hpp"
#include "api/jit_cache.hpp"
#include "api/persistent_cache.hpp"
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

class JitState : public std::enable_shared_from_this<JitState> {
 public:
  std::string name;          // "f"
  std::string program_name;  // "jit_f"
  std::string trace_name;    // "jit(f)", as messages name the transformation
  std::vector<int> static_argnums, donate_argnums;
  std::uint64_t static_mask = 0;
  std::optional<Device> device;
  std::string persistent_key;  // empty: calls are not kept across processes
  int cache_capacity = 0;      // 0: the flag's
  int max_retraces = -1;       // -1: unbounded

  std::mutex mu;                            // guards the caches and stats
  api::JitCache cache;                      // programs for the CPU
  api::JitCache staged;                     // jaxprs of calls under a trace
  std::map<int, api::JitCache> gpu_caches;  // by GPU id
  CacheInfo stats;
  std::vector<CacheMiss> misses;  // every miss, oldest first

  api::JitCache& cache_for(const Device& d) {
    return d.platform() == Platform::cpu ? cache : gpu_caches[d.id()];
  }
  int capacity() const { return cache_capacity > 0 ? cache_capacity : config().cache_capacity; }
};

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string fmt_ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", ms);
  return buf;
}

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

std::vector<ShapedArray> avals_of(const std::vector<Array>& xs) {
  std::vector<ShapedArray> out;
  out.reserve(xs.size());
  for (const auto& x : xs) out.push_back(x.aval());
  return out;
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

std::function<void(const CacheMiss&)>& miss_callback() {
  static std::function<void(const CacheMiss&)> callback;
  return callback;
}
std::mutex miss_callback_mu;
JX_HOT_THREAD_LOCAL int no_retrace_depth = 0;

// Why a call missed, from the closest signature cached for its device (the most recent on a
// tie): the first of its differences as the record; with --explain_cache_misses, all of them
// logged.
CacheMiss classify_miss(JitState& st, const Device& device, const CallArgs& ca,
                        const api::Signature& now) {
  CacheMiss m;
  m.function = st.trace_name;
  std::vector<api::JitCache::EntryPtr> entries;
  bool evicted = false, elsewhere = false;
  {
    std::lock_guard lock(st.mu);
    api::JitCache& cache = st.cache_for(device);
    entries = cache.entries();
    evicted = cache.was_evicted(ca);
    elsewhere = &st.cache != &cache && st.cache.size() > 0;
    for (const auto& [id, other] : st.gpu_caches)
      elsewhere = elsewhere || (&other != &cache && other.size() > 0);
  }
  std::vector<api::SignatureDiff> best;
  for (const auto& e : entries) {
    std::vector<api::SignatureDiff> d = api::signature_diffs(e->sig, now);
    if (best.empty() || d.size() < best.size()) best = std::move(d);
  }
  if (evicted) {
    m.reason = MissReason::evicted;
  } else if (best.empty()) {
    m.reason = elsewhere ? MissReason::new_device : MissReason::first_call;
  } else {
    m.reason = best[0].reason;
    m.path = best[0].path, m.before = best[0].before, m.after = best[0].after;
  }
  if (config().explain_cache_misses && !entries.empty()) {
    std::size_t n = entries.size();
    std::string msg = "jx: cache miss for " + st.program_name + " (" + std::to_string(n) +
                      (n == 1 ? " entry" : " entries") +
                      " cached); the closest signature differs at:";
    constexpr std::size_t kMaxShown = 10;
    for (std::size_t i = 0; i < best.size() && i < kMaxShown; ++i) msg += "\n  " + best[i].text;
    if (best.size() > kMaxShown)
      msg += "\n  ... and " + std::to_string(best.size() - kMaxShown) + " more";
    log_message(msg);
  }
  return m;
}

// Records a miss before its trace and returns where; inside jx::NoRetrace, or past
// max_retraces with --strict_retraces, the call stops here with a RetraceError.
std::size_t admit_miss(JitState& st, const CacheMiss& m) {
  std::size_t retraces = 0;
  {
    std::lock_guard lock(st.mu);
    st.misses.push_back(m);
    retraces = st.misses.size() - 1;
  }
  if (no_retrace_depth > 0)
    throw RetraceError(st.trace_name + " would retrace inside jx::NoRetrace: " + m.str());
  if (st.max_retraces < 0 || retraces <= static_cast<std::size_t>(st.max_retraces)) return retraces;
  std::string msg = st.trace_name + " retraced " + std::to_string(retraces) +
                    (retraces == 1 ? " time" : " times") +
                    ", more than its max_retraces=" + std::to_string(st.max_retraces) +
                    "; this time: " + m.str();
  if (config().strict_retraces) throw RetraceError(msg);
  log_message("jx: " + msg);
  return retraces;
}

// The cost of the miss recorded at `index` (other threads may have missed since), once
// compiled, then the global callback.
void report_miss(JitState& st, std::size_t index, const CacheMiss& m) {
  {
    std::lock_guard lock(st.mu);
    st.misses.at(index).times = m.times;
  }
  std::function<void(const CacheMiss&)> callback;
  {
    std::lock_guard lock(miss_callback_mu);
    callback = miss_callback();
  }
  if (callback) callback(m);
}

// ---- the persistent cache's warm entries (JitOptions::persistent_key) -----------------------

// What a warm entry is found by: the user's key, the function's program name, the call's
// signature (structures, avals, static values by their printed form, the code flags), and the
// device and target its code runs on.
std::string warm_key(const JitState& st, const api::Signature& sig, const Device& device) {
  std::string key = "warm\n" + st.persistent_key + "\n" + st.program_name + "\n" + device.str() +
                    " " + backend::code_target(device) + "\n" + api::signature_str(sig) + "\n";
  for (const tree::TreeDef& t : sig.structures) key += t.str() + "\n";
  for (const auto& [name, value] : sig.flags.items()) key += name + "=" + value + " ";
  return key + "donate=" + argnums_str(st.donate_argnums) +
         " static=" + argnums_str(st.static_argnums);
}

// What --verify_persistent_cache compares: the jaxpr's text and its consts' values.
std::uint64_t jaxpr_fingerprint(const ClosedJaxprData& j) {
  std::string text = to_string(j.jaxpr);
  for (const Array& c : j.consts) {
    const Buffer& data = concrete_buffer(c, "a persistent cache key");
    text += c.aval().str();
    text.append(data.as<char>(), data.nbytes());
  }
  return support::fingerprint64(text);
}

std::optional<api::WarmEntry> read_warm(const support::DiskCache& disk, const std::string& key) {
  std::optional<std::string> bytes = disk.read(key);
  if (!bytes) return std::nullopt;
  try {
    return api::read_warm_entry(*bytes);
  } catch (const Error& e) {
    disk.ignore(key, e.what());
    return std::nullopt;
  }
}

// The cache entry of a warm entry's program, or null (with a warning) when it does not fit the
// call or does not build.
std::shared_ptr<api::CacheEntry> serve_warm(const JitState& st, api::WarmEntry warm,
                                            const CallArgs& ca, const MissHandler& miss,
                                            const Device& device, const support::DiskCache& disk,
                                            const std::string& key) {
  auto entry = std::make_shared<api::CacheEntry>();
  entry->out_proto = miss.proto_from(warm.out_tree);
  std::vector<ShapedArray> in_avals = avals_of(warm.consts);
  for (const Array& x : ca.leaves) in_avals.push_back(x.aval());
  std::string why = !entry->out_proto ? "its output structure " + warm.out_tree.str() +
                                            " is not one of " + st.trace_name + "'s"
                    : in_avals != warm.program.in_avals ? "its parameters differ from the call's"
                                                        : "";
  try {
    if (why.empty())
      entry->program = std::make_shared<const api::CompiledProgram>(
          api::load_program(std::make_shared<const api::StoredProgram>(std::move(warm.program)),
                            std::move(warm.consts), st.program_name, device));
  } catch (const Error& e) {
    why = e.what();
  }
  if (!why.empty()) {
    disk.ignore(key, why);
    return nullptr;
  }
  return entry;
}

// Traces, lowers and compiles a new signature, then caches it. With a persistent_key and a
// compilation cache, a warm entry stands in for all three, and a compile writes one.
api::JitCache::EntryPtr compile_miss(JitState& st, const CallArgs& ca, const MissHandler& miss,
                                     const Device& device) {
  const Config& cfg = config();
  auto entry = std::make_shared<api::CacheEntry>();
  entry->sig = api::make_signature(ca, api::hash_call(ca), miss.structures());
  CacheMiss record = classify_miss(st, device, ca, entry->sig);
  std::size_t index = admit_miss(st, record);

  std::shared_ptr<const support::DiskCache> disk =
      st.persistent_key.empty() ? nullptr : api::disk_cache();
  std::string key = disk ? warm_key(st, entry->sig, device) : "";
  auto t0 = Clock::now();
  std::optional<api::WarmEntry> warm = disk ? read_warm(*disk, key) : std::nullopt;
  auto serve = [&]() -> api::JitCache::EntryPtr {
    profiler::detail::ScopedSpan span("load", st.program_name, "compile");
    std::shared_ptr<api::CacheEntry> served =
        serve_warm(st, std::move(*warm), ca, miss, device, *disk, key);
    warm.reset();
    if (!served) return nullptr;
    served->sig = std::move(entry->sig);
    record.times.load_ms = ms_since(t0);
    if (cfg.log_compiles)
      log_message("jx: loaded " + st.program_name + " for " + api::signature_str(served->sig) +
                  " from the compilation cache in " + fmt_ms(record.times.load_ms) + " ms");
    report_miss(st, index, record);
    std::lock_guard lock(st.mu);
    ++st.stats.disk_hits;
    return st.cache_for(device).insert(std::move(served), st.capacity());
  };
  if (warm && !cfg.verify_persistent_cache)
    if (api::JitCache::EntryPtr served = serve()) return served;

  profiler::detail::ScopedSpan span("compile", st.program_name, "compile");
  double trace_ms = 0;
  auto jaxpr = trace_call(st, ca, miss, entry->out_proto, trace_ms);
  record.times.trace_ms = trace_ms;
  if (closes_over_tracer(*jaxpr)) {  // an outer trace's value: valid only inside that trace
    entry->jaxpr = std::move(jaxpr);
    report_miss(st, index, record);
    return entry;
  }
  if (warm) {  // --verify_persistent_cache
    if (warm->jaxpr_fingerprint != jaxpr_fingerprint(*jaxpr))
      throw Error(st.trace_name + " traced to another jaxpr than the one stored under its " +
                  "persistent_key '" + st.persistent_key + "' (" + disk->path_of(key) +
                  "): the function or a value it closes over changed; change the key");
    t0 = Clock::now();
    if (api::JitCache::EntryPtr served = serve()) return served;
  }
  entry->jaxpr = jaxpr;  // for --debug_nans, which runs it op by op
  api::LoweredProgram lowered = api::lower_program(jaxpr, st.program_name);
  lowered.donated = donated_leaves(st, ca);
  auto compiled =
      std::make_shared<const api::CompiledProgram>(api::compile_program(lowered, device));
  entry->program = compiled;
  {
    std::lock_guard lock(st.mu);
    ++st.stats.compiles;
    st.stats.disk_hits += compiled->code_from_disk;
    st.stats.lower_ms += lowered.lower_ms;
    st.stats.optimize_ms += compiled->optimize_ms;
    st.stats.codegen_ms += compiled->codegen_ms;
  }
  if (cfg.log_compiles) {
    double total = trace_ms + lowered.lower_ms + compiled->optimize_ms + compiled->codegen_ms +
                   compiled->load_ms;
    log_message("jx: compiled " + st.program_name + " for " + api::signature_str(entry->sig) +
                (device == Device{} ? "" : " on " + device.str()) + " in " + fmt_ms(total) +
                " ms [trace " + fmt_ms(trace_ms) + ", lower " + fmt_ms(lowered.lower_ms) +
                ", optimize " + fmt_ms(compiled->optimize_ms) + ", " +
                (compiled->code_from_disk ? "load " + fmt_ms(compiled->load_ms)
                                          : "codegen " + fmt_ms(compiled->codegen_ms)) +
                "]");
  }
  record.times.lower_ms = lowered.lower_ms;
  record.times.optimize_ms = compiled->optimize_ms;
  record.times.codegen_ms = compiled->codegen_ms;
  record.times.load_ms = compiled->load_ms;
  report_miss(st, index, record);
  if (disk && compiled->stored) {
    try {
      disk->write(key, api::write_warm_entry({jaxpr_fingerprint(*jaxpr),
                                              miss.out_structure(entry->out_proto.get()),
                                              jaxpr->consts, *compiled->stored}));
    } catch (const Error& e) {
      log_message("jx: cannot write compilation cache entry " + disk->path_of(key) + ": " +
                  e.what());
    }
  }
  std::lock_guard lock(st.mu);
  return st.cache_for(device).insert(std::move(entry), st.capacity());
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
  if (!entry) entry = compile_miss(st, ca, miss, device);
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

// ---- AOT ------------------------------------------------------------------------------------

struct LoweredCall::Impl {
  std::shared_ptr<JitState> state;
  api::LoweredProgram lowered;
  api::Signature sig;  // the non-static arguments only: what a compiled call must match
  std::shared_ptr<const void> out_proto;
};

struct CompiledCall::Impl {
  std::shared_ptr<const LoweredCall::Impl> lowered;
  std::shared_ptr<const api::CompiledProgram> program;
};

LoweredCall jit_lower(JitState& st, CallArgs& ca, const MissHandler& miss) {
  if (ca.error != ArgError::none) throw_arg_error(st, ca);
  auto impl = std::make_shared<LoweredCall::Impl>();
  impl->state = st.shared_from_this();
  double trace_ms = 0;
  auto jaxpr = trace_call(st, ca, miss, impl->out_proto, trace_ms);
  if (closes_over_tracer(*jaxpr))
    throw Error(st.trace_name +
                ".lower: the function closes over a traced value of an enclosing "
                "transformation; lower it outside that transformation");
  impl->lowered = api::lower_program(jaxpr, st.program_name);
  impl->lowered.donated = donated_leaves(st, ca);
  {
    std::lock_guard lock(st.mu);
    st.stats.lower_ms += impl->lowered.lower_ms;
  }
  impl->sig.avals = avals_of(ca.leaves);
  for (auto& t : miss.structures())
    if (t.kind != tree::TreeDef::Kind::static_value) impl->sig.structures.push_back(std::move(t));
  impl->sig.num_args = static_cast<int>(impl->sig.structures.size());
  return LoweredCall(std::move(impl));
}

const std::string& LoweredCall::jaxpr_text() const { return impl_->lowered.jaxpr_text->get(); }
const std::string& LoweredCall::hlo_text() const { return impl_->lowered.hlo_text->get(); }
const std::shared_ptr<const void>& LoweredCall::out_proto() const { return impl_->out_proto; }

CompiledCall LoweredCall::compile() const {
  auto impl = std::make_shared<CompiledCall::Impl>();
  impl->lowered = impl_;
  JitState& st = *impl_->state;
  impl->program = std::make_shared<const api::CompiledProgram>(
      api::compile_program(impl_->lowered, st.device.value_or(Device{})));
  std::lock_guard lock(st.mu);
  ++st.stats.compiles;
  st.stats.optimize_ms += impl->program->optimize_ms;
  st.stats.codegen_ms += impl->program->codegen_ms;
  return CompiledCall(std::move(impl));
}

const std::string& CompiledCall::hlo_text() const { return impl_->program->hlo_text->get(); }
const std::string& CompiledCall::thunk_sequence() const {
  return impl_->program->thunk_sequence->get();
}
const std::shared_ptr<const void>& CompiledCall::out_proto() const {
  return impl_->lowered->out_proto;
}

CostAnalysis CompiledCall::cost_analysis() const {
  const auto& c = impl_->program->cost;
  return CostAnalysis{c.flops, c.transcendentals, c.bytes_accessed};
}

MemoryAnalysis CompiledCall::memory_analysis() const {
  const auto& m = impl_->program->memory;
  return MemoryAnalysis{m.argument_bytes, m.output_bytes, m.temp_bytes};
}

std::vector<Array> CompiledCall::run(const std::vector<Array>& leaves,
                                     const std::vector<tree::TreeDef>& structures) const {
  const api::Signature& want = impl_->lowered->sig;
  auto same_avals = [&] {  // compared in place: a call allocates no aval list
    if (leaves.size() != want.avals.size()) return false;
    for (std::size_t k = 0; k < leaves.size(); ++k)
      if (leaves[k].aval() != want.avals[k]) return false;
    return true;
  };
  if (structures != want.structures || !same_avals()) {
    api::Signature got;
    got.structures = structures;
    got.avals = avals_of(leaves);
    got.num_args = static_cast<int>(structures.size());
    std::vector<std::string> diffs;
    for (const api::SignatureDiff& d : api::signature_diffs(want, got)) diffs.push_back(d.text);
    throw TypeError("Computation " + impl_->lowered->lowered.name +
                    " was compiled for other argument types than it was called with: " +
                    detail::join(diffs, "; "));
  }
  // Under a trace the program is staged into it, equation by equation.
  if (trace::tracing()) {
    const auto& j = *impl_->lowered->lowered.jaxpr;
    return eval_jaxpr(j.jaxpr, j.consts, leaves);
  }
  return (*impl_->program)(leaves);
}

}  // namespace jx::detail

namespace jx {

std::string_view miss_reason_name(MissReason reason) {
  switch (reason) {
    case MissReason::first_call:
      return "first_call";
    case MissReason::new_shape:
      return "new_shape";
    case MissReason::new_dtype:
      return "new_dtype";
    case MissReason::new_weak_type:
      return "new_weak_type";
    case MissReason::new_static_value:
      return "new_static_value";
    case MissReason::new_tree_structure:
      return "new_tree_structure";
    case MissReason::new_device:
      return "new_device";
    case MissReason::evicted:
      return "evicted";
    case MissReason::flags_changed:
      return "flags_changed";
  }
  return "?";
}

std::string CacheMiss::str() const {
  std::string s = function + ": " + std::string(miss_reason_name(reason));
  if (!path.empty()) s += " at " + path + ": " + before + " → " + after;
  return s;
}

void on_cache_miss(std::function<void(const CacheMiss&)> callback) {
  std::lock_guard lock(detail::miss_callback_mu);
  detail::miss_callback() = std::move(callback);
}

NoRetrace::NoRetrace() { ++detail::no_retrace_depth; }
NoRetrace::~NoRetrace() { --detail::no_retrace_depth; }

}  // namespace jx
