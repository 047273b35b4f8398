// A jitted call's cache miss: why it missed (the record, its explanation, the retrace limits,
// the callback), then its program, from a warm entry of the persistent cache or compiled anew.
#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>

#include "api/compile.hpp"
#include "api/jit_cache.hpp"
#include "api/jit_state.hpp"
#include "api/persistent_cache.hpp"
#include "backend/backend.hpp"
#include "core/array_impl.hpp"
#include "jx/config.hpp"
#include "jx/jit.hpp"
#include "support/disk_cache.hpp"
#include "support/hot_thread_local.hpp"
#include "support/profiler.hpp"

namespace jx::detail {
namespace {

std::string fmt_ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", ms);
  return buf;
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
  // Static values print as their type says (or as "<value>"): distinct ones may print alike.
  for (const api::StoredStatic& s : sig.statics) key += "#" + std::to_string(s.hash) + " ";
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

}  // namespace

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
