// The profiler: spans kept in memory while a trace records, written as Chrome trace JSON when it
// stops, and summed into a table.
#include "support/profiler.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <vector>

#include "jx/errors.hpp"
#include "jx/profiler.hpp"

namespace jx::profiler {
namespace detail {

std::atomic<bool> recording{false};

namespace {

struct Span {
  std::string name, category, args;
  std::int64_t start_ns, end_ns;
  int tid;
};

struct ThreadInfo {
  int tid;
  std::string name;
};

struct Recorder {
  std::mutex mu;
  std::string path;
  std::int64_t origin_ns = 0;
  std::vector<Span> spans;  // of the trace recording, or of the last one
  std::map<int, std::string> thread_names;
};

Recorder& recorder() {
  static auto* r = new Recorder;  // threads may record while statics are destroyed
  return *r;
}

ThreadInfo& this_thread() {
  static std::atomic<int> next_tid{1};
  thread_local ThreadInfo info{next_tid++, ""};
  return info;
}

// Thunk kinds, as summary() counts them: what a program runs, not compiles, user spans or a
// kernel's share of rows on one thread.
bool is_thunk(const std::string& category) {
  return category != "compile" && category != "user" && category != "rows";
}
// Thunks that run others (whose time their nested thunks' spans count again).
bool nests(const std::string& category) { return category == "while" || category == "conditional"; }

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void record(std::string name, std::string category, std::int64_t start_ns, std::int64_t end_ns,
            std::string args) {
  ThreadInfo& thread = this_thread();
  Recorder& r = recorder();
  std::lock_guard lock(r.mu);
  if (!active()) return;  // the trace stopped while the span ran
  if (!r.thread_names.count(thread.tid))
    r.thread_names[thread.tid] =
        thread.name.empty() ? "thread " + std::to_string(thread.tid) : thread.name;
  r.spans.push_back(
      {std::move(name), std::move(category), std::move(args), start_ns, end_ns, thread.tid});
}

void name_this_thread(std::string name) { this_thread().name = std::move(name); }

std::string json_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace detail

void start_trace(const std::string& path) {
  detail::Recorder& r = detail::recorder();
  std::lock_guard lock(r.mu);
  if (detail::active())
    throw Error("profiler: a trace is already recording to " + r.path +
                "; stop it before starting another");
  r.path = path;
  r.spans.clear();
  r.thread_names.clear();
  r.origin_ns = detail::now_ns();
  detail::recording.store(true);
}

void stop_trace() {
  detail::Recorder& r = detail::recorder();
  std::lock_guard lock(r.mu);
  if (!detail::active()) throw Error("profiler: no trace is recording");
  detail::recording.store(false);
  std::ofstream out(r.path, std::ios::trunc);
  int pid = static_cast<int>(::getpid());
  out << "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  out << "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << pid
      << ", \"tid\": 0, \"args\": {\"name\": \"jx\"}}";
  for (const auto& [tid, name] : r.thread_names)
    out << ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " << pid << ", \"tid\": " << tid
        << ", \"args\": {\"name\": \"" << detail::json_escape(name) << "\"}}";
  for (const detail::Span& s : r.spans) {
    out << ",\n{\"ph\": \"X\", \"name\": \"" << detail::json_escape(s.name) << "\", \"cat\": \""
        << detail::json_escape(s.category) << "\", \"pid\": " << pid << ", \"tid\": " << s.tid
        << ", \"ts\": " << detail::fmt("%.3f", static_cast<double>(s.start_ns - r.origin_ns) / 1e3)
        << ", \"dur\": " << detail::fmt("%.3f", static_cast<double>(s.end_ns - s.start_ns) / 1e3)
        << ", \"args\": {" << s.args << "}}";
  }
  out << "\n]}\n";
  out.close();
  if (!out) throw Error("profiler: cannot write the trace to " + r.path);
}

Trace::~Trace() {
  try {
    stop_trace();
  } catch (const Error&) {
    // Stopped already by hand, or unwritable: a destructor has no one to tell.
  }
}

TraceAnnotation::TraceAnnotation(std::string name)
    : name_(std::move(name)), start_ns_(detail::active() ? detail::now_ns() : -1) {}

TraceAnnotation::~TraceAnnotation() {
  if (start_ns_ >= 0) detail::record(std::move(name_), "user", start_ns_, detail::now_ns());
}

std::string summary(int rows) {
  struct Row {
    std::string name, kind;
    std::int64_t calls = 0, total_ns = 0;
  };
  std::map<std::pair<std::string, std::string>, Row> by_name;
  std::int64_t all_ns = 0;
  {
    detail::Recorder& r = detail::recorder();
    std::lock_guard lock(r.mu);
    for (const detail::Span& s : r.spans) {
      if (!detail::is_thunk(s.category)) continue;
      Row& row = by_name[{s.name, s.category}];
      row.name = s.name, row.kind = s.category;
      ++row.calls;
      row.total_ns += s.end_ns - s.start_ns;
      if (!detail::nests(s.category)) all_ns += s.end_ns - s.start_ns;
    }
  }
  std::vector<Row> sorted;
  for (auto& [key, row] : by_name) sorted.push_back(std::move(row));
  std::sort(sorted.begin(), sorted.end(),
            [](const Row& a, const Row& b) { return a.total_ns > b.total_ns; });
  char line[256];
  // Share: of the time of every thunk that runs no others (loops and branches hold theirs).
  std::snprintf(line, sizeof line, "%-40s %-12s %8s %12s %12s %7s\n", "thunk", "kind", "calls",
                "total ms", "mean us", "share");
  std::string out = line;
  for (std::size_t i = 0; i < sorted.size() && i < static_cast<std::size_t>(rows); ++i) {
    const Row& row = sorted[i];
    std::snprintf(
        line, sizeof line, "%-40s %-12s %8lld %12.3f %12.2f %6.1f%%\n",
        row.name.substr(0, 40).c_str(), row.kind.c_str(), static_cast<long long>(row.calls),
        static_cast<double>(row.total_ns) / 1e6,
        static_cast<double>(row.total_ns) / 1e3 / static_cast<double>(row.calls),
        all_ns ? 100.0 * static_cast<double>(row.total_ns) / static_cast<double>(all_ns) : 0.0);
    out += line;
  }
  return out;
}

}  // namespace jx::profiler
