// Runs every op-table row over its dtypes and shapes against its oracle, and checks that every
// registered primitive has a row.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <sstream>

#include "core/primitive.hpp"
#include "support/op_table.hpp"

namespace jx::testing {
namespace {

bool close(double got, double want, DType d, double rtol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  if (!is_floating(d)) return got == want;
  double tol = d == float64 ? rtol * 1e-7 : rtol;
  return std::abs(got - want) <= tol + tol * std::abs(want);
}

}  // namespace

TEST_CASE("op table: every row matches its oracle", "[op_table]") {
  std::mt19937 rng(0);
  for (const OpRow& row : op_table()) {
    for (DType dtype : row.dtypes) {
      for (const auto& shapes : row.shape_sets) {
        std::vector<Array> args;
        std::vector<HostArray> host;
        for (const Shape& s : shapes) {
          HostArray h{s, {}};
          for (std::int64_t i = 0; i < shape_size(s); ++i)
            h.values.push_back(sample_value(row, rng, dtype));
          args.push_back(from_host(h, dtype));
          host.push_back(to_host(args.back()));  // the values exactly as jx holds them
        }
        std::ostringstream where;
        where << row.name << " " << dtype_name(dtype) << " shapes";
        for (const Shape& s : shapes) where << " " << shape_str(s);
        INFO(where.str());
        HostArray want = row.oracle(host, dtype);
        Array got = row.apply(args);
        REQUIRE(got.shape() == want.shape);
        std::vector<double> g = got.to_vector<double>();
        REQUIRE(g.size() == want.values.size());
        for (std::size_t i = 0; i < g.size(); ++i) {
          INFO("element " << i << ": got " << g[i] << ", want " << want.values[i]);
          CHECK(close(g[i], want.values[i], got.dtype(), row.rtol));
        }
      }
    }
  }
}

TEST_CASE("op table: every primitive has a row", "[op_table]") {
  // Primitives that hold user functions have no fixed semantics to tabulate: their tests are in
  // tests/transforms/test_custom_derivatives.cpp and tests/*/test_control_flow*.cpp.
  const std::set<std::string> holding_functions{
      "custom_jvp_call", "custom_vjp_call", "custom_lin", "cond", "while", "scan"};
  std::set<std::string> covered = holding_functions;
  for (const OpRow& row : op_table()) covered.insert(row.primitive);
  for (const Primitive* p : all_primitives()) {
    INFO("primitive without an op-table row: " << p->name);
    CHECK(covered.count(p->name) == 1);
  }
  CHECK(op_table().size() + holding_functions.size() >= all_primitives().size());
}

}  // namespace jx::testing
