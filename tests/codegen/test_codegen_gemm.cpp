// The blocked matrix kernel (codegen/cpu/gemm.hpp) against an explicit loop: full and partial
// tiles in both directions, contractions of several panel depths, transposed operands, batch
// dims, f32 and f64, whole and split into row ranges (or a product of few rows into column
// panels, its rhs read in place) as the thread pool runs it; and which dots take which strategy.
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>

#include "codegen/cpu/cpu_isa.hpp"
#include "codegen/cpu/gemm_plan.hpp"
#include "codegen_testing.hpp"
#include "support/config_guard.hpp"
#include "support/scratch_dir.hpp"

namespace jx::codegen::testing {
namespace {

using hlo::Opcode;

struct GemmCase {
  std::int64_t batch, m, n, k;
  bool transpose_lhs, transpose_rhs = false;
};

// lhs [batch?, m, k] (or [batch?, k, m]), rhs [batch?, k, n] (or [batch?, n, k]): the dot.
hlo::Instruction* gemm_dot(Hlo& h, DType d, const GemmCase& c) {
  Shape lhs = c.transpose_lhs ? Shape{c.k, c.m} : Shape{c.m, c.k};
  Shape rhs = c.transpose_rhs ? Shape{c.n, c.k} : Shape{c.k, c.n}, out{c.m, c.n};
  Ints lb, rb;
  if (c.batch) {
    for (Shape* s : {&lhs, &rhs, &out}) s->insert(s->begin(), c.batch);
    lb = rb = {0};
  }
  std::int64_t nb = c.batch ? 1 : 0;
  return h.op(Opcode::kDot, d, out, {h.param(0, d, lhs), h.param(1, d, rhs)},
              attrs({{"lhs_contracting_dims", Ints{c.transpose_lhs ? nb : nb + 1}},
                     {"rhs_contracting_dims", Ints{c.transpose_rhs ? nb + 1 : nb}},
                     {"lhs_batch_dims", lb},
                     {"rhs_batch_dims", rb}}));
}

template <class T>
std::vector<T> gemm_oracle(const GemmCase& c, const std::vector<T>& l, const std::vector<T>& r) {
  std::int64_t batches = std::max<std::int64_t>(c.batch, 1);
  std::vector<T> out;
  for (std::int64_t b = 0; b < batches; ++b)
    for (std::int64_t i = 0; i < c.m; ++i)
      for (std::int64_t j = 0; j < c.n; ++j) {
        double acc = 0;
        for (std::int64_t p = 0; p < c.k; ++p) {
          std::int64_t li = c.transpose_lhs ? (b * c.k + p) * c.m + i : (b * c.m + i) * c.k + p;
          std::int64_t ri = c.transpose_rhs ? (b * c.n + j) * c.k + p : (b * c.k + p) * c.n + j;
          acc += double(l[static_cast<std::size_t>(li)]) * double(r[static_cast<std::size_t>(ri)]);
        }
        out.push_back(static_cast<T>(acc));
      }
  return out;
}

// Runs the partitioned kernel over its rows in `pieces` consecutive ranges.
template <class T>
std::vector<T> run_split(const hlo::Instruction* root, const std::vector<T>& l,
                         const std::vector<T>& r, std::int64_t pieces,
                         const CpuCompileOptions& options) {
  auto code = compile_kernels({{root, "kernel", /*partitioned=*/true}}, options);
  auto fn = reinterpret_cast<KernelFn>(code->symbol("kernel"));
  std::vector<T> out(static_cast<std::size_t>(root->shape.size()), T(-7));
  Workspace workspace(*root, options);
  std::vector<void*> buffers =
      workspace.after({const_cast<T*>(l.data()), const_cast<T*>(r.data()), out.data()});
  std::int64_t rows = kernel_rows(*root);
  for (std::int64_t p = 0; p < pieces; ++p)
    fn(buffers.data(), rows * p / pieces, rows * (p + 1) / pieces);
  return out;
}

// body(options) under AVX2's tiles, the CPU's own (AVX-512's where it has it, and its 256-bit
// ones; AMX's for bf16, and then AVX-512's vector kernel too), and AVX-512's planned for a
// full-rate core in AVX2's instructions
// (--cpu_vector_width=512): so every host runs the tiles of both kinds. The kernels compile for
// the ISA, and kernel_rows reads it from the configuration, as when jx runs. With
// `both_second_levels`, both kinds in AVX2's instructions also as on a core of a 512 KiB and of
// a 1 MiB second level: first- and second-level panels, whichever the host has; and as on one
// core, whose calls take all the rows (so that products of several blocks of rows keep their
// panels on any host).
void for_each_isa(const std::function<void(const CpuCompileOptions&)>& body,
                  bool both_second_levels = false) {
  struct Target {
    const char* isa;
    int vector_width;                 // 0: the ISA's
    std::int64_t second_level_cache;  // 0: the host's
  };
  std::vector<Target> targets{{"avx2", 0, 0}, {"native", 0, 0}, {"avx2", 512, 0}};
  if (cpu::cpu_isa("native").name == "avx512") targets.push_back({"native", 256, 0});
  // Where native multiplies bf16 on AMX's tile unit, AVX-512's vector kernel too.
  if (cpu::cpu_isa("native").amx_bf16) targets.push_back({"avx512", 0, 0});
  if (both_second_levels)
    for (int width : {0, 512})
      targets.insert(targets.end(), {{"avx2", width, 512 << 10}, {"avx2", width, 1 << 20}});
  for (const Target& t : targets) {
    INFO("--cpu_isa=" << t.isa << ", vector width " << t.vector_width << ", second level "
                      << t.second_level_cache);
    jx::testing::ConfigGuard guard;
    config().cpu_isa = t.isa;
    config().cpu_vector_width = t.vector_width;
    CpuCompileOptions options;
    options.isa = t.isa;
    options.vector_width = t.vector_width;
    options.second_level_cache = t.second_level_cache;
    if (t.second_level_cache) options.cores = 1;
    body(options);
  }
}

template <class T>
void check_gemm(const GemmCase& c, double rtol) {
  std::int64_t batches = std::max<std::int64_t>(c.batch, 1);
  std::vector<T> l = ramp<T>(batches * c.m * c.k, -2, 0.01);
  std::vector<T> r = ramp<T>(batches * c.k * c.n, 1.5, -0.003);
  std::vector<T> want = gemm_oracle(c, l, r);
  Hlo h;
  hlo::Instruction* dot = gemm_dot(h, dtype_of<T>(), c);
  REQUIRE(dot_strategy(*dot) == DotStrategy::kBlockedKernel);
  for_each_isa(
      [&](const CpuCompileOptions& options) {
        check_all(run<T>(dot, {l.data(), r.data()}, options), want, rtol);
        check_all(run_split<T>(dot, l, r, 3, options), want, rtol);
      },
      /*both_second_levels=*/true);
}

TEST_CASE("codegen: the blocked matrix kernel against a loop", "[codegen][gemm]") {
  std::vector<GemmCase> cases = {
      {0, 256, 64, 32, false},  // whole tiles
      {0, 256, 10, 64, false},  // one partial vector per row
      {0, 33, 37, 19, false},   // a row tail and a column tail
      {0, 40, 100, 8, false},   // several column tiles, the last partial
      {0, 64, 64, 1, false},    // a one-step contraction
      {0, 45, 70, 30, true},    // lhs stored [k, m]
      {3, 20, 17, 30, false},   // a batch dim
      {5, 9, 33, 21, true},     // batched and transposed
      {0, 31, 70, 300, false},  // three panel depths, the last partial
      {0, 13, 64, 128, false},  // exactly one panel depth
      // rhs stored [n, k]: square blocks transposed in registers, the rest gathered
      {0, 20, 70, 150, false, true},
      {0, 128, 512, 10, false, true},  // too shallow for a square block
      {0, 7, 40, 37, true, true},      // both transposed
      {2, 19, 35, 260, false, true},   // batched
      {0, 700, 40, 300, false},        // several blocks of rows and of depth
      {0, 530, 33, 600, true, true},   // the same, both transposed
      // the wide tile's second-level panel: three depths, the last partial; then two
      {0, 19, 70, 2100, false},
      {0, 13, 70, 1100, true, true},
      // AVX2's (rows split): two depths, the second of 4 steps
      {0, 30, 40, 4100, false},
      // lhs stored [k, m] with rows 4 KiB apart: blocks of 128 steps (64 in double), the last
      // partial
      {0, 1024, 40, 300, true},
      // a first-level panel with lhs packed (16 panels or more): three blocks of rows (the last
      // partial, its last tile too) and two depths (the second not whole runs of 4 steps), lhs
      // as stored and transposed
      {0, 400, 300, 703, false},
      {0, 400, 300, 700, true},
      {2, 40, 300, 500, false},         // batched
      {0, 150, 300, 300, false, true},  // rhs stored [n, k]
      // each panel packed by its first tile: three depths, the last partial, and a narrower last
      // panel
      {0, 100, 70, 1000, false},
      {0, 48, 900, 50, false},  // split by columns, 8 row tiles
      // the same with a short last tile (5 rows) and a depth of 3 steps past whole runs of 4
      {0, 47, 900, 51, false},
      // split by columns, two blocks of rows, in double the last a short tile alone: nothing
      // packs its panels but pack()
      {0, 133, 4264, 300, false},
      // one row, both operands transposed: a packed tile of one row, its lhs packed by columns
      {0, 1, 1000, 300, true, true},
      // panels kept for the blocks of rows after the first: 4 blocks (each third of the rows
      // 2), two depths, a narrower last panel; and split by columns, 2 blocks and 2 depths
      {0, 600, 20, 400, false},
      {0, 270, 730, 260, false},
      // the same with a short last tile of 4 rows and a last depth of 3 steps; and a last block
      // of 4 rows, its short tile alone, reading kept panels
      {0, 268, 730, 259, false},
      {0, 670, 40, 300, false},
      {2, 400, 40, 400, false},  // batched: each product keeps its own
      {0, 45, 8, 60, false},     // rhs rows of one vector: AVX2's f32, f64's
      // rhs rows exactly a tile wide, read as the panel where they lie (f32 on the wide tile
      // n = 64, 48 and 16; AVX2's 16; f64 32 and 16, AVX2's 16 and 8 just above): three depths of a
      // second-level panel, the last partial; batched with lhs stored [k, m]; blocks of rows; a
      // tile of one vector
      {0, 100, 64, 2100, false},
      {3, 50, 32, 300, true},
      {0, 700, 48, 300, false},
      {0, 37, 16, 70, false},
      // a second-level panel packed by its first tile (rhs rows within a page; the wide tile
      // splits them by rows):
      // three depths, the last partial, a narrower last panel; lhs stored [k, m]
      {0, 40, 100, 2100, false},
      {0, 70, 200, 1500, true},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i);
    // float32 sums of k terms with cancellation: the error grows with k
    check_gemm<float>(cases[i], std::max(1e-5, 4e-7 * static_cast<double>(cases[i].k)));
    check_gemm<double>(cases[i], 1e-13);
  }
}

// The bytes of the largest array that the optimized IR of `root`'s kernel, compiled under
// `options`, allocates on the stack.
std::int64_t largest_stack_array(const hlo::Instruction* root, CpuCompileOptions options) {
  auto dir = std::filesystem::temp_directory_path() / "jx_test_gemm_stack";
  std::filesystem::create_directories(dir);
  options.dump_prefix = (dir / "kernel").string();
  compile_kernels({{root, "kernel", /*partitioned=*/true}}, options);
  std::ifstream ir(options.dump_prefix + ".ir-with-opt.ll");
  std::stringstream text;
  text << ir.rdbuf();
  std::filesystem::remove_all(dir);
  REQUIRE(text.str().find("define void @kernel(") != std::string::npos);
  std::int64_t largest = 0;
  std::string rest = text.str();
  std::smatch m;
  static const std::regex kArray(R"(alloca \[(\d+) x (float|double|i16)\])");
  for (; std::regex_search(rest, m, kArray); rest = m.suffix()) {
    std::int64_t bytes = m[2] == "double" ? 8 : m[2] == "float" ? 4 : 2;
    largest = std::max<std::int64_t>(largest, std::stoll(m[1]) * bytes);
  }
  return largest;
}

// The packed panels and blocks of lhs (up to 256 KiB each) lie in the call's workspace, not on
// the stack of the thread that runs it, which may be small (a fiber's, musl's 128 KiB): on every
// plan, first- and second-level panels, kept or not, lhs packed or not, split by rows or columns.
TEST_CASE("codegen: the matrix kernel keeps its panels and blocks of lhs off the stack",
          "[codegen][gemm]") {
  for (GemmCase c : {GemmCase{0, 600, 512, 2048, false}, GemmCase{0, 64, 4096, 1024, false},
                     GemmCase{0, 2048, 1024, 512, false}})
    for (DType d : {float32, bfloat16}) {
      INFO(c.m << " x " << c.k << " x " << c.n << ", " << dtype_name(d));
      Hlo h;
      hlo::Instruction* dot = gemm_dot(h, d, c);
      if (d == bfloat16) {  // an f32 product of bf16 operands: the panel of pairs
        dot->shape.dtype = float32;
        if (dot_strategy(*dot) != DotStrategy::kBlockedKernel) continue;
      }
      for_each_isa(
          [&](const CpuCompileOptions& options) { CHECK(largest_stack_array(dot, options) == 0); },
          /*both_second_levels=*/true);
    }
}

// The wide tile (512-bit vectors at full rate) keeps a second-level panel where every row of a
// product passes over it, packed ahead, or by its first tile where rhs rows lie within a page;
// split by columns (few rows), it takes a first-level panel that its first tile packs as it goes,
// but from a transposed rhs, which is packed whole.
TEST_CASE("codegen: the wide tile's panels packed as its tiles go: few rows, or rows within a page",
          "[codegen][gemm]") {
  cpu::CpuIsa isa = cpu::cpu_isa("avx2", 512);
  isa.second_level_cache = 2 << 20;
  isa.last_level_cache = 32 << 20;  // 600 rows of lhs, 1024 steps deep, fit a quarter
  hlo::GemmShape g;
  g.m = 64, g.n = g.k = 4096;
  auto blocking = [&] {
    return cpu::gemm_blocking(isa, g, cpu::tile_shape(isa, g, false), nullptr);
  };
  REQUIRE(cpu::tile_shape(isa, g, false).columns == 64);
  REQUIRE(gemm_column_panels(isa, g) > 0);
  cpu::GemmBlocking b = blocking();
  CHECK(b.first_tile_packs);
  CHECK(b.depth == 128);  // 32 KiB of 64 floats a step
  g.transpose_rhs = true;
  b = blocking();
  CHECK_FALSE(b.first_tile_packs);
  CHECK(b.depth == 1024);             // 256 KiB
  g.transpose_rhs = false, g.m = 16;  // more than one tile of rows: packed too
  REQUIRE(cpu::tile_shape(isa, g, false).rhs == cpu::RhsRead::kPacked);
  CHECK(blocking().first_tile_packs);
  g.m = 4096;  // split by rows: a second-level panel, rows 16 KiB apart, packed ahead
  REQUIRE(gemm_column_panels(isa, g) == 0);
  b = blocking();
  CHECK_FALSE(b.first_tile_packs);
  CHECK_FALSE(b.keep_panels);
  CHECK(b.depth > 128);
  // Rows of rhs within a page of each other: the second-level panel is packed by its first
  // tile, whole (not kept: every row passes over it); a page apart, ahead.
  g.m = 600, g.n = 1023, g.k = 2100;
  REQUIRE(gemm_column_panels(isa, g) == 0);
  b = blocking();
  CHECK(b.first_tile_packs);
  CHECK_FALSE(b.keep_panels);
  CHECK(b.depth == 1024);
  g.n = 1024;
  CHECK_FALSE(blocking().first_tile_packs);
  g.n = 511, g.dtype = g.operand_dtype = float64;  // 4088 bytes
  REQUIRE(cpu::tile_shape(isa, g, false).columns == 32);
  CHECK(blocking().first_tile_packs);
  g.n = 512;
  CHECK_FALSE(blocking().first_tile_packs);
}

// Where rhs's rows are exactly the tile's columns, rhs is already its panels: the tiles read it
// where it lies and the workspace holds no panel; not where its rows are longer or shorter, it is
// stored transposed or its bf16 pairs are interleaved.
TEST_CASE("codegen: rhs rows a tile wide are read as the panel", "[codegen][gemm]") {
  for (int width : {0, 512}) {
    cpu::CpuIsa isa = cpu::cpu_isa("avx2", width);
    hlo::GemmShape g;
    g.m = 256, g.k = 300;
    auto blocking = [&] {
      return cpu::gemm_blocking(isa, g, cpu::tile_shape(isa, g, false), nullptr);
    };
    std::int64_t columns = width ? 64 : 16, lanes = width ? 16 : 8;
    for (std::int64_t n : {columns, lanes, columns + lanes, std::int64_t{10}}) {
      INFO("vector width " << width << ", n = " << n);
      g.n = n;
      bool whole_tile = n == cpu::tile_shape(isa, g, false).columns;
      CHECK(whole_tile == (n == columns || n == lanes));
      CHECK(blocking().rhs_is_panel == whole_tile);
      CHECK((cpu::gemm_workspace(isa, g, nullptr).panel < 0) == whole_tile);
    }
    g.n = columns;
    g.transpose_rhs = true;
    CHECK_FALSE(blocking().rhs_is_panel);
    g.transpose_rhs = false;
    g.operand_dtype = bfloat16;  // pairs of rows interleaved: a panel of its own at any width
    g.n = cpu::tile_shape(isa, g, false).columns;
    REQUIRE(cpu::tile_shape(isa, g, false).rhs == cpu::RhsRead::kPacked);
    CHECK_FALSE(blocking().rhs_is_panel);
  }
}

// rhs read as the panel is read at its elements' alignment: here one element past a line, f32
// rows of the wide tile's 64 columns and AVX2's 16, f64 rows of 32 and 8, against the loop.
TEST_CASE("codegen: rhs read as the panel at any alignment", "[codegen][gemm]") {
  auto check = [](auto zero, std::int64_t n) {
    using T = decltype(zero);
    GemmCase c{0, 50, n, 70, false};
    std::vector<T> l = ramp<T>(c.m * c.k, -2, 0.01);
    std::vector<T> shifted = ramp<T>(c.k * c.n + 1, 1.5, -0.003);
    std::vector<T> r(shifted.begin() + 1, shifted.end());
    std::vector<T> want = gemm_oracle(c, l, r);
    Hlo h;
    hlo::Instruction* dot = gemm_dot(h, dtype_of<T>(), c);
    for_each_isa([&](const CpuCompileOptions& options) {
      check_all(run<T>(dot, {l.data(), shifted.data() + 1}, options), want, 1e-5);
    });
  };
  for (std::int64_t n : {64, 16}) check(0.0f, n);
  for (std::int64_t n : {32, 8}) check(0.0, n);
}

// How the kernel blocks follows the core's caches (gemm_blocking): with a 1 MiB second level,
// AVX2's tile of a product split by rows keeps a 256 KiB panel there, every row passing over it;
// with 512 KiB, a panel of three quarters of the first level (384 steps of 16 floats), blocks of
// lhs packed where 16 panels or more read them (split by columns too), the panels packed ahead and
// kept, up to 8 MiB, where more blocks of rows follow (else packed by each panel's first tile, no
// deeper than 4 MiB of rhs rows, the second-level TLB's reach); a long run of rhs read in place,
// in blocks of steps as a short one is.
TEST_CASE("codegen: the matrix kernel's blocks follow the second-level cache", "[codegen][gemm]") {
  cpu::CpuIsa isa = cpu::cpu_isa("avx2");
  isa.cores = 1;
  hlo::GemmShape g;
  g.m = g.n = g.k = 2048;
  cpu::TileShape tile = cpu::tile_shape(isa, g, false);
  REQUIRE(tile.rows == 6);
  REQUIRE(tile.columns == 16);
  REQUIRE(tile.rhs == cpu::RhsRead::kPacked);
  auto blocking = [&](std::int64_t l2) {
    isa.second_level_cache = l2;
    return cpu::gemm_blocking(isa, g, tile, nullptr);
  };
  cpu::GemmBlocking b = blocking(1 << 20);
  CHECK(b.depth == std::min<std::int64_t>(
                       2048, std::max<std::int64_t>(256, isa.last_level_cache / 4 / (2048 * 4))));
  CHECK(b.block_rows == 2052);  // all rows, in whole tiles
  CHECK_FALSE(b.pack_lhs);
  CHECK_FALSE(b.first_tile_packs);
  CHECK_FALSE(b.keep_panels);
  cpu::GemmWorkspace w = cpu::gemm_workspace(isa, g, nullptr);  // the panel alone
  CHECK(w.kept == -1);
  CHECK(w.panel == 0);
  CHECK(w.lhs_block == -1);
  CHECK(w.bytes == b.depth * 16 * 4);

  b = blocking(512 << 10);
  CHECK(b.depth == 384);
  CHECK(b.block_rows == 174);  // 256 KiB of lhs: 170 rows, in whole tiles
  CHECK(b.pack_lhs);
  CHECK(b.keep_panels);  // packed ahead, not by the first tile
  CHECK_FALSE(b.first_tile_packs);
  w = cpu::gemm_workspace(isa, g, nullptr);
  CHECK(w.kept == 0);                // 128 panels of 384 steps, then the panel
  CHECK(w.panel == 2048 * 384 * 4);  // and the block of lhs after it
  CHECK(w.lhs_block == w.panel + 384 * 16 * 4);
  CHECK(w.bytes == w.lhs_block + 174 * 384 * 4);

  g.n = 4096;  // rows of rhs 16 KiB apart, kept: 6 MiB
  CHECK(blocking(512 << 10).depth == 384);
  CHECK(cpu::gemm_workspace(isa, g, nullptr).panel == 4096 * 384 * 4);
  isa.cores = 16;  // 128 rows a call, one block: not kept, 4 MiB deep
  b = blocking(512 << 10);
  CHECK_FALSE(b.keep_panels);
  CHECK(b.first_tile_packs);
  CHECK(b.depth == 256);
  w = cpu::gemm_workspace(isa, g, nullptr);
  CHECK(w.kept == -1);
  CHECK(w.bytes == w.lhs_block + b.block_rows * 256 * 4);
  isa.cores = 1;
  g.n = 16384;  // split by columns (a panel of 256 steps), kept: no deeper than 8 MiB
  REQUIRE(gemm_column_panels(isa, g) > 0);
  b = blocking(512 << 10);
  CHECK(b.keep_panels);
  CHECK(b.depth == 128);
  g.batch = 2, g.m = 100, g.n = 4096;  // one block of rows a product: not kept, 4 MiB deep
  b = blocking(512 << 10);
  CHECK(b.first_tile_packs);
  CHECK_FALSE(b.keep_panels);
  CHECK(b.depth == 256);
  g.batch = 1, g.m = 2048, g.n = 200;  // 13 panels
  CHECK_FALSE(blocking(512 << 10).pack_lhs);
  g.m = 16, g.n = 4096;  // split by columns: a panel of half the first level
  REQUIRE(gemm_column_panels(isa, g) > 0);
  CHECK_FALSE(blocking(1 << 20).pack_lhs);  // lhs packed only where no second-level panel fits
  b = blocking(512 << 10);
  CHECK(b.depth == 256);
  CHECK(b.pack_lhs);
  CHECK(b.first_tile_packs);
  CHECK_FALSE(b.keep_panels);  // one block of rows
  g.m = 600;                   // three blocks of rows: kept
  REQUIRE(gemm_column_panels(isa, g) > 0);
  b = blocking(512 << 10);
  CHECK(b.keep_panels);
  CHECK_FALSE(b.first_tile_packs);
  // One row read in place, a run of 384 bytes: all of k at once on a Zen core of a 1 MiB second
  // level; in blocks of 16 steps on one of 512 KiB, or on a core whose prefetchers stop at a page
  g.m = 1;
  tile = cpu::tile_shape(isa, g, false);
  REQUIRE(tile.rhs == cpu::RhsRead::kInPlace);
  isa.zen = true;
  CHECK(blocking(1 << 20).depth == 2048);
  CHECK(blocking(512 << 10).depth == 16);
  isa.zen = false;
  CHECK(blocking(1 << 20).depth == 16);
  // bf16 operands, rows of rhs 4 MiB apart: a pair of steps still, not none
  g.operand_dtype = bfloat16, g.m = 1 << 20, g.n = 1 << 21, g.k = 64;
  tile = cpu::tile_shape(isa, g, false);
  CHECK(blocking(512 << 10).depth == 2);
}

// A product of few rows splits over the threads by its columns' panels (gemm_column_panels):
// each part reads its columns of rhs alone. Where a tile of all the rows reads at least two
// vectors of an rhs row a step (a run under 256 bytes in blocks of 16 steps), or (rhs stored
// [n, k]) at least 4 of its rows, rhs is read where it lies, unpacked; so it is, up to 32 rows,
// in tiles of three vectors (48 with AVX2's f32 tile on Intel; the wide tile's f32 products
// packed where they split by columns). Each runs in 3 parts and a panel at a time, against the
// loop.
TEST_CASE("codegen: a product of few rows splits by its columns", "[codegen][gemm]") {
  std::vector<GemmCase> cases = {
      {0, 1, 1000, 300, false},   // a matrix-vector product, the last panel partial
      {0, 4, 777, 129, false},    // in place; with AVX2 in blocks, the last of one step
      {0, 2, 500, 40, true},      // lhs stored [k, m]
      {0, 10, 500, 70, false},    // in place: one tile with AVX-512's registers, 3 with AVX2's
      {0, 6, 2100, 1100, false},  // in place; with AVX2 in 69 blocks
      // in place in tiles of 3 vectors, 8 rows (AVX2's 4; the wide tile's f32 packed), the last 4
      {0, 20, 900, 300, false},
      {0, 32, 700, 130, true},  // 32 rows, lhs stored [k, m], a short last panel
      // the wide tile's f32 in place too: packed, it would split by rows (4 panels, 5 row tiles)
      {0, 30, 200, 16, false},
      {0, 40, 600, 16, false},      // AVX2's f32 in place past 32 rows (Intel's prefetchers)
      {0, 33, 900, 512, false},     // six row tiles, packed
      {0, 3, 200, 50, true, true},  // both stored transposed: packed
      // rhs stored [n, k]: dot products along rows of rhs, the last vector of steps partial
      {0, 1, 1000, 300, false, true},
      {0, 5, 333, 77, false, true},  // 4 columns a tile with AVX-512, packed with AVX2
      {0, 2, 101, 1037, false, true},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const GemmCase& c = cases[i];
    INFO("case " << i);
    std::vector<float> l = ramp<float>(c.m * c.k, -2, 0.01);
    std::vector<float> r = ramp<float>(c.k * c.n, 1.5, -3.0 / static_cast<double>(c.k * c.n));
    std::vector<float> want = gemm_oracle(c, l, r);
    double rtol = std::max(1e-5, 4e-7 * static_cast<double>(c.k));
    Hlo h;
    hlo::Instruction* dot = gemm_dot(h, float32, c);
    REQUIRE(dot_strategy(*dot) == DotStrategy::kBlockedKernel);
    for_each_isa(
        [&](const CpuCompileOptions& options) {
          std::int64_t panels = kernel_rows(*dot);
          CHECK(panels > 1);
          CHECK(panels == gemm_column_panels(cpu::compile_isa(options), *hlo::as_gemm(*dot)));
          check_all(run_split<float>(dot, l, r, 3, options), want, rtol);
          check_all(run_split<float>(dot, l, r, panels, options), want, rtol);
        },
        /*both_second_levels=*/true);
  }
  // A matrix-vector product of rhs [n, k] reads 24 of its rows a tile (12 with AVX2's
  // registers), each a dot product.
  Hlo v;
  hlo::GemmShape mv = *hlo::as_gemm(*gemm_dot(v, float32, {0, 1, 1000, 300, false, true}));
  CHECK(gemm_column_panels(cpu::cpu_isa("avx2"), mv) == (1000 + 11) / 12);
  if (cpu::cpu_isa("native").full_width_512)
    CHECK(gemm_column_panels(cpu::cpu_isa("native"), mv) == (1000 + 23) / 24);
  // Up to 32 rows read rhs in place in tiles of three vectors, as many rows as the rest of the
  // accumulators make; more are packed. AVX2's f32 tile reads so up to 48 rows where the
  // prefetchers stop at a page (not on a Zen); the wide tile's f32 products past one tile of
  // rows (12) are packed where the packed tiles split them by columns.
  for (bool zen : {false, true})
    for (int width : {0, 512})
      for (DType d : {float32, float64}) {
        INFO((zen ? "a Zen" : "not a Zen") << ", vector width " << width << ", " << dtype_name(d));
        cpu::CpuIsa isa = cpu::cpu_isa("avx2", width);
        isa.zen = zen;
        Hlo few;
        hlo::GemmShape g = *hlo::as_gemm(*gemm_dot(few, d, {0, 32, 4096, 4096, false}));
        auto in_place = [&](std::int64_t m) {
          g.m = m;
          return cpu::tile_shape(isa, g, false).rhs == cpu::RhsRead::kInPlace;
        };
        bool packed_past_a_tile = width && d == float32;
        std::int64_t most = !width && d == float32 && !zen ? 48 : 32;
        CHECK(in_place(12));  // the wide tile's: one tile of all the rows
        CHECK(in_place(13) == !packed_past_a_tile);
        CHECK(in_place(32) == !packed_past_a_tile);
        CHECK(in_place(most) == !packed_past_a_tile);
        CHECK_FALSE(in_place(most + 1));
        if (in_place(32)) {
          cpu::TileShape tile = cpu::tile_shape(isa, g, false);
          CHECK(tile.columns * itemsize(d) == 3 * static_cast<std::int64_t>(isa.vector_bytes));
          CHECK(tile.rows == (width ? 8 : 4));
        }
        g.n = 200;  // packed, 30 rows would split by rows (4 panels, 5 row tiles): in place
        CHECK(in_place(30));
      }
  // As many rows as columns, or more: split by rows.
  Hlo h;
  hlo::Instruction* square = gemm_dot(h, float32, {0, 256, 256, 64, false});
  CHECK(gemm_column_panels(cpu::cpu_isa("avx2"), *hlo::as_gemm(*square)) == 0);
  CHECK(gemm_column_panels(cpu::cpu_isa("native"), *hlo::as_gemm(*square)) == 0);
  CHECK(kernel_rows(*square) == 256);
}

// An f32 product of bf16 operands, as upcast-16bit-dots leaves it where the CPU multiplies bf16
// pairs: the kernel packs pairs of contraction steps (or, for few rows, reads rhs in place and
// interleaves each pair of its rows: pairs_in_place); with AVX-512 BF16 one instruction
// multiplies and adds each pair, elsewhere (--cpu_isa=avx2) two f32 multiply-adds do.
TEST_CASE("codegen: the blocked matrix kernel over bf16 operands against a loop",
          "[codegen][gemm]") {
  std::vector<GemmCase> cases = {
      {0, 64, 64, 32, false},         // whole tiles, whole pairs
      {0, 33, 37, 19, false},         // odd depth: the last pair half zero; edge tiles
      {0, 31, 70, 601, false},        // three first-level panel depths, the last odd
      {0, 45, 70, 31, true},          // lhs stored [k, m]
      {0, 20, 70, 150, false, true},  // rhs stored [n, k]
      {3, 20, 17, 33, true, true},    // batched, both transposed
      {0, 700, 40, 300, false},       // several blocks of rows
      {0, 13, 20, 8195, false},       // AVX2's second-level panel: two depths, the last odd
      {0, 40, 100, 4100, false},      // AMX: four panels, two row parts, steps in two blocks
      {0, 70, 50, 100, true},         // lhs stored [k, m], steps in four blocks, the last short
      {0, 33, 45, 77, false, true},   // rhs stored [n, k], an odd depth: its last step gathered
      {2, 40, 50, 64, false},         // batched, plain
      {0, 1, 300, 333, false},        // one row: rhs read in place, an odd depth, an edge vector
      {0, 5, 100, 4100, false},       // five rows in place, the depth in blocks (AMX: 5-row tiles)
      {0, 8, 300, 77, false},        // eight rows in place: tiles of 4 rows and 3 vectors (not AMX)
      {0, 3, 40, 51, true},          // three rows of lhs stored [k, m], rhs in place
      {0, 20, 90, 45, false},        // in place where AVX-512 BF16 multiplies and AMX does not
      {2, 3, 70, 33, false},         // batched, three rows in place
      {0, 2, 101, 77, false, true},  // two rows of rhs stored [n, k]: packed, not dot products
      // AMX: sums carried between blocks of steps (the last short, the odd step in it), ...
      {0, 20, 1000, 801, false},
      {0, 20, 1000, 801, true},          // ... lhs stored [k, m]
      {0, 20, 1000, 2001, false, true},  // ... rhs stored [n, k], 1024 steps a block
      {0, 70, 2000, 600, false},         // ... three blocks of rows
      {0, 300, 96, 5500, false},         // ... six parts of rows, of one or two blocks
      {0, 5, 1000, 801, false},          // ... tiles of five rows
      {2, 12, 700, 801, false},          // ... batched, tiles of 12 rows
      {2, 12, 700, 300, false, true},    // AMX: batched tiles of 12 rows, rhs stored [n, k]
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const GemmCase& c = cases[i];
    INFO("case " << i);
    std::int64_t batches = std::max<std::int64_t>(c.batch, 1);
    std::vector<BFloat16> l, r;
    for (float v : ramp<float>(batches * c.m * c.k, -2, 0.01)) l.push_back(BFloat16(v));
    for (float v : ramp<float>(batches * c.k * c.n, 1.5, -0.003)) r.push_back(BFloat16(v));
    std::vector<float> lf(l.begin(), l.end()), rf(r.begin(), r.end());
    std::vector<float> want = gemm_oracle(c, lf, rf);  // products of the bf16 values, in double
    Hlo h;
    hlo::Instruction* dot = gemm_dot(h, bfloat16, c);
    dot->shape.dtype = float32;
    REQUIRE(dot_strategy(*dot) == DotStrategy::kBlockedKernel);
    for_each_isa([&](const CpuCompileOptions& options) {
      auto code = compile_kernels({{dot, "kernel", /*partitioned=*/true}}, options);
      auto fn = reinterpret_cast<KernelFn>(code->symbol("kernel"));
      std::vector<float> whole(want.size(), -7.f), split(want.size(), -7.f);
      Workspace workspace(*dot, options);
      std::vector<void*> one = workspace.after({l.data(), r.data(), whole.data()});
      std::int64_t rows = kernel_rows(*dot);
      fn(one.data(), 0, rows);
      std::vector<void*> parts = workspace.after({l.data(), r.data(), split.data()});
      for (std::int64_t p = 0; p < 3; ++p) fn(parts.data(), rows * p / 3, rows * (p + 1) / 3);
      double rtol = std::max(1e-5, 4e-7 * static_cast<double>(c.k));
      check_all(whole, want, rtol);
      check_all(split, want, rtol);
    });
  }
}

// A bf16 product of few rows is bound by reading rhs: the vector kernel reads it in place, up
// to 8 rows (3 where a tile unit takes more), and every few-rows product where AVX-512 BF16
// multiplies pairs with no tile unit.
TEST_CASE("codegen: bf16 products of few rows read rhs in place", "[codegen][gemm]") {
  hlo::GemmShape g{.dtype = float32, .operand_dtype = bfloat16, .m = 3, .n = 4096, .k = 4096};
  hlo::GemmShape eight = g, nine = g, twenty = g;
  eight.m = 8, nine.m = 9, twenty.m = 20;
  const cpu::CpuIsa& avx2 = cpu::cpu_isa("avx2");
  if (avx2.name == "avx2") {
    CHECK(cpu::pairs_in_place(avx2, eight));
    CHECK_FALSE(cpu::pairs_in_place(avx2, nine));
  }
  const cpu::CpuIsa& native = cpu::cpu_isa("native");
  bool pair_instruction_alone = native.avx512_bf16 && !native.amx_bf16;
  CHECK(cpu::pairs_in_place(native, twenty) == pair_instruction_alone);
  CHECK(cpu::amx_computes(native, twenty) == native.amx_bf16);
  CHECK(cpu::amx_computes(native, eight) == native.amx_bf16);
  CHECK(cpu::pairs_in_place(native, eight) == (native.vector_bytes >= 32 && !native.amx_bf16));
  CHECK_FALSE(cpu::amx_computes(native, g));
  CHECK(cpu::pairs_in_place(native, g) == (native.vector_bytes >= 32));
}

// Where the CPU has AMX-BF16 (and the OS lets jx use its tiles), native computes f32 products of
// bf16 matrices (transposed, batched or not; of more than 3 rows) on the tile unit, split by panels
// of 32 columns and parts of the rows; avx512 and avx2 keep them on the vector kernel. (Its values:
// the test above, whose native run takes the tile unit.)
TEST_CASE("codegen: bf16 products run on AMX's tile unit where the CPU has one",
          "[codegen][gemm]") {
  const cpu::CpuIsa &native = cpu::cpu_isa("native"), &avx512 = cpu::cpu_isa("avx512");
  hlo::GemmShape g{.dtype = float32, .operand_dtype = bfloat16, .m = 100, .n = 70, .k = 33};
  CHECK(cpu::amx_computes(native, g) == native.amx_bf16);
  CHECK_FALSE(cpu::amx_computes(avx512, g));
  CHECK_FALSE(cpu::amx_computes(cpu::cpu_isa("avx2"), g));
  hlo::GemmShape transposed = g, f32 = g;
  transposed.transpose_lhs = transposed.transpose_rhs = true;
  transposed.batch = 3;
  f32.operand_dtype = float32;
  CHECK(cpu::amx_computes(native, transposed) == native.amx_bf16);
  CHECK_FALSE(cpu::amx_computes(native, f32));
  if (!native.amx_bf16) return;
  // 70 columns: 3 panels; 100 rows: 4 blocks, in 4 parts (at least kAmxMinUnits units)
  CHECK(gemm_column_panels(native, g) == 12);
  hlo::GemmShape wide = g;
  wide.n = 1000;  // 32 panels: enough units without parting the rows
  CHECK(gemm_column_panels(native, wide) == 32);
  // 3 products of 3 panels: rows in 2 parts make 18 units
  CHECK(gemm_column_panels(native, transposed) == 3 * 2 * 3);
  // Each panel, 64 steps (33 rounded up to tiles of 32) of 32 columns and a row of pairs that
  // skews the next, all three within a group; a block of 32 rows of lhs over those steps; the
  // block's sums.
  CHECK(cpu::gemm_workspace(native, g, nullptr).bytes ==
        3 * (64 * 32 * 2 + 128) + 32 * 64 * 2 + 32 * 32 * 4);
  // 32 panels of 1024 steps take 2 MiB: 512 steps at a time fill the 1 MiB group, and the sums
  // of the part's one block of rows are carried for each panel.
  hlo::GemmShape deep{.dtype = float32, .operand_dtype = bfloat16, .m = 20, .n = 1000, .k = 1001};
  cpu::AmxWorkspace layout = cpu::amx_workspace(deep);
  CHECK(layout.carried);
  CHECK(layout.panels == 32);
  CHECK(layout.steps == 512);
  CHECK(layout.bytes == 32 * (512 * 32 * 2 + 128) + 32 * 512 * 2 + 32 * 32 * 32 * 4);
  // A transposed rhs's runs of steps: 1024 steps a block, so 16 panels.
  deep.transpose_rhs = true;
  CHECK_FALSE(cpu::amx_workspace(deep).carried);
  deep.k = 2001;
  layout = cpu::amx_workspace(deep);
  CHECK(layout.carried);
  CHECK(layout.panels == 16);
  CHECK(layout.steps == 1024);

  Hlo h;
  hlo::Instruction* dot = gemm_dot(h, bfloat16, {0, g.m, g.n, g.k, false});
  dot->shape.dtype = float32;
  auto ir_of = [&](const char* isa) {
    jx::testing::ConfigGuard guard;
    config().cpu_isa = isa;
    jx::testing::ScratchDir dir;
    CpuCompileOptions options;
    options.isa = isa;
    options.dump_prefix = dir / "kernel";
    compile_kernels({{dot, "kernel", /*partitioned=*/true}}, options);
    std::ifstream file(dir / "kernel.ir-with-opt.ll");
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  };
  CHECK(ir_of("native").find("@llvm.x86.tdpbf16ps.internal") != std::string::npos);
  CHECK(ir_of("avx512").find("@llvm.x86.tdpbf16ps.internal") == std::string::npos);
}

// The tile unit's kernel compiles on any host (it runs only on one with the unit): products
// plain, transposed both ways, and batched, with edges every way and an odd depth; and with sums
// carried between blocks of steps in tiles of fewer rows.
TEST_CASE("codegen: the tile unit's kernel compiles for any host", "[codegen][gemm]") {
  for (const char* isa : {"avx2", "native"})
    for (GemmCase c : {GemmCase{0, 70, 45, 33, false}, GemmCase{0, 70, 45, 33, true, true},
                       GemmCase{2, 40, 50, 64, false}, GemmCase{0, 20, 1000, 801, false},
                       GemmCase{0, 5, 1000, 2001, true, true}}) {
      INFO("--cpu_isa=" << isa << ", " << c.batch << " x " << c.m << " x " << c.k << " x " << c.n);
      CpuCompileOptions options;
      options.isa = isa;  // avx2: the instructions of a host without AVX-512 around the tiles
      options.amx_tiles = true;
      CHECK(cpu::compile_isa(options).amx_bf16);
      std::string features = cpu::compile_isa(options).features;
      CHECK(features.find("-amx-tile") == std::string::npos);
      CHECK(features.find("-amx-bf16") == std::string::npos);
      Hlo h;
      hlo::Instruction* dot = gemm_dot(h, bfloat16, c);
      dot->shape.dtype = float32;
      jx::testing::ScratchDir dir;
      options.dump_prefix = dir / "kernel";
      auto code = compile_kernels({{dot, "kernel", /*partitioned=*/true}}, options);
      CHECK(code->symbol("kernel") != nullptr);
      std::ifstream file(dir / "kernel.ir-with-opt.ll");
      std::stringstream text;
      text << file.rdbuf();
      CHECK(text.str().find("@llvm.x86.tdpbf16ps.internal") != std::string::npos);
    }
}

TEST_CASE("codegen: which dots take the loop nest, the blocked kernel or BLAS", "[codegen][gemm]") {
  auto strategy = [](DType d, const GemmCase& c) {
    Hlo h;
    return dot_strategy(*gemm_dot(h, d, c));
  };
  CHECK(strategy(float32, {0, 8, 8, 8, false}) == DotStrategy::kLoopNest);   // small
  CHECK(strategy(int32, {0, 64, 64, 64, false}) == DotStrategy::kLoopNest);  // not float
  CHECK(strategy(float32, {0, 64, 64, 64, false}) == DotStrategy::kBlockedKernel);
  CHECK(strategy(float64, {4, 64, 64, 64, true}) == DotStrategy::kBlockedKernel);
  CHECK(strategy(float32, {0, 128, 512, 512, false, true}) == DotStrategy::kBlockedKernel);
  CHECK(strategy(float32, {0, 512, 512, 1024, false}) == DotStrategy::kBlockedKernel);  // 2^28
  // Larger: the kernel with 512-bit vectors at full rate, and for f32 with AVX2; BLAS with
  // AVX-512 split in two halves (Zen 4) or SSE, and for f64 with AVX2.
  for (const char* isa : {"avx2", "native"}) {
    INFO("--cpu_isa=" << isa);
    jx::testing::ConfigGuard guard;
    config().cpu_isa = isa;
    const cpu::CpuIsa& target = cpu::cpu_isa(isa);
    auto large = [&](DType d) {
      return target.full_width_512 || (target.name == "avx2" && d == float32)
                 ? DotStrategy::kBlockedKernel
                 : DotStrategy::kBlas;
    };
    CHECK(strategy(float32, {0, 1024, 512, 1024, false}) == large(float32));
    CHECK(strategy(float32, {512, 64, 64, 256, false}) == large(float32));  // in all
    CHECK(strategy(float64, {0, 1024, 512, 1024, false}) == large(float64));
  }
  CHECK(cpu::cpu_isa("avx2").full_width_512 == false);
  CHECK(cpu::kernel_at_any_size(cpu::cpu_isa("avx2"), float32));
  CHECK_FALSE(cpu::kernel_at_any_size(cpu::cpu_isa("avx2"), float64));
  // bf16 operands of an f32 product: the kernel at any size (BLAS has no such product).
  auto bf16_into_f32 = [](const GemmCase& c) {
    Hlo h;
    hlo::Instruction* dot = gemm_dot(h, bfloat16, c);
    dot->shape.dtype = float32;
    return dot_strategy(*dot);
  };
  CHECK(bf16_into_f32({0, 1024, 1024, 1024, false}) == DotStrategy::kBlockedKernel);
  CHECK(bf16_into_f32({0, 8, 8, 8, false}) == DotStrategy::kLoopNest);
  CHECK(strategy(bfloat16, {0, 64, 64, 64, false}) == DotStrategy::kLoopNest);  // bf16 result
}

}  // namespace
}  // namespace jx::codegen::testing
