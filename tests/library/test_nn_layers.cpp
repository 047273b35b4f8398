// jx::nn's Dropout (and, below it, Conv) against independent oracles: the keep rate and the
// scaling of kept values measured on a fixed key, rates 0 and 1, gradients, jit, and the errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "jx/jit.hpp"
#include "jx/nn.hpp"
#include "jx/numpy.hpp"
#include "jx/random.hpp"
#include "jx/transforms.hpp"
#include "support/error_of.hpp"

namespace jx {
namespace {

namespace nn = jx::nn;
using jx::testing::error_of;

TEST_CASE("nn: dropout keeps 1 - rate of the elements, scaled by 1 / (1 - rate)", "[nn]") {
  const std::int64_t n = 100000;
  Array x = np::arange(1, n + 1).astype(float32) / 1000;  // all nonzero: a zero means dropped
  std::vector<float> xs = x.to_vector<float>();
  for (double rate : {0.1, 0.5, 0.8}) {
    INFO("rate " << rate);
    std::vector<float> y = nn::dropout(random::key(42), rate, x).to_vector<float>();
    const float keep = static_cast<float>(1 - rate);
    std::int64_t kept = 0;
    bool scaled = true;
    for (std::size_t i = 0; i < y.size(); ++i) {
      if (y[i] == 0) continue;
      ++kept;
      scaled &= y[i] == xs[i] / keep;  // divided in float32, as JAX's x / keep_prob
    }
    CHECK(scaled);
    // Binomial(n, 1 - rate): within 5 standard deviations.
    double sigma = std::sqrt(n * rate * (1 - rate));
    CHECK(std::abs(double(kept) - n * (1 - rate)) < 5 * sigma);
  }
  // The mask is jx::random's bernoulli(key, 1 - rate) over x's shape, as flax draws it.
  Array x2 = np::ones({4, 50});
  std::vector<bool> mask = random::bernoulli(random::key(9), 0.75, {4, 50}).to_vector<bool>();
  std::vector<float> y2 = nn::dropout(random::key(9), 0.25, x2).to_vector<float>();
  bool as_mask = true;
  for (std::size_t i = 0; i < mask.size(); ++i) as_mask &= y2[i] == (mask[i] ? 1 / 0.75f : 0.f);
  CHECK(as_mask);
  // Another key drops other elements.
  CHECK(nn::dropout(random::key(10), 0.25, x2).to_vector<float>() != y2);
}

TEST_CASE("nn: dropout at rates 0 and 1, its dtype, gradient and jit", "[nn]") {
  Array key = random::key(1);
  Array x = np::array(std::vector<double>{1, -2, 3, 4, -5, 6}, {2, 3});
  CHECK(nn::dropout(key, 0, x).to_vector<double>() == x.to_vector<double>());
  Array zero = nn::dropout(key, 1, x);
  CHECK(zero.aval() == x.aval());
  CHECK(zero.to_vector<double>() == std::vector<double>(6, 0));
  CHECK(nn::dropout(key, 0.5, x).dtype() == float64);
  CHECK(nn::dropout(key, 0.5, np::ones({3}, bfloat16)).dtype() == bfloat16);

  // The gradient of sum(dropout(x)) is the mask over keep; rate 1 has a zero gradient, not NaN.
  Array big = np::ones({1000});
  std::vector<float> y = nn::dropout(key, 0.3, big).to_vector<float>();
  std::vector<float> g =
      grad([&](const Array& a) { return np::sum(nn::dropout(key, 0.3, a)); })(big)
          .to_vector<float>();
  CHECK(g == y);  // x is ones: the values are the mask over keep too
  std::vector<float> g1 =
      grad([&](const Array& a) { return np::sum(nn::dropout(key, 1, a)); })(big).to_vector<float>();
  CHECK(g1 == std::vector<float>(1000, 0.f));

  // Under jit, with the key an argument, the same mask.
  auto f = jit([](const Array& k, const Array& a) { return nn::dropout(k, 0.3, a); });
  CHECK(f(key, big).to_vector<float>() == y);
  CHECK(f(random::key(2), big).to_vector<float>() != y);
}

TEST_CASE("nn: dropout under vmap over keys draws each row's own mask", "[nn]") {
  Array keys = random::split(random::key(3), 4);
  Array x = np::reshape(np::arange(1, 41).astype(float32), {4, 10});
  Array rows = vmap([](const Array& k, const Array& a) { return nn::dropout(k, 0.4, a); })(keys, x);
  REQUIRE(rows.shape() == Shape{4, 10});
  std::vector<float> got = rows.to_vector<float>();
  for (int i = 0; i < 4; ++i) {
    INFO("row " << i);
    Array row = np::reshape(np::arange(10 * i + 1, 10 * i + 11).astype(float32), {10});
    std::vector<float> want = nn::dropout(random::key_row(keys, i), 0.4, row).to_vector<float>();
    CHECK(std::vector<float>(got.begin() + 10 * i, got.begin() + 10 * i + 10) == want);
  }
}

TEST_CASE("nn: dropout errors", "[nn][errors]") {
  Array key = random::key(0), x = np::ones({3});
  CHECK(error_of<ValueError>([&] { nn::dropout(key, 1.5, x); }) ==
        "dropout: rate must be in [0, 1], got 1.5");
  CHECK(error_of<ValueError>([&] { nn::dropout(key, -0.1, x); }) ==
        "dropout: rate must be in [0, 1], got -0.1");
  CHECK(error_of<ValueError>([&] { nn::dropout(key, std::nan(""), x); }) ==
        "dropout: rate must be in [0, 1], got nan");
  CHECK(error_of<TypeError>([&] { nn::dropout(np::zeros({2}), 0.5, x); }) ==
        "jx::random::bernoulli expects a key: a uint32 array of shape (2,) as jx::random::key "
        "makes, got f32[2]");
}

}  // namespace
}  // namespace jx
