// What the jit files share: a jitted function's state, and the steps of a call that the hit
// path (jit.cpp), the miss path (jit_miss.cpp) and AOT lowering (jit_aot.cpp) all take.
#pragma once

#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/jit_cache.hpp"
#include "jx/config.hpp"
#include "jx/detail/flat_fn.hpp"
#include "jx/detail/jit_impl.hpp"
#include "jx/device.hpp"
#include "jx/jit.hpp"
#include "support/stopwatch.hpp"

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
  // Signatures being compiled, by device and call hash: a thread missing on one waits for it.
  std::map<std::pair<std::string, std::uint64_t>, std::shared_future<void>> compiling;

  api::JitCache& cache_for(const Device& d) {
    return d.platform() == Platform::cpu ? cache : gpu_caches[d.id()];
  }
  int capacity() const { return cache_capacity > 0 ? cache_capacity : config().cache_capacity; }
};

// jit.cpp
using support::Clock;
using support::ms_since;
std::string argnums_str(const std::vector<int>& xs);
[[noreturn]] void throw_arg_error(const JitState& st, const CallArgs& ca);
std::vector<bool> donated_leaves(const JitState& st, const CallArgs& ca);
std::shared_ptr<const ClosedJaxprData> trace_call(JitState& st, const CallArgs& ca,
                                                  const MissHandler& miss,
                                                  std::shared_ptr<const void>& out_proto,
                                                  double& trace_ms);
bool closes_over_tracer(const ClosedJaxprData& j);

// jit_miss.cpp
api::JitCache::EntryPtr compile_miss(JitState& st, const CallArgs& ca, const MissHandler& miss,
                                     const Device& device);

}  // namespace jx::detail
