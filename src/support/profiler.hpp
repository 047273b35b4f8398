// The profiler's recorder (include/jx/profiler.hpp is its user interface): spans in memory while
// a trace records. A span costs one relaxed atomic load when none does.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace jx::profiler::detail {

extern std::atomic<bool> recording;
inline bool active() { return recording.load(std::memory_order_relaxed); }

std::int64_t now_ns();  // on the clock spans are measured by

// Records a finished span on the calling thread. `category` is the kind ("kernel", "gemm",
// "compile", "user", ...); `args` a JSON object's members, already escaped, or empty.
void record(std::string name, std::string category, std::int64_t start_ns, std::int64_t end_ns,
            std::string args = "");

// Records its scope as a span "<what> <program>" when a trace was recording as it began.
class ScopedSpan {
 public:
  ScopedSpan(const char* what, const std::string& program, const char* category)
      : category_(category), start_ns_(active() ? now_ns() : -1) {
    if (start_ns_ >= 0) name_ = std::string(what) + " " + program;
  }
  ~ScopedSpan() {
    if (start_ns_ >= 0) record(std::move(name_), category_, start_ns_, now_ns());
  }
  ScopedSpan(const ScopedSpan&) = delete;
  ScopedSpan& operator=(const ScopedSpan&) = delete;

 private:
  std::string name_;
  const char* category_;
  std::int64_t start_ns_;
};

// Names the calling thread in traces ("cpu worker 2"); unnamed threads are "thread <tid>".
void name_this_thread(std::string name);

// `text` as a JSON string's contents (quotes, backslashes and control characters escaped).
std::string json_escape(const std::string& text);

}  // namespace jx::profiler::detail
