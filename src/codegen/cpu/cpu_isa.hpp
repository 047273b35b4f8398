// What the CPU JIT compiles for: the host's CPU and features, capped by --cpu_isa, and the width
// of its vectors (--cpu_vector_width).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jx::codegen::cpu {

struct CpuIsa {
  std::string name;      // "avx512", "avx2" or "sse" (older CPUs): the widest extension in use
  std::string cpu;       // LLVM's name for the host CPU
  std::string features;  // the host's features, "+f" or "-f" each, comma-separated, capped
  unsigned vector_bytes = 16;  // of the kernels' vectors
  // AVX-512 BF16: vdpbf16ps multiplies bf16 pairs into f32 lanes, vcvtneps2bf16 rounds to bf16
  bool avx512_bf16 = false;
  // AMX-BF16, and the OS lets this process use the tile registers: the tile unit multiplies bf16
  // matrices (gemm_amx.hpp), 8192 multiply-adds an instruction.
  bool amx_bf16 = false;
  // An AMD Zen core (LLVM's znver1 to znver5), whose prefetchers follow a stream of runs a page
  // apart; Intel's stop at each 4 KiB page (gemm_blocking reads such runs in blocks there).
  bool zen = false;
  // Products of bf16 operands pay as pairs (vdpbf16ps, two multiply-adds a lane) only where the
  // instruction issues as often as an f32 multiply-add: AMD's Zen 4 and 5. Intel's cores issue it
  // half as often, so the pair product runs at half the f32 kernel's rate there (one core of a
  // Xeon with AVX-512 BF16: 60 against 119 GMAC/s), and bf16 operands are widened to f32 first.
  bool bf16_pairs_pay() const { return avx512_bf16 && zen; }
  // AVX-512 on a core that multiply-adds 512-bit vectors at full rate, not as two 256-bit halves
  // as Zen 4 does (there 512-bit code runs at AVX2's rate).
  bool full_width_512 = false;
  // 256-bit vectors on a core that runs their operations whole, not as two 128-bit halves as
  // Zen 1 does (false without AVX2).
  bool full_width_256 = false;
  // A core's second-level cache, bytes, as much of it as cache_to_count_on allows (a default of
  // 1 MiB where the host does not say).
  std::int64_t second_level_cache = std::int64_t{1} << 20;
  // The host's last-level cache, bytes, as much of it as cache_to_count_on allows (a default of
  // 32 MiB where the host does not say).
  std::int64_t last_level_cache = std::int64_t{32} << 20;
  // The host's cores, over which a kernel's rows split (host_cores).
  int cores = 1;
};

// The ISA for --cpu_isa=`flag` (avx2, avx512 or native) on this host: the flag is a maximum, as
// XLA's --xla_cpu_max_isa, so avx512 on a CPU without it is the CPU's own (avx512 leaves AMX
// out, avx2 AVX-512 too). With a
// `vector_width` (--cpu_vector_width: 256 or 512 bits; 0, the ISA's own), vectors of that width:
// narrower than the ISA's, as a CPU of those; wider, as a core that runs them at full rate, each
// vector split over the ISA's registers. Throws jx::ValueError for any other flag or width.
const CpuIsa& cpu_isa(std::string_view flag, int vector_width = 0);

// The features, and what follows from them, that --cpu_isa=`flag` gives a CPU LLVM names `cpu`
// with `host_features` (LLVM's names, each on or off), where `grants_tiles` says whether the OS
// lets this process use the tile registers: asked once, and only where the flag keeps a tile
// feature the CPU has; refused, the tile features are off. Caches and cores keep CpuIsa's
// defaults. cpu_isa's own, on the host; throws jx::ValueError for another flag.
CpuIsa capped_isa(std::string cpu, const std::vector<std::pair<std::string, bool>>& host_features,
                  std::string_view flag, const std::function<bool()>& grants_tiles);

// `isa` with AMX-BF16's tile unit, whether or not the host has it or the OS granted it.
CpuIsa with_amx_tiles(CpuIsa isa);

// The ISA that config()'s --cpu_isa and --cpu_vector_width name.
const CpuIsa& configured_cpu_isa();

// More cache than this for each CPU (hardware thread) that shares a cache is a share of a
// larger machine's: a virtual machine of a few CPUs on a server socket sees the whole socket's
// last level (480 MiB for 2 CPUs), which the socket's other cores fill too. Most cores have
// 2-5 MiB, 8-core stacked-cache complexes 12; complexes of 2-4 such cores (up to 48 MiB a core)
// count only part of theirs. It decides which outputs stream (streaming_stores.hpp), how deep a
// matrix kernel's lhs blocks are, and when a column scan splits (docs/performance.md).
constexpr std::int64_t kMostCachePerCpu = 12 << 20;

// How much of a cache of `bytes` that the CPUs in `shared_cpu_list` share (Linux's list, as
// "0-3,8"; empty: unknown, so all of it) a program can count on: at most kMostCachePerCpu for
// each of them.
std::int64_t cache_to_count_on(std::int64_t bytes, std::string_view shared_cpu_list);

// The host's cores that the process may run on (its affinity when it first asks): the most
// threads parallel_for runs (runtime/parallel.hpp), and what the matrix kernel's plan counts a
// call's rows from.
int host_cores();

}  // namespace jx::codegen::cpu
