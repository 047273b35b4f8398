// jx's global configuration: the options JX_FLAGS sets (XLA_FLAGS-style) and code may change.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace jx {

namespace detail {
void log_to_stderr(const std::string& message);  // the default log sink: one line to stderr
void log_message(const std::string& message);    // one message to config().log (or stderr)
}  // namespace detail

struct Config {
  std::string dump_to;                // --dump_to=DIR: where dumps go
  bool dump_jaxpr = false;            // --dump_jaxpr: module_0001.jit_f.jaxpr.txt
  bool dump_hlo = false;              // --dump_hlo: before and after optimizations
  std::string dump_hlo_pass_re;       // --dump_hlo_pass_re=REGEX: also after each matching pass
  bool dump_llvm = false;             // --dump_llvm: .ir-no-opt.ll, .ir-with-opt.ll
  bool dump_ptx = false;              // --dump_ptx: .ptx of GPU programs
  bool dump_dot = false;              // --dump_dot: Graphviz of the fused HLO
  bool log_compiles = false;          // --log_compiles: one line per compile, with stage times
  bool explain_cache_misses = false;  // --explain_cache_misses: why a jitted call retraced
  bool strict_retraces = false;       // --strict_retraces: past JitOptions::max_retraces, throw
  // --debug_nans: a NaN made by an eager operation, or in a jitted output, throws
  // jx::FloatingPointError naming the primitive that made it (a jitted function is run again op
  // by op to find it, as JAX does). --debug_infs: the same for infinities.
  bool debug_nans = false;
  bool debug_infs = false;
  bool disable_jit = false;  // --disable_jit: jitted functions run eagerly
  int cache_capacity = 64;   // --cache_capacity=N: entries per jitted function (LRU)
  // --gpu_graphs: a GPU program whose thunks only enqueue work is recorded as a CUDA graph the
  // second time it runs with a given set of buffers and replayed on later runs with the same
  // buffers: one launch instead of one per thunk.
  bool gpu_graphs = false;
  // --cpu_parallel_min_bytes=N: a CPU kernel reading and writing fewer bytes runs on the calling
  // thread; larger ones split their rows over all cores. Read when a function compiles, and part
  // of a jitted call's cache key, as are the flags below that say so: a call under another value
  // compiles anew. The default is where splitting paid for a memory-bound kernel in bench_fusion
  // (2 cores).
  long long cpu_parallel_min_bytes = 128 << 10;
  // --cpu_flush_denormals=false: CPU computation keeps denormal floats (IEEE 754's gradual
  // underflow) instead of flushing them to zero, which XLA's CPU client does and jx follows.
  bool cpu_flush_denormals = true;
  // --cpu_threads=N: how many threads a CPU kernel splits its rows over, the calling thread
  // included, at most one per core; 0: one per core. Read each time a kernel runs.
  int cpu_threads = 0;
  // --cpu_huge_pages=false: host buffers of 2 MiB or more stay on the OS's default pages instead
  // of asking for transparent huge pages (Linux's MADV_HUGEPAGE), which streaming kernels and
  // large products read faster (docs/performance.md). Read as a buffer is freshly allocated
  // (the blocks that released buffers leave for reuse keep their pages).
  bool cpu_huge_pages = true;
  // --cpu_isa=avx2|avx512|native: the widest x86 extension the CPU JIT compiles for, as XLA's
  // --xla_cpu_max_isa. avx2 leaves AVX-512 and AMX out on a CPU that has them, so that one
  // machine runs the code of both kinds; avx512 leaves out AMX's tile unit (bf16 products then
  // run on the vector kernel); native takes what the CPU has. Read when a function compiles;
  // part of the cache key.
  std::string cpu_isa = "native";
  // --cpu_vector_width=0|256|512: the width in bits of the matrix kernel's register tiles and,
  // under AVX-512, of the loops LLVM vectorizes, as XLA's --xla_cpu_prefer_vector_width; 0: the
  // ISA's widest. (A few AVX-512 instructions that jx calls by name, such as exp's vscalef, stay
  // 512 bits wide.) 512 on a CPU without AVX-512 plans the tiles as for a core that runs 512-bit
  // vectors at full rate, each vector split over the CPU's registers: slower, but one machine
  // runs the other kind's tiles (a test run does). Read when a function compiles; part of the
  // cache key.
  int cpu_vector_width = 0;
  // --precise_math: the CPU computes float32 exp, tanh and erf (and logistic, through exp) in
  // their 1-ULP forms instead of the faster ones with XLA:CPU's accuracy
  // (docs/math_accuracy.md gives both bounds). Read when a function compiles; part of the cache
  // key.
  bool precise_math = false;
  // --default_matmul_precision=default|high|highest: the precision of a dot that names none
  // (JAX's jax_default_matmul_precision), read when it is traced; part of the cache key; empty:
  // none (JAX's None).
  // On the GPU, f32 products below highest let cuBLAS round operands to TF32.
  std::string default_matmul_precision;
  // --compilation_cache_dir=DIR: where compiled programs persist between processes (empty: they
  // do not). A miss whose optimized HLO was compiled before, by any process sharing DIR, loads its
  // code instead of compiling it; with JitOptions::persistent_key it skips tracing too.
  std::string compilation_cache_dir;
  // --compilation_cache_max_bytes=N: the most the directory holds; past it, the entries used
  // least recently are removed. 0: no bound.
  long long compilation_cache_max_bytes = 1LL << 30;
  // --verify_persistent_cache: a call served by a persistent_key traces anyway and throws
  // jx::Error when its jaxpr differs from the one stored (the function changed, its key did not).
  bool verify_persistent_cache = false;
  // --enable_x64: JAX's x64 mode. C++ int and double scalars are weak int64 and float64, int
  // arrays int64, np's default dtypes int64 and float64, random::randint draws int64 and
  // bernoulli compares float64 uniforms. Off (JAX's default mode): int32 and float32. Explicit
  // 64-bit dtypes are available either way.
  bool enable_x64 = false;
  // Where log_compiles and explain_cache_misses write, one message per call.
  std::function<void(const std::string&)> log = detail::log_to_stderr;
};

// The process's configuration, read from the JX_FLAGS environment variable on first use.
// Throws jx::Error (on every call) while JX_FLAGS holds a bad flag.
Config& config();

// Applies flags like "--dump_to=/tmp/d --log_compiles --cache_capacity=8" to `config`. Boolean
// flags take no value or =true/=false; a value may be double-quoted. Throws jx::Error naming an
// unknown flag or a bad value, leaving `config` unchanged.
void parse_flags(std::string_view flags, Config& config);

}  // namespace jx
