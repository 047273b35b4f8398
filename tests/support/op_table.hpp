// The op table: one row per primitive, checked against an independent oracle. Every later
// check (jit vs eager, gradients, vmap) iterates the same rows.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <jx/jx.hpp>

#include "core/dtype_set.hpp"

namespace jx::testing {

// The dtypes of a set, in JX_FOR_EACH_DTYPE's order: rows list what their primitive accepts from
// the same sets the primitives take theirs from (core/dtype_set.hpp, hlo/opcodes.def).
std::vector<DType> dtypes_in(DTypeSet set);
inline const std::vector<DType> kAllTypes = dtypes_in(kAnyDType);
inline const std::vector<DType> kNumericTypes = dtypes_in(kNumeric);
inline const std::vector<DType> kFloatingTypes = dtypes_in(kFloating);
inline const std::vector<DType> kIntegerTypes = dtypes_in(kInteger);
inline const std::vector<DType> kIntegerOrBoolTypes = dtypes_in(kIntegerOrBool);

// An exact integer result reduced to the range of integer dtype `d` as its wrapping arithmetic
// does (modulo 2^bits, two's complement for signed types). Values already in range come back
// unchanged (exactly, even for 64-bit dtypes past 2^53).
double wrap(double v, DType d);

// The unit roundoff of a floating dtype: the largest relative error of one rounding to it
// (bfloat16 2^-8, float16 2^-11, float32 2^-24, float64 2^-53).
double unit_roundoff(DType d);
// How far a floating result may be from its reference, relative (and, near 0, absolute): the
// row's rtol for float32, rtol * 1e-7 for float64. The 16-bit floats compute in float32 and round
// each result, so they get the float32 tolerance plus `roundings` of their unit roundoff.
double tolerance(DType d, double rtol, int roundings = 1);
// v rounded to a 16-bit float dtype by the independent oracle (support/float16_oracle.hpp); v
// itself for the other dtypes.
double round_to(DType d, double v);

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
  // Draws operand values (as doubles; cast to the dtype). Default: uniform in [-3, 3] (unsigned
  // integers: [0, 6]), integers rounded, bools from the sign.
  std::function<double(std::mt19937&, DType)> sample;
  // The operation under test, built with jx::lax.
  std::function<Array(const std::vector<Array>&)> apply;
  // The expected output, computed without jx.
  std::function<HostArray(const std::vector<HostArray>&, DType)> oracle;
  double rtol = 1e-5;  // for float32; float64 uses rtol * 1e-7, integers are exact
  // The oracle gives the correctly rounded result in every dtype (conversions): compared with ==.
  bool exact = false;
  // Why `dtypes` leaves out dtypes the primitive accepts, when it does: such a row is not used
  // to check that the primitive rejects the dtypes outside `dtypes` (test_op_table.cpp). Empty
  // for a row that lists every dtype its primitive accepts.
  std::string subset_reason;
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
