// The CPU compiler around the kernels: several kernels per module, freeing code, recompiling,
// concurrent compiles, optimization levels, IR dumps and errors.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "codegen/codegen_testing.hpp"

namespace jx::codegen::testing {
namespace {

using hlo::Opcode;

TEST_CASE("codegen: one module holds several kernels", "[codegen]") {
  Hlo h;
  auto* x = h.param(0, float32, {4});
  auto* y = h.param(1, float32, {4});
  auto* add = h.b.binary(Opcode::kAdd, x, y);
  auto* neg = h.b.unary(Opcode::kNegate, add);
  auto code = compile_kernels({{add, "add"}, {neg, "neg"}}, {});
  std::vector<float> a = {1, 2, 3, 4}, b = {10, 20, 30, 40}, sum(4), out(4);
  std::vector<void*> add_buffers = {a.data(), b.data(), sum.data()};
  std::vector<void*> neg_buffers = {sum.data(), out.data()};
  kernel_fn(*code, "add", add)(add_buffers.data());
  kernel_fn(*code, "neg", neg)(neg_buffers.data());
  CHECK(out == std::vector<float>{-11, -22, -33, -44});
  CHECK_THROWS_AS(code->symbol("missing"), Error);
  CHECK_THROWS_AS(compile_kernels({{add, "k"}, {neg, "k"}}, {}), CompileError);
}

TEST_CASE("codegen: freed code - recompiles - same-named kernels of live compiles", "[codegen]") {
  Hlo h;
  auto* x = h.param(0, int32, {3});
  auto* sq = h.b.binary(Opcode::kMultiply, x, x);
  auto* dbl = h.b.binary(Opcode::kAdd, x, x);
  std::vector<std::int32_t> in = {1, -2, 3};
  for (int round = 0; round < 20; ++round) {  // each compile's code is freed at scope end
    // add(x, x) has two operands: the ABI passes x's buffer twice.
    CHECK(run<std::int32_t>(round % 2 ? sq : dbl, {in.data(), in.data()}) ==
          (round % 2 ? std::vector<std::int32_t>{1, 4, 9} : std::vector<std::int32_t>{2, -4, 6}));
  }
  // Two live executables may both name their kernel "kernel".
  auto first = compile_kernels({{sq, "kernel"}}, {});
  auto second = compile_kernels({{dbl, "kernel"}}, {});
  std::vector<std::int32_t> a(3), b(3);
  std::vector<void*> ba = {in.data(), in.data(), a.data()}, bb = {in.data(), in.data(), b.data()};
  kernel_fn(*first, "kernel", sq)(ba.data());
  kernel_fn(*second, "kernel", dbl)(bb.data());
  CHECK(a == std::vector<std::int32_t>{1, 4, 9});
  CHECK(b == std::vector<std::int32_t>{2, -4, 6});
  first.reset();  // freeing one leaves the other working
  kernel_fn(*second, "kernel", dbl)(bb.data());
  CHECK(b == std::vector<std::int32_t>{2, -4, 6});
}

TEST_CASE("codegen: compiles from several threads at once", "[codegen]") {
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &ok] {
      for (int i = 0; i < 5; ++i) {
        Hlo h;
        auto* x = h.param(0, float64, {5});
        auto* y = h.b.binary(Opcode::kMultiply, x, h.param(1, float64, {5}));
        auto code = compile_kernels({{y, "mul"}}, {});
        std::vector<double> a(5, t + 1.0), b(5, i + 2.0), out(5);
        std::vector<void*> buffers = {a.data(), b.data(), out.data()};
        kernel_fn(*code, "mul", y)(buffers.data());
        ok[static_cast<std::size_t>(t)] += out == std::vector<double>(5, (t + 1.0) * (i + 2.0));
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(ok == std::vector<int>(4, 5));
}

TEST_CASE("codegen: every optimization level computes the same", "[codegen]") {
  std::vector<float> x = ramp<float>(60, -3, 0.1);
  float init = 0.f;
  for (int level : {0, 1, 2, 3}) {
    INFO("O" << level);
    Hlo h;
    auto* r =
        h.b.reduce(h.param(0, float32, {3, 4, 5}), h.param(1, float32, {}), {1}, Opcode::kAdd);
    auto got = run<float>(r, {x.data(), &init}, {.opt_level = level});
    std::vector<float> want(15, 0.f);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 5; ++k)
          want[static_cast<std::size_t>(i * 5 + k)] +=
              x[static_cast<std::size_t>(i * 20 + j * 5 + k)];
    check_all(got, want, 1e-6);
  }
}

std::string read(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST_CASE("codegen: dump_prefix writes the IR before and after optimization", "[codegen]") {
  auto dir =
      std::filesystem::temp_directory_path() / ("jx_codegen_dump_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string prefix = (dir / "module_0001.jit_f").string();
  Hlo h;
  auto* x = h.param(0, float32, {8});
  auto* e = h.b.unary(Opcode::kExp, x);
  std::vector<float> in(8, 0.f);
  CHECK(run<float>(e, {in.data()}, {.module_name = "jit_f", .dump_prefix = prefix}) ==
        std::vector<float>(8, 1.f));
  std::string before = read(prefix + ".ir-no-opt.ll"), after = read(prefix + ".ir-with-opt.ll");
  CHECK(before.find("define") != std::string::npos);
  CHECK(after.find("define") != std::string::npos);
  CHECK(before.find("jit_f") != std::string::npos);  // the module's name
  std::filesystem::remove_all(dir);
  // An unwritable prefix is a CompileError, not a crash.
  CHECK_THROWS_AS(compile_kernels({{e, "k"}}, {.dump_prefix = "/nonexistent-dir/x/y"}),
                  CompileError);
}

TEST_CASE("codegen: what the CPU backend cannot compile is a CompileError", "[codegen]") {
  Hlo h;
  auto* x = h.param(0, float32, {2});
  auto* i = h.param(1, int32, {2});
  CHECK_THROWS_AS(compile_kernels({{x, "param"}}, {}), CompileError);
  CHECK_THROWS_AS(compile_kernels({{h.b.tuple({x, x}), "tuple"}}, {}), CompileError);
  CHECK_THROWS_AS(compile_kernels({{h.b.unary(Opcode::kExp, i), "exp_int"}}, {}), CompileError);
  auto* bad = h.op(Opcode::kCompare, bool_, {2}, {x, x}, attrs({{"direction", std::string("XX")}}));
  CHECK_THROWS_WITH(compile_kernels({{bad, "cmp"}}, {}), Catch::Contains("direction"));
  auto* badt = h.op(Opcode::kTranspose, float32, {2}, {x}, attrs({{"dimensions", Ints{3}}}));
  CHECK_THROWS_AS(compile_kernels({{badt, "t"}}, {}), CompileError);
  auto* args = h.op(Opcode::kArgMax, int32, {}, {h.param(2, float32, {0})},
                    attrs({{"dimensions", Ints{0}}}));
  CHECK_THROWS_AS(compile_kernels({{args, "a"}}, {}), CompileError);
  auto* mismatched = h.op(Opcode::kAdd, float32, {2}, {x, h.param(3, float32, {3})});
  CHECK_THROWS_WITH(compile_kernels({{mismatched, "m"}}, {}), Catch::Contains("of shape"));
  // A failed compile leaves the JIT usable.
  std::vector<float> in = {1.f, 4.f};
  check_all(run<float>(h.b.unary(Opcode::kSqrt, x), {in.data()}), {1.f, 2.f});
}

}  // namespace
}  // namespace jx::codegen::testing
