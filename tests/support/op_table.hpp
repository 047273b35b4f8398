// The op table: one row per primitive, checked against an independent oracle. Every later
// check (jit vs eager, gradients, vmap) iterates the same rows.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <jx/jx.hpp>

namespace jx::testing {

// An array held as doubles on the host: what oracles read and write.
struct HostArray {
  Shape shape;
  std::vector<double> values;  // row-major
  double at(const std::vector<std::int64_t>& index) const;
};

struct OpRow {
  std::string name;       // unique row name, e.g. "sin" or "dot_general/batched"
  std::string primitive;  // the primitive the row covers
  std::vector<DType> dtypes;
  std::vector<std::vector<Shape>> shape_sets;  // each entry: the shapes of all operands
  // Draws operand values (as doubles; cast to the dtype). Default: uniform in [-3, 3],
  // integers rounded, bools from the sign.
  std::function<double(std::mt19937&, DType)> sample;
  // The operation under test, built with jx::lax.
  std::function<Array(const std::vector<Array>&)> apply;
  // The expected output, computed without jx.
  std::function<HostArray(const std::vector<HostArray>&, DType)> oracle;
  double rtol = 1e-5;  // for float32; float64 uses rtol * 1e-7, integers are exact
};

// Rows register themselves from the family test files (static initialisers).
std::vector<OpRow>& op_table();
bool add_rows(std::vector<OpRow> rows);

// Helpers for rows.
HostArray to_host(const Array& x);
Array from_host(const HostArray& h, DType dtype);
// An elementwise oracle: the output shape is the shape of the first operand of highest rank.
HostArray map_oracle(const std::vector<HostArray>& in,
                     const std::function<double(const std::vector<double>&)>& f);
double uniform(std::mt19937& rng, double lo, double hi);
// One operand value for `row` in `d`: the row's own sample, else the default one.
double sample_value(const OpRow& row, std::mt19937& rng, DType d);
std::vector<Shape> same_shapes(const Shape& s, int n);

// Shapes every elementwise row runs: 0-d, 0-sized, 1-sized and ordinary dims.
inline const std::vector<Shape> kElementwiseShapes = {{},     {0},       {1},      {5},
                                                      {2, 3}, {3, 0, 2}, {1, 4, 1}};

}  // namespace jx::testing
