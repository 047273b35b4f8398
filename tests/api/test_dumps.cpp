// JX_FLAGS dumps: every file of one jitted module, named like XLA's, each of which reads back
// (jaxpr and HLO parse and print identically), plus --dump_hlo_pass_re and the narrowing flags.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "codegen/cpu/cpu_isa.hpp"
#include "hlo/ir.hpp"
#include "jaxpr/jaxpr.hpp"
#include "jx/config.hpp"
#include "jx/jx.hpp"
#include "library/numpy_testing.hpp"
#include "support/config_guard.hpp"

namespace jx {
namespace {

namespace fs = std::filesystem;
using np_testing::check_values;

// Points --dump_to at a fresh directory with `flags` applied, and puts jx::config() back (and
// removes the directory) on the way out, so no other test sees dumps.
class DumpScope {
 public:
  explicit DumpScope(const std::string& flags) : saved_(config()) {
    static std::atomic<int> counter{0};
    do {
      std::string unique = std::to_string(std::random_device{}()) + "_" + std::to_string(counter++);
      dir_ = fs::temp_directory_path() / ("jx_test_dumps_" + unique);
    } while (!fs::create_directory(dir_));
    // Whatever JX_FLAGS set, only these flags decide what is dumped here.
    Config c = saved_;
    c.dump_jaxpr = c.dump_hlo = c.dump_llvm = c.dump_ptx = c.dump_dot = false;
    c.dump_hlo_pass_re.clear();
    parse_flags("--dump_to=\"" + dir_.string() + "\" " + flags, c);
    config() = c;
  }
  ~DumpScope() {
    config() = saved_;
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  DumpScope(const DumpScope&) = delete;
  DumpScope& operator=(const DumpScope&) = delete;

  // The dump files by suffix ("jaxpr.txt", "dot", ...), checking every name has the form
  // module_NNNN.jit_<name>.<suffix> with one module number.
  std::map<std::string, fs::path> files(const std::string& name) const {
    std::map<std::string, fs::path> out;
    std::regex form("module_([0-9]{4})\\.jit_" + name + "\\.(.+)");
    std::set<std::string> ids;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      std::string file = entry.path().filename().string();
      std::smatch m;
      INFO("dump file " << file);
      REQUIRE(std::regex_match(file, m, form));
      ids.insert(m[1]);
      out[m[2]] = entry.path();
    }
    CHECK(ids.size() <= 1);
    return out;
  }

 private:
  Config saved_;
  fs::path dir_;
};

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::set<std::string> keys(const std::map<std::string, fs::path>& m) {
  std::set<std::string> out;
  for (const auto& [k, v] : m) out.insert(k);
  return out;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The LLVM IR of jit(f)(x), named `name`, compiled for `isa` with the fast math forms: before
// optimization and after.
std::pair<std::string, std::string> ir_before_and_after(const std::string& name,
                                                        const std::function<Array(const Array&)>& f,
                                                        const Array& x, const char* isa) {
  testing::ConfigGuard fast;
  config().precise_math = false;
  config().cpu_isa = isa;
  DumpScope scope("--dump_llvm");
  jit(f, {.name = name})(x).block_until_ready();
  auto files = scope.files(name);
  return std::pair(read(files.at("ir-no-opt.ll")), read(files.at("ir-with-opt.ll")));
}

std::size_t count(const std::string& text, const std::string& word) {
  std::size_t n = 0;
  for (auto pos = text.find(word); pos != std::string::npos; pos = text.find(word, pos + 1)) ++n;
  return n;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// tanh(x * y) + sum(x) / 4, with x, y of shape [2, 2]: elementwise work, a broadcast and a
// reduction, small enough that every instruction becomes one emitted kernel (no BLAS call).
Array small_fn(const Array& x, const Array& y) { return np::tanh(x * y) + np::sum(x) / 4.0f; }

TEST_CASE("dumps: every file of a jitted module, named like XLA's, reads back", "[dumps]") {
  Array x = np::array(std::vector<float>{0.5f, -1, 2, 0.25f}, {2, 2});
  Array y = np::array(std::vector<float>{1, 0.5f, -0.75f, 3}, {2, 2});
  // A std::function has a cache of its own (wrappers of one function share theirs): each
  // section's run compiles anew.
  auto f = jit(std::function(small_fn), {.name = "small"});
  std::map<std::string, fs::path> files;
  Array out;
  {
    DumpScope scope("");
    out = f(x, y);
    files = scope.files("small");
    Array again = f(x, y);  // a cache hit compiles nothing, so it dumps nothing
    CHECK(scope.files("small").size() == files.size());
    CHECK(again.to_vector<float>() == out.to_vector<float>());

    CHECK(keys(files) == std::set<std::string>{"jaxpr.txt", "before_optimizations.txt",
                                               "after_optimizations.txt", "ir-no-opt.ll",
                                               "ir-with-opt.ll", "thunk_sequence.txt", "dot"});
    // Read inside the scope: the directory goes with it.
    std::map<std::string, std::string> text;
    for (const auto& [suffix, path] : files) text[suffix] = read(path);

    SECTION("the jaxpr is make_jaxpr's, and parses and prints back identically") {
      const std::string& jaxpr = text["jaxpr.txt"];
      CHECK(jaxpr == make_jaxpr(small_fn)(x, y).str());
      CHECK(to_string(read_jaxpr(jaxpr)) == jaxpr);
    }
    SECTION("HLO before and after optimizations parses, verifies and prints back identically") {
      for (std::string suffix : {"before_optimizations.txt", "after_optimizations.txt"}) {
        INFO(suffix);
        const std::string& hlo = text[suffix];
        CHECK(hlo.starts_with("HloModule jit_small"));
        std::unique_ptr<hlo::Module> m = hlo::parse_module(hlo);
        CHECK_NOTHROW(hlo::verify(*m));
        CHECK(hlo::to_string(*m) == hlo);
      }
      // What AOT compiles is what the dump holds (module names and numbering are stable).
      CHECK(f.lower(x, y).compile().hlo_text() == text["after_optimizations.txt"]);
    }
    SECTION("LLVM IR before and after LLVM's optimizations defines the kernels") {
      CHECK(text["ir-no-opt.ll"].find("define") != std::string::npos);
      CHECK(text["ir-with-opt.ll"].find("define") != std::string::npos);
    }
    SECTION("the thunk sequence: one kernel line per instruction that computes") {
      std::unique_ptr<hlo::Module> m = hlo::parse_module(text["after_optimizations.txt"]);
      std::size_t computing = 0;
      for (const hlo::Instruction* i : m->entry()->instructions())
        if (i->opcode != hlo::Opcode::kParameter && i->opcode != hlo::Opcode::kConstant &&
            i->opcode != hlo::Opcode::kTuple && i->opcode != hlo::Opcode::kGetTupleElement)
          ++computing;
      std::vector<std::string> thunks = lines(text["thunk_sequence.txt"]);
      CHECK(thunks.size() == computing);
      for (const std::string& line : thunks) {
        INFO(line);
        CHECK(line.starts_with("kernel "));
        // The kernel's symbol names a function of the optimized IR (which may add a suffix).
        std::string symbol = line.substr(7, line.find('(') - 7);
        CHECK(text["ir-with-opt.ll"].find("define void @" + symbol) != std::string::npos);
      }
    }
    SECTION("the Graphviz file: a digraph with one node per entry instruction and a ROOT") {
      const std::string& dot = text["dot"];
      CHECK(dot.starts_with("digraph"));
      CHECK(dot.ends_with("}\n"));
      std::unique_ptr<hlo::Module> m = hlo::parse_module(text["after_optimizations.txt"]);
      std::size_t nodes = 0;
      for (const std::string& line : lines(dot))
        if (std::regex_match(line, std::regex("  n[0-9]+ \\[label=.*"))) ++nodes;
      CHECK(nodes == m->entry()->instructions().size());
      CHECK(count(dot, "->") > 0);
      CHECK(count(dot, "ROOT ") == 1);
      CHECK(dot.find("ROOT " + m->entry()->root()->name) != std::string::npos);
    }
  }
  // The closed form, in double.
  std::vector<float> xs = x.to_vector<float>(), ys = y.to_vector<float>();
  double sum = 0;
  for (float v : xs) sum += v;
  std::vector<double> expected;
  for (std::size_t i = 0; i < xs.size(); ++i)
    expected.push_back(std::tanh(double(xs[i]) * ys[i]) + sum / 4);
  check_values(out, expected, 1e-6);
  CHECK(f.cache_info().misses == 1);
  CHECK(f.cache_info().hits == 1);
}

TEST_CASE("dumps: --dump_hlo_pass_re=cse dumps the module after each CSE pass", "[dumps]") {
  // Two traced sines of x: CSE keeps one.
  auto f = jit([](const Array& x) { return np::sin(x) * np::sin(x); }, {.name = "twice"});
  Array x = np::array({0.5f, 1.0f, 2.0f});
  DumpScope scope("--dump_hlo_pass_re=cse");
  Array out = f(x);
  check_values(
      out, {std::pow(std::sin(0.5), 2), std::pow(std::sin(1.0), 2), std::pow(std::sin(2.0), 2)});
  std::map<std::string, fs::path> files = scope.files("twice");
  REQUIRE(files.contains("after_cse.txt"));
  for (const auto& [suffix, path] : files)  // no other pass is dumped
    if (suffix.starts_with("after_") && suffix != "after_optimizations.txt")
      CHECK(suffix == "after_cse.txt");
  std::string before = read(files.at("before_optimizations.txt"));
  std::string after_cse = read(files.at("after_cse.txt"));
  CHECK(count(before, " sine(") == 2);
  CHECK(count(after_cse, " sine(") == 1);
  std::unique_ptr<hlo::Module> m = hlo::parse_module(after_cse);
  CHECK_NOTHROW(hlo::verify(*m));
  CHECK(hlo::to_string(*m) == after_cse);
}

TEST_CASE("dumps: a --dump_* flag narrows the dumps to its kind", "[dumps]") {
  using Suffixes = std::set<std::string>;
  auto [flags, expected] = GENERATE(
      std::make_pair(std::string("--dump_jaxpr"), Suffixes{"jaxpr.txt"}),
      std::make_pair(
          std::string("--dump_hlo"),
          Suffixes{"before_optimizations.txt", "after_optimizations.txt", "thunk_sequence.txt"}),
      std::make_pair(std::string("--dump_llvm"), Suffixes{"ir-no-opt.ll", "ir-with-opt.ll"}),
      std::make_pair(std::string("--dump_dot"), Suffixes{"dot"}),
      std::make_pair(std::string("--dump_jaxpr --dump_dot"), Suffixes{"jaxpr.txt", "dot"}));
  INFO(flags);
  // A cache of its own (wrappers of one lambda share theirs): each generated run compiles.
  auto f = jit(std::function([](const Array& x) { return np::exp(x) - 1.0f; }), {.name = "narrow"});
  DumpScope scope(flags);
  check_values(f(np::array({0.0f, 1.0f})), {0.0, std::exp(1.0) - 1}, 1e-6);
  CHECK(keys(scope.files("narrow")) == expected);
}

TEST_CASE("dumps: LLVM dumps alone create the dump directory", "[dumps]") {
  auto f = jit([](const Array& x) { return x * 3.0f; }, {.name = "fresh_dir"});
  DumpScope scope("--dump_llvm");
  fs::path nested = fs::path(config().dump_to) / "not" / "there";
  config().dump_to = nested.string();
  check_values(f(np::array({1.0f, 2.0f})), {3.0, 6.0});
  int files = 0;
  for (const auto& entry : fs::directory_iterator(nested)) files += entry.is_regular_file();
  CHECK(files == 2);  // ir-no-opt.ll and ir-with-opt.ll
}

TEST_CASE("dumps: the scope restores the configuration and removes its directory", "[dumps]") {
  Config before = config();
  fs::path dir;
  {
    DumpScope scope("--dump_jaxpr");
    CHECK(config().dump_jaxpr);
    CHECK_FALSE(config().dump_to.empty());
    dir = config().dump_to;
    CHECK(fs::is_directory(dir));
  }
  CHECK(config().dump_to == before.dump_to);
  CHECK(config().dump_jaxpr == before.dump_jaxpr);
  CHECK_FALSE(fs::exists(dir));
}

}  // namespace
// A softmax reads each row from memory for its max, then computes exp and the sum from the
// cache: that loop prefetches the next row, a cache line at a time (16 floats), in chunks of
// 256 elements around the vectorized loop (ElementalEmitter::ChunkHook).
TEST_CASE("dumps: a row softmax's kernel prefetches its next row as it computes this one",
          "[dumps][fusion]") {
  auto softmax = [](const Array& x) {
    Array e = np::exp(x - np::max(x, -1, true));
    return e / np::sum(e, -1, true);
  };
  auto ir_of = [&](const std::string& name, const Array& x) {
    DumpScope scope("--dump_llvm");
    std::vector<float> got = jit(std::function(softmax), {.name = name})(x).to_vector<float>();
    // Each row sums to 1 (the values have oracle tests of their own).
    const std::int64_t cols = x.shape()[1];
    for (std::int64_t r = 0; r < x.shape()[0]; ++r) {
      double sum = 0;
      for (std::int64_t c = 0; c < cols; ++c) sum += got[static_cast<std::size_t>(r * cols + c)];
      CHECK(sum == Approx(1).epsilon(1e-5));
    }
    return read(scope.files(name).at("ir-no-opt.ll"));
  };
  Array x = random::normal(random::key(0), {4, 1024});
  std::string ir = ir_of("rows", x);
  // One prefetch a line of a chunk; the next row lies 1024 elements on.
  CHECK(count(ir, "call void @llvm.prefetch") == 16);
  CHECK(ir.find("reduce.chunk") != std::string::npos);
  // A row of fewer than two chunks is not worth it.
  CHECK(count(ir_of("short_rows", random::normal(random::key(1), {4, 384})),
              "call void @llvm.prefetch") == 0);
}

// exp of a softmax's shifted logits takes the fast form that handles no overflow; exp of a
// difference that may be positive keeps the overflow handling. The portable form's exponent
// conversion is then frozen (vector_math.cpp); on AVX-512, where exp scales by vscalef, its
// argument is not clamped at 89 (past which exp overflows). There the clamped calls to jx_ldexp
// are gone after optimization, vscalef in their place.
TEST_CASE("dumps: exp of a softmax's shifted logits handles no overflow", "[dumps][fusion]") {
  Array x = random::normal(random::key(0), {4, 256});
  auto shifted = [](const Array& a) { return np::exp(a - np::max(a, 1, true)); };
  auto halved = [](const Array& a) { return np::exp(a - np::max(a, 1, true) / 2.0f); };
  for (const char* isa : {"avx2", "native"}) {
    INFO("--cpu_isa=" << isa);
    std::string shifted_ir = ir_before_and_after("shifted", shifted, x, isa).first;
    auto [halved_ir, optimized] = ir_before_and_after("halved", halved, x, isa);
    if (codegen::cpu::cpu_isa(isa).name == "avx512") {
      CHECK_FALSE(has(shifted_ir, "8.900000e+01"));
      CHECK(has(halved_ir, "8.900000e+01"));
      CHECK(has(shifted_ir, "@jx_ldexp_f32("));
      CHECK(has(optimized, "@llvm.x86.avx512.mask.scalef.ps.512("));
      CHECK_FALSE(has(optimized, "jx_ldexp"));
    } else {
      CHECK(has(shifted_ir, " freeze "));
      CHECK_FALSE(has(halved_ir, " freeze "));
      CHECK_FALSE(has(shifted_ir, "jx_ldexp"));
    }
  }
}

// Where the CPU has AVX-512 BF16, a bfloat16 result rounds with vcvtneps2bf16: a call to
// jx_round_bf16 before optimization, which the loop vectorizer widens, then the instruction (a
// vector holding a subnormal takes the integer form). Elsewhere the integer form is all there is.
// (The values are tested in test_conversion_edges.)
TEST_CASE("dumps: rounding to bfloat16 is one instruction on AVX-512 BF16", "[dumps][fusion]") {
  Array x = random::normal(random::key(0), {4096}).astype(bfloat16);
  auto affine = [](const Array& a) { return a * 1.5f + 0.25f; };
  for (const char* isa : {"avx2", "native"}) {
    INFO("--cpu_isa=" << isa);
    auto [before, after] = ir_before_and_after("affine", affine, x, isa);
    if (codegen::cpu::cpu_isa(isa).avx512_bf16) {
      CHECK(has(before, "@jx_round_bf16_f32("));
      CHECK(has(after, "@llvm.x86.avx512bf16.cvtneps2bf16.512(<16 x float>"));
      CHECK(has(after, "@llvm.x86.avx512.fpclass.ps.512("));
      CHECK_FALSE(has(after, "jx_round_bf16"));
    } else {
      CHECK_FALSE(has(before, "jx_round_bf16"));
      CHECK_FALSE(has(after, "cvtneps2bf16"));
    }
  }
}

// An output larger than the last-level cache is written with non-temporal stores, from a vector
// loop that starts at a cache line (codegen/cpu/streaming_stores.hpp); a smaller one, or one
// whose rows do not all start at a cache line, is stored as usual.
TEST_CASE("dumps: an output larger than the last-level cache is stored past the caches",
          "[dumps][fusion]") {
  auto affine = [](const Array& x) { return x * 2.0f + 1.0f; };
  auto ir_of = [&](const std::string& name, const Shape& shape) {
    std::vector<float> values(static_cast<std::size_t>(shape_size(shape)));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 1000);
    DumpScope scope("--dump_llvm");
    std::vector<float> got =
        jit(std::function(affine), {.name = name})(np::array(values, shape)).to_vector<float>();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < values.size(); ++i) wrong += got[i] != values[i] * 2.0f + 1.0f;
    CHECK(wrong == 0);
    return read(scope.files(name).at("ir-with-opt.ll"));
  };
  const std::int64_t cache = codegen::cpu::cpu_isa(config().cpu_isa).last_level_cache;
  // Past the cache by a length no multiple of a line, so both threads' ranges start and end
  // inside a line.
  std::string ir = ir_of("large", {cache / 4 + 1003});
  CHECK(ir.find("!nontemporal") != std::string::npos);
  CHECK(ir.find("call void @llvm.x86.sse.sfence()") != std::string::npos);
  CHECK(ir_of("small", {4099}).find("!nontemporal") == std::string::npos);
  CHECK(ir_of("rows_off_lines", {cache / 4000 + 1, 1000}).find("!nontemporal") ==
        std::string::npos);
}

// The IR before and after optimization of x * 2 + 1 on n elements of a 16-bit float type, after
// checking every element (small integers: exact in either type).
static std::pair<std::string, std::string> affine_16bit_ir(const std::string& name, DType dtype,
                                                           const Shape& shape) {
  std::vector<float> x(static_cast<std::size_t>(shape_size(shape)));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(int(i % 101) - 50);
  DumpScope scope("--dump_llvm");
  auto affine = [](const Array& a) { return a * 2.0f + 1.0f; };
  Array got = jit(std::function(affine), {.name = name})(np::array(x, shape).astype(dtype));
  std::vector<float> values = got.astype(float32).to_vector<float>();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < x.size(); ++i) wrong += values[i] != x[i] * 2.0f + 1.0f;
  CHECK(wrong == 0);
  auto files = scope.files(name);
  return {read(files.at("ir-no-opt.ll")), read(files.at("ir-with-opt.ll"))};
}

// A streaming output of 16-bit floats is stored past the caches too. Where the target converts
// to them in one instruction (AVX-512 BF16, AVX-512 FP16), LLVM selects an ordinary store for a
// non-temporal one of their vectors, so they are stored with vmovntdq in inline assembly
// (codegen/cpu/streaming_stores.cpp); elsewhere the stores carry !nontemporal.
TEST_CASE("dumps: a streaming output of 16-bit floats is stored past the caches",
          "[dumps][fusion]") {
  const codegen::cpu::CpuIsa isa = codegen::cpu::cpu_isa(config().cpu_isa);
  auto features_have = [&](const std::string& feature) {
    return ("," + isa.features + ",").find("," + feature + ",") != std::string::npos;
  };
  for (DType dtype : {bfloat16, float16}) {
    INFO(dtype_name(dtype));
    std::string ir =
        affine_16bit_ir("half_affine", dtype, {isa.last_level_cache / 2 + 1008}).second;
    bool converts = dtype == bfloat16 ? isa.avx512_bf16 : features_have("+avx512fp16");
    CHECK((count(ir, "asm sideeffect \"vmovntdq") > 0) == converts);
    CHECK((ir.find("!nontemporal") != std::string::npos) == !converts);
    CHECK(ir.find("call void @llvm.x86.sse.sfence()") != std::string::npos);
  }
}

// A loop converting float16 to float32 and back is vectorized a whole vector of float32 lanes
// wide (codegen/cpu/half_loops.hpp), where LLVM's cost model alone takes 2 or 4; a loop of a
// known count no wider than leaves no iterations over.
TEST_CASE("dumps: a float16 loop takes a whole vector of float32 lanes", "[dumps][fusion]") {
  const codegen::cpu::CpuIsa isa = codegen::cpu::cpu_isa(config().cpu_isa);
  auto [before, after] = affine_16bit_ir("f16_affine", float16, {4099});
  const std::int64_t lanes = isa.vector_bytes / 4;
  auto width = [](std::int64_t w) {
    return "!\"llvm.loop.vectorize.width\", i32 " + std::to_string(w) + "}";
  };
  CHECK(count(before, width(lanes)) == 1);
  CHECK(count(after, "<" + std::to_string(lanes) + " x half>") > 0);
  // Rows of a known length take the widest power of two that divides it, no fewer than 4 lanes.
  CHECK(count(affine_16bit_ir("f16_rows_24", float16, {512, 24}).first,
              width(std::min<std::int64_t>(lanes, 8))) == 1);
  CHECK(count(affine_16bit_ir("f16_rows_12", float16, {512, 12}).first, width(4)) == 1);
  CHECK(count(affine_16bit_ir("f16_rows_6", float16, {512, 6}).first, "vectorize.width") == 0);
}

// A loop over float16 that sums in order keeps its order: a window sum's loop over a window of
// 256 elements (combined in order, as the eager evaluator does) gets no width hint, which would
// let the vectorizer reorder the sum.
TEST_CASE("dumps: a float16 window's in-order sum is not reordered", "[dumps][fusion]") {
  Array x = (random::normal(random::key(3), {4, 1024}) * 100.0f).astype(float16);
  auto window_sum = [](const Array& a) {
    return lax::reduce_window_sum(a, {1, 256}, {1, 128}, {{0, 0}, {0, 0}});
  };
  DumpScope scope("--dump_llvm");
  std::vector<float> jitted =
      jit(window_sum, {.name = "f16_windows"})(x).astype(float32).to_vector<float>();
  std::vector<float> eager = window_sum(x).astype(float32).to_vector<float>();
  CHECK(jitted == eager);
  std::string before = read(scope.files("f16_windows").at("ir-no-opt.ll"));
  CHECK(before.find("fpext half") != std::string::npos);
  CHECK(before.find("llvm.loop.vectorize.width") == std::string::npos);
}

// What file descriptor 2 receives while `f` runs.
static std::string stderr_of(const std::function<void()>& f) {
  std::fflush(stderr);
  fs::path path = fs::temp_directory_path() / ("jx_stderr_" + std::to_string(getpid()));
  int file = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
  int saved = dup(2);
  dup2(file, 2);
  struct Restore {  // fd 2 back, even when f throws
    int saved, file;
    ~Restore() {
      std::fflush(stderr);
      dup2(saved, 2);
      close(saved);
      close(file);
    }
  };
  {
    Restore restore{saved, file};
    f();
  }
  std::string text = read(path);
  fs::remove(path);
  return text;
}

// A float16 loop the vectorizer cannot take at the width asked of it (an argmax's, whose index
// is no reduction it knows) compiles as it would have, and LLVM's report of that stays off
// stderr.
TEST_CASE("dumps: a float16 loop that cannot take the width compiles quietly", "[dumps][fusion]") {
  std::vector<float> x(64 * 64);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101);
  std::vector<std::int32_t> got;
  std::string printed = stderr_of([&] {
    got =
        jit([](const Array& a) { return np::argmax(a, 1); })(np::array(x, {64, 64}).astype(float16))
            .to_vector<std::int32_t>();
  });
  CHECK(printed.empty());
  std::size_t wrong = 0;
  for (std::size_t r = 0; r < 64; ++r) {
    auto row = x.begin() + static_cast<std::ptrdiff_t>(r * 64);
    wrong += got[r] != std::max_element(row, row + 64) - row;
  }
  CHECK(wrong == 0);
}

// A loop kernel whose output streams reads ahead the operands it reads only at the output's
// index, 32 lines of the output's elements at a time, one prefetch a line of each operand
// (codegen/cpu/read_ahead.hpp): f32 operands 32 prefetches a chunk, bf16 ones 16, a broadcast or
// reversed one none. Rows of 33 lines run
// as a chunk of 32 and one of 1; rows of 3 lines, shorter than a chunk, prefetch a row's lines
// each: 3 of f32, 2 of bf16.
TEST_CASE("dumps: a kernel whose output streams reads its operands ahead", "[dumps][fusion]") {
  const std::int64_t cache = codegen::cpu::cpu_isa(config().cpu_isa).last_level_cache;
  auto f = [](const Array& a, const Array& b, const Array& c) { return a.astype(float32) * b + c; };
  auto prefetches_of = [&](const std::string& name, std::int64_t rows, std::int64_t cols) {
    INFO(name);
    std::vector<float> a(static_cast<std::size_t>(rows * cols)), b(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<float>(int(i % 7) - 3);
      b[i] = static_cast<float>(int(i % 5));
    }
    DumpScope scope("--dump_llvm");
    std::vector<float> got =
        jit(std::function(f), {.name = name})(np::array(a, {rows, cols}).astype(bfloat16),
                                              np::array(b, {rows, cols}), np::array(7.0f))
            .to_vector<float>();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < a.size(); ++i) wrong += got[i] != a[i] * b[i] + 7.0f;
    CHECK(wrong == 0);
    auto files = scope.files(name);
    CHECK((read(files.at("ir-with-opt.ll")).find("!nontemporal") != std::string::npos) ==
          (rows * cols * 4 > cache));
    return count(read(files.at("ir-no-opt.ll")), "call void @llvm.prefetch");
  };
  CHECK(prefetches_of("lines_33", cache / (33 * 64) + 1, 33 * 16) == 16 + 32);
  CHECK(prefetches_of("lines_3", cache / (3 * 64) + 1, 3 * 16) == 3 + 2);
  CHECK(prefetches_of("small", 64, 33 * 16) == 0);
  // An operand of the output's shape read elsewhere than at the output's index (reversed) is not
  // read ahead: x's 32 lines a chunk only.
  const std::int64_t n = cache / 4 + 1024;
  std::vector<float> x(static_cast<std::size_t>(n)), y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(int(i % 7));
    y[i] = static_cast<float>(int(i % 11));
  }
  DumpScope scope("--dump_llvm");
  auto reversed_sum = [](const Array& a, const Array& b) { return a + np::flip(b, 0); };
  std::vector<float> got =
      jit(reversed_sum, {.name = "reversed"})(np::array(x), np::array(y)).to_vector<float>();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < x.size(); ++i) wrong += got[i] != x[i] + y[x.size() - 1 - i];
  CHECK(wrong == 0);
  CHECK(count(read(scope.files("reversed").at("ir-no-opt.ll")), "call void @llvm.prefetch") == 32);
}

// A kernel that fills its output with one value is a memset once optimized: larger than the
// last-level cache, a memset of whole lines becomes a loop of stores past the caches (a 1-d
// range's head and tail inside a line stay memsets). Each output takes the buffer of the one
// before, of other values (the runtime keeps large buffers for reuse), so every element is checked.
TEST_CASE("dumps: a large fill is stored past the caches", "[dumps][fusion]") {
  const std::int64_t cache = codegen::cpu::cpu_isa(config().cpu_isa).last_level_cache;
  auto ir_of = [&](const std::string& name, const Shape& shape) {
    Array x = np::full(shape, 3.0f);
    jit([](const Array& a) { return a * 2.0f; })(x).block_until_ready();
    DumpScope scope("--dump_llvm");
    std::vector<float> got =
        jit([](const Array& a) { return np::zeros_like(a); }, {.name = name})(x).to_vector<float>();
    std::size_t wrong = 0;
    for (float v : got) wrong += v != 0.0f;
    CHECK(wrong == 0);
    return read(scope.files(name).at("ir-with-opt.ll"));
  };
  std::string lines = ir_of("fill_lines", {cache / 2048 + 3, 512});
  CHECK(lines.find("store <64 x i8> zeroinitializer") != std::string::npos);
  CHECK(lines.find("!nontemporal") != std::string::npos);
  CHECK(lines.find("call void @llvm.x86.sse.sfence()") != std::string::npos);
  std::string ragged = ir_of("fill_ragged", {cache / 4 + 1003});
  CHECK(ragged.find("!nontemporal") != std::string::npos);
  CHECK(ragged.find("call void @llvm.x86.sse.sfence()") != std::string::npos);
  std::string small = ir_of("fill_small", {4099});
  CHECK(small.find("!nontemporal") == std::string::npos);
  CHECK(small.find("@llvm.memset") != std::string::npos);
}

// The optimized IR of a cumulative sum of a matrix of `cols` columns along `axis`, with rows
// enough that it outgrows the last-level cache, after checking every element against a running
// sum (small integers: every partial sum is exact).
static std::string large_cumsum_ir(const std::string& name, std::int64_t cols, int axis,
                                   bool reverse) {
  const std::int64_t cache = codegen::cpu::cpu_isa(config().cpu_isa).last_level_cache;
  const std::int64_t rows = cache / 4 / cols + 3;
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(int(i % 7) - 3);
  DumpScope scope("--dump_llvm");
  auto cumsum = [axis, reverse](const Array& a) { return lax::cumsum(a, axis, reverse); };
  std::vector<float> got =
      jit(std::function(cumsum), {.name = name})(np::array(x, {rows, cols})).to_vector<float>();
  const std::int64_t lines = axis == 0 ? cols : rows, length = axis == 0 ? rows : cols;
  std::size_t wrong = 0;
  for (std::int64_t l = 0; l < lines; ++l) {
    float sum = 0;
    for (std::int64_t k = 0; k < length; ++k) {
      std::int64_t at = reverse ? length - 1 - k : k;
      std::size_t i = static_cast<std::size_t>(axis == 0 ? at * cols + l : l * cols + at);
      sum += x[i];
      wrong += got[i] != sum;
    }
  }
  INFO(name);
  CHECK(wrong == 0);
  return read(scope.files(name).at("ir-with-opt.ll"));
}

// A cumulative sum along dimension 0 writes its output once, a run of a row at a time: larger than
// the last-level cache, it streams, and prefetches its operand's runs two rows ahead (the last row
// where fewer are left; in reverse, rows before). Its threads' parts of the columns are rounded
// down to 8 KiB of a row (scan_part_columns: on two threads, 5008 columns split as 2504 and 2504
// run as 2048 and 2960, and 1040 columns run on one thread); a row that is no whole number of
// lines does not stream.
TEST_CASE("dumps: a long cumulative sum down the columns is stored past the caches",
          "[dumps][fusion]") {
  for (auto [cols, reverse] : {std::pair{1040, false}, std::pair{1040, true},
                               std::pair{5008, false}, std::pair{5008, true}}) {
    std::string ir = large_cumsum_ir(
        (reverse ? "lines_reversed_" : "lines_") + std::to_string(cols), cols, 0, reverse);
    CHECK(ir.find("!nontemporal") != std::string::npos);
    CHECK(ir.find("call void @llvm.x86.sse.sfence()") != std::string::npos);
    CHECK(ir.find("@llvm.prefetch") != std::string::npos);
  }
  std::string off_lines = large_cumsum_ir("off_lines", 1001, 0, false);
  CHECK(off_lines.find("!nontemporal") == std::string::npos);
  CHECK(off_lines.find("@llvm.prefetch") == std::string::npos);
}

// A cumulative sum along the rows of a matrix writes each row once too: larger than the
// last-level cache, it streams and reads its operand 4 KiB ahead of each vector, forward or
// reversed; rows that are no whole number of lines do not stream.
TEST_CASE("dumps: a long cumulative sum along the rows is stored past the caches",
          "[dumps][fusion]") {
  for (bool reverse : {false, true}) {
    std::string ir = large_cumsum_ir(reverse ? "rows_reversed" : "rows", 1024, 1, reverse);
    CHECK(ir.find("!nontemporal") != std::string::npos);
    CHECK(ir.find("call void @llvm.x86.sse.sfence()") != std::string::npos);
    CHECK(ir.find("@llvm.prefetch") != std::string::npos);
  }
  std::string off_lines = large_cumsum_ir("rows_off_lines", 1001, 1, false);
  CHECK(off_lines.find("!nontemporal") == std::string::npos);
  CHECK(off_lines.find("@llvm.prefetch") == std::string::npos);
}

// A long 1-d cumulative sum runs as tiles (codegen/cpu/prefix_scan.hpp), each written once, so
// past the caches when it outgrows them: a tile that starts before the prefix before it is known
// scans without storing, waits for it, and scans again, storing. Reversed, the stores fall on
// lines where the length is a multiple of a line's elements. Its operand is read 4 KiB ahead.
TEST_CASE("dumps: a long 1-d cumulative sum is stored past the caches", "[dumps][fusion]") {
  const std::int64_t cache = codegen::cpu::cpu_isa(config().cpu_isa).last_level_cache;
  for (auto [n, reverse] :
       {std::pair{cache / 4 + 1003, false}, std::pair{cache / 4 + 1008, true}}) {
    std::vector<float> x(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(int(i % 7) - 3);
    DumpScope scope("--dump_llvm");
    auto cumsum = [reverse](const Array& a) { return lax::cumsum(a, 0, reverse); };
    std::vector<float> got =
        jit(std::function(cumsum), {.name = "tiles"})(np::array(x, {n})).to_vector<float>();
    // Small integers: every partial sum is exact.
    std::size_t wrong = 0;
    float sum = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      auto i = static_cast<std::size_t>(reverse ? n - 1 - k : k);
      sum += x[i];
      wrong += got[i] != sum;
    }
    INFO((reverse ? "reversed" : "forward"));
    CHECK(wrong == 0);
    std::string ir = read(scope.files("tiles").at("ir-with-opt.ll"));
    CHECK(ir.find("!nontemporal") != std::string::npos);
    CHECK(ir.find("call void @llvm.x86.sse.sfence()") != std::string::npos);
    CHECK(ir.find("@llvm.prefetch") != std::string::npos);
  }
}

// A softmax whose output streams stashes each row's exp on the stack, not in the output's row,
// so that the output is written once, past the caches. Where its rows fold in chunks (a multiple
// of 256 elements), it writes each row's output in the next row's sum loop, from the other of two
// stashed rows (codegen/cpu/row_stash.hpp), and the last row after the loop; rows over leading
// dims beyond the first, a batch of one (whose rows are dim 1's), and each thread's first and
// last row, are then the cases to get right.
// A row of another length is written after its sum; a row longer than the stash's 16 KiB stays
// stashed in the output, written as usual.
TEST_CASE("dumps: a streamed softmax stashes its rows on the stack", "[dumps][fusion]") {
  using Fn = std::function<Array(const Array&, const Array&)>;
  Fn softmax = [](const Array& x, const Array&) {
    Array e = np::exp(x - np::max(x, -1, true));
    return e / np::sum(e, -1, true);
  };
  // The output reads an operand of its own and the max as well as the stash and the sum.
  Fn scaled = [](const Array& x, const Array& w) {
    Array m = np::max(x, -1, true);
    Array e = np::exp(x - m);
    return e / np::sum(e, -1, true) * w + m;
  };
  const std::int64_t cache = codegen::cpu::cpu_isa(config().cpu_isa).last_level_cache;
  auto ir_of = [&](const std::string& name, const Fn& f, bool with_w, Shape shape) {
    const std::int64_t cols = shape.back();
    // The dim given as 0 grows until the output outgrows the last-level cache.
    auto grown = std::find(shape.begin(), shape.end() - 1, 0);
    std::int64_t others = 1;  // rows in each index of that dim
    for (auto d = shape.begin(); d + 1 != shape.end(); ++d)
      if (d != grown) others *= *d;
    *grown = cache / 4 / cols / others + 3;
    const std::int64_t rows = shape_size(shape) / cols;
    std::vector<float> x(static_cast<std::size_t>(rows * cols)), w(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<float>(i % 97) / 8.0f;
      w[i] = static_cast<float>(i % 5) - 2.0f;
    }
    DumpScope scope("--dump_llvm");
    std::vector<float> got =
        jit(f, {.name = name})(np::array(x, shape), np::array(w, shape)).to_vector<float>();
    // Every element against a double-precision oracle.
    double worst = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* row = x.data() + r * cols;
      double max = *std::max_element(row, row + cols), sum = 0;
      for (std::int64_t c = 0; c < cols; ++c) sum += std::exp(double(row[c]) - max);
      for (std::int64_t c = 0; c < cols; ++c) {
        auto i = static_cast<std::size_t>(r * cols + c);
        double p = std::exp(double(row[c]) - max) / sum;
        double want = with_w ? p * w[i] + max : p;
        worst = std::max(worst, std::abs(got[i] - want) / std::max(std::abs(want), 1e-30));
      }
    }
    INFO(name);
    CHECK(worst < 2e-6);
    return read(scope.files(name).at("ir-with-opt.ll"));
  };
  for (auto [name, f, with_w, shape] :
       {std::tuple{"behind", softmax, false, Shape{0, 4096}},
        std::tuple{"behind_3d", softmax, false, Shape{0, 3, 1024}},
        std::tuple{"behind_batch_of_one", softmax, false, Shape{1, 0, 2048}},
        std::tuple{"behind_scaled", scaled, true, Shape{0, 2048}}}) {
    std::string ir = ir_of(name, f, with_w, shape);
    INFO(name);
    CHECK(has(ir, "%stash"));
    CHECK(has(ir, "behind"));
    CHECK(has(ir, "!nontemporal"));
  }
  std::string after_sum = ir_of("after_sum", softmax, false, {0, 1008});
  CHECK(has(after_sum, "%stash"));
  CHECK_FALSE(has(after_sum, "behind"));
  CHECK(has(after_sum, "!nontemporal"));
  std::string long_rows = ir_of("long_rows", softmax, false, {0, 8192});
  CHECK_FALSE(has(long_rows, "%stash"));
  CHECK_FALSE(has(long_rows, "!nontemporal"));
}

// A row kernel whose rows take in several leading dims computes each row's reduction once, at
// the row's index (ElementalEmitter::delinearize_loop_index), not once per element: only then is
// the loop over a row's elements innermost, which the vectorizer widens into vector stores.
TEST_CASE("dumps: rows that take in leading dims reduce once a row", "[dumps][fusion]") {
  const Shape shape{2, 3, 11, 40};
  const std::int64_t rows = 66, cols = 40;
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 23) - 11.0f;
  DumpScope scope("--dump_llvm");
  auto centered =
      jit([](const Array& a) { return a - np::max(a, -1, true); }, {.name = "folded_rows"});
  std::vector<float> got = centered(np::array(x, shape)).to_vector<float>();
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = x.data() + r * cols;
    float max = *std::max_element(row, row + cols);
    for (std::int64_t c = 0; c < cols; ++c)
      CHECK(got[static_cast<std::size_t>(r * cols + c)] == row[c] - max);
  }
  std::string ir = read(scope.files("folded_rows").at("ir-with-opt.ll"));
  CHECK(std::regex_search(ir, std::regex(R"(store <\d+ x float>)")));
}

// A streamed row kernel with nothing to stash writes its output a row behind too, computing it
// again from the operands' previous row (row_stash.hpp): log-softmax, a layer norm. An output
// that reads a row's reduction at another row (here the max of the rows reversed) is written
// after its reductions instead, since the rows' writes read each reduction's value for their
// own row.
TEST_CASE("dumps: a streamed row kernel with nothing to stash writes a row behind",
          "[dumps][fusion]") {
  using Fn = std::function<Array(const Array&)>;
  using Oracle = std::function<double(const std::vector<double>& row_stats, double x)>;
  const std::int64_t cache = codegen::cpu::cpu_isa(config().cpu_isa).last_level_cache;
  const std::int64_t cols = 2048, rows = cache / 4 / cols + 3;
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  // Rows of different maxima, means and variances.
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::size_t r = i / cols;
    x[i] = static_cast<float>((i * 7) % 101) / static_cast<float>(16 + r % 5) + (r % 13) * 0.25f;
  }
  // Each row's max, log of the sum of exp(x - max), mean and variance.
  std::vector<std::vector<double>> stats;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = x.data() + r * cols;
    double max = *std::max_element(row, row + cols), sum = 0, mean = 0, square = 0;
    for (std::int64_t c = 0; c < cols; ++c) {
      sum += std::exp(row[c] - max);
      mean += row[c];
      square += double(row[c]) * row[c];
    }
    mean /= cols;
    stats.push_back({max, std::log(sum), mean, square / cols - mean * mean});
  }
  auto ir_of = [&](const std::string& name, const Fn& f, const Oracle& want, bool reversed) {
    DumpScope scope("--dump_llvm");
    std::vector<float> got = jit(f, {.name = name})(np::array(x, {rows, cols})).to_vector<float>();
    double worst = 0;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) {
        auto i = static_cast<std::size_t>(r * cols + c);
        double w = want(stats[static_cast<std::size_t>(reversed ? rows - 1 - r : r)], x[i]);
        worst = std::max(worst, std::abs(got[i] - w) / std::max(std::abs(w), 1.0));
      }
    INFO(name);
    CHECK(worst < 1e-5);
    return read(scope.files(name).at("ir-with-opt.ll"));
  };
  std::string log_softmax = ir_of(
      "log_softmax", [](const Array& a) { return nn::log_softmax(a); },
      [](const std::vector<double>& s, double v) { return v - s[0] - s[1]; }, false);
  std::string layer_norm = ir_of(
      "layer_norm", [](const Array& a) { return nn::layer_norm(nn::layer_norm_init(2048), a); },
      [](const std::vector<double>& s, double v) { return (v - s[2]) / std::sqrt(s[3] + 1e-6); },
      false);
  for (const std::string* ir : {&log_softmax, &layer_norm}) {
    CHECK(has(*ir, "behind"));
    CHECK(has(*ir, "!nontemporal"));
    CHECK(has(*ir, "@llvm.prefetch"));
    CHECK_FALSE(has(*ir, "%stash"));
  }
  std::string reversed = ir_of(
      "reversed_max", [](const Array& a) { return a - np::flip(np::max(a, -1, true), 0); },
      [](const std::vector<double>& s, double v) { return v - s[0]; }, true);
  CHECK_FALSE(has(reversed, "behind"));
}

// A vectorized elementwise loop runs as many iterations side by side as give every step of its
// body's longest chain of dependent float operations 8 independent ones
// (codegen/elemental/interleave.hpp): 8 for a chain of products, 4 for two sums of two products
// added (7 operations, 3 in a chain); a reduction's loop keeps its 4 accumulators. Fewer where
// the copies would pass 1024 operations or a copy would have under 256 iterations.
TEST_CASE("dumps: a loop of dependent operations runs more iterations side by side",
          "[dumps][fusion]") {
  using Fn = std::function<Array(const Array&, const Array&, const Array&, const Array&)>;
  const std::int64_t n = 4099;
  std::vector<std::vector<float>> in(4, std::vector<float>(n));
  for (std::size_t k = 0; k < in.size(); ++k)
    for (std::size_t i = 0; i < in[k].size(); ++i)
      in[k][i] = static_cast<float>((i * (k + 3)) % 17) / 4.0f - 2.0f;
  // f's values and the interleave counts its kernels' loops ask for.
  auto run = [&](const std::string& name, const Fn& f) {
    DumpScope scope("--dump_llvm");
    std::vector<Array> args;
    for (const auto& v : in) args.push_back(np::array(v, {n}));
    std::vector<float> got =
        jit(f, {.name = name})(args[0], args[1], args[2], args[3]).to_vector<float>();
    std::string ir = read(scope.files(name).at("ir-no-opt.ll"));
    std::set<int> counts;
    std::regex hint("\"llvm\\.loop\\.interleave\\.count\", i32 ([0-9]+)");
    for (std::sregex_iterator it(ir.begin(), ir.end(), hint), end; it != end; ++it)
      counts.insert(std::stoi((*it)[1]));
    return std::pair(got, counts);
  };
  // Elementwise results against the same computation done here: the inputs are quarters in
  // [-2, 2], so every product and sum is exact, whatever order or contraction.
  auto wrong = [&](const std::vector<float>& got, float (*host)(float, float, float, float)) {
    std::size_t count = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      count += got[i] != host(in[0][i], in[1][i], in[2][i], in[3][i]);
    return count;
  };
  auto [chain, chain_counts] = run("chain", [](const Array& a, const Array& b, const Array& c,
                                               const Array& d) { return a * b * c * d; });
  CHECK(wrong(chain, [](float a, float b, float c, float d) { return a * b * c * d; }) == 0);
  CHECK(chain_counts == std::set{8});
  auto [wide, wide_counts] =
      run("wide", [](const Array& a, const Array& b, const Array& c, const Array& d) {
        return (a * b + c * d) + (a * c + b * d);
      });
  CHECK(wrong(wide, [](float a, float b, float c, float d) {
          return (a * b + c * d) + (a * c + b * d);
        }) == 0);
  CHECK(wide_counts == std::set{4});
  // 600 operations in one chain: one copy is all the budget allows.
  auto [long_chain, long_counts] =
      run("long_chain", [](const Array& a, const Array& b, const Array&, const Array&) {
        Array y = a;
        for (int k = 0; k < 300; ++k) y = y * 0.5f + b;
        return y;
      });
  double worst = 0;
  for (std::size_t i = 0; i < long_chain.size(); ++i) {
    double y = in[0][i];
    for (int k = 0; k < 300; ++k) y = y * 0.5 + in[1][i];
    worst = std::max(worst, std::abs(long_chain[i] - y));
  }
  CHECK(worst < 1e-5);
  CHECK(long_counts.empty());
  // 1000 iterations: two copies of 256 or more.
  auto [short_chain, short_counts] =
      run("short_loop", [n](const Array& a, const Array& b, const Array& c, const Array& d) {
        auto head = [n](const Array& x) { return lax::slice(x, {0}, {n - 3099}); };
        return head(a) * head(b) * head(c) * head(d);
      });
  CHECK(short_chain.size() == 1000);
  CHECK(wrong(short_chain, [](float a, float b, float c, float d) { return a * b * c * d; }) == 0);
  CHECK(short_counts == std::set{2});
  auto [dot, dot_counts] = run("sum", [](const Array& a, const Array& b, const Array&,
                                         const Array&) { return np::sum(a * b); });
  double want = 0;
  for (std::size_t i = 0; i < in[0].size(); ++i) want += double(in[0][i]) * in[1][i];
  CHECK(dot.at(0) == Approx(want).epsilon(1e-6));
  CHECK(dot_counts.count(4) == 1);
}

}  // namespace jx
