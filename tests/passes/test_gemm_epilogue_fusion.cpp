// GEMM epilogue fusion: HLO text in, the fused dot and epilogue out (or nothing changed); and
// the epilogues real programs leave after the GPU's pipeline, recognized or not by
// hlo::as_gemm_epilogue.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "api/compile.hpp"
#include "backend/backend.hpp"
#include "codegen/gpu_ptx_testing.hpp"
#include "hlo/gemm.hpp"
#include "hlo/hlo_testing.hpp"
#include "jx/jx.hpp"
#include "passes/fusion/gemm_epilogue_fusion.hpp"

namespace jx::passes {
namespace {

using hlo::GemmActivation;
using hlo::Instruction;
using hlo::Opcode;
using V = std::vector<Array>;

// x[8,16] · w[16,4] + broadcast(b) (b has `bias_len` elements along `bias_dims`), then
// `epilogue` of %sum (its instructions, the root last; none: the sum is the root).
std::string dense_module(const std::string& epilogue, const std::string& t = "f32",
                         const std::string& bias_dims = "{1}", int bias_len = 4) {
  const std::string b = t + "[" + std::to_string(bias_len) + "]";
  return "HloModule m\n\n"
         "%fused (p0: " +
         b + ", p1: " + t + "[8,4]) -> " + t +
         "[8,4] {\n"
         "  %p0 = " +
         b +
         " parameter(0)\n"
         "  %p1 = " +
         t +
         "[8,4] parameter(1)\n"
         "  %bias = " +
         t + "[8,4] broadcast(" + b + " %p0), dimensions=" + bias_dims + "\n" +
         (epilogue.empty() ? "  ROOT %sum = " : "  %sum = ") + t + "[8,4] add(" + t +
         "[8,4] %p1, " + t + "[8,4] %bias)\n" + epilogue +
         "}\n\n"
         "ENTRY %main (x: " +
         t + "[8,16], w: " + t + "[16,4], b: " + b + ") -> " + t +
         "[8,4] {\n"
         "  %x = " +
         t +
         "[8,16] parameter(0)\n"
         "  %w = " +
         t +
         "[16,4] parameter(1)\n"
         "  %b = " +
         b +
         " parameter(2)\n"
         "  %dot = " +
         t + "[8,4] dot(" + t + "[8,16] %x, " + t +
         "[16,4] %w), "
         "lhs_batch_dims={}, lhs_contracting_dims={1}, rhs_batch_dims={}, "
         "rhs_contracting_dims={0}\n"
         "  ROOT %f = " +
         t + "[8,4] fusion(" + b + " %b, " + t +
         "[8,4] %dot), kind=kLoop, "
         "calls=%fused\n"
         "}\n";
}

// relu(%sum) as jx::nn::relu lowers, in `t`.
std::string relu(const std::string& t = "f32") {
  return "  %zero = " + t +
         "[] constant(0)\n"
         "  %zeros = " +
         t + "[8,4] broadcast(" + t +
         "[] %zero), dimensions={}\n"
         "  %le = pred[8,4] compare(" +
         t + "[8,4] %sum, " + t +
         "[8,4] %zeros), direction=LE\n"
         "  ROOT %relu = " +
         t + "[8,4] select(pred[8,4] %le, " + t + "[8,4] %zeros, " + t + "[8,4] %sum)\n";
}
bool every_dot(const Instruction&, DType) { return true; }

std::unique_ptr<hlo::Module> run(const std::string& text, bool expect_change,
                                 bool (*library_gemm)(const Instruction&, DType) = every_dot) {
  auto [changed, out] = hlo::testing::run_pass<GemmEpilogueFusion>(text, library_gemm);
  INFO(out);
  CHECK(changed == expect_change);
  return hlo::parse_module(out);
}

TEST_CASE("gemm epilogue fusion: relu(x @ w + b) becomes one output fusion cuBLASLt runs",
          "[passes][gemm_epilogue]") {
  auto m = run(dense_module(relu()), true);
  const Instruction* root = m->entry()->root();
  REQUIRE(root->opcode == Opcode::kFusion);
  CHECK(root->attrs.get_string("kind") == "kOutput");
  std::optional<hlo::GemmEpilogue> e = hlo::as_gemm_epilogue(*root);
  REQUIRE(e);
  CHECK(e->activation == GemmActivation::kRelu);
  CHECK(root->operands.at(static_cast<std::size_t>(e->lhs))->name == "x");
  CHECK(root->operands.at(static_cast<std::size_t>(e->rhs))->name == "w");
  REQUIRE(e->bias >= 0);
  CHECK(root->operands.at(static_cast<std::size_t>(e->bias))->name == "b");
  CHECK(e->shape.m == 8);
  CHECK(e->shape.n == 4);
  CHECK(e->shape.k == 16);
}

TEST_CASE("gemm epilogue fusion: a bias alone, and maximum(x, 0) as relu",
          "[passes][gemm_epilogue]") {
  auto m = run(dense_module(""), true);
  std::optional<hlo::GemmEpilogue> e = hlo::as_gemm_epilogue(*m->entry()->root());
  REQUIRE(e);
  CHECK(e->activation == GemmActivation::kNone);
  CHECK(e->bias >= 0);

  auto max = run(dense_module("  %zero = f32[] constant(0)\n"
                              "  %zeros = f32[8,4] broadcast(f32[] %zero), dimensions={}\n"
                              "  ROOT %relu = f32[8,4] maximum(f32[8,4] %zeros, f32[8,4] %sum)\n"),
                 true);
  e = hlo::as_gemm_epilogue(*max->entry()->root());
  REQUIRE(e);
  CHECK(e->activation == GemmActivation::kRelu);
}

TEST_CASE("gemm epilogue fusion: what cuBLASLt's epilogues do not compute stays apart",
          "[passes][gemm_epilogue]") {
  SECTION("the backend computes the dot itself") {
    run(dense_module(relu()), false, [](const Instruction&, DType) { return false; });
  }
  SECTION("float64") { run(dense_module(relu("f64"), "f64"), false); }
  SECTION("a bias along the rows") { run(dense_module(relu(), "f32", "{0}", 8), false); }
  SECTION("relu's threshold is not zero") {
    std::string text = dense_module(relu());
    text.replace(text.find("constant(0)"), 11, "constant(1)");
    run(text, false);
  }
}

// A bf16 layer: the f32 product of bf16 operands (as upcast-16bit-dots leaves it for a backend
// that reads them), rounded to bf16, plus a bf16 bias, then relu (%relu); `root`: the fused
// computation's last lines, its root among them.
std::string bf16_dense_module(const std::string& root) {
  return R"(HloModule m

%fused (p0: bf16[4], p1: f32[8,4]) -> bf16[8,4] {
  %p0 = bf16[4] parameter(0)
  %p1 = f32[8,4] parameter(1)
  %r = bf16[8,4] convert(f32[8,4] %p1)
  %bias = bf16[8,4] broadcast(bf16[4] %p0), dimensions={1}
  %sum = bf16[8,4] add(bf16[8,4] %r, bf16[8,4] %bias)
  %zero = bf16[] constant(0)
  %zeros = bf16[8,4] broadcast(bf16[] %zero), dimensions={}
)" + root +
         R"(}

ENTRY %main (x: bf16[8,16], w: bf16[16,4], b: bf16[4]) -> bf16[8,4] {
  %x = bf16[8,16] parameter(0)
  %w = bf16[16,4] parameter(1)
  %b = bf16[4] parameter(2)
  %dot = f32[8,4] dot(bf16[8,16] %x, bf16[16,4] %w), lhs_batch_dims={}, )"
         R"(lhs_contracting_dims={1}, rhs_batch_dims={}, rhs_contracting_dims={0}
  ROOT %f = bf16[8,4] fusion(bf16[4] %b, f32[8,4] %dot), kind=kLoop, calls=%fused
}
)";
}

// The output dtype the backend was asked about, by the last call of `fuses_bf16`.
DType asked = float64;
bool fuses_bf16(const Instruction&, DType out) {
  asked = out;
  return out == bfloat16;
}

TEST_CASE("gemm epilogue fusion: a bf16 layer's product rounds, then takes its bias and relu",
          "[passes][gemm_epilogue]") {
  std::string text =
      bf16_dense_module("  ROOT %relu = bf16[8,4] maximum(bf16[8,4] %sum, bf16[8,4] %zeros)\n");
  auto m = run(text, true, fuses_bf16);
  CHECK(asked == bfloat16);
  std::optional<hlo::GemmEpilogue> e = hlo::as_gemm_epilogue(*m->entry()->root());
  REQUIRE(e);
  CHECK(e->out == bfloat16);
  CHECK(e->activation == GemmActivation::kRelu);
  CHECK(e->shape.operand_dtype == bfloat16);
  CHECK(e->bias >= 0);
  // A backend whose code for the product does not round to bf16 keeps them apart.
  run(text, false, [](const Instruction&, DType out) { return out == float32; });
  // The product read unrounded too (its square added after the relu): not an epilogue, for a
  // backend that takes any.
  run(bf16_dense_module("  %relu = bf16[8,4] maximum(bf16[8,4] %sum, bf16[8,4] %zeros)\n"
                        "  %square = f32[8,4] multiply(f32[8,4] %p1, f32[8,4] %p1)\n"
                        "  %narrow = bf16[8,4] convert(f32[8,4] %square)\n"
                        "  ROOT %out = bf16[8,4] add(bf16[8,4] %relu, bf16[8,4] %narrow)\n"),
      false);
  // The rounding alone, a bf16 product with no bias: an epilogue too.
  auto rounded = run(R"(HloModule m

ENTRY %main (x: bf16[8,16], w: bf16[16,4]) -> bf16[8,4] {
  %x = bf16[8,16] parameter(0)
  %w = bf16[16,4] parameter(1)
  %dot = f32[8,4] dot(bf16[8,16] %x, bf16[16,4] %w), lhs_batch_dims={}, )"
                     R"(lhs_contracting_dims={1}, rhs_batch_dims={}, rhs_contracting_dims={0}
  ROOT %r = bf16[8,4] convert(f32[8,4] %dot)
}
)",
                     true, fuses_bf16);
  e = hlo::as_gemm_epilogue(*rounded->entry()->root());
  REQUIRE(e);
  CHECK(e->out == bfloat16);
  CHECK(e->activation == GemmActivation::kNone);
  CHECK(e->bias == -1);
  // cuBLASLt's epilogues take f32 operands and outputs only.
  auto parsed = hlo::parse_module(text);
  const Instruction* dot = parsed->entry()->root()->operands[1];
  REQUIRE(dot->opcode == Opcode::kDot);
  for (DType out : {bfloat16, float32})
    CHECK_FALSE(backend::fuses_gemm_epilogue(*dot, out, Platform::gpu));
}

// The GPU pipeline's output for act(x @ w + b) at a size cuBLAS takes: one fusion holding the
// dot, recognized with `want`, or (nullopt) a dot of its own.
std::optional<GemmActivation> epilogue_of(const std::function<Array(const Array&)>& act) {
  auto dense = [&](const V& a) { return V{act(np::matmul(a[0], a[1]) + a[2])}; };
  api::LoweredProgram lowered =
      testing::lower(dense, {{{128, 64}, float32}, {{64, 32}, float32}, {{32}, float32}}, "dense");
  std::shared_ptr<hlo::Module> m = api::optimized_module(lowered, Platform::gpu);
  INFO(hlo::to_string(*m));
  const Instruction* root = m->entry()->root();
  std::optional<hlo::GemmEpilogue> e = hlo::as_gemm_epilogue(*root);
  return e ? std::optional(e->activation) : std::nullopt;
}

TEST_CASE("gemm epilogue fusion: the epilogues jx::nn and hand-written formulas lower to",
          "[passes][gemm_epilogue]") {
  CHECK(epilogue_of(nn::relu) == GemmActivation::kRelu);
  CHECK(epilogue_of([](const Array& v) { return np::maximum(v, 0.0f); }) == GemmActivation::kRelu);
  CHECK(epilogue_of([](const Array& v) { return nn::gelu(v); }) == GemmActivation::kGelu);
  // The same gelu with its products grouped another way.
  CHECK(epilogue_of([](const Array& v) {
          return 0.5f * v * (1.0f + np::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
        }) == GemmActivation::kGelu);
  CHECK(epilogue_of([](const Array& v) { return v; }) == GemmActivation::kNone);
  // Not what cuBLASLt computes: the erf form, another constant, a sigmoid.
  CHECK_FALSE(epilogue_of([](const Array& v) { return nn::gelu(v, false); }));
  CHECK_FALSE(epilogue_of([](const Array& v) {
    return 0.5f * v * (1.0f + np::tanh(0.7978845608f * (v + 0.04f * v * v * v)));
  }));
  CHECK_FALSE(epilogue_of(nn::sigmoid));
}

}  // namespace
}  // namespace jx::passes
