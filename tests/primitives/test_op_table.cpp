// Runs every op-table row over its dtypes and shapes against its oracle, and checks that every
// registered primitive has a row.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "core/primitive.hpp"
#include "support/op_table.hpp"

namespace jx::testing {
namespace {

// The oracles compute in double on the exact operands. A 16-bit float result may be one
// rounding (and the float32 error) away, and where the exact value rounds to ±inf (float16 past
// 65504) it must be that infinity.
bool close(double got, double want, DType d, const OpRow& row) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(round_to(d, want))) return got == round_to(d, want);
  if (!is_floating(d) || row.exact) return got == want;
  double tol = tolerance(d, row.rtol);
  return std::abs(got - want) <= tol + tol * std::abs(want);
}

bool contains(const std::vector<DType>& ds, DType d) {
  return std::find(ds.begin(), ds.end(), d) != ds.end();
}

// The words JAX's dtype check names accepted dtypes by ("bool", "integer", "floating"), for a
// row whose dtypes are whole kinds: every integer dtype or none, every float or none. Empty for a
// row with a part of a kind.
std::string kinds_of(const std::vector<DType>& dtypes) {
  std::vector<std::string> words;
  auto whole = [&](bool (*kind)(DType), const char* word) {
    int in = 0, all = 0;
    for (DType d : kAllDTypes)
      if (kind(d)) {
        ++all;
        in += contains(dtypes, d);
      }
    if (in == all) words.push_back(word);
    return in == 0 || in == all;
  };
  bool ok = whole([](DType d) { return d == bool_; }, "bool");
  ok = whole(is_integral, "integer") && ok;
  ok = whole(is_floating, "floating") && ok;
  if (!ok || words.empty()) return "";
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
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
          CHECK(close(g[i], want.values[i], got.dtype(), row));
        }
      }
    }
  }
}

TEST_CASE("op table: every primitive has a row", "[op_table]") {
  // Primitives that hold user functions have no fixed semantics to tabulate: their tests are in
  // tests/transforms/test_custom_derivatives.cpp, tests/*/test_control_flow*.cpp and
  // tests/api/test_jit_nested.cpp.
  const std::set<std::string> holding_functions{
      "custom_jvp_call", "custom_vjp_call", "custom_lin", "cond", "while", "scan", "jit"};
  std::set<std::string> covered = holding_functions;
  for (const OpRow& row : op_table()) covered.insert(row.primitive);
  for (const Primitive* p : all_primitives()) {
    INFO("primitive without an op-table row: " << p->name);
    CHECK(covered.count(p->name) == 1);
  }
  CHECK(op_table().size() + holding_functions.size() >= all_primitives().size());
}

TEST_CASE("op table: every row lists whole kinds of dtypes, or says why not", "[op_table]") {
  for (const OpRow& row : op_table()) {
    INFO(row.name);
    CHECK(!row.dtypes.empty());
    if (row.subset_reason.empty()) CHECK(!kinds_of(row.dtypes).empty());
  }
}

// A row lists every dtype its primitive accepts (above: whole kinds), so every other dtype must
// be rejected, by a jx::TypeError in JAX's words: "sin does not accept dtype int32. Accepted
// dtypes are subtypes of floating."
TEST_CASE("op table: the dtypes a row leaves out are rejected, in JAX's words", "[op_table]") {
  int rejected = 0;
  std::set<std::string> primitives;
  for (const OpRow& row : op_table()) {
    if (!row.subset_reason.empty()) continue;
    const std::string kinds = kinds_of(row.dtypes);
    if (kinds.empty()) continue;  // the test case above fails
    for (DType d : kAllDTypes) {
      if (contains(row.dtypes, d)) continue;
      std::vector<Array> args;
      for (const Shape& s : row.shape_sets.front())
        args.push_back(
            from_host({s, std::vector<double>(static_cast<std::size_t>(shape_size(s)), 1.0)}, d));
      INFO(row.name << " on " << dtype_name(d));
      const std::string message = row.primitive + " does not accept dtype " +
                                  std::string(dtype_name(d)) +
                                  ". Accepted dtypes are subtypes of " + kinds + ".";
      CHECK_THROWS_MATCHES(row.apply(args), TypeError, Catch::Message(message));
      ++rejected;
      primitives.insert(row.primitive);
    }
  }
  // Floating-only rows reject 9 dtypes each (about 30 rows), numeric ones bool, bitwise ones the
  // 4 floats, shifts those and bool.
  CHECK(rejected > 300);
  for (const char* p : {"sin", "pow", "add", "neg", "clamp", "and", "not", "shift_left",
                        "reduce_sum", "dot_general", "iota", "is_finite", "integer_pow"}) {
    INFO(p);
    CHECK(primitives.count(p) == 1);
  }
}

}  // namespace jx::testing
