// The persistent compilation cache (--compilation_cache_dir): programs loaded instead of compiled
// by a fresh jit (as a new process would), warm starts that skip tracing (persistent_key), the
// verification of stale keys, damaged entries (truncated, a byte flipped, another version), the
// size bound, and two processes writing one entry at once.
#include <spawn.h>
#include <sys/wait.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "codegen/cpu/cpu_isa.hpp"
#include "jx/jx.hpp"
#include "support/config_guard.hpp"
#include "support/error_of.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_pytrees.hpp"

extern char** environ;

namespace jx {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

// A cache in a fresh directory, with the log captured, for one test.
struct CacheDir : testing::ConfigGuard {
  ScratchDir scratch;
  std::vector<std::string> log;
  CacheDir() {
    config().compilation_cache_dir = scratch.dir.string();
    config().log = [this](const std::string& m) { log.push_back(m); };
  }
  std::vector<fs::path> entries() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(scratch.dir)) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }
};

// Twenty elementwise steps and a reduction: enough code for a real object file.
Array chain(const Array& x) {
  Array y = x;
  for (int i = 0; i < 10; ++i) y = np::tanh(y) * 0.5f + np::sin(y);
  return np::sum(y * y);
}
double chain_oracle(const std::vector<float>& xs) {
  double total = 0;
  for (float x : xs) {
    float y = x;
    for (int i = 0; i < 10; ++i) y = std::tanh(y) * 0.5f + std::sin(y);
    total += static_cast<double>(y) * y;
  }
  return total;
}

const std::vector<float> kInput = {0.5f, -1.0f, 2.0f, 0.25f};

// A jit of `f` with a cache of its own: wrappers of one function or lambda type share theirs, a
// std::function has no identity. Each stands for a new process.
template <class F>
auto fresh_jit(F f, const JitOptions& options = {}) {
  return jit(std::function(f), options);
}

TEST_CASE("persistent cache: a fresh jit loads a program compiled before instead of compiling it",
          "[jit][persistent_cache]") {
  CacheDir cache;
  auto first = fresh_jit(chain, {.name = "chain"});
  CHECK(first(np::array(kInput)).item<double>() == Approx(chain_oracle(kInput)).epsilon(1e-5));
  CHECK(first.cache_info().disk_hits == 0);
  REQUIRE(cache.entries().size() == 1);

  auto second = fresh_jit(chain, {.name = "chain"});
  CHECK(second(np::array(kInput)).item<double>() == Approx(chain_oracle(kInput)).epsilon(1e-5));
  CacheInfo info = second.cache_info();
  CHECK(info.compiles == 1);
  CHECK(info.disk_hits == 1);
  CHECK(info.codegen_ms == 0);
  CacheMiss miss = second.cache_misses().at(0);
  CHECK(miss.times.load_ms > 0);
  CHECK(miss.times.codegen_ms == 0);
  CHECK(cache.entries().size() == 1);
  CHECK(cache.log.empty());
}

TEST_CASE("persistent cache: loops and conditionals load their nested programs in order",
          "[jit][persistent_cache]") {
  CacheDir cache;
  auto f = [](const Array& x) {
    Array looped = lax::fori_loop(
        Array(0), Array(5), [](const Array&, const Array& c) { return c * 2.0f + 1.0f; }, x);
    return lax::cond(
        np::sum(x) > 0.0f, [](const Array& v) { return v - 1.0f; },
        [](const Array& v) { return -v; }, looped);
  };
  // 5 steps of c -> 2c + 1 from c: 32c + 31; the sum of the input is positive: minus 1.
  std::vector<float> want;
  for (float x : kInput) want.push_back(32 * x + 30);
  CHECK(fresh_jit(f)(np::array(kInput)).to_vector<float>() == want);
  auto again = fresh_jit(f);
  CHECK(again(np::array(kInput)).to_vector<float>() == want);
  CHECK(again.cache_info().disk_hits == 1);
}

// A warm start parses the stored HLO: a kernel gradient's convolution prints dim_labels whose
// output labels start with a digit (...->01bf), which failed to parse back.
TEST_CASE("persistent cache: a warm start loads a convolution's kernel gradient",
          "[jit][persistent_cache]") {
  CacheDir cache;
  auto dw = [](const Array& x, const Array& w) {
    return grad(
        [](const Array& a, const Array& b) {
          return np::sum(
              lax::conv_general_dilated(a, b, {1, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"}));
        },
        1)(x, w);
  };
  Array x = random::normal(random::key(1), {16, 8, 8, 4});
  Array w = random::normal(random::key(2), {3, 3, 4, 4});
  auto first = fresh_jit(dw, {.persistent_key = "dw-v1"});
  std::vector<float> want = first(x, w).to_vector<float>();
  CHECK(first.lower(x, w).compile().hlo_text().find("->01bf") != std::string::npos);
  auto warm = fresh_jit(dw, {.persistent_key = "dw-v1"});
  CHECK(warm(x, w).to_vector<float>() == want);
  CHECK(warm.cache_info().traces == 0);
  CHECK(warm.cache_info().disk_hits == 1);
  CHECK(cache.log.empty());
}

TEST_CASE("persistent cache: a persistent_key warm start runs the stored program without tracing",
          "[jit][persistent_cache]") {
  CacheDir cache;
  static int traced = 0;
  traced = 0;
  auto step = [](const testing::Dense& p, const Array& x, Static<int> power) {
    ++traced;
    Array y = np::matmul(x, p.w) + p.b;
    return std::make_pair(y * static_cast<float>(power.value),
                          std::vector<Array>{np::sum(y), np::max(y)});
  };
  testing::Dense p{np::reshape(np::array({1.0f, 2.0f, 3.0f, 4.0f}), {2, 2}),
                   np::array({0.5f, -0.5f})};
  Array x = np::reshape(np::array({1.0f, 1.0f, 2.0f, 0.0f}), {2, 2});
  // y = x @ w + b = [[4.5, 5.5], [2.5, 3.5]].
  auto check = [](const auto& out) {
    CHECK(out.first.template to_vector<float>() == std::vector<float>{13.5f, 16.5f, 7.5f, 10.5f});
    REQUIRE(out.second.size() == 2);
    CHECK(out.second[0].template item<float>() == 16.0f);
    CHECK(out.second[1].template item<float>() == 5.5f);
  };
  auto first = fresh_jit(step, {.name = "step", .persistent_key = "step-v1"});
  check(first(p, x, Static<int>{3}));
  CHECK(traced == 1);
  CHECK(cache.entries().size() == 2);  // the program, and the warm entry of this signature

  auto warm = fresh_jit(step, {.name = "step", .persistent_key = "step-v1"});
  check(warm(p, x, Static<int>{3}));
  CHECK(traced == 1);  // not traced again
  CacheInfo info = warm.cache_info();
  CHECK(info.traces == 0);
  CHECK(info.compiles == 0);
  CHECK(info.disk_hits == 1);
  REQUIRE(warm.cache_misses().size() == 1);
  CHECK(warm.cache_misses()[0].times.load_ms > 0);
  CHECK(warm.cache_misses()[0].times.trace_ms == 0);
  check(warm(p, x, Static<int>{3}));  // then an ordinary hit
  CHECK(warm.cache_info().hits == 1);

  // Another static value is another signature: traced and stored.
  auto out = warm(p, x, Static<int>{1});
  CHECK(out.first.to_vector<float>() == std::vector<float>{4.5f, 5.5f, 2.5f, 3.5f});
  CHECK(traced == 2);
  CHECK(cache.log.empty());
}

// A static value whose type prints nothing of it: only its hash tells values apart.
struct Mode {
  int k;
  bool operator==(const Mode&) const = default;
};

}  // namespace
}  // namespace jx

template <>
struct std::hash<jx::Mode> {
  std::size_t operator()(const jx::Mode& m) const { return static_cast<std::size_t>(m.k); }
};

namespace jx {
namespace {

TEST_CASE("persistent cache: static values that print alike are distinct warm entries",
          "[jit][persistent_cache]") {
  CacheDir cache;
  Array y = np::array({1.0f, 2.0f});
  // 1000000 and 1000001 print alike at six digits; a Mode does not print at all.
  auto scale = [](const Array& a, Static<double> s) { return a * static_cast<float>(s.value); };
  auto by_mode = [](const Array& a, Static<Mode> m) { return a * static_cast<float>(m.value.k); };
  for (int process = 0; process < 2; ++process) {  // the second loads what the first stored
    auto f = fresh_jit(scale, {.persistent_key = "scale-v1"});
    CHECK(f(y, Static<double>{1000000.0}).to_vector<float>() ==
          std::vector<float>{1000000.0f, 2000000.0f});
    CHECK(f(y, Static<double>{1000001.0}).to_vector<float>() ==
          std::vector<float>{1000001.0f, 2000002.0f});
    auto g = fresh_jit(by_mode, {.persistent_key = "mode-v1"});
    CHECK(g(y, Static<Mode>{{2}}).to_vector<float>() == std::vector<float>{2.0f, 4.0f});
    CHECK(g(y, Static<Mode>{{3}}).to_vector<float>() == std::vector<float>{3.0f, 6.0f});
    CHECK(g.cache_info().disk_hits == process * 2);
  }
}

TEST_CASE("persistent cache: a warm start keeps the consts the function closed over",
          "[jit][persistent_cache]") {
  CacheDir cache;
  Array scale = np::array({2.0f, 3.0f, 4.0f, 5.0f});
  auto f = [&scale](const Array& x) { return x * scale; };
  CHECK(fresh_jit(f, {.persistent_key = "scaled"})(np::ones({4})).to_vector<float>() ==
        std::vector<float>{2, 3, 4, 5});
  auto warm = fresh_jit(f, {.persistent_key = "scaled"});
  CHECK(warm(np::ones({4})).to_vector<float>() == std::vector<float>{2, 3, 4, 5});
  CHECK(warm.cache_info().traces == 0);
}

TEST_CASE(
    "persistent cache: --verify_persistent_cache throws when the function changed under "
    "its key",
    "[jit][persistent_cache]") {
  CacheDir cache;
  auto doubled = [](const Array& x) { return x * 2.0f; };
  auto tripled = [](const Array& x) { return x * 3.0f; };
  CHECK(fresh_jit(doubled, {.persistent_key = "k"})(np::ones({3})).to_vector<float>() ==
        std::vector<float>{2, 2, 2});
  // Unverified, the key is trusted: the stored program runs.
  CHECK(fresh_jit(tripled, {.persistent_key = "k"})(np::ones({3})).to_vector<float>() ==
        std::vector<float>{2, 2, 2});

  config().verify_persistent_cache = true;
  auto checked = fresh_jit(tripled, {.name = "f", .persistent_key = "k"});
  std::string message = testing::exact_error_of<Error>([&] { checked(np::ones({3})); });
  CHECK_THAT(message, Catch::Matchers::StartsWith("jit(f) traced to another jaxpr than the one "
                                                  "stored under its persistent_key 'k' (") &&
                          Catch::Matchers::EndsWith("): the function or a value it closes over "
                                                    "changed; change the key"));
  // The same function verifies, and is served from the cache after its trace.
  auto same = fresh_jit(doubled, {.persistent_key = "k"});
  CHECK(same(np::ones({3})).to_vector<float>() == std::vector<float>{2, 2, 2});
  CHECK(same.cache_info().traces == 1);
  CHECK(same.cache_info().compiles == 0);
  CHECK(same.cache_info().disk_hits == 1);
}

// Damages the one entry of a program, then checks that a fresh jit warns once, compiles, gives
// the right values, and writes a good entry again.
void check_damage(const std::string& reason, void (*damage)(const fs::path&)) {
  CacheDir cache;
  fresh_jit(chain)(np::array(kInput));
  REQUIRE(cache.entries().size() == 1);
  damage(cache.entries()[0]);

  auto f = fresh_jit(chain);
  CHECK(f(np::array(kInput)).item<double>() == Approx(chain_oracle(kInput)).epsilon(1e-5));
  CHECK(f.cache_info().disk_hits == 0);
  REQUIRE(cache.log.size() == 1);
  CHECK_THAT(cache.log[0], Catch::Matchers::StartsWith("jx: ignoring compilation cache entry " +
                                                       cache.entries()[0].string() + ": ") &&
                               Catch::Matchers::Contains(reason) &&
                               Catch::Matchers::EndsWith("; compiling again"));
  auto again = fresh_jit(chain);
  CHECK(again(np::array(kInput)).item<double>() == Approx(chain_oracle(kInput)).epsilon(1e-5));
  CHECK(again.cache_info().disk_hits == 1);
  CHECK(cache.log.size() == 1);
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

TEST_CASE("persistent cache: a damaged entry is one warning and a compile",
          "[jit][persistent_cache]") {
  SECTION("truncated") {
    check_damage("it is truncated",
                 [](const fs::path& p) { fs::resize_file(p, fs::file_size(p) / 2); });
  }
  SECTION("a byte flipped") {
    check_damage("its checksum does not match its contents", [](const fs::path& p) {
      std::string bytes = read_file(p);
      bytes[bytes.size() - 100] ^= 0x10;
      write_file(p, bytes);
    });
  }
  SECTION("written by another version") {
    check_damage("it was written by jx 9.", [](const fs::path& p) {
      std::string bytes = read_file(p);
      std::size_t at = bytes.find("jx ");
      REQUIRE(at != std::string::npos);
      bytes[at + 3] = '9';
      write_file(p, bytes);
    });
  }
  SECTION("not a cache entry") {
    check_damage("it is not a jx compilation cache entry",
                 [](const fs::path& p) { write_file(p, "hello"); });
  }
}

TEST_CASE("persistent cache: a flag that changes code is part of the key",
          "[jit][persistent_cache]") {
  CacheDir cache;
  fresh_jit(chain)(np::array(kInput));
  config().precise_math = true;
  auto precise = fresh_jit(chain);
  precise(np::array(kInput));
  CHECK(precise.cache_info().disk_hits == 0);
  CHECK(cache.entries().size() == 2);
  // A width other than the ISA's own, which would compile the same code as no flag.
  config().cpu_vector_width = codegen::cpu::configured_cpu_isa().vector_bytes == 64 ? 256 : 512;
  auto other_width = fresh_jit(chain);
  other_width(np::array(kInput));
  CHECK(other_width.cache_info().disk_hits == 0);
  CHECK(cache.entries().size() == 3);
}

TEST_CASE("persistent cache: --compilation_cache_max_bytes removes the least recently used",
          "[jit][persistent_cache]") {
  CacheDir cache;
  auto compile = [](std::int64_t n) {
    auto f = fresh_jit(chain);
    f(np::ones({n}));
    return f.cache_info().disk_hits;
  };
  compile(1);
  std::uintmax_t one = fs::file_size(cache.entries().at(0));
  config().compilation_cache_max_bytes = static_cast<long long>(one * 5 / 2);  // room for two
  compile(2);
  CHECK(compile(1) == 1);  // used again: now the most recent
  compile(3);              // removes the entry of 2
  CHECK(cache.entries().size() == 2);
  CHECK(compile(1) == 1);
  CHECK(compile(3) == 1);
  CHECK(compile(2) == 0);
}

// Runs this test binary on the hidden case below with the cache in `dir`, without waiting.
pid_t spawn_writer(const std::string& dir, const std::string& expect) {
  std::vector<std::string> env_strings = {"JX_FLAGS=--compilation_cache_dir=" + dir,
                                          "JX_TEST_EXPECT_DISK_HIT=" + expect};
  for (char** e = environ; *e; ++e)
    if (std::string(*e).rfind("JX_FLAGS=", 0) != 0) env_strings.push_back(*e);
  std::vector<char*> env;
  for (std::string& s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);
  std::string exe = fs::read_symlink("/proc/self/exe").string();
  std::string filter = "[.persistent_cache_writer]";
  char* argv[] = {exe.data(), filter.data(), nullptr};
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, env.data()) == 0);
  return pid;
}
int wait_for(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_CASE("persistent cache: two processes writing one entry at once, then a third reads it",
          "[jit][persistent_cache]") {
  ScratchDir dir;
  pid_t a = spawn_writer(dir.dir.string(), "any");
  pid_t b = spawn_writer(dir.dir.string(), "any");
  CHECK(wait_for(a) == 0);
  CHECK(wait_for(b) == 0);
  std::vector<std::string> files = dir.files();
  CHECK(files.size() == 2);  // a program entry and a warm entry; no temporary file is left
  for (const std::string& f : files) CHECK(fs::path(f).extension() == ".jxc");
  CHECK(wait_for(spawn_writer(dir.dir.string(), "1")) == 0);
}

// Run by the case above in another process: computes `chain` under a persistent_key and checks
// the value, and whether the cache served it as JX_TEST_EXPECT_DISK_HIT says.
TEST_CASE("persistent cache: one writing process", "[.persistent_cache_writer]") {
  REQUIRE_FALSE(config().compilation_cache_dir.empty());
  auto f = jit(chain, {.name = "chain", .persistent_key = "chain-v1"});
  CHECK(f(np::array(kInput)).item<double>() == Approx(chain_oracle(kInput)).epsilon(1e-5));
  std::string expect = std::getenv("JX_TEST_EXPECT_DISK_HIT");
  if (expect != "any") {
    CHECK(f.cache_info().disk_hits == std::stoi(expect));
    CHECK(f.cache_info().traces == 0);
  }
}

}  // namespace
}  // namespace jx
