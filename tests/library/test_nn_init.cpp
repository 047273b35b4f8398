// jx::nn's initializers against jax.nn.initializers' variance scaling, computed here: fans from
// the shape, the variance and the multiplier in float32 as JAX computes them, the sample variance
// against scale / fan, the bounds of each distribution; dense_init and conv_init's shapes,
// defaults and errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "jx/nn.hpp"
#include "jx/numpy.hpp"
#include "jx/random.hpp"
#include "support/error_of.hpp"

namespace jx {
namespace {

namespace nn = jx::nn;
using jx::testing::error_of;

struct InitCase {
  nn::Init init;
  const char* name;
  double scale;
  bool fan_avg;  // else fan_in
  bool uniform;  // else the truncated normal
};
const InitCase kInits[] = {
    {nn::Init::glorot_uniform, "glorot_uniform", 1, true, true},
    {nn::Init::glorot_normal, "glorot_normal", 1, true, false},
    {nn::Init::he_uniform, "he_uniform", 2, false, true},
    {nn::Init::he_normal, "he_normal", 2, false, false},
    {nn::Init::lecun_uniform, "lecun_uniform", 1, false, true},
    {nn::Init::lecun_normal, "lecun_normal", 1, false, false},
};

// scale / fan for a weight of shape (receptive field..., in, out).
double target_variance(const InitCase& c, const Shape& shape) {
  double receptive = 1;
  for (std::size_t i = 0; i + 2 < shape.size(); ++i) receptive *= double(shape[i]);
  double fan_in = double(shape[shape.size() - 2]) * receptive;
  double fan_out = double(shape.back()) * receptive;
  return c.scale / (c.fan_avg ? (fan_in + fan_out) / 2 : fan_in);
}

constexpr double kTruncatedStddev = .87962566103423978;

TEST_CASE("nn: initializers are JAX's draws times the multiplier computed in float32", "[nn]") {
  Array key = random::key(7);
  for (const InitCase& c : kInits)
    for (const Shape& shape : {Shape{20, 30}, Shape{3, 3, 8, 16}, Shape{5, 2, 6}}) {
      INFO(c.name << " " << shape_str(shape));
      Array w = nn::initialize(c.init, key, shape);
      REQUIRE(w.aval() == ShapedArray{shape, float32, false});
      // jnp.array(scale / fan, float32), then sqrt(3 var) or sqrt(var) / 0.8796..., in float32.
      float var = static_cast<float>(target_variance(c, shape));
      float mult =
          c.uniform ? std::sqrt(3 * var) : std::sqrt(var) / static_cast<float>(kTruncatedStddev);
      Array draw = c.uniform ? random::uniform(key, shape, float32, -1, 1)
                             : random::truncated_normal(key, -2, 2, shape, float32);
      std::vector<float> got = w.to_vector<float>(), d = draw.to_vector<float>();
      bool exact = true;
      for (std::size_t i = 0; i < got.size(); ++i) exact &= got[i] == d[i] * mult;
      CHECK(exact);
    }
}

TEST_CASE("nn: initializers have the variance scale / fan, inside their distribution's bounds",
          "[nn]") {
  const Shape shape{5, 5, 40, 50};  // 50000 draws: the sample variance is within ~1% (1 sigma)
  for (const InitCase& c : kInits) {
    INFO(c.name);
    double variance = target_variance(c, shape);
    std::vector<float> w = nn::initialize(c.init, random::key(3), shape).to_vector<float>();
    double mean = 0, var = 0, largest = 0;
    for (double v : w) mean += v / double(w.size()), largest = std::max(largest, std::abs(v));
    for (double v : w) var += (v - mean) * (v - mean) / double(w.size());
    CHECK(std::abs(mean) < 0.02 * std::sqrt(variance));
    CHECK(var == Approx(variance).epsilon(0.04));
    if (c.uniform) {
      CHECK(largest <= std::sqrt(3 * variance) * (1 + 1e-6));  // uniform in ±sqrt(3 variance)
    } else {
      // Truncated at 2 of its own standard deviations, sqrt(variance) / 0.8796...; its tails
      // still reach past the uniform's bound.
      CHECK(largest < 2 * std::sqrt(variance) / kTruncatedStddev * (1 + 1e-6));
      CHECK(largest > std::sqrt(3 * variance));
    }
  }
  // float64 draws compute in float64.
  Array w64 = nn::initialize(nn::Init::he_normal, random::key(3), {300, 200}, float64);
  CHECK(w64.dtype() == float64);
  std::vector<double> v = w64.to_vector<double>();
  double var = 0;
  for (double x : v) var += x * x / double(v.size());
  CHECK(var == Approx(2.0 / 300).epsilon(0.04));
}

TEST_CASE("nn: dense_init and conv_init shapes, zero biases and default initializers", "[nn]") {
  Array key = random::key(0);
  nn::Dense d = nn::dense_init(key, 6, 4);
  CHECK(d.w.aval() == ShapedArray{{6, 4}, float32, false});
  CHECK(d.b.to_vector<float>() == std::vector<float>(4, 0.f));
  CHECK(d.w.to_vector<float>() ==
        nn::initialize(nn::Init::glorot_uniform, key, {6, 4}).to_vector<float>());
  CHECK(nn::dense_init(key, 6, 4, nn::Init::he_normal).w.to_vector<float>() ==
        nn::initialize(nn::Init::he_normal, key, {6, 4}).to_vector<float>());
  // Deterministic in the key; another key gives other weights.
  CHECK(nn::dense_init(random::key(1), 6, 4).w.to_vector<float>() != d.w.to_vector<float>());

  // flax.linen.Conv: kernel_size + (in, out), lecun_normal, zero bias.
  nn::Conv c = nn::conv_init(key, 4, 8, {3, 3});
  CHECK(c.w.aval() == ShapedArray{{3, 3, 4, 8}, float32, false});
  CHECK(c.b.aval() == ShapedArray{{8}, float32, false});
  CHECK(c.b.to_vector<float>() == std::vector<float>(8, 0.f));
  CHECK(c.w.to_vector<float>() ==
        nn::initialize(nn::Init::lecun_normal, key, {3, 3, 4, 8}).to_vector<float>());
  nn::Conv c1 = nn::conv_init(key, 2, 3, {5}, nn::Init::he_uniform);
  CHECK(c1.w.shape() == Shape{5, 2, 3});
  CHECK(c1.w.to_vector<float>() ==
        nn::initialize(nn::Init::he_uniform, key, {5, 2, 3}).to_vector<float>());
  CHECK(nn::conv_init(key, 1, 2, {2, 3, 4}).w.shape() == Shape{2, 3, 4, 1, 2});
}

TEST_CASE("nn initializer errors", "[nn][errors]") {
  Array key = random::key(0);
  CHECK(error_of<ValueError>([&] { nn::initialize(nn::Init::lecun_normal, key, {5}); }) ==
        "Can't compute input and output sizes of a 1-dimensional weights tensor. Must be at "
        "least 2D.");
  CHECK(error_of<ValueError>([&] {
          nn::initialize(nn::Init::he_normal, key, {2, 2}, int32);
        }) == "dtype argument to `truncated_normal` must be a float dtype, got int32");
  CHECK(error_of<ValueError>([&] {
          nn::initialize(nn::Init::he_uniform, key, {2, 2}, int32);
        }) == "dtype argument to `uniform` must be a float dtype, got int32");
  CHECK(error_of<ShapeError>([&] { nn::dense_init(key, 0, 3); }) ==
        "dense_init: in and out must be positive, got in=0, out=3");
  CHECK(error_of<ShapeError>([&] {
          nn::conv_init(key, 3, -1, {3, 3});
        }) ==
        "conv_init: in_features and out_features must be positive, got in_features=3, "
        "out_features=-1");
  CHECK(error_of<ShapeError>([&] { nn::conv_init(key, 3, 4, {}); }) ==
        "conv_init: kernel_size must be one or more positive sizes, got ()");
  CHECK(error_of<ShapeError>([&] {
          nn::conv_init(key, 3, 4, {3, 0});
        }) == "conv_init: kernel_size must be one or more positive sizes, got (3, 0)");
}

}  // namespace
}  // namespace jx
