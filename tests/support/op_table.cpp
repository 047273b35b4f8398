#include "support/op_table.hpp"

#include <cmath>

#include "support/float16_oracle.hpp"

namespace jx::testing {

std::vector<DType> dtypes_in(DTypeSet set) {
  std::vector<DType> out;
  for (DType d : kAllDTypes)
    if (set.contains(d)) out.push_back(d);
  return out;
}

double wrap(double v, DType d) {
  if (!is_integral(d)) return v;
  const double m = std::ldexp(1.0, static_cast<int>(8 * itemsize(d)));  // 2^bits
  const double lo = is_unsigned(d) ? 0 : -m / 2, hi = is_unsigned(d) ? m : m / 2;
  if (v >= lo && v < hi) return v;
  // In [0, 2^bits), rounded to a double: for 64 bits that rounding may reach 2^64 (as the
  // double of the uint64 2^64 - 3 does).
  double u = v - std::floor(v / m) * m;
  if (is_unsigned(d)) return u;
  return u >= hi ? u - m : u;
}

double unit_roundoff(DType d) {
  switch (d) {
    case bfloat16:
      return 0x1p-8;
    case float16:
      return 0x1p-11;
    case float32:
      return 0x1p-24;
    default:
      return 0x1p-53;
  }
}

double tolerance(DType d, double rtol, int roundings) {
  if (d == float64) return rtol * 1e-7;
  if (d == bfloat16 || d == float16) return rtol + roundings * unit_roundoff(d);
  return rtol;
}

double round_to(DType d, double v) {
  if (d == bfloat16) return round_bf16(v);
  if (d == float16) return round_f16(v);
  return v;
}

double HostArray::at(const std::vector<std::int64_t>& index) const {
  std::int64_t flat = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return values.at(static_cast<std::size_t>(flat));
}

std::vector<OpRow>& op_table() {
  static std::vector<OpRow> rows;
  return rows;
}

bool add_rows(std::vector<OpRow> rows) {
  for (auto& r : rows) op_table().push_back(std::move(r));
  return true;
}

HostArray to_host(const Array& x) { return {x.shape(), x.to_vector<double>()}; }

Array from_host(const HostArray& h, DType dtype) {
  return np::array(h.values, h.shape).astype(dtype);
}

HostArray map_oracle(const std::vector<HostArray>& in,
                     const std::function<double(const std::vector<double>&)>& f) {
  const HostArray* widest = &in[0];
  for (const auto& a : in)
    if (a.shape.size() > widest->shape.size()) widest = &a;
  HostArray out{widest->shape, {}};
  std::vector<double> args(in.size());
  for (std::size_t i = 0; i < widest->values.size(); ++i) {
    for (std::size_t k = 0; k < in.size(); ++k)
      args[k] = in[k].values.size() == 1 && in[k].shape.empty() ? in[k].values[0] : in[k].values[i];
    out.values.push_back(f(args));
  }
  return out;
}

double uniform(std::mt19937& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

double sample_value(const OpRow& row, std::mt19937& rng, DType d) {
  if (row.sample) return row.sample(rng, d);
  if (d == bool_) return uniform(rng, -1, 1) > 0;
  if (is_unsigned(d)) return std::round(uniform(rng, 0, 6));
  if (is_integral(d)) return std::round(uniform(rng, -3, 3));
  return uniform(rng, -3, 3);
}

std::vector<Shape> same_shapes(const Shape& s, int n) { return std::vector<Shape>(n, s); }

}  // namespace jx::testing
