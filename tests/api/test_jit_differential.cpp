// Differential test: every op-table row, run eagerly (the reference impls) and under jit (the
// HLO → LLVM pipeline) on the CPU, and fused programs on every device present, over their dtypes
// and shapes: the results must agree.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

#include "support/op_table.hpp"

namespace jx::testing {
namespace {

// Compiled code rounds the value of every HLO op to a 16-bit float dtype (integer_pow's chain
// of multiplies rounds at each one) where the eager impl rounds once: a few roundings apart.
bool agree(double jit, double eager, DType d, double rtol) {
  if (std::isnan(eager)) return std::isnan(jit);
  if (!is_floating(d) || std::isinf(eager)) return jit == eager;
  double tol = tolerance(d, rtol, 4);
  return std::abs(jit - eager) <= tol + tol * std::abs(eager);
}

}  // namespace

// On the CPU: the rows on other devices are checked against their oracles, a program per row
// (test_op_table.cpp's device runs).
TEST_CASE("jit agrees with eager execution on every op-table row", "[jit][differential]") {
  const Device device = cpu();
  std::mt19937 rng(1);
  for (const OpRow& row : op_table()) {
    auto jitted =
        jit([&row](const std::vector<Array>& args) { return row.apply(args); }, {.device = device});
    for (DType dtype : row.dtypes) {
      for (const auto& shapes : row.shape_sets) {
        std::vector<Array> args;
        for (const Shape& s : shapes) {
          HostArray h{s, {}};
          for (std::int64_t i = 0; i < shape_size(s); ++i)
            h.values.push_back(sample_value(row, rng, dtype));
          args.push_back(from_host(h, dtype));
        }
        std::ostringstream where;
        where << row.name << " " << dtype_name(dtype) << " on " << device << " shapes";
        for (const Shape& s : shapes) where << " " << shape_str(s);
        INFO(where.str());
        Array eager = row.apply(args);
        Array compiled = jitted(args);
        REQUIRE(compiled.aval() == eager.aval());
        REQUIRE(compiled.device() == device);
        std::vector<double> e = eager.to_vector<double>(), c = compiled.to_vector<double>();
        for (std::size_t i = 0; i < e.size(); ++i) {
          INFO("element " << i << ": jit " << c[i] << ", eager " << e[i]);
          CHECK(agree(c[i], e[i], eager.dtype(), row.rtol));
        }
      }
    }
  }
}

}  // namespace jx::testing

namespace jx::testing {
namespace {

// Programs that fusion turns into few kernels (loop, reduction-input, multi-output and
// horizontal fusions, a GEMM epilogue, in-place temporaries), each run eagerly and jitted.
struct FusedProgram {
  std::string name;
  std::vector<Shape> shapes;
  std::function<std::vector<Array>(const std::vector<Array>&)> fn;
};

std::vector<FusedProgram> fused_programs() {
  using V = std::vector<Array>;
  return {
      {"softmax over rows",
       {{37, 70}},
       [](const V& a) {
         Array e = np::exp(a[0] - np::max(a[0], {1}, true));
         return V{e / np::sum(e, {1}, true)};
       }},
      {"layer norm over rows",
       {{33, 64}, {64}, {64}},
       [](const V& a) {
         Array m = np::mean(a[0], {1}, true);
         return V{(a[0] - m) / np::sqrt(np::var(a[0], {1}, true) + 1e-5f) * a[1] + a[2]};
       }},
      {"gelu",
       {{5, 300}},
       [](const V& a) {
         const Array& x = a[0];
         return V{0.5f * x * (1.0f + np::tanh(0.7978845608f * (x + 0.044715f * x * x * x)))};
       }},
      {"column normalization",
       {{40, 9}},
       [](const V& a) { return V{a[0] / np::sum(np::abs(a[0]), {0})}; }},
      {"two outputs of one input",
       {{64, 65}},
       [](const V& a) {
         return V{np::exp(a[0]), np::tanh(a[0]) * 2.0f, np::sum(a[0] * a[0], {1})};
       }},
      {"small independent kernels",
       {{3}, {4, 2}, {5}},
       [](const V& a) {
         return V{np::sin(a[0]), np::cos(a[1]) + 1.0f, np::exp(a[2]) * a[2]};
       }},
      {"dense layer and epilogue",
       {{24, 32}, {32, 16}, {16}},
       [](const V& a) { return V{np::maximum(np::matmul(a[0], a[1]) + a[2], 0.0f)}; }},
      {"chain between products",
       {{16, 16}, {16, 16}},
       [](const V& a) {
         Array h = np::matmul(a[0], a[1]);
         return V{np::matmul(np::tanh(h) * 0.5f + np::sin(h), a[1])};
       }},
      {"transpose, slice and concatenate",
       {{6, 8}},
       [](const V& a) {
         Array t = np::transpose(a[0]) * 2.0f;
         Array s = lax::slice(t, {1, 0}, {7, 6});
         return V{np::concatenate({s, np::exp(s)}, 0) + 1.0f};
       }},
      {"select and clip",
       {{50, 20}},
       [](const V& a) {
         Array c = np::clip(a[0], np::array(-1.0f), np::array(1.5f));
         return V{np::where(a[0] > 0.0f, c * c, np::exp(c)), np::argmax(a[0], 1)};
       }},
      {"logsumexp of a 1-row matrix",
       {{1, 513}},
       [](const V& a) {
         Array m = np::max(a[0], {1}, true);
         return V{np::log(np::sum(np::exp(a[0] - m), {1}, true)) + m};
       }},
  };
}

TEST_CASE("jit agrees with eager execution on fused programs", "[jit][differential][fusion]") {
  std::mt19937 rng(3);
  for (const FusedProgram& p : fused_programs()) {
    INFO(p.name);
    std::vector<Array> args;
    for (const Shape& s : p.shapes) {
      HostArray h{s, {}};
      for (std::int64_t i = 0; i < shape_size(s); ++i) h.values.push_back(uniform(rng, -3, 3));
      args.push_back(from_host(h, float32));
    }
    std::vector<Array> eager = p.fn(args);
    for (const Device& device : devices()) {
      INFO("on " << device);
      std::vector<Array> compiled = jit(p.fn, {.device = device})(args);
      REQUIRE(compiled.size() == eager.size());
      for (std::size_t k = 0; k < eager.size(); ++k) {
        REQUIRE(compiled[k].aval() == eager[k].aval());
        std::vector<double> e = eager[k].to_vector<double>(), c = compiled[k].to_vector<double>();
        for (std::size_t i = 0; i < e.size(); ++i) {
          INFO("output " << k << " element " << i << ": jit " << c[i] << ", eager " << e[i]);
          CHECK(agree(c[i], e[i], eager[k].dtype(), 1e-5));
        }
      }
    }
  }
}

}  // namespace
}  // namespace jx::testing
