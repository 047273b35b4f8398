// jx::random against independent oracles: Random123's known-answer vectors for Threefry-2x32
// (20 rounds), a plain C++ Threefry written here from the specification, and the values JAX
// prints for key(0) in its default (partitionable) mode. Also: eager == jit, vmap over keys,
// distribution checks with fixed seeds, and the error messages.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <numbers>
#include <set>
#include <vector>

#include "jx/jx.hpp"
#include "jx/random.hpp"
#include "support/config_guard.hpp"
#include "support/error_of.hpp"
#include "support/threefry_oracle.hpp"

namespace jx {
namespace {

using jx::testing::error_of;
using jx::testing::threefry_oracle;
using U32s = std::vector<std::uint32_t>;

Array u32s(const U32s& v) { return np::array(v); }

// The oracle's side of jx::random, from the Threefry oracle alone: a key's words, split(key)[i],
// and the 32 and 64 bits JAX draws at counter j.
using Key = std::array<std::uint32_t, 2>;
Key key_of(std::uint64_t seed) {
  return {static_cast<std::uint32_t>(seed >> 32), static_cast<std::uint32_t>(seed)};
}
Key split_of(Key k, std::uint32_t i) { return threefry_oracle(k[0], k[1], 0, i); }
std::uint32_t bits32(Key k, std::uint32_t j) {
  auto y = threefry_oracle(k[0], k[1], 0, j);
  return y[0] ^ y[1];
}
std::uint64_t bits64(Key k, std::uint32_t j) {
  auto y = threefry_oracle(k[0], k[1], 0, j);
  return std::uint64_t{y[0]} << 32 | y[1];
}

// JAX's _randint offset in U (uint32 or uint64): (hi mod span) * (2^nbits mod span, computed as
// ((2^(nbits/2) mod span)^2 wrapped) mod span) + (lo mod span), mod span; XLA's x rem 0 is x.
template <class U>
U randint_offset(U higher, U lower, U span) {
  auto rem = [](U x, U n) -> U { return n ? static_cast<U>(x % n) : x; };
  U m = rem(static_cast<U>(U{1} << (sizeof(U) * 4)), span);
  m = rem(static_cast<U>(m * m), span);
  return rem(static_cast<U>(rem(higher, span) * m + rem(lower, span)), span);
}

// randint(key(seed), {n}, ...) drawn at 32 bits with `span` by the oracle, as offsets.
std::vector<std::uint32_t> offsets32(std::uint64_t seed, std::uint32_t n, std::uint32_t span) {
  Key k1 = split_of(key_of(seed), 0), k2 = split_of(key_of(seed), 1);
  std::vector<std::uint32_t> out;
  for (std::uint32_t j = 0; j < n; ++j)
    out.push_back(randint_offset<std::uint32_t>(bits32(k1, j), bits32(k2, j), span));
  return out;
}

// The stored bits of a 16-bit float array.
std::vector<std::uint16_t> bits16(const Array& x) {
  REQUIRE(itemsize(x.dtype()) == 2);
  std::vector<std::uint16_t> out;
  if (x.dtype() == bfloat16)
    for (BFloat16 v : x.to_vector<BFloat16>()) out.push_back(v.bits);
  else
    for (Float16 v : x.to_vector<Float16>()) out.push_back(v.bits);
  return out;
}

TEST_CASE("threefry2x32: Random123 known answers, eager and jitted", "[random]") {
  struct Kat {
    std::uint32_t k0, k1, x0, x1, y0, y1;
  };
  const Kat kats[] = {
      {0, 0, 0, 0, 0x6b200159u, 0x99ba4efeu},
      {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0x1cb996fcu, 0xbb002be7u},
      {0x13198a2eu, 0x03707344u, 0x243f6a88u, 0x85a308d3u, 0xc4923a9cu, 0x483df7a0u},
  };
  for (const Kat& k : kats) {
    CHECK(threefry_oracle(k.k0, k.k1, k.x0, k.x1) == std::array<std::uint32_t, 2>{k.y0, k.y1});
    auto run = [&](auto f) {
      auto [y0, y1] = f(u32s({k.k0}), u32s({k.k1}), u32s({k.x0}), u32s({k.x1}));
      CHECK(y0.template to_vector<std::uint32_t>() == U32s{k.y0});
      CHECK(y1.template to_vector<std::uint32_t>() == U32s{k.y1});
    };
    run([](const Array& a, const Array& b, const Array& c, const Array& d) {
      return lax::threefry2x32(a, b, c, d);
    });
    run(jit([](const Array& a, const Array& b, const Array& c, const Array& d) {
      auto [y0, y1] = lax::threefry2x32(a, b, c, d);
      return std::pair{y0, y1};
    }));
  }
}

TEST_CASE("threefry2x32: arrays and 0-d keys against the oracle, eager and jitted", "[random]") {
  U32s x0, x1;
  for (std::uint32_t i = 0; i < 37; ++i) {
    x0.push_back(i * 2654435761u);
    x1.push_back(~i * 40503u);
  }
  Array k0 = np::array(std::uint32_t{0xdeadbeefu}), k1 = np::array(std::uint32_t{42});
  auto f = [](const Array& a, const Array& b, const Array& c, const Array& d) {
    auto [y0, y1] = lax::threefry2x32(a, b, c, d);
    return std::pair{y0, y1};
  };
  for (auto [y0, y1] : {f(k0, k1, u32s(x0), u32s(x1)), jit(f)(k0, k1, u32s(x0), u32s(x1))}) {
    U32s g0 = y0.to_vector<std::uint32_t>(), g1 = y1.to_vector<std::uint32_t>();
    for (std::size_t i = 0; i < x0.size(); ++i) {
      auto want = threefry_oracle(0xdeadbeefu, 42, x0[i], x1[i]);
      CHECK(g0[i] == want[0]);
      CHECK(g1[i] == want[1]);
    }
  }
}

TEST_CASE("random: key, split, fold_in and bits as JAX gives them", "[random]") {
  Array k = random::key(0);
  CHECK(k.dtype() == uint32);
  CHECK(k.to_vector<std::uint32_t>() == U32s{0, 0});
  CHECK(random::key(42).to_vector<std::uint32_t>() == U32s{0, 42});
  CHECK(random::key(0x100000007ull).to_vector<std::uint32_t>() == U32s{1, 7});
  // jax.random.split(jax.random.key(0), 4) (partitionable): row i = threefry(key, (0, i)).
  CHECK(random::split(k, 4).to_vector<std::uint32_t>() ==
        U32s{1797259609u, 2579123966u, 928981903u, 3453687069u, 4146024105u, 2718843009u,
             2467461003u, 3840466878u});
  auto [a, b] = random::split<2>(k);
  CHECK(a.to_vector<std::uint32_t>() == U32s{1797259609u, 2579123966u});
  CHECK(b.to_vector<std::uint32_t>() == U32s{928981903u, 3453687069u});
  // fold_in(key, d) = threefry(key, (0, d)); bits = xor of the two words of each counter.
  auto f3 = threefry_oracle(0, 0, 0, 3);
  CHECK(random::fold_in(k, 3).to_vector<std::uint32_t>() == U32s{f3[0], f3[1]});
  U32s want;
  for (std::uint32_t i = 0; i < 6; ++i) {
    auto y = threefry_oracle(0, 42, 0, i);
    want.push_back(y[0] ^ y[1]);
  }
  CHECK(random::bits(random::key(42), {2, 3}).to_vector<std::uint32_t>() == want);
  CHECK(jit([](const Array& key) {
          return random::bits(key, {2, 3});
        })(random::key(42))
            .to_vector<std::uint32_t>() == want);
}

TEST_CASE("random: uniform is JAX's bit manipulation, float32 and float64", "[random]") {
  Array k = random::key(7);
  std::vector<float> u = random::uniform(k, {5}, float32, -2, 3).to_vector<float>();
  std::vector<double> u64 = random::uniform(k, {5}, float64).to_vector<double>();
  for (std::uint32_t i = 0; i < 5; ++i) {
    auto y = threefry_oracle(0, 7, 0, i);
    // float32: 1.m with the top 23 bits of the xor as m, minus 1, scaled in float32.
    float unit = std::ldexp(float((y[0] ^ y[1]) >> 9), -23);
    CHECK(u[i] == std::max(-2.0f, unit * 5.0f + -2.0f));
    // float64: the top 52 of the 64 bits (hi word, lo word).
    double unit64 = std::ldexp(double(y[0]), -32) + std::ldexp(double(y[1] >> 12), -52);
    CHECK(u64[i] == unit64);
  }
  Array jitted = jit([](const Array& key) { return random::uniform(key, {5}, float32, -2, 3); })(k);
  CHECK(jitted.to_vector<float>() == u);
}

TEST_CASE("random: bits in every unsigned dtype are JAX's: the xor, its low bits, both words",
          "[random]") {
  Key k = key_of(42);
  std::vector<std::uint8_t> u8;
  std::vector<std::uint16_t> u16;
  std::vector<std::uint64_t> u64;
  for (std::uint32_t j = 0; j < 6; ++j) {
    u8.push_back(static_cast<std::uint8_t>(bits32(k, j)));
    u16.push_back(static_cast<std::uint16_t>(bits32(k, j)));
    u64.push_back(bits64(k, j));
  }
  Array key = random::key(42);
  Array b8 = random::bits(key, {2, 3}, uint8), b16 = random::bits(key, {6}, uint16);
  Array b64 = random::bits(key, {3, 2}, uint64);
  CHECK(b8.aval() == ShapedArray{{2, 3}, uint8, false});
  CHECK(b64.aval() == ShapedArray{{3, 2}, uint64, false});
  CHECK(b8.to_vector<std::uint8_t>() == u8);
  CHECK(b16.to_vector<std::uint16_t>() == u16);
  CHECK(b64.to_vector<std::uint64_t>() == u64);
  CHECK(jit([](const Array& k) {
          return random::bits(k, {3, 2}, uint64);
        })(key)
            .to_vector<std::uint64_t>() == u64);
  CHECK(jit([](const Array& k) { return random::bits(k, {6}, uint8); })(key)
            .to_vector<std::uint8_t>() == u8);
  // The default is uint32, and uint64 under --enable_x64 (jax.random.bits' default uint).
  CHECK(random::bits(key, {2}).dtype() == uint32);
  testing::ConfigGuard guard;
  config().enable_x64 = true;
  CHECK(random::bits(key, {6}).to_vector<std::uint64_t>() == u64);
}

TEST_CASE("random: bfloat16 and float16 uniform are JAX's bits: 7 and 10 mantissa bits",
          "[random]") {
  const std::uint32_t n = 4096;
  Key k = key_of(7);
  Array key = random::key(7);
  std::vector<float> bf = random::uniform(key, {n}, bfloat16).to_vector<float>();
  std::vector<float> hf = random::uniform(key, {n}, float16).to_vector<float>();
  std::set<float> bf_values;
  bool bf_exact = true, hf_exact = true;
  for (std::uint32_t j = 0; j < n; ++j) {
    // bfloat16 draws 8 bits (the low byte of the xor), its top 7 the mantissa; float16 draws 16
    // (the low half), its top 10 the mantissa.
    std::uint32_t m_bf = (bits32(k, j) & 0xff) >> 1, m_hf = (bits32(k, j) & 0xffff) >> 6;
    bf_exact &= bf[j] == std::ldexp(float(m_bf), -7);
    hf_exact &= hf[j] == std::ldexp(float(m_hf), -10);
    bf_values.insert(bf[j]);
  }
  CHECK(bf_exact);
  CHECK(hf_exact);
  // Every multiple of 2^-7 in [0, 1) comes up, and nothing else.
  REQUIRE(bf_values.size() == 128);
  CHECK(*bf_values.begin() == 0.0f);
  CHECK(*bf_values.rbegin() == 127.0f / 128);
  Array bf_array = random::uniform(key, {n}, bfloat16);
  CHECK(bf_array.aval() == ShapedArray{{n}, bfloat16, false});
  CHECK(random::uniform(key, {n}, float16).dtype() == float16);
  CHECK(bits16(jit([](const Array& k) { return random::uniform(k, {4096}, bfloat16); })(key)) ==
        bits16(bf_array));

  // Scaled in the dtype, each operation rounded: max(lo, u * (hi - lo) + lo) for [-2, 3).
  std::vector<std::uint16_t> want_bf, want_hf;
  for (std::uint32_t j = 0; j < 64; ++j) {
    double u_bf = std::ldexp((bits32(k, j) & 0xff) >> 1, -7);
    double u_hf = std::ldexp((bits32(k, j) & 0xffff) >> 6, -10);
    want_bf.push_back(
        BFloat16(std::max(-2.0, double(BFloat16(double(BFloat16(u_bf * 5)) - 2)))).bits);
    want_hf.push_back(Float16(std::max(-2.0, double(Float16(double(Float16(u_hf * 5)) - 2)))).bits);
  }
  CHECK(bits16(random::uniform(key, {64}, bfloat16, -2, 3)) == want_bf);
  CHECK(bits16(random::uniform(key, {64}, float16, -2, 3)) == want_hf);
}

TEST_CASE("random: bfloat16 and float16 normal are sqrt(2) erf_inv(u) of their own uniform",
          "[random]") {
  Array key = random::key(11);
  for (DType d : {bfloat16, float16}) {
    INFO(dtype_name(d));
    // u in [nextafter(-1, 0), 1) of the dtype: -1 + 2^-8 (bfloat16), -1 + 2^-11 (float16).
    double lo = d == bfloat16 ? -0.99609375 : -0.99951171875;
    Array z = random::normal(key, {256}, d);
    Array u = random::uniform(key, {256}, d, lo, 1);
    CHECK(z.dtype() == d);
    // erf_inv computes in float32 and rounds to the dtype, then the product with sqrt(2) (in
    // the dtype) rounds again.
    std::vector<float> e = lax::erf_inv(u.astype(float32)).to_vector<float>();
    std::vector<float> uv = u.to_vector<float>(), zv = z.to_vector<float>();
    bool exact = true, inverse = true;
    for (std::size_t i = 0; i < e.size(); ++i) {
      double want =
          d == bfloat16
              ? double(BFloat16(double(BFloat16(std::sqrt(2.0))) * double(BFloat16(e[i]))))
              : double(Float16(double(Float16(std::sqrt(2.0))) * double(Float16(e[i]))));
      exact &= zv[i] == want;
      inverse &= std::isfinite(zv[i]) && std::abs(std::erf(zv[i] / std::sqrt(2.0)) - uv[i]) <
                                             (d == bfloat16 ? 0.03 : 0.004);
      exact &= uv[i] >= lo && uv[i] < 1;
    }
    CHECK(exact);
    CHECK(inverse);
  }
}

TEST_CASE("random: randint in every integer dtype is JAX's draw", "[random]") {
  const std::uint32_t n = 4096;
  Array key = random::key(3);
  // uint8 over [0, 256): all 256 values; JAX draws as int32 with span 256, so the value is the
  // low byte of the second key's draw (the multiplier 2^32 mod 256 is 0).
  std::vector<std::uint8_t> u8 = random::randint(key, {n}, 0, 256, uint8).to_vector<std::uint8_t>();
  std::vector<std::uint32_t> want = offsets32(3, n, 256);
  REQUIRE(u8.size() == n);
  bool exact = true;
  for (std::uint32_t j = 0; j < n; ++j) exact &= u8[j] == want[j];
  CHECK(exact);
  CHECK(std::set<std::uint8_t>(u8.begin(), u8.end()).size() == 256);
  CHECK(random::randint(key, {n}, 0, 256, uint8).dtype() == uint8);

  // int8 over [-128, 127): span 255; and [-128, 128) (maxval one past int8's largest) has all 256.
  std::vector<std::int8_t> i8 = random::randint(key, {n}, -128, 127, int8).to_vector<std::int8_t>();
  want = offsets32(3, n, 255);
  exact = true;
  for (std::uint32_t j = 0; j < n; ++j) exact &= i8[j] == -128 + int(want[j]);
  CHECK(exact);
  CHECK(*std::min_element(i8.begin(), i8.end()) == -128);
  CHECK(*std::max_element(i8.begin(), i8.end()) == 126);
  std::vector<std::int8_t> full =
      random::randint(key, {n}, -1000, 1000, int8).to_vector<std::int8_t>();
  CHECK(std::set<std::int8_t>(full.begin(), full.end()).size() == 256);  // clipped to int8's range

  // int16 and uint16, with jit.
  std::vector<std::int16_t> i16 =
      jit([](const Array& k) { return random::randint(k, {4096}, -300, 30000, int16); })(key)
          .to_vector<std::int16_t>();
  want = offsets32(3, n, 30300);
  exact = true;
  for (std::uint32_t j = 0; j < n; ++j) exact &= i16[j] == -300 + int(want[j]);
  CHECK(exact);
  std::vector<std::uint16_t> u16 =
      random::randint(key, {n}, 0, 65536, uint16).to_vector<std::uint16_t>();
  want = offsets32(3, n, 65536);
  exact = true;
  for (std::uint32_t j = 0; j < n; ++j) exact &= u16[j] == want[j];
  CHECK(exact);
  CHECK(*std::max_element(u16.begin(), u16.end()) > 32767);

  // uint32 over [0, 2^32): span 2^32 wraps to 0 and x rem 0 = x: the second key's bits.
  std::vector<std::uint32_t> u32 =
      random::randint(key, {n}, 0, std::int64_t{1} << 32, uint32).to_vector<std::uint32_t>();
  Key k1 = split_of(key_of(3), 0), k2 = split_of(key_of(3), 1);
  exact = true;
  for (std::uint32_t j = 0; j < n; ++j) exact &= u32[j] == bits32(k2, j);
  CHECK(exact);

  // 64 bits: the two words of each key's draw, reduced in uint64.
  std::vector<std::uint64_t> u64 =
      random::randint(key, {n}, 5, 1000000007, uint64).to_vector<std::uint64_t>();
  std::vector<std::int64_t> i64 =
      random::randint(key, {n}, INT64_MIN, INT64_MAX, int64).to_vector<std::int64_t>();
  std::vector<std::int64_t> i64_jit =
      jit([](const Array& k) { return random::randint(k, {4096}, INT64_MIN, INT64_MAX, int64); })(
          key)
          .to_vector<std::int64_t>();
  bool exact_u64 = true, exact_i64 = true;
  for (std::uint32_t j = 0; j < n; ++j) {
    std::uint64_t hi = bits64(k1, j), lo = bits64(k2, j);
    exact_u64 &= u64[j] == 5 + randint_offset<std::uint64_t>(hi, lo, 1000000002);
    std::uint64_t offset = randint_offset<std::uint64_t>(hi, lo, ~std::uint64_t{0});
    exact_i64 &= static_cast<std::uint64_t>(i64[j]) == (std::uint64_t{1} << 63) + offset;
  }
  CHECK(exact_u64);
  CHECK(exact_i64);
  CHECK(i64_jit == i64);
  CHECK(*std::max_element(i64.begin(), i64.end()) > (std::int64_t{1} << 62));
  CHECK(*std::min_element(i64.begin(), i64.end()) < -(std::int64_t{1} << 62));

  // maxval <= minval gives minval.
  CHECK(random::randint(key, {3}, 9, 2, uint16).to_vector<int>() == std::vector<int>{9, 9, 9});
}

TEST_CASE(
    "random: default dtypes follow --enable_x64 (randint, uniform, normal, bernoulli, "
    "permutation)",
    "[random]") {
  Array key = random::key(2);
  CHECK(random::randint(key, {2}, 0, 5).dtype() == int32);
  CHECK(random::uniform(key, {2}).dtype() == float32);
  CHECK(random::normal(key, {2}).dtype() == float32);
  CHECK(random::permutation(key, 4).dtype() == int32);
  const double p = 0.3;
  std::vector<bool> b32 = random::bernoulli(key, p, {1000}).to_vector<bool>();
  std::vector<float> u32 = random::uniform(key, {1000}, float32).to_vector<float>();
  testing::ConfigGuard guard;
  config().enable_x64 = true;
  CHECK(random::randint(key, {2}, 0, 5).dtype() == int64);
  CHECK(random::uniform(key, {2}).dtype() == float64);
  CHECK(random::normal(key, {2}).dtype() == float64);
  CHECK(random::permutation(key, 4).dtype() == int64);
  // bernoulli compares uniforms of the default float dtype with p: float64 draws (both words)
  // under x64, float32 draws (the xor) otherwise, so the two modes pick different elements.
  std::vector<bool> b64 = random::bernoulli(key, p, {1000}).to_vector<bool>();
  std::vector<double> u64 = random::uniform(key, {1000}, float64).to_vector<double>();
  bool same32 = true, same64 = true;
  for (std::size_t i = 0; i < 1000; ++i) {
    same32 &= b32[i] == (u32[i] < float(p));
    same64 &= b64[i] == (u64[i] < p);
  }
  CHECK(same32);
  CHECK(same64);
  CHECK(b32 != b64);
}

TEST_CASE("random: normal, bernoulli and randint have the right distribution", "[random]") {
  const std::int64_t n = 200000;
  std::vector<float> z = random::normal(random::key(1), {n}).to_vector<float>();
  double mean = 0, var = 0, within1 = 0;
  for (float v : z) mean += v;
  mean /= n;
  for (float v : z) {
    var += (v - mean) * (v - mean);
    within1 += std::abs(v) < 1;
  }
  var /= n;
  // Sampling error: mean ~ 1/sqrt(n) = 0.0022, variance ~ sqrt(2/n) = 0.0032.
  CHECK(std::abs(mean) < 0.01);
  CHECK(std::abs(var - 1) < 0.015);
  CHECK(std::abs(within1 / n - std::erf(1 / std::sqrt(2.0))) < 0.005);  // 0.6827
  std::vector<bool> heads = random::bernoulli(random::key(2), 0.3, {n}).to_vector<bool>();
  double p = 0;
  for (bool h : heads) p += h;
  CHECK(std::abs(p / n - 0.3) < 0.005);
  std::vector<std::int32_t> r =
      random::randint(random::key(3), {n}, -3, 4).to_vector<std::int32_t>();
  std::map<std::int32_t, int> counts;
  for (std::int32_t v : r) ++counts[v];
  REQUIRE(counts.size() == 7);
  CHECK(counts.begin()->first == -3);
  CHECK(counts.rbegin()->first == 3);
  for (auto [v, c] : counts) CHECK(std::abs(c - n / 7.0) < 5 * std::sqrt(n / 7.0));
}

TEST_CASE("random: normal matches erf_inv of the uniform draw; erf_inv inverts erf", "[random]") {
  // normal = sqrt(2) erf_inv(u), u uniform on (-1, 1): check each value against std::erf.
  Array k = random::key(11);
  std::vector<float> z = random::normal(k, {64}).to_vector<float>();
  float lo = std::nextafter(-1.0f, 0.0f);
  std::vector<float> u = random::uniform(k, {64}, float32, lo, 1).to_vector<float>();
  for (std::size_t i = 0; i < z.size(); ++i) {
    INFO("u = " << u[i]);
    CHECK(std::erf(double(z[i]) / std::sqrt(2.0)) == Approx(u[i]).margin(1e-6));
  }
  std::vector<double> xs = {-0.999999, -0.9, -0.5, -1e-8, 0, 1e-5, 0.3, 0.99, 0.9999999999};
  std::vector<double> y = lax::erf_inv(np::array(xs)).to_vector<double>();
  for (std::size_t i = 0; i < xs.size(); ++i) CHECK(std::erf(y[i]) == Approx(xs[i]).epsilon(1e-14));
  std::vector<double> ends = lax::erf_inv(np::array({-1.0, 1.0})).to_vector<double>();
  CHECK(ends == std::vector<double>{-INFINITY, INFINITY});
}

// The mean and variance of a standard normal truncated to (a, b), in closed form: with
// Z = Φ(b) - Φ(a), mean (φ(a) - φ(b)) / Z, variance 1 + (a φ(a) - b φ(b)) / Z - mean^2.
std::pair<double, double> truncated_moments(double a, double b) {
  auto pdf = [](double x) { return std::exp(-x * x / 2) / std::sqrt(2 * std::numbers::pi); };
  auto cdf = [](double x) { return 0.5 * (1 + std::erf(x / std::sqrt(2.0))); };
  double z = cdf(b) - cdf(a), mean = (pdf(a) - pdf(b)) / z;
  return {mean, 1 + (a * pdf(a) - b * pdf(b)) / z - mean * mean};
}

TEST_CASE("random: truncated_normal is sqrt(2) erf_inv of a uniform between the bounds' cdfs",
          "[random]") {
  // The uniform draw between erf(lower / sqrt(2)) and erf(upper / sqrt(2)), mapped back.
  Array k = random::key(12);
  std::vector<float> z = random::truncated_normal(k, -2, 2, {64}).to_vector<float>();
  float a = static_cast<float>(std::erf(-std::sqrt(2.0)));
  std::vector<float> u = random::uniform(k, {64}, float32, a, -a).to_vector<float>();
  for (std::size_t i = 0; i < z.size(); ++i) {
    INFO("u = " << u[i]);
    CHECK(std::erf(double(z[i]) / std::sqrt(2.0)) == Approx(u[i]).margin(1e-6));
  }
  // Deterministic in the key, and jit draws the same.
  auto draw = [](const Array& key) { return random::truncated_normal(key, -1, 0.5, {8, 5}); };
  CHECK(jit(draw)(k).to_vector<float>() == draw(k).to_vector<float>());
}

TEST_CASE("random: truncated_normal stays inside its bounds with the closed form's moments",
          "[random]") {
  const std::int64_t n = 200000;
  for (auto [lo, hi] : {std::pair{-2.0, 2.0}, std::pair{-1.0, 0.5}, std::pair{0.25, 3.0}}) {
    INFO("bounds " << lo << ", " << hi);
    std::vector<double> z =
        random::truncated_normal(random::key(4), lo, hi, {n}, float64).to_vector<double>();
    double mean = 0, var = 0;
    bool inside = true;
    for (double v : z) mean += v / n, inside &= v > lo && v < hi;
    for (double v : z) var += (v - mean) * (v - mean) / n;
    auto [want_mean, want_var] = truncated_moments(lo, hi);
    CHECK(inside);
    // Sampling errors: about sqrt(var / n) < 0.0023 and sqrt(2 / n) var < 0.0032 var.
    CHECK(std::abs(mean - want_mean) < 0.01);
    CHECK(var == Approx(want_var).epsilon(0.015));
  }
  // JAX's stddev of the (-2, 2) truncation, which the initializers divide by.
  CHECK(std::sqrt(truncated_moments(-2, 2).second) == Approx(.87962566103423978).epsilon(1e-12));
  // In every float dtype the clamp keeps draws off the bounds, which a 16-bit float rounds to.
  for (DType d : {bfloat16, float16, float32}) {
    INFO(dtype_name(d));
    Array z = random::truncated_normal(random::key(5), -0.5, 0.5, {n}, d);
    CHECK(z.dtype() == d);
    std::vector<double> v = z.astype(float64).to_vector<double>();
    CHECK(*std::max_element(v.begin(), v.end()) < 0.5);
    CHECK(*std::min_element(v.begin(), v.end()) > -0.5);
  }
}

TEST_CASE("random: vmap over a batch of keys equals a loop", "[random]") {
  Array keys = random::split(random::key(5), 3);
  Array batched = vmap([](const Array& key) { return random::uniform(key, {4}); })(keys);
  REQUIRE(batched.shape() == Shape{3, 4});
  std::vector<float> got = batched.to_vector<float>();
  for (int i = 0; i < 3; ++i) {
    std::vector<float> want = random::uniform(random::key_row(keys, i), {4}).to_vector<float>();
    for (int j = 0; j < 4; ++j) CHECK(got[static_cast<std::size_t>(i * 4 + j)] == want[j]);
  }
}

TEST_CASE("random: permutation sorts by fresh bits per round, as JAX's shuffle", "[random]") {
  // n = 5: one round; the permutation orders 0..4 by bits(split(key)[1], (5,)), stably.
  Array k = random::key(3);
  auto [next, subkey] = random::split<2>(k);
  std::vector<std::uint32_t> b = random::bits(subkey, {5}).to_vector<std::uint32_t>();
  std::vector<std::int32_t> want{0, 1, 2, 3, 4};
  std::stable_sort(want.begin(), want.end(), [&](int i, int j) { return b[i] < b[j]; });
  CHECK(random::permutation(k, 5).to_vector<std::int32_t>() == want);
  // n = 60000: two rounds; every index exactly once, and jit gives the same.
  std::vector<std::int32_t> p =
      random::permutation(random::key(9), 60000).to_vector<std::int32_t>();
  std::vector<std::int32_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (std::int32_t i = 0; i < 60000; ++i) REQUIRE(sorted[static_cast<std::size_t>(i)] == i);
  CHECK(p != std::vector<std::int32_t>(sorted));
  CHECK(jit([](const Array& key) { return random::permutation(key, 60000); })(random::key(9))
            .to_vector<std::int32_t>() == p);
}

TEST_CASE("random errors: a malformed key is a TypeError, a wrong dtype as JAX reports it",
          "[random][errors]") {
  CHECK(error_of<TypeError>([] { random::uniform(np::zeros({3}, uint32), {2}); }) ==
        "jx::random::uniform expects a key: a uint32 array of shape (2,) as jx::random::key "
        "makes, got u32[3]");
  CHECK(error_of<TypeError>([] { random::split(np::zeros({2}, int32)); }) ==
        "jx::random::split expects a key: a uint32 array of shape (2,) as jx::random::key "
        "makes, got i32[2]");
  CHECK(error_of<ValueError>([] { random::normal(random::key(0), {2}, int32); }) ==
        "dtype argument to `normal` must be a float dtype, got int32");
  CHECK(error_of<ValueError>([] { random::truncated_normal(random::key(0), -2, 2, {2}, int32); }) ==
        "dtype argument to `truncated_normal` must be a float dtype, got int32");
  CHECK(error_of<ValueError>([] { random::uniform(random::key(0), {2}, int32); }) ==
        "dtype argument to `uniform` must be a float dtype, got int32");
  CHECK(error_of<ValueError>([] { random::uniform(random::key(0), {2}, bool_); }) ==
        "dtype argument to `uniform` must be a float dtype, got bool");
  CHECK(error_of<ValueError>([] { random::bits(random::key(0), {2}, int32); }) ==
        "dtype argument to `bits` must be an unsigned int dtype, got int32");
  CHECK(error_of<TypeError>([] { random::randint(random::key(0), {2}, 0, 3, float32); }) ==
        "randint only accepts integer dtypes, got float32");
  CHECK(error_of<TypeError>([] { random::randint(random::key(0), {2}, 0, 3, bfloat16); }) ==
        "randint only accepts integer dtypes, got bfloat16");
  CHECK(error_of<TypeError>([] { random::randint(random::key(0), {2}, 0, 2, bool_); }) ==
        "randint only accepts integer dtypes, got bool");
}

}  // namespace
}  // namespace jx
