// The CPU's BLAS GEMM thunk, run directly: the CPU takes it only for the largest products where
// its own kernel does not beat BLAS (cpu::kernel_at_any_size), and jit reaches its epilogues and
// 16-bit operands on few machines. Against loops in double: batches, transposed operands, the
// bias and activation applied after the call, and 16-bit operands widened first.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "jx/float16.hpp"
#include "runtime/thunks.hpp"

namespace jx::runtime {
namespace {

Allocation parameter(int index) { return {Allocation::Kind::kParameter, index}; }

// Values in [-1, 1) that differ from element to element.
template <class T>
std::vector<T> values(std::int64_t n, int seed) {
  std::vector<T> v;
  for (std::int64_t i = 0; i < n; ++i)
    v.push_back(static_cast<T>(static_cast<float>((i * 37 + seed * 11) % 23) / 11.5f - 1.0f));
  return v;
}

// out[b, i, j] = act(sum_p lhs[b, i, p] rhs[b, p, j] + bias[j]), each operand read as stored.
template <class T, class Operand>
std::vector<double> expected(const hlo::GemmShape& g, const std::vector<Operand>& lhs,
                             const std::vector<Operand>& rhs, const std::vector<T>* bias,
                             hlo::GemmActivation activation) {
  std::vector<double> out;
  for (std::int64_t b = 0; b < g.batch; ++b)
    for (std::int64_t i = 0; i < g.m; ++i)
      for (std::int64_t j = 0; j < g.n; ++j) {
        double s = bias ? double((*bias)[static_cast<std::size_t>(j)]) : 0.0;
        for (std::int64_t p = 0; p < g.k; ++p) {
          std::int64_t l = g.transpose_lhs ? p * g.m + i : i * g.k + p;
          std::int64_t r = g.transpose_rhs ? j * g.k + p : p * g.n + j;
          s += double(static_cast<float>(lhs[static_cast<std::size_t>(b * g.m * g.k + l)])) *
               double(static_cast<float>(rhs[static_cast<std::size_t>(b * g.k * g.n + r)]));
        }
        if (activation == hlo::GemmActivation::kRelu) s = std::max(s, 0.0);
        if (activation == hlo::GemmActivation::kGelu)
          s = 0.5 * s * (1 + std::tanh(0.7978845608028654 * (s + 0.044715 * s * s * s)));
        out.push_back(s);
      }
  return out;
}

template <class T, class Operand>
void check_gemm(const hlo::GemmShape& g, bool with_bias, hlo::GemmActivation activation) {
  std::vector<Operand> lhs = values<Operand>(g.batch * g.m * g.k, 1);
  std::vector<Operand> rhs = values<Operand>(g.batch * g.k * g.n, 2);
  std::vector<T> bias = values<T>(g.n, 3), out(static_cast<std::size_t>(g.batch * g.m * g.n));
  LibraryGemm gemm{"dot", g, parameter(0), parameter(1), {Allocation::Kind::kOutput, 0}};
  gemm.activation = activation;
  if (with_bias) gemm.bias = parameter(2);
  ExecutionContext ctx;
  ctx.parameters = {lhs.data(), rhs.data(), bias.data()};
  ctx.outputs = {out.data()};
  GemmThunk(gemm).execute(ctx);
  std::vector<double> want = expected<T>(g, lhs, rhs, with_bias ? &bias : nullptr, activation);
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    CHECK(double(out[i]) == Approx(want[i]).margin(1e-5));
  }
}

TEST_CASE("CPU GEMM thunk: BLAS's product with its operands as stored, and the epilogue after",
          "[runtime][gemm]") {
  using hlo::GemmActivation;
  SECTION("f32, two products, rhs stored [n, k], bias and relu") {
    hlo::GemmShape g{.batch = 2, .m = 5, .n = 7, .k = 9, .transpose_rhs = true};
    check_gemm<float, float>(g, true, GemmActivation::kRelu);
  }
  SECTION("f32, lhs stored [k, m], bias and gelu") {
    hlo::GemmShape g{.m = 6, .n = 4, .k = 11, .transpose_lhs = true};
    check_gemm<float, float>(g, true, GemmActivation::kGelu);
  }
  SECTION("f64, both operands transposed, no epilogue") {
    hlo::GemmShape g{.dtype = float64,
                     .operand_dtype = float64,
                     .m = 3,
                     .n = 8,
                     .k = 5,
                     .transpose_lhs = true,
                     .transpose_rhs = true};
    check_gemm<double, double>(g, false, GemmActivation::kNone);
  }
  SECTION("bf16 operands of an f32 product, widened first") {
    hlo::GemmShape g{.operand_dtype = bfloat16, .batch = 2, .m = 4, .n = 5, .k = 6};
    check_gemm<float, BFloat16>(g, false, GemmActivation::kNone);
  }
}

}  // namespace
}  // namespace jx::runtime
