// --cpu_isa: what the CPU JIT compiles for. avx2 leaves out every AVX-512 feature, native and
// avx512 take the CPU's own, the compiled functions name their features, and a bad name is a
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
  CHECK(&cpu_isa("avx512") == &native);  // a maximum, as XLA's --xla_cpu_max_isa
  CHECK_FALSE(native.cpu.empty());
  CHECK(native.cpu == avx2.cpu);
  CHECK(has(native.features, "+avx512f") == (native.name == "avx512"));
  CHECK(has(native.features, "+avx2") == (native.name != "sse"));
  CHECK_FALSE(has(avx2.features, "+avx512f"));
  CHECK(avx2.features.find("+avx512") == std::string::npos);
  CHECK(avx2.name == (native.name == "sse" ? "sse" : "avx2"));
  CHECK(avx2.vector_bytes == (avx2.name == "avx2" ? 32u : 16u));
  if (native.name == "avx512") CHECK(native.vector_bytes == 64);
  // Zen 1 runs 256-bit operations as two 128-bit halves; without AVX2 there are none.
  for (const CpuIsa* isa : {&native, &avx2})
    CHECK(isa->full_width_256 == (isa->name != "sse" && isa->cpu != "znver1"));
  // What AVX2 does not need is kept: the capped list differs from the CPU's only past AVX2.
  CHECK(has(avx2.features, "+fma") == has(native.features, "+fma"));
}

TEST_CASE("cpu_isa: any other name is a ValueError", "[codegen][isa]") {
  CHECK_THROWS_MATCHES(cpu_isa("avx1024"), ValueError,
                       Catch::Message("cpu_isa must be avx2, avx512 or native, got 'avx1024'"));
}

TEST_CASE("cpu_isa: compiled kernels name the features they were compiled for", "[codegen][isa]") {
  Hlo h;
  auto* x = h.param(0, float32, {64});
  auto* root = h.op(hlo::Opcode::kExp, float32, {64}, {x});
  auto dir = std::filesystem::temp_directory_path() / "jx_test_cpu_isa";
  std::filesystem::create_directories(dir);
  for (const char* isa : {"avx2", "native"}) {
    CpuCompileOptions options;
    options.isa = isa;
    options.dump_prefix = (dir / isa).string();
    std::vector<float> in(64, 0.5f);
    std::vector<float> out = run<float>(root, {in.data()}, options);
    CHECK(out[63] == Approx(std::exp(0.5f)));
    std::ifstream ir(options.dump_prefix + ".ir-with-opt.ll");
    std::stringstream text;
    text << ir.rdbuf();
    CHECK(text.str().find("\"target-features\"=\"" + cpu_isa(isa).features + "\"") !=
          std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace jx::codegen::testing
