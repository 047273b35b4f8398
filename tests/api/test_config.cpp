// jx::Config and parse_flags: every JX_FLAGS flag, boolean forms, quoting, and the errors for
// unknown flags and bad values (which leave the configuration unchanged).
#include <catch2/catch.hpp>

#include <functional>

#include "jx/config.hpp"
#include "jx/errors.hpp"

namespace jx {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no exception>";
}

TEST_CASE("config: defaults", "[jit][config]") {
  Config c;
  CHECK(c.dump_to.empty());
  CHECK_FALSE(c.dump_jaxpr);
  CHECK_FALSE(c.dump_hlo);
  CHECK(c.dump_hlo_pass_re.empty());
  CHECK_FALSE(c.dump_llvm);
  CHECK_FALSE(c.dump_ptx);
  CHECK_FALSE(c.dump_dot);
  CHECK_FALSE(c.log_compiles);
  CHECK_FALSE(c.explain_cache_misses);
  CHECK_FALSE(c.strict_retraces);
  CHECK_FALSE(c.debug_nans);
  CHECK_FALSE(c.debug_infs);
  CHECK_FALSE(c.disable_jit);
  CHECK(c.cache_capacity == 64);
  CHECK(c.cpu_flush_denormals);
  CHECK(c.cpu_huge_pages);
  CHECK(c.compilation_cache_dir.empty());
  CHECK(c.compilation_cache_max_bytes == (1LL << 30));
  CHECK_FALSE(c.verify_persistent_cache);
  CHECK(c.cpu_threads == 0);
  CHECK(c.cpu_isa == "native");
  CHECK(c.cpu_vector_width == 0);
  CHECK_FALSE(c.precise_math);
  CHECK(static_cast<bool>(c.log));
  CHECK(&config() == &config());
}

TEST_CASE("config: parse_flags sets every flag", "[jit][config]") {
  Config c;
  parse_flags(
      "--dump_to=/tmp/jx --dump_jaxpr --dump_hlo --dump_hlo_pass_re=fusion|dce "
      "--dump_llvm --dump_ptx --dump_dot --log_compiles --explain_cache_misses --strict_retraces "
      "--debug_nans --debug_infs --disable_jit --cache_capacity=8 --compilation_cache_dir=/tmp/cc "
      "--cpu_parallel_min_bytes=0 --cpu_flush_denormals=false --cpu_huge_pages=false "
      "--cpu_threads=3 "
      "--cpu_isa=avx2 --cpu_vector_width=512 --precise_math --compilation_cache_max_bytes=4096 "
      "--verify_persistent_cache",
      c);
  CHECK(c.dump_to == "/tmp/jx");
  CHECK(c.dump_jaxpr);
  CHECK(c.dump_hlo);
  CHECK(c.dump_hlo_pass_re == "fusion|dce");
  CHECK(c.dump_llvm);
  CHECK(c.dump_ptx);
  CHECK(c.dump_dot);
  CHECK(c.log_compiles);
  CHECK(c.explain_cache_misses);
  CHECK(c.strict_retraces);
  CHECK(c.debug_nans);
  CHECK(c.debug_infs);
  CHECK(c.disable_jit);
  CHECK(c.cache_capacity == 8);
  CHECK(c.compilation_cache_dir == "/tmp/cc");
  CHECK(c.compilation_cache_max_bytes == 4096);
  CHECK(c.verify_persistent_cache);
  CHECK(c.cpu_parallel_min_bytes == 0);
  CHECK_FALSE(c.cpu_flush_denormals);
  CHECK_FALSE(c.cpu_huge_pages);
  CHECK(c.cpu_threads == 3);
  CHECK(c.cpu_isa == "avx2");
  CHECK(c.cpu_vector_width == 512);
  CHECK(c.precise_math);
}

TEST_CASE("config: boolean values, quoting, whitespace", "[jit][config]") {
  Config c;
  parse_flags("  --log_compiles=true\t--disable_jit=1\n --dump_to=\"/tmp/with space\"  ", c);
  CHECK(c.log_compiles);
  CHECK(c.disable_jit);
  CHECK(c.dump_to == "/tmp/with space");
  parse_flags("--log_compiles=false --disable_jit=0", c);
  CHECK_FALSE(c.log_compiles);
  CHECK_FALSE(c.disable_jit);
  parse_flags("", c);
  CHECK(c.cache_capacity == 64);
}

TEST_CASE("config: unknown flags and bad values are errors that change nothing", "[jit][config]") {
  Config c;
  CHECK(error_of([&] { parse_flags("--log_compiles --dump_everything", c); }) ==
        "Unknown flag in JX_FLAGS: --dump_everything");
  CHECK_FALSE(c.log_compiles);  // all or nothing
  CHECK(error_of([&] { parse_flags("--xla_dump_to=/tmp", c); }) ==
        "Unknown flag in JX_FLAGS: --xla_dump_to");
  CHECK(error_of([&] { parse_flags("dump_jaxpr", c); }) ==
        "Bad flag in JX_FLAGS: 'dump_jaxpr' (flags look like --name or --name=value)");
  CHECK(error_of([&] { parse_flags("--dump_jaxpr=yes", c); }) ==
        "Bad value for --dump_jaxpr in JX_FLAGS: 'yes' (expected true or false)");
  CHECK(error_of([&] { parse_flags("--cache_capacity=lots", c); }) ==
        "Bad value for --cache_capacity in JX_FLAGS: 'lots' (expected a positive integer "
        "up to 2147483647)");
  CHECK(error_of([&] { parse_flags("--cache_capacity=0", c); }) ==
        "Bad value for --cache_capacity in JX_FLAGS: '0' (expected a positive integer "
        "up to 2147483647)");
  CHECK(error_of([&] { parse_flags("--cache_capacity=12x", c); }) ==
        "Bad value for --cache_capacity in JX_FLAGS: '12x' (expected a positive integer "
        "up to 2147483647)");
  CHECK(error_of([&] { parse_flags("--cache_capacity=4294967297", c); }) ==
        "Bad value for --cache_capacity in JX_FLAGS: '4294967297' (expected a positive integer "
        "up to 2147483647)");
  CHECK(error_of([&] { parse_flags("--cache_capacity", c); }) ==
        "Bad value for --cache_capacity in JX_FLAGS: '' (expected a positive integer "
        "up to 2147483647)");
  CHECK(error_of([&] { parse_flags("--cpu_parallel_min_bytes=-1", c); }) ==
        "Bad value for --cpu_parallel_min_bytes in JX_FLAGS: '-1' (expected a non-negative "
        "integer)");
  CHECK(c.cpu_parallel_min_bytes == 128 << 10);
  CHECK(error_of([&] { parse_flags("--compilation_cache_max_bytes=1G", c); }) ==
        "Bad value for --compilation_cache_max_bytes in JX_FLAGS: '1G' (expected a non-negative "
        "integer)");
  CHECK(error_of([&] { parse_flags("--cpu_threads=-2", c); }) ==
        "Bad value for --cpu_threads in JX_FLAGS: '-2' (expected a non-negative integer)");
  CHECK(error_of([&] { parse_flags("--cpu_isa=sse9", c); }) ==
        "Bad value for --cpu_isa in JX_FLAGS: 'sse9' (expected avx2, avx512 or native)");
  CHECK(error_of([&] { parse_flags("--cpu_vector_width=384", c); }) ==
        "Bad value for --cpu_vector_width in JX_FLAGS: '384' (expected 0, 256 or 512)");
  CHECK(error_of([&] { parse_flags("--cpu_vector_width=wide", c); }) ==
        "Bad value for --cpu_vector_width in JX_FLAGS: 'wide' (expected 0, 256 or 512)");
  CHECK(error_of([&] { parse_flags("--precise_math=maybe", c); }) ==
        "Bad value for --precise_math in JX_FLAGS: 'maybe' (expected true or false)");
  CHECK(c.cpu_threads == 0);
  CHECK(c.cpu_isa == "native");
  CHECK(c.cpu_vector_width == 0);
  CHECK(error_of([&] { parse_flags("--dump_to", c); }) ==
        "Missing value for --dump_to in JX_FLAGS (expected --dump_to=DIR)");
  CHECK(error_of([&] { parse_flags("--dump_hlo_pass_re=(fusion", c); }) ==
        "Bad value for --dump_hlo_pass_re in JX_FLAGS: '(fusion' (expected a regular "
        "expression)");
  CHECK(error_of([&] { parse_flags("--dump_to=\"/tmp", c); }) ==
        "Bad JX_FLAGS: unterminated double quote");
  CHECK(c.cache_capacity == 64);
  CHECK(c.dump_to.empty());
}

TEST_CASE("config: the log sink receives messages", "[jit][config]") {
  Config c;
  std::string got;
  c.log = [&](const std::string& m) { got = m; };
  c.log("hello");
  CHECK(got == "hello");
}

}  // namespace
}  // namespace jx
