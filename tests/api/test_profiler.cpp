// The profiler: a trace file read back as JSON and checked against the thunk sequence of the
// program that ran (every thunk, each call), the compile's stages, loops with their nested
// programs, rows split over threads, the user's spans, summary(), and its errors.
#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "codegen/cpu/cpu_isa.hpp"
#include "jx/jx.hpp"
#include "support/config_guard.hpp"
#include "support/error_of.hpp"
#include "support/fake_cuda.hpp"
#include "support/json.hpp"
#include "support/scratch_dir.hpp"

namespace jx {
namespace {

using testing::Json;

struct Event {
  std::string name, cat, program, thunk;
  double ts, dur;
  int tid;
};

// The complete events of a trace file, after checking every event's fields.
std::vector<Event> read_trace(const std::string& path,
                              std::map<int, std::string>* threads = nullptr) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  Json trace = testing::JsonReader::parse(text.str());
  std::vector<Event> out;
  for (const Json& e : trace["traceEvents"].array()) {
    REQUIRE(e.has("ph"));
    REQUIRE(e.has("pid"));
    REQUIRE(e.has("tid"));
    if (e["ph"].str() == "M") {
      if (threads && e["name"].str() == "thread_name")
        (*threads)[static_cast<int>(e["tid"].number())] = e["args"]["name"].str();
      continue;
    }
    REQUIRE(e["ph"].str() == "X");
    const Json& args = e["args"];
    Event ev{e["name"].str(),
             e["cat"].str(),
             args.has("program") ? args["program"].str() : "",
             args.has("thunk") ? args["thunk"].str() : "",
             e["ts"].number(),
             e["dur"].number(),
             static_cast<int>(e["tid"].number())};
    CHECK(ev.ts >= 0);
    CHECK(ev.dur >= 0);
    out.push_back(ev);
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

Array step(const Array& x, const Array& w) {
  Array h = np::maximum(np::matmul(x, w), 0.0f);
  return np::sort(np::sum(h * h, 0));
}
std::pair<Array, Array> step_inputs() {
  return {np::reshape(np::linspace(-1, 1, 64 * 32), {64, 32}),
          np::reshape(np::linspace(0, 1, 32 * 16), {32, 16})};
}

TEST_CASE("profiler: a trace holds every thunk of each call, the compile's stages and user spans",
          "[profiler]") {
  testing::ScratchDir dir;
  auto [x, w] = step_inputs();
  auto f = jit(std::function(step), {.name = "step"});
  std::vector<std::string> thunks = lines_of(f.lower(x, w).compile().thunk_sequence());
  REQUIRE(thunks.size() >= 3);
  {
    profiler::Trace trace(dir / "trace.json");
    profiler::TraceAnnotation user("two steps");
    f(x, w);
    f(x, w);
  }
  std::vector<Event> events = read_trace(dir / "trace.json");

  std::map<std::string, int> runs;  // each thunk line of jit_step, by how often it ran
  std::set<std::string> compile, kinds;
  const Event* user = nullptr;
  for (const Event& e : events) {
    if (e.program == "jit_step") ++runs[e.thunk], kinds.insert(e.cat);
    if (e.cat == "compile") compile.insert(e.name);
    if (e.cat == "user") user = &e;
  }
  for (const std::string& t : thunks) {
    INFO(t);
    CHECK(runs[t] == 2);
  }
  CHECK(runs.size() == thunks.size());
  CHECK(kinds.count("kernel") == 1);
  CHECK(kinds.count("sort") == 1);
  CHECK(compile == std::set<std::string>{"compile jit_step", "trace jit_step", "lower jit_step",
                                         "optimize jit_step", "codegen jit_step"});
  REQUIRE(user != nullptr);
  CHECK(user->name == "two steps");
  for (const Event& e : events) {  // the user's span holds everything else of this thread
    if (e.tid != user->tid || &e == user) continue;
    CHECK(e.ts >= user->ts);
    CHECK(e.ts + e.dur <= user->ts + user->dur + 1e-3);
  }
  // A kernel span is named after its instruction, without the kernel's number.
  for (const Event& e : events)
    if (e.cat == "kernel") {
      CHECK(e.thunk.rfind("kernel kernel_", 0) == 0);
      CHECK(e.thunk.find("_" + e.name + "(") != std::string::npos);
    }
}

TEST_CASE(
    "profiler: loops are spans holding their nested programs' thunks; rows split over "
    "threads are spans of each thread",
    "[profiler]") {
  testing::ScratchDir dir;
  auto loop = [](const Array& x) {
    return lax::fori_loop(
        Array(0), Array(3), [](const Array&, const Array& c) { return c * 1.5f; }, x);
  };
  Array big = np::ones({1024, 1024});
  auto wide = jit(std::function([](const Array& a) { return np::tanh(a) * 2.0f; }));
  jit(std::function(loop), {.name = "loop"})(np::ones({4}));  // compiled before the trace
  wide(big);
  std::map<int, std::string> threads;
  profiler::start_trace(dir / "loop.json");
  jit(std::function(loop), {.name = "loop"})(np::ones({4}));
  wide(big);
  profiler::stop_trace();
  std::vector<Event> events = read_trace(dir / "loop.json", &threads);
  int whiles = 0, nested = 0, rows = 0;
  std::set<int> row_threads;
  for (const Event& e : events) {
    whiles += e.cat == "while";
    nested += e.program.rfind("jit_loop.", 0) == 0;
    if (e.cat == "rows") ++rows, row_threads.insert(e.tid);
  }
  CHECK(whiles == 1);
  CHECK(nested >= 3);  // the body's thunks, once per trip
  CHECK(rows >= 1);
  if (row_threads.size() > 1) {
    bool worker = false;
    for (int tid : row_threads) worker = worker || threads[tid].rfind("cpu worker ", 0) == 0;
    CHECK(worker);
  }
}

TEST_CASE("profiler: a kernel compiled under --cpu_threads=1 splits its rows once raised",
          "[profiler]") {
  if (codegen::cpu::host_cores() < 2) return;  // one core: nothing splits
  testing::ConfigGuard guard;
  testing::ScratchDir dir;
  // A stateless function's programs are shared by every jit of it, whatever the flag said
  // when they compiled: the flag decides only how many threads take the rows.
  auto twice = [](const Array& a) { return np::tanh(a) * 2.0f; };
  Array big = np::ones({1024, 1024});
  config().cpu_threads = 1;
  jit(twice)(big);
  config().cpu_threads = 0;
  profiler::start_trace(dir / "raised.json");
  jit(twice)(big);
  profiler::stop_trace();
  // Rows spans come only from a kernel compiled to split (its thunk has rows).
  int rows = 0;
  for (const Event& e : read_trace(dir / "raised.json")) rows += e.cat == "rows";
  CHECK(rows >= 1);
}

// The fake driver's events are kFakeEventMs apart: a span of exactly that long is the device's
// time for the thunk, which no host clock would give.
TEST_CASE("profiler: on a GPU each thunk's span is its time on the device, from CUDA events",
          "[profiler][cuda][fake]") {
  testing::FakeCudaGpus gpus;
  testing::ScratchDir dir;
  auto f = jit([](const Array& a, const Array& b) { return np::sin(a) * b + 1.0f; },
               {.name = "on_gpu", .device = Device{Platform::gpu, 7}});
  Array a = np::ones({1000}), b = np::ones({1000});
  f(a, b);  // compiled before the trace
  {
    profiler::Trace trace(dir / "gpu.json");
    f(a, b);
  }
  int spans = 0;
  for (const Event& e : read_trace(dir / "gpu.json")) {
    if (e.program != "jit_on_gpu") continue;
    ++spans;
    INFO(e.thunk);
    CHECK(e.dur == Approx(testing::kFakeEventMs * 1000.0));
  }
  CHECK(spans >= 1);
}

TEST_CASE("profiler: summary() ranks the last trace's thunks; nothing is recorded after it stops",
          "[profiler]") {
  testing::ScratchDir dir;
  auto [x, w] = step_inputs();
  auto f = jit(std::function(step), {.name = "step"});
  f(x, w);
  profiler::start_trace(dir / "t.json");
  for (int i = 0; i < 5; ++i) f(x, w);
  profiler::stop_trace();
  std::string table = profiler::summary();
  std::vector<std::string> rows = lines_of(table);
  REQUIRE(rows.size() >= 3);
  CHECK(rows[0].find("calls") != std::string::npos);
  CHECK(rows[0].find("share") != std::string::npos);
  CHECK(table.find("sort") != std::string::npos);
  CHECK(table.find("    5 ") != std::string::npos);  // five calls of each thunk
  f(x, w);
  CHECK(profiler::summary() == table);
  CHECK(lines_of(profiler::summary(1)).size() == 2);
}

TEST_CASE("profiler: errors", "[profiler]") {
  testing::ScratchDir dir;
  CHECK(testing::exact_error_of<Error>([] { profiler::stop_trace(); }) ==
        "profiler: no trace is recording");
  profiler::start_trace(dir / "a.json");
  CHECK(testing::exact_error_of<Error>([&] { profiler::start_trace(dir / "b.json"); }) ==
        "profiler: a trace is already recording to " + (dir / "a.json") +
            "; stop it before starting another");
  profiler::stop_trace();
  profiler::start_trace("/nonexistent-dir/trace.json");
  CHECK(testing::exact_error_of<Error>([] { profiler::stop_trace(); }) ==
        "profiler: cannot write the trace to /nonexistent-dir/trace.json");
  CHECK_NOTHROW(profiler::start_trace(dir / "c.json"));  // a failed write still stopped it
  profiler::stop_trace();
}

}  // namespace
}  // namespace jx
