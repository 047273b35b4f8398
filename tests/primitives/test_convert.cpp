// Op-table rows (every source/target dtype pair) and edge cases for convert_element_type.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "support/op_table.hpp"

namespace jx::testing {
namespace {

// The integer range of a target dtype, as doubles (the 64-bit bounds round to ±2^63 and 2^64).
std::pair<double, double> int_range(DType d) {
  const double m = std::ldexp(1.0, static_cast<int>(8 * itemsize(d)));  // 2^bits
  return is_unsigned(d) ? std::pair{0.0, m - 1} : std::pair{-m / 2, m / 2 - 1};
}

// XLA's convert in closed form, on the exact source value v: float → int truncates, saturates
// and maps NaN to 0; int → int keeps the low bits (two's complement); anything → bool is `!= 0`;
// to a float, the nearest value (ties to even, past the largest finite value ±inf): float32 by
// C++'s own conversion of the double, the 16-bit floats by the independent bit-pattern oracle.
double convert_oracle(double v, DType from, DType to) {
  if (to == bool_) return v != 0;
  if (to == float64) return v;
  if (to == float32) return static_cast<float>(v);
  if (to == bfloat16 || to == float16) return round_to(to, v);
  if (is_floating(from)) {
    if (std::isnan(v)) return 0;
    auto [lo, hi] = int_range(to);
    return std::clamp(std::trunc(v), lo, hi);
  }
  return wrap(v, to);
}

// Mostly small values; every fifth one beyond the 32-bit range, to reach saturation, wrapping
// and float16's overflow. Unsigned sources draw non-negative values (a narrow source saturates
// the wide ones when it is built: its extremes).
double wide_sample(std::mt19937& rng, DType d) {
  if (d == bool_) return uniform(rng, -1, 1) > 0;
  const double wide = 6e9, small = 3, lo = is_unsigned(d) ? 0 : -1;
  double v =
      uniform(rng, 0, 5) < 1 ? uniform(rng, lo * wide, wide) : uniform(rng, lo * small, small);
  return is_floating(d) ? v : std::round(v);
}

OpRow convert_row(DType to) {
  OpRow r;
  r.name = "convert_element_type/to_" + std::string(dtype_name(to));
  r.primitive = "convert_element_type";
  r.dtypes = kAllTypes;  // the source dtypes
  r.exact = true;
  for (const Shape& s : kElementwiseShapes) r.shape_sets.push_back({s});
  r.sample = wide_sample;
  r.apply = [to](const std::vector<Array>& a) { return lax::convert_element_type(a[0], to); };
  r.oracle = [to](const std::vector<HostArray>& in, DType from) {
    return map_oracle(in,
                      [&](const std::vector<double>& x) { return convert_oracle(x[0], from, to); });
  };
  return r;
}

const bool kRows = [] {
  std::vector<OpRow> rows;
  for (DType to : kAllDTypes) rows.push_back(convert_row(to));
  return add_rows(std::move(rows));
}();

template <class T>
std::vector<T> convert(const Array& x) {
  Array r = lax::convert_element_type(x, dtype_of<T>());
  CHECK(r.dtype() == dtype_of<T>());
  CHECK(r.shape() == x.shape());
  return r.to_vector<T>();
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::int32_t kI32Min = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kI32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::uint32_t kU32Max = std::numeric_limits<std::uint32_t>::max();

}  // namespace

TEST_CASE("convert: NaN to an integer is 0", "[convert]") {
  for (Array x : {np::array({std::nan(""), 1.5}), np::array({std::nanf(""), 1.5f})}) {
    CHECK(convert<std::int32_t>(x) == std::vector<std::int32_t>{0, 1});
    CHECK(convert<std::int64_t>(x) == std::vector<std::int64_t>{0, 1});
    CHECK(convert<std::uint32_t>(x) == std::vector<std::uint32_t>{0, 1});
  }
}

TEST_CASE("convert: float to integer truncates and saturates out-of-range values", "[convert]") {
  Array x = np::array({-2.7, 2.7, 3e9, -3e9, kInf, -kInf, 1e19, -1e19});
  CHECK(convert<std::int32_t>(x) ==
        std::vector<std::int32_t>{-2, 2, kI32Max, kI32Min, kI32Max, kI32Min, kI32Max, kI32Min});
  CHECK(convert<std::uint32_t>(x) ==
        std::vector<std::uint32_t>{0, 2, 3000000000u, 0, kU32Max, 0, kU32Max, 0});
  CHECK(convert<std::int64_t>(x) == std::vector<std::int64_t>{-2, 2, 3000000000LL, -3000000000LL,
                                                              kI64Max, kI64Min, kI64Max, kI64Min});
  // float32 holds 2^31 exactly; it is just past int32's range.
  CHECK(convert<std::int32_t>(np::array({2147483648.f, -2147483648.f})) ==
        std::vector<std::int32_t>{kI32Max, kI32Min});
}

TEST_CASE("convert: to bool is `!= 0`, NaN included", "[convert]") {
  CHECK(convert<bool>(np::array({0.0, -0.0, 0.1, std::nan(""), -kInf})) ==
        std::vector<bool>{false, false, true, true, true});
  CHECK(convert<bool>(np::array({0, -1, 7})) == std::vector<bool>{false, true, true});
  CHECK(convert<bool>(np::array({0u, kU32Max})) == std::vector<bool>{false, true});
}

TEST_CASE("convert: integers keep their low bits; bool is 0 or 1", "[convert]") {
  CHECK(convert<std::int32_t>(np::array({(std::int64_t{1} << 32) + 5, std::int64_t{-1}})) ==
        std::vector<std::int32_t>{5, -1});
  CHECK(convert<std::uint32_t>(np::array({-1, kI32Min})) ==
        std::vector<std::uint32_t>{kU32Max, 2147483648u});
  CHECK(convert<std::int32_t>(np::array({kU32Max})) == std::vector<std::int32_t>{-1});
  CHECK(convert<std::int64_t>(np::array({kU32Max})) == std::vector<std::int64_t>{4294967295LL});
  CHECK(convert<float>(np::array({true, false})) == std::vector<float>{1.f, 0.f});
  CHECK(convert<std::uint32_t>(np::array({true})) == std::vector<std::uint32_t>{1});
  // float64 → float32 rounds to nearest.
  CHECK(convert<float>(np::array({0.1})) == std::vector<float>{0.1f});
}

TEST_CASE("convert: the weak_type flag is the parameter's, shape is kept", "[convert]") {
  Array x = np::array(std::vector<std::int32_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  Array w = lax::convert_element_type(x, float32, true);
  CHECK(w.weak_type());
  CHECK(w.dtype() == float32);
  CHECK(w.shape() == Shape{2, 3});
  CHECK(w.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  Array s = lax::convert_element_type(Array(2.5f), float32);
  CHECK(!s.weak_type());
  CHECK(s.item<float>() == 2.5f);
  Array e = lax::convert_element_type(np::array(std::vector<double>{}, {0, 3}), int32);
  CHECK(e.shape() == Shape{0, 3});
  CHECK(e.size() == 0);
}

}  // namespace jx::testing
