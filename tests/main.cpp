// The test suite's entry point (Catch2 v2). A run whose JX_FLAGS names a --cpu_isa that compiles
// what the CPU's own ISA compiles (avx2 on a CPU without AVX-512, avx512 on one with it), at its
// own vector width, would repeat the plain run: it reports itself skipped instead.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "codegen/cpu/cpu_isa.hpp"
#include "jx/config.hpp"

int main(int argc, char* argv[]) {
  const std::string& isa = jx::config().cpu_isa;
  if (isa != "native" && jx::config().cpu_vector_width == 0 &&
      jx::codegen::cpu::cpu_isa(isa).name == jx::codegen::cpu::cpu_isa("native").name) {
    std::printf("JX_SKIPPED: --cpu_isa=%s is this CPU's own; the plain run covers it\n",
                isa.c_str());
    return 0;
  }
  return Catch::Session().run(argc, argv);
}
