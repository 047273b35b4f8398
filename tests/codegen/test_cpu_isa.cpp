// --cpu_isa: what the CPU JIT compiles for. avx2 leaves out every AVX-512 and AMX feature,
// avx512 AMX's, native takes the CPU's own, the compiled functions name their features, and a
// bad name is a
// jx::ValueError. (The op table and the differential suite rerun under --cpu_isa=avx2 as a ctest
// test of their own, tests/CMakeLists.txt.)
#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/cpu/cpu_isa.hpp"
#include "codegen_testing.hpp"

namespace jx::codegen::testing {
namespace {

using cpu::cpu_isa;
using cpu::CpuIsa;

bool has(const std::string& features, const std::string& f) {
  return ("," + features + ",").find("," + f + ",") != std::string::npos;
}

TEST_CASE("cpu_isa: avx2 leaves out AVX-512, native takes the CPU's features", "[codegen][isa]") {
  const CpuIsa& native = cpu_isa("native");
  const CpuIsa& avx2 = cpu_isa("avx2");
  // A maximum, as XLA's --xla_cpu_max_isa: avx512 is the CPU's own less the tile unit (AMX).
  const CpuIsa& avx512 = cpu_isa("avx512");
  CHECK(avx512.name == native.name);
  CHECK(avx512.features.find("+amx") == std::string::npos);
  CHECK_FALSE(avx512.amx_bf16);
  CHECK(native.amx_bf16 ==
        (has(native.features, "+amx-tile") && has(native.features, "+amx-bf16")));
  CHECK(has(avx512.features, "+avx512f") == has(native.features, "+avx512f"));
  CHECK(avx512.avx512_bf16 == native.avx512_bf16);
  CHECK_FALSE(native.cpu.empty());
  CHECK(native.cpu == avx2.cpu);
  CHECK(has(native.features, "+avx512f") == (native.name == "avx512"));
  CHECK(has(native.features, "+avx2") == (native.name != "sse"));
  CHECK_FALSE(has(avx2.features, "+avx512f"));
  CHECK(avx2.features.find("+avx512") == std::string::npos);
  CHECK(avx2.features.find("+amx") == std::string::npos);
  CHECK_FALSE(avx2.amx_bf16);
  CHECK(avx2.name == (native.name == "sse" ? "sse" : "avx2"));
  CHECK(avx2.vector_bytes == (avx2.name == "avx2" ? 32u : 16u));
  if (native.name == "avx512") CHECK(native.vector_bytes == 64);
  // Zen 1 runs 256-bit operations as two 128-bit halves; without AVX2 there are none.
  for (const CpuIsa* isa : {&native, &avx2})
    CHECK(isa->full_width_256 == (isa->name != "sse" && isa->cpu != "znver1"));
  // What AVX2 does not need is kept: the capped list differs from the CPU's only past AVX2.
  CHECK(has(avx2.features, "+fma") == has(native.features, "+fma"));
  // bf16 pairs need AVX-512 BF16, which AVX2 leaves out.
  CHECK_FALSE(avx2.bf16_pairs_pay());
  CHECK((!native.bf16_pairs_pay() || native.avx512_bf16));
}

// Linux lends the tile registers only on request: refused, the tile unit is off, in the ISA and
// in the features that name the compiled code; under avx512 and avx2, or on a CPU without the
// unit, nothing is asked.
TEST_CASE("cpu_isa: a refused tile unit leaves AMX out", "[codegen][isa]") {
  using cpu::capped_isa;
  const std::vector<std::pair<std::string, bool>> xeon = {{"amx-bf16", true},   {"amx-int8", true},
                                                          {"amx-tile", true},   {"avx2", true},
                                                          {"avx512bf16", true}, {"avx512f", true}};
  int asked = 0;
  auto answer = [&](bool grant) {
    return [&asked, grant] {
      ++asked;
      return grant;
    };
  };
  CpuIsa granted = capped_isa("sapphirerapids", xeon, "native", answer(true));
  CHECK(asked == 1);
  CHECK(granted.amx_bf16);
  CHECK(has(granted.features, "+amx-tile"));
  CpuIsa refused = capped_isa("sapphirerapids", xeon, "native", answer(false));
  CHECK(asked == 2);
  CHECK_FALSE(refused.amx_bf16);
  CHECK(refused.features == "+avx2,+avx512bf16,+avx512f,-amx-bf16,-amx-int8,-amx-tile");
  CHECK(refused.name == "avx512");
  CHECK(refused.avx512_bf16);
  CHECK(capped_isa("sapphirerapids", xeon, "avx512", answer(true)).features == refused.features);
  CpuIsa avx2 = capped_isa("sapphirerapids", xeon, "avx2", answer(true));
  CHECK(avx2.features == "+avx2,-amx-bf16,-amx-int8,-amx-tile,-avx512bf16,-avx512f");
  CHECK(avx2.name == "avx2");
  CHECK(avx2.vector_bytes == 32u);
  CHECK_FALSE(avx2.avx512_bf16);
  CHECK_FALSE(avx2.amx_bf16);
  CHECK_FALSE(
      capped_isa("icelake-server", {{"amx-tile", false}, {"avx512f", true}}, "native", answer(true))
          .amx_bf16);
  CHECK(asked == 2);
  // The tile unit computes bf16 products only with both features.
  CHECK_FALSE(
      capped_isa("sapphirerapids", {{"amx-tile", true}, {"avx512f", true}}, "native", answer(true))
          .amx_bf16);
  CHECK_THROWS_MATCHES(
      capped_isa("sapphirerapids", xeon, "amx", answer(true)), ValueError,
      Catch::Matchers::Message("cpu_isa must be avx2, avx512 or native, got 'amx'"));
}

// --cpu_vector_width: the kernels' vectors, nothing else of the ISA. Wider than the ISA's, as on
// a core that runs 512-bit vectors at full rate; narrower, as on a CPU of those.
TEST_CASE("cpu_isa: a vector width sets the kernels' vectors", "[codegen][isa]") {
  const CpuIsa& native = cpu_isa("native");
  for (const char* flag : {"avx2", "native"}) {
    INFO("--cpu_isa=" << flag);
    const CpuIsa& own = cpu_isa(flag);
    CHECK(&cpu_isa(flag, 0) == &own);
    for (int bits : {256, 512}) {
      const CpuIsa& isa = cpu_isa(flag, bits);
      CHECK(isa.vector_bytes == static_cast<unsigned>(bits / 8));
      CHECK(isa.name == own.name);
      CHECK(isa.features == own.features);
      CHECK(isa.avx512_bf16 == own.avx512_bf16);
      CHECK(isa.amx_bf16 == own.amx_bf16);
      CHECK(isa.full_width_256 == own.full_width_256);
      CHECK(isa.second_level_cache == own.second_level_cache);
    }
    CHECK_FALSE(cpu_isa(flag, 256).full_width_512);
    // 512 bits at full rate, unless the CPU runs its own 512-bit vectors in halves (Zen 4)
    CHECK(cpu_isa(flag, 512).full_width_512 == (own.name != "avx512" || native.full_width_512));
  }
}

TEST_CASE("cpu_isa: any other name or width is a ValueError", "[codegen][isa]") {
  CHECK_THROWS_MATCHES(cpu_isa("avx1024"), ValueError,
                       Catch::Message("cpu_isa must be avx2, avx512 or native, got 'avx1024'"));
  CHECK_THROWS_MATCHES(cpu_isa("avx2", 1024), ValueError,
                       Catch::Message("cpu_vector_width must be 0, 256 or 512, got 1024"));
  CHECK_THROWS_MATCHES(cpu_isa("native", -256), ValueError,
                       Catch::Message("cpu_vector_width must be 0, 256 or 512, got -256"));
}

// And under AVX-512, the vector width LLVM's vectorizer prefers: 512 bits, or 256 where
// --cpu_vector_width says so.
TEST_CASE("cpu_isa: compiled kernels name the features they were compiled for", "[codegen][isa]") {
  Hlo h;
  auto* x = h.param(0, float32, {64});
  auto* root = h.op(hlo::Opcode::kExp, float32, {64}, {x});
  auto dir = std::filesystem::temp_directory_path() / "jx_test_cpu_isa";
  std::filesystem::create_directories(dir);
  struct Target {
    const char* isa;
    int vector_width;
  };
  for (Target t : {Target{"avx2", 0}, Target{"native", 0}, Target{"native", 256}}) {
    INFO("--cpu_isa=" << t.isa << " --cpu_vector_width=" << t.vector_width);
    CpuCompileOptions options;
    options.isa = t.isa;
    options.vector_width = t.vector_width;
    options.dump_prefix = (dir / (t.isa + std::to_string(t.vector_width))).string();
    std::vector<float> in(64, 0.5f);
    std::vector<float> out = run<float>(root, {in.data()}, options);
    CHECK(out[63] == Approx(std::exp(0.5f)));
    std::ifstream ir(options.dump_prefix + ".ir-with-opt.ll");
    std::stringstream text;
    text << ir.rdbuf();
    const CpuIsa& isa = cpu_isa(t.isa);
    CHECK(text.str().find("\"target-features\"=\"" + isa.features + "\"") != std::string::npos);
    std::string width = t.vector_width ? std::to_string(t.vector_width) : "512";
    CHECK((text.str().find("\"prefer-vector-width\"=\"" + width + "\"") != std::string::npos) ==
          (isa.name == "avx512"));
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace jx::codegen::testing

TEST_CASE("cpu_isa: a cache counts at most 12 MiB for each CPU that shares it", "[codegen][isa]") {
  using jx::codegen::cpu::cache_to_count_on;
  constexpr std::int64_t MiB = 1 << 20;
  // A virtual machine of 2 CPUs on a socket whose last level is 480 MiB.
  CHECK(cache_to_count_on(480 * MiB, "0-1") == 24 * MiB);
  CHECK(cache_to_count_on(480 * MiB, "0-3,8,10-11") == 7 * 12 * MiB);
  // A core complex's own cache, or a core's second level, is all there.
  CHECK(cache_to_count_on(24 * MiB, "0-1") == 24 * MiB);
  CHECK(cache_to_count_on(32 * MiB, "0-3") == 32 * MiB);
  CHECK(cache_to_count_on(8 * MiB, "0-3") == 8 * MiB);
  CHECK(cache_to_count_on(2 * MiB, "0") == 2 * MiB);
  // Without a list, or one of nothing readable, all of it; parts that are not numbers count none.
  CHECK(cache_to_count_on(64 * MiB, "") == 64 * MiB);
  CHECK(cache_to_count_on(64 * MiB, "x") == 64 * MiB);
  CHECK(cache_to_count_on(480 * MiB, "0,,x,1") == 24 * MiB);
  // A range too long for any machine counts no more than the cache.
  CHECK(cache_to_count_on(480 * MiB, "0-4294967295") == 480 * MiB);
}
