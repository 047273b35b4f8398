// The op-table row of the random family: threefry2x32 against a Threefry-2x32 written here from
// the Random123 specification (checked against its known answers in tests/api/test_random.cpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "jx/lax.hpp"
#include "support/op_table.hpp"

namespace jx::testing {
namespace {

std::uint32_t rotl(std::uint32_t x, std::uint32_t r) { return x << r | x >> (32 - r); }

std::pair<std::uint32_t, std::uint32_t> threefry(std::uint32_t k0, std::uint32_t k1,
                                                 std::uint32_t x0, std::uint32_t x1) {
  const std::uint32_t rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const std::uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  x0 += ks[0];
  x1 += ks[1];
  for (std::uint32_t r = 0; r < 20; ++r) {
    x0 += x1;
    x1 = rotl(x1, rot[r % 8]) ^ x0;
    if (r % 4 == 3) {
      std::uint32_t s = r / 4 + 1;
      x0 += ks[s % 3];
      x1 += ks[(s + 1) % 3] + s;
    }
  }
  return {x0, x1};
}

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
    auto [y0, y1] = threefry(word(in[0], i), word(in[1], i), word(in[2], i), word(in[3], i));
    out.values[i] = y0;
    out.values[n + i] = y1;
  }
  return out;
}

const bool kRows = add_rows({[] {
  OpRow r;
  r.name = r.primitive = "threefry2x32";
  r.dtypes = {uint32};
  for (const Shape& s : kElementwiseShapes) r.shape_sets.push_back(same_shapes(s, 4));
  r.shape_sets.push_back({{}, {}, {2, 3}, {2, 3}});  // 0-d key words, as jx::random passes
  r.sample = [](std::mt19937& rng, DType) { return std::floor(uniform(rng, 0, 4294967296.0)); };
  r.apply = both_words;
  r.oracle = oracle;
  return r;
}()});

}  // namespace
}  // namespace jx::testing
