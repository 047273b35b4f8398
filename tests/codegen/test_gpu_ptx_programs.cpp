// Fused programs compiled for the GPU without one: as many kernels as the CPU's plan, the kernel
// kinds that their reductions and transposes call for, PTX ptxas accepts; and the errors, dumps
// and options of compile_ptx.
#include <catch2/catch.hpp>

#include <functional>
#include <thread>

#include "codegen/gpu_ptx_testing.hpp"
#include "jx/jx.hpp"

namespace jx::testing {
namespace {

using V = std::vector<Array>;

struct FusedProgram {
  std::string name;
  std::vector<Shape> shapes;
  std::function<V(const V&)> fn;
  std::vector<std::string> ptx_has;  // what its kernels' kinds put in the PTX
  DType dtype = float32;             // of its arguments
  // Kernels the GPU runs apart that the CPU fuses: its blocked matrix kernel applies a dense
  // layer's bias and activation, where the GPU's dot kernel (without cuBLAS) does not; small
  // reductions of different shapes, which the CPU batches into one launch, keep their blocks.
  // Less those the CPU runs apart and the GPU batches: reductions reading more than the CPU
  // batches (passes::PipelineOptions::max_batched_read_bytes), each split over its threads.
  int gpu_extra_kernels = 0;
};

std::vector<FusedProgram> fused_programs() {
  const std::string kShuffle = "shfl.sync.down", kBarrier = "bar.sync", kShared = ".shared";
  return {
      {"softmax over rows",
       {{37, 70}},
       [](const V& a) {
         Array e = np::exp(a[0] - np::max(a[0], {1}, true));
         return V{e / np::sum(e, {1}, true)};
       },
       {kShuffle, kBarrier, kShared}},
      {"layer norm over rows",
       {{33, 64}, {64}, {64}},
       [](const V& a) {
         Array m = np::mean(a[0], {1}, true);
         return V{(a[0] - m) / np::sqrt(np::var(a[0], {1}, true) + 1e-5f) * a[1] + a[2]};
       },
       {kShuffle, kBarrier}},
      {"gelu",
       {{5, 300}},
       [](const V& a) {
         const Array& x = a[0];
         return V{0.5f * x * (1.0f + np::tanh(0.7978845608f * (x + 0.044715f * x * x * x)))};
       },
       {}},
      {"column sum",
       {{300, 40}},
       [](const V& a) { return V{np::sum(a[0], {0})}; },
       {kBarrier, kShared}},
      {"full sum",
       {{50, 60}},
       [](const V& a) { return V{np::sum(a[0] * 2.0f)}; },
       {kShuffle, kBarrier}},
      {"2-D transpose",
       {{64, 96}},
       [](const V& a) { return V{np::transpose(a[0]) * 2.0f}; },
       {kBarrier, kShared}},
      {"batched transpose",
       {{3, 40, 33}},
       [](const V& a) {
         return V{np::transpose(a[0], {{0, 2, 1}})};
       },
       {kBarrier, kShared}},
      {"two outputs of one input",
       {{64, 65}},
       [](const V& a) {
         return V{np::exp(a[0]), np::tanh(a[0]) * 2.0f};
       },
       {}},
      {"mean and mean square",
       {{40, 128}},
       [](const V& a) {
         return V{np::mean(a[0], {1}), np::mean(a[0] * a[0], {1})};
       },
       {kShuffle}},
      {"elementwise chain",
       {{1000}},
       [](const V& a) { return V{np::sin(a[0]) * 2.0f + np::exp(a[0]) - 1.0f}; },
       {}},
      {"dense layer and epilogue",
       {{24, 32}, {32, 16}, {16}},
       [](const V& a) { return V{np::maximum(np::matmul(a[0], a[1]) + a[2], 0.0f)}; },
       {},
       float32,
       1},
      // Shuffles of 64-bit and pred values, and an epilogue after a column reduction.
      {"float64 softmax",
       {{5, 300}},
       [](const V& a) {
         Array e = np::exp(a[0] - np::max(a[0], {1}, true));
         return V{e / np::sum(e, {1}, true)};
       },
       {kShuffle, kBarrier},
       float64},
      {"any and all over rows",
       {{10, 200}},
       [](const V& a) {
         return V{np::any(a[0] > 2.5f, {1}), np::all(a[0] > -2.9f, {1})};
       },
       {kShuffle, kBarrier}},
      // Long enough to be split over blocks (kernel_plan.hpp's blocks_per_row).
      {"full sum and sum of squares of a long vector",
       {{300000}},
       [](const V& a) {
         return V{np::sum(a[0]), np::sum(a[0] * a[0])};
       },
       {kShuffle, kBarrier, "atom.global.add.u32", "membar.gl"},
       float32,
       -1},
      // A training step's bias gradients and loss: column sums of two widths and a full sum.
      {"column sums of two widths and a full sum, kept apart",
       {{1024, 96}, {1024, 10}},
       [](const V& a) {
         return V{np::sum(a[0], {0}), np::sum(a[1], {0}), np::sum(a[1])};
       },
       {kBarrier, kShared},
       float32,
       1},
      {"int64 column sums and scaled column means",
       {{100, 70}},
       [](const V& a) {
         return V{np::sum(a[0], {0}), np::sum(a[0], {0}) * 3};
       },
       {kBarrier, kShared},
       int64},
  };
}

V while_program(const V& a) {
  return V{lax::while_loop([](const Array& x) { return np::sum(x) < 100.0f; },
                           [](const Array& x) { return np::exp(x) + 1.0f; }, a[0])};
}

api::LoweredProgram lower_fused(const FusedProgram& p) {
  std::vector<ShapedArray> avals;
  for (const Shape& s : p.shapes) avals.push_back({s, p.dtype, false});
  return lower(p.fn, avals, "gpu_fused");
}

int cpu_kernels(const api::LoweredProgram& lowered) {
  std::istringstream lines(api::compile_program(lowered).thunk_sequence->get());
  int n = 0;
  for (std::string line; std::getline(lines, line);) n += line.rfind("kernel ", 0) == 0;
  return n;
}

}  // namespace

TEST_CASE("gpu ptx: fused programs - the CPU's kernels, kinds by their roots, ptxas accepts",
          "[gpu_ptx]") {
  PtxasChecks ptxas;
  for (const MathVariant& variant : math_variants()) {
    for (const FusedProgram& p : fused_programs()) {
      INFO(p.name << " with " << variant.name);
      api::LoweredProgram lowered = lower_fused(p);
      std::vector<codegen::PtxModule> modules = api::compile_ptx(lowered, variant.options);
      REQUIRE(modules.size() == 1);
      const codegen::PtxModule& m = modules.front();
      CHECK(static_cast<int>(m.kernels.size()) == cpu_kernels(lowered) + p.gpu_extra_kernels);
      CHECK(m.arch == "sm_80");
      CHECK(m.libdevice == (variant.options.libdevice != "none"));
      check_kernels(m);
      for (const std::string& s : p.ptx_has) {
        INFO("PTX has " << s);
        CHECK(m.ptx.find(s) != std::string::npos);
      }
      if (p.ptx_has.empty()) CHECK(m.ptx.find("bar.sync") == std::string::npos);
      ptxas.add(m, p.name + " with " + variant.name);
    }
  }
  ptxas.check();
}

TEST_CASE("gpu ptx: few long rows of independent reduces are split over blocks", "[gpu_ptx]") {
  codegen::GpuCompileOptions portable{.libdevice = "none"};
  auto grid = [&](const std::function<V(const V&)>& fn, const Shape& shape) {
    api::LoweredProgram lowered = lower(fn, {{shape, float32}}, "split");
    std::vector<codegen::PtxModule> modules = api::compile_ptx(lowered, portable);
    REQUIRE(modules.size() == 1);
    REQUIRE(modules.front().kernels.size() == 1);
    return modules.front().kernels.front().launch.grid;
  };
  auto row_sums = [](const V& a) { return V{np::sum(a[0], {-1})}; };
  // 2^22 elements: 1024 blocks of 256 threads, 16 elements each.
  CHECK(grid(row_sums, {1 << 22}) == 1024);
  // 200000 / (256 * 16) = 48 parts per row, rounded down to a multiple of 32.
  CHECK(grid(row_sums, {3, 200000}) == 3 * 32);
  // Too short to give each of 32 blocks' threads 16 elements: a block per row.
  CHECK(grid(row_sums, {3, 100000}) == 3);
  // Enough rows to fill the GPU without splitting.
  CHECK(grid(row_sums, {64, 200000}) == 64);
  // softmax's sum reads its max: one block has to see the whole row.
  CHECK(grid([](const V& a) { return V{nn::softmax(a[0])}; }, {1, 200000}) == 1);
}

TEST_CASE("gpu ptx: large matrix products go to cuBLAS, small ones are kernels", "[gpu_ptx]") {
  auto product = [](const V& a) { return V{np::matmul(a[0], a[1])}; };
  codegen::GpuCompileOptions portable{.libdevice = "none"};
  api::LoweredProgram big = lower(product, {{{128, 256}, float32}, {{256, 64}, float32}}, "big");
  CHECK(codegen::gpu_dot_uses_cublas(*find(*optimized(big), hlo::Opcode::kDot)));
  CHECK(api::compile_ptx(big, portable).front().kernels.empty());
  api::LoweredProgram small = lower(product, {{{8, 8}, float32}, {{8, 8}, float32}}, "small");
  CHECK_FALSE(codegen::gpu_dot_uses_cublas(*find(*optimized(small), hlo::Opcode::kDot)));
  CHECK(api::compile_ptx(small, portable).front().kernels.size() == 1);
  api::LoweredProgram ints = lower(product, {{{128, 256}, int32}, {{256, 64}, int32}}, "ints");
  CHECK_FALSE(codegen::gpu_dot_uses_cublas(*find(*optimized(ints), hlo::Opcode::kDot)));
}

TEST_CASE("gpu ptx: a program with a loop has a PTX module per program", "[gpu_ptx]") {
  api::LoweredProgram lowered = lower(while_program, {{{7}, float32}}, "loop");
  std::vector<codegen::PtxModule> modules = api::compile_ptx(lowered, {.libdevice = "none"});
  REQUIRE(modules.size() == 3);  // the entry, the condition, the body
  for (const codegen::PtxModule& m : modules) check_kernels(m);
  CHECK(modules[1].kernels.size() + modules[2].kernels.size() >= 2);
}

TEST_CASE("gpu ptx: dumps, symbols, targets and threads", "[gpu_ptx]") {
  std::shared_ptr<hlo::Module> module =
      optimized(lower(fused_programs().front().fn, {{{37, 70}, float32}}, "dump"));
  std::vector<codegen::KernelRequest> kernels = fusion_kernels(*module);
  REQUIRE(!kernels.empty());
  ScratchDir dir;
  codegen::PtxModule m = codegen::compile_ptx(
      kernels, {.target = {9, 0}, .dump_prefix = dir / "m", .libdevice = "none"});
  CHECK(dir.files() == std::vector<std::string>{"m.ir-no-opt.ll", "m.ir-with-opt.ll", "m.ptx"});
  CHECK(m.arch == "sm_90");
  CHECK(m.ptx.find(".target sm_90") != std::string::npos);
  // Symbols become PTX names; a newer GPU gets the newest PTX LLVM makes, which its driver takes.
  codegen::KernelRequest request = kernels.front();
  request.symbol = "0.kernel-a";
  codegen::PtxModule renamed =
      codegen::compile_ptx({request}, {.target = {12, 0}, .libdevice = "none"});
  CHECK(renamed.kernels.front().symbol == "_0_kernel_a");
  CHECK(renamed.arch == "sm_90");
  CHECK(codegen::compile_ptx({request}, {.target = {8, 6}, .libdevice = "none"}).arch == "sm_86");
  CHECK(codegen::compile_ptx({request}, {.target = {8, 1}, .libdevice = "none"}).arch == "sm_80");
  // Several threads compile at once, each with its own LLVM context.
  std::vector<std::string> ptx(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < ptx.size(); ++t)
    threads.emplace_back(
        [&, t] { ptx[t] = codegen::compile_ptx(kernels, {.libdevice = "none"}).ptx; });
  for (std::thread& t : threads) t.join();
  for (const std::string& p : ptx) CHECK(p == ptx.front());
}

TEST_CASE("gpu ptx: what the GPU cannot compile is a CompileError that says why", "[gpu_ptx]") {
  auto sorted = [](const V& a) { return V{np::sort(a[0])}; };
  std::shared_ptr<hlo::Module> module = optimized(lower(sorted, {{{16}, float32}}, "sorted"));
  const hlo::Instruction* sort = find(*module, hlo::Opcode::kSort);
  codegen::GpuCompileOptions portable{.libdevice = "none"};
  CHECK_THROWS_AS(codegen::compile_ptx({{sort, "k"}}, portable), CompileError);
  CHECK_THROWS_WITH(codegen::compile_ptx({{sort, "k"}}, portable),
                    Catch::Contains("cannot emit a GPU kernel for " + sort->name) &&
                        Catch::Contains("sort runs on the host"));
  const hlo::Instruction* param = find(*module, hlo::Opcode::kParameter);
  CHECK_THROWS_WITH(codegen::compile_ptx({{param, "k"}}, portable),
                    Catch::Contains("parameter has no kernel"));
  std::shared_ptr<hlo::Module> loop = optimized(lower(while_program, {{{7}, float32}}, "loop"));
  CHECK_THROWS_WITH(codegen::compile_ptx({{find(*loop, hlo::Opcode::kWhile), "k"}}, portable),
                    Catch::Contains("while runs as nested programs"));

  std::shared_ptr<hlo::Module> softmax =
      optimized(lower(fused_programs().front().fn, {{{4, 4}, float32}}, "ok"));
  codegen::KernelRequest k = fusion_kernels(*softmax).front();
  CHECK_THROWS_WITH(codegen::compile_ptx({k}, {.target = {5, 2}}),
                    Catch::Contains("compute capability 5.2 is older"));
  CHECK_THROWS_WITH(codegen::compile_ptx({k}, {.libdevice = "/nonexistent/libdevice.10.bc"}),
                    Catch::Contains("no libdevice at /nonexistent/libdevice.10.bc"));
  codegen::KernelRequest twin = k;
  k.symbol = "k.1";
  twin.symbol = "k_1";
  CHECK_THROWS_WITH(codegen::compile_ptx({k, twin}, portable),
                    Catch::Contains("two kernels named 'k_1'"));
  CHECK_THROWS_WITH(codegen::compile_ptx({{nullptr, "none"}}, portable),
                    Catch::Contains("kernel 'none' has no instruction"));
  CHECK_THROWS_WITH(
      codegen::compile_ptx({k}, {.dump_prefix = "/nonexistent-dir/x/y", .libdevice = "none"}),
      Catch::Contains("cannot write"));
}

}  // namespace jx::testing
