// Dot canonicalization: a dot whose dims are not a (batched) matrix product becomes one, of
// transposed and reshaped operands, computing the same values (the evaluator runs the module
// before and after the pass).
#include <catch2/catch.hpp>

#include <random>

#include "hlo/evaluator.hpp"
#include "hlo/gemm.hpp"
#include "hlo/hlo_testing.hpp"
#include "passes/dot_canonicalizer.hpp"

namespace jx::passes {
namespace {

using hlo::testing::literal;

std::string shape_text(const std::string& dtype, const Shape& s) {
  std::string dims, layout;
  for (std::size_t d = 0; d < s.size(); ++d) {
    dims += (d ? "," : "") + std::to_string(s[d]);
    layout += (d ? "," : "") + std::to_string(s.size() - 1 - d);
  }
  return dtype + "[" + dims + "]{" + layout + "}";
}

// A module of one dot of these dims' operands and attributes.
std::string dot_module(const std::string& dtype, const Shape& lhs, const Shape& rhs,
                       const Shape& out, const std::string& dims) {
  std::string l = shape_text(dtype, lhs), r = shape_text(dtype, rhs), o = shape_text(dtype, out);
  return "HloModule m, entry_computation_layout={(" + l + ", " + r + ")->" + o +
         "}\n\nENTRY %main.1 (a.2: " + l + ", b.3: " + r + ") -> " + o + " {\n  %a.2 = " + l +
         " parameter(0)\n  %b.3 = " + r + " parameter(1)\n  ROOT %dot.4 = " + o + " dot(" + l +
         " %a.2, " + r + " %b.3), " + dims + "\n}\n";
}

Array random_array(const Shape& s, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(static_cast<std::size_t>(shape_size(s)));
  for (float& x : v) x = u(rng);
  return literal(v, s);
}

// Runs the pass on a float32 dot and checks that it changed it into a GEMM-shaped dot with
// `transposes` transposes, computing the same values. Returns the rewritten text.
std::string check_canonical(const Shape& lhs, const Shape& rhs, const Shape& out,
                            const std::string& dims, int transposes) {
  std::string text = dot_module("f32", lhs, rhs, out, dims);
  INFO(text);
  auto module = hlo::parse_module(text);
  hlo::verify(*module);
  std::mt19937 rng(11);
  std::vector<Array> args = {random_array(lhs, rng), random_array(rhs, rng)};
  std::vector<float> before = hlo::evaluate(*module->entry(), args).to_vector<float>();
  CHECK(DotCanonicalizer().run(*module));
  hlo::verify(*module);
  std::string rewritten = hlo::to_string(*module);
  INFO(rewritten);
  std::vector<float> after = hlo::evaluate(*module->entry(), args).to_vector<float>();
  REQUIRE(after.size() == before.size());
  for (std::size_t k = 0; k < after.size(); ++k) CHECK(after[k] == Approx(before[k]).margin(1e-5));
  int dots = 0, transposed = 0;
  for (const hlo::Instruction* i : module->entry()->instructions()) {
    transposed += i->opcode == hlo::Opcode::kTranspose;
    if (i->opcode != hlo::Opcode::kDot) continue;
    ++dots;
    CHECK(hlo::as_gemm(*i).has_value());
  }
  CHECK(dots == 1);
  CHECK(transposed == transposes);
  CHECK_FALSE(DotCanonicalizer().run(*module));  // canonical now
  return rewritten;
}

TEST_CASE("dot canonicalizer: batch dims not leading in order", "[passes]") {
  // Attention's scores against values laid out [batch, time, heads, dims]: rhs's batch dims
  // (0, 2) move in front, the one transpose.
  check_canonical({2, 3, 4, 5}, {2, 6, 3, 5}, {2, 3, 4, 6},
                  "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
                  "rhs_contracting_dims={3}",
                  1);
}

TEST_CASE("dot canonicalizer: a batch dim of size 1 becomes a free dim", "[passes]") {
  // [1, 3, 4] x [1, 4, 5]: one product of 3 rows, not a batch of one (threads split a batched
  // product by its batch entries). rhs's free dims (0, 2) around its contracting dim 1 take a
  // transpose of a size-1 dim, which the simplifier makes a reshape.
  std::string text = check_canonical({1, 3, 4}, {1, 4, 5}, {1, 3, 5},
                                     "lhs_batch_dims={0}, lhs_contracting_dims={2}, "
                                     "rhs_batch_dims={0}, rhs_contracting_dims={1}",
                                     1);
  CHECK(text.find("lhs_batch_dims={}") != std::string::npos);
  // With another batch dim: only the size-1 one leaves the batch.
  check_canonical({2, 1, 3, 4}, {2, 1, 4, 5}, {2, 1, 3, 5},
                  "lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, "
                  "rhs_contracting_dims={2}",
                  1);
}

TEST_CASE("dot canonicalizer: several free or contracting dims are flattened", "[passes]") {
  // A stack of rows times a matrix: lhs reshaped to [12, 5], no transpose.
  std::string text = check_canonical({3, 4, 5}, {5, 6}, {3, 4, 6},
                                     "lhs_batch_dims={}, lhs_contracting_dims={2}, "
                                     "rhs_batch_dims={}, rhs_contracting_dims={0}",
                                     0);
  CHECK(text.find("f32[12,5]{1,0} reshape(") != std::string::npos);
  // Two contracting dims each side, paired in order.
  check_canonical({3, 4, 5}, {4, 5, 6}, {3, 6},
                  "lhs_batch_dims={}, lhs_contracting_dims={1,2}, rhs_batch_dims={}, "
                  "rhs_contracting_dims={0,1}",
                  0);
  // Paired the other way round: lhs's contracting dims are transposed into the pairing's order.
  check_canonical({3, 4, 5}, {5, 4, 6}, {3, 6},
                  "lhs_batch_dims={}, lhs_contracting_dims={2,1}, rhs_batch_dims={}, "
                  "rhs_contracting_dims={0,1}",
                  1);
}

TEST_CASE("dot canonicalizer: an operand holding contracting before free dims stays so",
          "[passes]") {
  // lhs [k..., m...] and rhs [n..., k...]: reshaped only; the GEMMs read transposed operands.
  std::string text = check_canonical({4, 5, 2, 3}, {6, 4, 5}, {2, 3, 6},
                                     "lhs_batch_dims={}, lhs_contracting_dims={0,1}, "
                                     "rhs_batch_dims={}, rhs_contracting_dims={1,2}",
                                     0);
  CHECK(text.find("lhs_contracting_dims={0}") != std::string::npos);
  CHECK(text.find("rhs_contracting_dims={1}") != std::string::npos);
}

TEST_CASE("dot canonicalizer: what it leaves", "[passes]") {
  auto unchanged = [](const std::string& dtype, const Shape& lhs, const Shape& rhs,
                      const Shape& out, const std::string& dims) {
    std::string text = dot_module(dtype, lhs, rhs, out, dims);
    INFO(text);
    auto module = hlo::parse_module(text);
    CHECK_FALSE(DotCanonicalizer().run(*module));
  };
  // Already a batched GEMM, lhs transposed.
  unchanged("f32", {2, 5, 4}, {2, 5, 6}, {2, 4, 6},
            "lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, "
            "rhs_contracting_dims={1}");
  // A matrix-vector product: rhs has no free dim.
  unchanged("f32", {3, 4}, {4}, {3},
            "lhs_batch_dims={}, lhs_contracting_dims={1}, rhs_batch_dims={}, "
            "rhs_contracting_dims={0}");
  // Integers run on the elemental dot either way.
  unchanged("s32", {3, 4, 5}, {5, 6}, {3, 4, 6},
            "lhs_batch_dims={}, lhs_contracting_dims={2}, rhs_batch_dims={}, "
            "rhs_contracting_dims={0}");
}

}  // namespace
}  // namespace jx::passes
