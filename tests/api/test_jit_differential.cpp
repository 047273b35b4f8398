// Differential test: every op-table row, run eagerly (the reference impls) and under jit (the
// HLO → LLVM pipeline), over the row's dtypes and shapes: the results must agree.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

#include "support/op_table.hpp"

namespace jx::testing {
namespace {

double sample_value(const OpRow& row, std::mt19937& rng, DType d) {
  if (row.sample) return row.sample(rng, d);
  if (d == bool_) return uniform(rng, -1, 1) > 0;
  if (d == uint32) return std::round(uniform(rng, 0, 6));
  if (is_integral(d)) return std::round(uniform(rng, -3, 3));
  return uniform(rng, -3, 3);
}

bool agree(double jit, double eager, DType d, double rtol) {
  if (std::isnan(eager)) return std::isnan(jit);
  if (!is_floating(d) || std::isinf(eager)) return jit == eager;
  double tol = d == float64 ? rtol * 1e-7 : rtol;
  return std::abs(jit - eager) <= tol + tol * std::abs(eager);
}

}  // namespace

TEST_CASE("jit agrees with eager execution on every op-table row", "[jit][differential]") {
  std::mt19937 rng(1);
  for (const OpRow& row : op_table()) {
    auto jitted = jit([&row](const std::vector<Array>& args) { return row.apply(args); });
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
        where << row.name << " " << dtype_name(dtype) << " shapes";
        for (const Shape& s : shapes) where << " " << shape_str(s);
        INFO(where.str());
        Array eager = row.apply(args);
        Array compiled = jitted(args);
        REQUIRE(compiled.aval() == eager.aval());
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
