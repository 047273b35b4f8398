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
#include <vector>

#include "jx/jx.hpp"
#include "jx/random.hpp"
#include "support/error_of.hpp"
#include "support/threefry_oracle.hpp"

namespace jx {
namespace {

using jx::testing::error_of;
using jx::testing::threefry_oracle;
using U32s = std::vector<std::uint32_t>;

Array u32s(const U32s& v) { return np::array(v); }

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

TEST_CASE("random errors: a malformed key or dtype is a TypeError", "[random][errors]") {
  CHECK(error_of<TypeError>([] { random::uniform(np::zeros({3}, uint32), {2}); }) ==
        "jx::random::uniform expects a key: a uint32 array of shape (2,) as jx::random::key "
        "makes, got u32[3]");
  CHECK(error_of<TypeError>([] { random::split(np::zeros({2}, int32)); }) ==
        "jx::random::split expects a key: a uint32 array of shape (2,) as jx::random::key "
        "makes, got i32[2]");
  CHECK(error_of<TypeError>([] { random::normal(random::key(0), {2}, int32); }) ==
        "dtype argument to `normal` must be a float dtype, got int32");
  CHECK(error_of<TypeError>([] { random::randint(random::key(0), {2}, 0, 3, float32); }) ==
        "randint: dtype must be an integer dtype, got float32");
}

}  // namespace
}  // namespace jx
