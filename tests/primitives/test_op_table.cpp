// Runs every op-table row over its dtypes and shapes against its oracle, and checks that every
// registered primitive has a row.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "core/primitive.hpp"
#include "support/config_guard.hpp"
#include "support/gpu_testing.hpp"
#include "support/host_device.hpp"
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

// One dtype and shape set of a row: its operands (drawn as the row says) and what the oracle
// makes of them.
struct RowCase {
  std::string where;  // "row dtype shapes ..."
  std::vector<Array> args;
  HostArray want;
};

std::vector<RowCase> cases_of(const OpRow& row, std::mt19937& rng) {
  std::vector<RowCase> cases;
  for (DType dtype : row.dtypes) {
    for (const auto& shapes : row.shape_sets) {
      RowCase c;
      std::vector<HostArray> host;
      for (const Shape& s : shapes) {
        HostArray h{s, {}};
        for (std::int64_t i = 0; i < shape_size(s); ++i)
          h.values.push_back(sample_value(row, rng, dtype));
        c.args.push_back(from_host(h, dtype));
        host.push_back(to_host(c.args.back()));  // the values exactly as jx holds them
      }
      std::ostringstream where;
      where << row.name << " " << dtype_name(dtype) << " shapes";
      for (const Shape& s : shapes) where << " " << shape_str(s);
      c.where = where.str();
      c.want = row.oracle(host, dtype);
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

void check_case(const OpRow& row, const RowCase& c, const Array& got) {
  INFO(c.where);
  REQUIRE(got.shape() == c.want.shape);
  std::vector<double> g = got.to_vector<double>();
  REQUIRE(g.size() == c.want.values.size());
  std::size_t bad = 0;  // the first element that differs: one report per case
  while (bad < g.size() && close(g[bad], c.want.values[bad], got.dtype(), row)) ++bad;
  std::ostringstream first;
  if (bad < g.size())
    first << "element " << bad << ": got " << g[bad] << ", want " << c.want.values[bad];
  INFO(first.str());
  CHECK(bad == g.size());
}

// Each row's cases as one jitted program on `device` (few programs: a GPU compiles each and
// loads its module), their operands put there first. Products in full precision, as the oracles
// compute them (a GPU's default lets cuBLAS round f32 to TF32).
void check_every_row_on(const Device& device) {
  ConfigGuard guard;
  config().default_matmul_precision = "highest";
  std::mt19937 rng(0);
  for (const OpRow& row : op_table()) {
    std::vector<RowCase> cases = cases_of(row, rng);
    std::vector<std::vector<Array>> args;
    for (const RowCase& c : cases) {
      args.emplace_back();
      for (const Array& a : c.args) args.back().push_back(device_put(a, device));
    }
    auto each_case = [&row](const std::vector<std::vector<Array>>& all) {
      std::vector<Array> outs;
      for (const std::vector<Array>& one : all) outs.push_back(row.apply(one));
      return outs;
    };
    std::vector<Array> outs = jit(each_case, {.device = device})(args);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      CHECK(outs[i].device() == device);
      check_case(row, cases[i], outs[i]);
    }
  }
}

}  // namespace

TEST_CASE("op table: every row matches its oracle", "[op_table]") {
  std::mt19937 rng(0);
  for (const OpRow& row : op_table())
    for (const RowCase& c : cases_of(row, rng)) check_case(row, c, row.apply(c.args));
}

TEST_CASE("op table: every row on a host-memory device matches its oracle", "[op_table][devices]") {
  HostGpus host_gpus;
  check_every_row_on(Device{Platform::gpu, 7});
}

// ctest reports this as skipped where there is no GPU.
TEST_CASE("op table: every row on the GPU matches its oracle", "[op_table][devices][gpu]") {
  JX_REQUIRE_GPU();
  check_every_row_on(gpu(0));
}

TEST_CASE("op table: every primitive has a row", "[op_table]") {
  // Primitives that hold user functions have no fixed semantics to tabulate: their tests are in
  // tests/transforms/test_custom_derivatives.cpp, tests/*/test_control_flow*.cpp,
  // tests/api/test_jit_nested.cpp, tests/transforms/test_checkpoint.cpp and
  // tests/api/test_debug_print.cpp.
  const std::set<std::string> holding_functions{
      "custom_jvp_call", "custom_vjp_call", "custom_lin", "cond", "while", "scan", "jit",
      "checkpoint",      "debug_callback"};
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
