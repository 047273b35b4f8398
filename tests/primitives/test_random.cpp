// The op-table row of the random family: threefry2x32 against the Random123 oracle.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "jx/lax.hpp"
#include "support/op_table.hpp"
#include "support/threefry_oracle.hpp"

namespace jx::testing {
namespace {

// Both outputs, stacked along a new leading axis: f(k0, k1, x0, x1) → u32[2, ...].
Array both_words(const std::vector<Array>& a) {
  auto [y0, y1] = lax::threefry2x32(a[0], a[1], a[2], a[3]);
  return lax::concatenate({lax::expand_dims(y0, {0}), lax::expand_dims(y1, {0})}, 0);
}

HostArray oracle(const std::vector<HostArray>& in, DType) {
  const HostArray* shaped = &in[0];
  for (const HostArray& h : in)
    if (h.shape.size() > shaped->shape.size()) shaped = &h;
  auto n = shaped->values.size();
  HostArray out{shaped->shape, std::vector<double>(2 * n)};
  out.shape.insert(out.shape.begin(), 2);
  auto word = [&](const HostArray& h, std::size_t i) {
    return static_cast<std::uint32_t>(h.values[h.shape.empty() ? 0 : i]);
  };
  for (std::size_t i = 0; i < n; ++i) {
    auto [y0, y1] = threefry_oracle(word(in[0], i), word(in[1], i), word(in[2], i), word(in[3], i));
    out.values[i] = y0;
    out.values[n + i] = y1;
  }
  return out;
}

const bool kRows = add_rows({[] {
  OpRow r;
  r.name = r.primitive = "threefry2x32";
  r.dtypes = {uint32};
  r.subset_reason = "threefry2x32 is defined on uint32 words only";
  for (const Shape& s : kElementwiseShapes) r.shape_sets.push_back(same_shapes(s, 4));
  r.shape_sets.push_back({{}, {}, {2, 3}, {2, 3}});  // 0-d key words, as jx::random passes
  r.sample = [](std::mt19937& rng, DType) { return std::floor(uniform(rng, 0, 4294967296.0)); };
  r.apply = both_words;
  r.oracle = oracle;
  return r;
}()});

}  // namespace
}  // namespace jx::testing
