// Every op-table row (each dtype and shape set the jit differential test runs) compiled for the
// GPU without one: each kernel is an entry of the PTX, and ptxas, when present, assembles the
// PTX for sm_80 and sm_90. Rows go in programs of several, so that there are few modules.
#include <catch2/catch.hpp>

#include <algorithm>

#include "codegen/gpu_ptx_testing.hpp"
#include "support/op_table.hpp"

namespace jx::testing {
namespace {

constexpr std::size_t kRowsPerProgram = 8;

// One program computing `rows` on every dtype and shape set of each.
api::LoweredProgram rows_program(const std::vector<const OpRow*>& rows) {
  struct Case {
    const OpRow* row;
    std::size_t first_arg, args;
  };
  std::vector<Case> cases;
  std::vector<ShapedArray> avals;
  for (const OpRow* row : rows)
    for (DType dtype : row->dtypes)
      for (const auto& shapes : row->shape_sets) {
        cases.push_back({row, avals.size(), shapes.size()});
        for (const Shape& s : shapes) avals.push_back({s, dtype, false});
      }
  auto fn = [cases](const std::vector<Array>& args) {
    std::vector<Array> outs;
    for (const Case& c : cases) {
      auto first = args.begin() + static_cast<std::ptrdiff_t>(c.first_arg);
      outs.push_back(c.row->apply({first, first + static_cast<std::ptrdiff_t>(c.args)}));
    }
    return outs;
  };
  return lower(fn, avals, "gpu_rows");
}

std::string names(const std::vector<const OpRow*>& rows) {
  std::string out;
  for (const OpRow* r : rows) out += (out.empty() ? "" : ", ") + r->name;
  return out;
}

// Compiles and checks the rows; returns the rows whose program fails to compile (each retried
// alone when their group's program fails, to name them).
std::vector<std::string> check_rows(const std::vector<const OpRow*>& rows,
                                    const codegen::GpuCompileOptions& options, PtxasChecks& ptxas) {
  std::vector<codegen::PtxModule> modules;
  try {
    modules = api::compile_ptx(rows_program(rows), options);
  } catch (const CompileError& e) {
    if (rows.size() == 1) return {rows.front()->name + ": " + e.what()};
    std::vector<std::string> failed;
    for (const OpRow* row : rows) {
      std::vector<std::string> f = check_rows({row}, options, ptxas);
      failed.insert(failed.end(), f.begin(), f.end());
    }
    return failed;
  }
  INFO("rows " << names(rows));
  for (const codegen::PtxModule& m : modules) {
    check_kernels(m);
    ptxas.add(m, "rows " + names(rows) + " with math " + (m.libdevice ? "libdevice" : "portable"));
  }
  return {};
}

// The rows of part `part` of `parts`: every parts-th program of kRowsPerProgram rows, from the
// part-th (each part a test of its own: compiling every row for the GPU takes minutes on a slow
// core, which ctest spreads over the cores; the costly rows lie together in the table).
void check_op_table_part(std::size_t part, std::size_t parts) {
  PtxasChecks ptxas;
  std::vector<const OpRow*> all;
  for (const OpRow& row : op_table()) all.push_back(&row);
  REQUIRE(all.size() >= parts * kRowsPerProgram);
  for (const MathVariant& variant : math_variants()) {
    INFO("math: " << variant.name);
    std::vector<std::string> failed;
    for (std::size_t at = part * kRowsPerProgram; at < all.size(); at += parts * kRowsPerProgram) {
      std::vector<const OpRow*> group(
          all.begin() + static_cast<std::ptrdiff_t>(at),
          all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), at + kRowsPerProgram)));
      std::vector<std::string> f = check_rows(group, variant.options, ptxas);
      failed.insert(failed.end(), f.begin(), f.end());
    }
    for (const std::string& f : failed) {
      INFO(f);
      CHECK(false);
    }
  }
  ptxas.check();
}

}  // namespace

TEST_CASE("gpu ptx: op-table rows, part 1 of 4, compile to PTX ptxas accepts", "[gpu_ptx]") {
  check_op_table_part(0, 4);
}
TEST_CASE("gpu ptx: op-table rows, part 2 of 4, compile to PTX ptxas accepts", "[gpu_ptx]") {
  check_op_table_part(1, 4);
}
TEST_CASE("gpu ptx: op-table rows, part 3 of 4, compile to PTX ptxas accepts", "[gpu_ptx]") {
  check_op_table_part(2, 4);
}
TEST_CASE("gpu ptx: op-table rows, part 4 of 4, compile to PTX ptxas accepts", "[gpu_ptx]") {
  check_op_table_part(3, 4);
}

}  // namespace jx::testing
