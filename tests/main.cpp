// The test suite's entry point (Catch2 v2). A run whose JX_FLAGS name a --cpu_isa or a
// --cpu_vector_width that compiles what the CPU's own compiles (avx2 on a CPU without AVX-512,
// avx512 on one with it, 256 bits on one without) would repeat the plain run: it reports itself
// skipped instead.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "codegen/cpu/cpu_isa.hpp"
#include "jx/config.hpp"

int main(int argc, char* argv[]) {
  const jx::Config& flags = jx::config();
  const jx::codegen::cpu::CpuIsa &run = jx::codegen::cpu::configured_cpu_isa(),
                                 &own = jx::codegen::cpu::cpu_isa("native");
  if ((flags.cpu_isa != "native" || flags.cpu_vector_width != 0) && run.features == own.features &&
      run.vector_bytes == own.vector_bytes && run.full_width_512 == own.full_width_512) {
    std::printf(
        "JX_SKIPPED: --cpu_isa=%s --cpu_vector_width=%d compile this CPU's own code; the "
        "plain run covers it\n",
        flags.cpu_isa.c_str(), flags.cpu_vector_width);
    return 0;
  }
  return Catch::Session().run(argc, argv);
}
