// Op-table rows for the unary family: each oracle is the <cmath> closed form in double.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "support/float_ulps.hpp"
#include "support/op_table.hpp"

namespace jx::testing {
namespace {

OpRow unary_row(std::string name, std::vector<DType> dtypes, Array (*op)(const Array&),
                std::function<double(double)> f, double lo = -3, double hi = 3) {
  OpRow r;
  r.name = r.primitive = std::move(name);
  r.dtypes = std::move(dtypes);
  for (const Shape& s : kElementwiseShapes) r.shape_sets.push_back({s});
  r.sample = [lo, hi](std::mt19937& rng, DType d) {
    if (d == bool_) return double(uniform(rng, -1, 1) > 0);
    if (is_unsigned(d)) return std::round(uniform(rng, 0, 6));
    double v = uniform(rng, lo, hi);
    return is_floating(d) ? v : std::round(v);
  };
  r.apply = [op](const std::vector<Array>& a) { return op(a[0]); };
  r.oracle = [f](const std::vector<HostArray>& in, DType) {
    return map_oracle(in, [&](const std::vector<double>& x) { return f(x[0]); });
  };
  return r;
}

const std::vector<DType>& kF = kFloatingTypes;

// erf's inverse in double: bisection on [-6, 6] (erf is 1 in double beyond), then Newton.
double erf_inverse(double x) {
  double lo = -6, hi = 6;
  for (int i = 0; i < 80; ++i) (std::erf((lo + hi) / 2) < x ? lo : hi) = (lo + hi) / 2;
  double y = (lo + hi) / 2;
  for (int i = 0; i < 3; ++i) y -= (std::erf(y) - x) * std::sqrt(M_PI) / 2 * std::exp(y * y);
  return y;
}

// A row whose oracle gives the exact result, wrapped to the dtype for integers (neg and
// integer_pow of an unsigned x wrap modulo 2^bits).
OpRow wrapping_row(std::string name, std::vector<DType> dtypes, Array (*op)(const Array&),
                   std::function<double(double)> f) {
  OpRow r = unary_row(std::move(name), std::move(dtypes), op, nullptr);
  r.oracle = [f](const std::vector<HostArray>& in, DType d) {
    return map_oracle(in, [&](const std::vector<double>& x) { return wrap(f(x[0]), d); });
  };
  return r;
}

const bool kRows = add_rows({
    wrapping_row("neg", kNumericTypes, lax::neg, [](double x) { return -x; }),
    unary_row("exp", kF, lax::exp, [](double x) { return std::exp(x); }),
    unary_row(
        "exp2", kF, lax::exp2, [](double x) { return std::exp2(x); }, -10, 10),
    unary_row(
        "log", kF, lax::log, [](double x) { return std::log(x); }, 0.01, 5),
    unary_row(
        "log1p", kF, lax::log1p, [](double x) { return std::log1p(x); }, -0.9, 3),
    unary_row("expm1", kF, lax::expm1, [](double x) { return std::expm1(x); }),
    unary_row("sin", kF, lax::sin, [](double x) { return std::sin(x); }),
    unary_row("cos", kF, lax::cos, [](double x) { return std::cos(x); }),
    unary_row(
        "tan", kF, lax::tan, [](double x) { return std::tan(x); }, -1.4, 1.4),
    unary_row(
        "asin", kF, lax::asin, [](double x) { return std::asin(x); }, -0.99, 0.99),
    unary_row(
        "acos", kF, lax::acos, [](double x) { return std::acos(x); }, -0.99, 0.99),
    unary_row("atan", kF, lax::atan, [](double x) { return std::atan(x); }),
    unary_row("sinh", kF, lax::sinh, [](double x) { return std::sinh(x); }),
    unary_row("cosh", kF, lax::cosh, [](double x) { return std::cosh(x); }),
    unary_row("tanh", kF, lax::tanh, [](double x) { return std::tanh(x); }),
    unary_row("asinh", kF, lax::asinh, [](double x) { return std::asinh(x); }),
    unary_row(
        "acosh", kF, lax::acosh, [](double x) { return std::acosh(x); }, 1.05, 5),
    unary_row(
        "atanh", kF, lax::atanh, [](double x) { return std::atanh(x); }, -0.95, 0.95),
    unary_row("cbrt", kF, lax::cbrt, [](double x) { return std::cbrt(x); }),
    unary_row("logistic", kF, lax::logistic, [](double x) { return 1 / (1 + std::exp(-x)); }),
    unary_row(
        "sqrt", kF, lax::sqrt, [](double x) { return std::sqrt(x); }, 0, 5),
    unary_row(
        "rsqrt", kF, lax::rsqrt, [](double x) { return 1 / std::sqrt(x); }, 0.01, 5),
    unary_row("abs", kNumericTypes, lax::abs, [](double x) { return std::fabs(x); }),
    unary_row("sign", kNumericTypes, lax::sign, [](double x) { return double((x > 0) - (x < 0)); }),
    unary_row("floor", kF, lax::floor, [](double x) { return std::floor(x); }),
    unary_row("ceil", kF, lax::ceil, [](double x) { return std::ceil(x); }),
    unary_row(
        "round", kF, [](const Array& x) { return lax::round(x); },
        [](double x) { return std::round(x); }),
    unary_row("erf", kF, lax::erf, [](double x) { return std::erf(x); }),
    unary_row("erf_inv", kF, lax::erf_inv, erf_inverse, -0.99, 0.99),
    wrapping_row(
        "integer_pow", kNumericTypes, [](const Array& x) { return lax::integer_pow(x, 3); },
        [](double x) { return x * x * x; }),
    unary_row("stop_gradient", kAllTypes, lax::stop_gradient, [](double x) { return x; }),
    unary_row(
        "name", kAllTypes, [](const Array& x) { return checkpoint_name(x, "h"); },
        [](double x) { return x; }),
});

// is_finite: a third of the samples are ±inf or NaN.
const bool kIsFiniteRows = add_rows({[] {
  OpRow r =
      unary_row("is_finite", kF, lax::is_finite, [](double x) { return double(std::isfinite(x)); });
  r.sample = [](std::mt19937& rng, DType) {
    double u = uniform(rng, 0, 1);
    constexpr double kInf = std::numeric_limits<double>::infinity();
    return u < 0.1 ? kInf : u < 0.2 ? -kInf : u < 0.3 ? std::nan("") : uniform(rng, -3, 3);
  };
  return r;
}()});

// `not` is logical on bool and bitwise (two's complement: ~x = -x - 1) on integers.
const bool kNotRows = add_rows({[] {
  OpRow r = unary_row("not", kIntegerOrBoolTypes, lax::bitwise_not, nullptr);
  r.oracle = [](const std::vector<HostArray>& in, DType d) {
    return map_oracle(in, [d](const std::vector<double>& x) {
      return d == bool_ ? double(x[0] == 0) : wrap(-x[0] - 1, d);  // ~x of unsigned: 2^bits-1-x
    });
  };
  return r;
}()});

}  // namespace

TEST_CASE("round: half away from zero, and half to even", "[unary]") {
  Array x = np::array({-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f});
  CHECK(lax::round(x).to_vector<float>() == std::vector<float>{-3, -2, -1, 1, 2, 3});
  CHECK(lax::round(x, lax::RoundingMethod::kToNearestEven).to_vector<float>() ==
        std::vector<float>{-2, -2, -0, 0, 2, 2});
}

TEST_CASE("round keeps the sign of zero, eagerly and under jit, as jnp.round and lax.round",
          "[unary]") {
  // jnp.round(-0.5) is -0.0 (half to even, sign kept); lax.round's default rounds half away from
  // zero. The oracle is std::nearbyint (half to even in the default rounding mode) and
  // std::round (half away from zero), both of which keep the sign of zero.
  const std::vector<double> in{-0.5, -0.4, 0.5, 1.5, 2.5, -2.5, -1.5, -0.0, 0.4, -3.5};
  auto same_bits = [](const Array& got, double (*oracle)(double), const std::vector<double>& x) {
    std::vector<double> g = got.astype(float64).to_vector<double>();
    REQUIRE(g.size() == x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      INFO("round(" << x[i] << ") = " << g[i]);
      CHECK(g[i] == oracle(x[i]));
      CHECK(std::signbit(g[i]) == std::signbit(oracle(x[i])));
    }
  };
  auto even = [](double v) { return std::nearbyint(v); };
  auto away = [](double v) { return std::round(v); };
  for (DType dtype : {float32, float64}) {
    INFO(dtype_name(dtype));
    Array x = np::array(in).astype(dtype);
    auto np_round = [](const Array& a) { return np::round(a); };
    auto lax_even = [](const Array& a) {
      return lax::round(a, lax::RoundingMethod::kToNearestEven);
    };
    auto lax_away = [](const Array& a) { return lax::round(a); };
    same_bits(np_round(x), even, in);
    same_bits(jit(np_round)(x), even, in);
    same_bits(lax_even(x), even, in);
    same_bits(jit(lax_even)(x), even, in);
    same_bits(lax_away(x), away, in);
    same_bits(jit(lax_away)(x), away, in);
  }
  CHECK(std::signbit(np::round(Array(-0.5)).item<float>()));
  CHECK(np::round(Array(-0.5)).aval() == ShapedArray{{}, float32, true});
}

TEST_CASE("integer_pow: negative exponents on floats, exact powers of integers", "[unary]") {
  CHECK(lax::integer_pow(np::array({2.0, 4.0}), -2).to_vector<double>() ==
        std::vector<double>{0.25, 0.0625});
  CHECK(lax::integer_pow(np::array({std::int64_t{3}}), 39).item<std::int64_t>() ==
        4052555153018976267LL);  // 3^39, exactly representable in int64, not in double
  CHECK_THROWS_MATCHES(
      lax::integer_pow(np::array({2, 3}), -1), TypeError,
      Catch::Message("integer_pow with a negative exponent needs a floating dtype, "
                     "got int32"));
}

TEST_CASE("erf_inv: within 4 float32 ULP of the exact inverse, near ±1 too", "[unary]") {
  // Near ±1, 1 - x² formed from x·x keeps few of its bits (64 ULP at 0.9998).
  std::vector<float> xs;
  for (float x = 0.0f; x < 1.0f; x = std::nextafter(x + 0.0007f, 1.0f)) xs.push_back(x);
  for (int k = 1; k < 4000; k += 7) xs.push_back(1.0f - static_cast<float>(k) * 0x1p-24f);
  for (std::size_t i = 0, n = xs.size(); i < n; ++i) xs.push_back(-xs[i]);
  for (const std::vector<float>& got :
       {lax::erf_inv(np::array(xs)).to_vector<float>(),
        jit([](const Array& x) { return lax::erf_inv(x); })(np::array(xs)).to_vector<float>()}) {
    double worst = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      INFO("x = " << xs[i]);
      worst = std::max(worst, ulp_distance(got[i], static_cast<float>(erf_inverse(xs[i]))));
    }
    CHECK(worst <= 4);
  }
}

TEST_CASE("unary ops reject dtypes outside their domain, in JAX's words", "[unary][errors]") {
  CHECK_THROWS_MATCHES(lax::sin(np::array({1, 2})), TypeError,
                       Catch::Message("sin does not accept dtype int32. Accepted dtypes are "
                                      "subtypes of floating."));
  CHECK_THROWS_MATCHES(lax::bitwise_not(np::array({1.0f})), TypeError,
                       Catch::Message("not does not accept dtype float32. Accepted dtypes are "
                                      "subtypes of bool, integer."));
}

}  // namespace jx::testing
