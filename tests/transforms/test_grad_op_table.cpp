// Derivatives of every differentiable op-table row checked against finite differences
// (check_grads, orders 1 and 2), and derivatives at special points against closed forms.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "support/check_grads.hpp"
#include "support/grad_values.hpp"
#include "support/op_table.hpp"

namespace jx::testing {
namespace {

using Arrays = std::vector<Array>;
using grad_values::f64;  // a strong float64 scalar: a C++ double alone is a weak float32
// Draws one value of the given operand (the row's own sample does not know the operand).
using OperandSample = std::function<double(std::mt19937&, std::size_t operand)>;

// How a row is checked, where the defaults do not fit.
struct GradSpec {
  OperandSample sample;  // replaces the row's sample
  double eps = 1e-4;
  double tol = 1e-5;  // atol and rtol
};

double sign_of(std::mt19937& rng) { return uniform(rng, -1, 1) < 0 ? -1 : 1; }
double uniform_3(std::mt19937& rng, std::size_t) { return uniform(rng, -3, 3); }
// Away from 0, where abs has a kink and sign a jump.
double nonzero(std::mt19937& rng, std::size_t) { return sign_of(rng) * uniform(rng, 0.1, 3); }
// Integer part k, fraction within [lo, hi]: away from floor's and ceil's jumps (lo, hi in
// (0, 1)) or round's (lo, hi in (-0.5, 0.5)).
OperandSample fraction_in(double lo, double hi) {
  return [lo, hi](std::mt19937& rng, std::size_t) {
    return std::round(uniform(rng, -3, 2)) + uniform(rng, lo, hi);
  };
}
// Operand i of n near n * k + i: distinct operands differ by at least 0.2, so max, min and
// comparisons keep their branch under a perturbation of size eps.
OperandSample separated(std::size_t n) {
  return [n](std::mt19937& rng, std::size_t i) {
    double k = std::round(uniform(rng, -1, 1));
    return static_cast<double>(n) * k + static_cast<double>(i) + uniform(rng, -0.4, 0.4);
  };
}

const std::map<std::string, GradSpec>& grad_specs() {
  static const std::map<std::string, GradSpec> specs = {
      // The rows reach 0.01 (sqrt: 0), where the third derivative is so large that the
      // truncation error of eps = 1e-4 is past the tolerance (it fails at 0.01); eps = 1e-6
      // keeps it, and the rounding error, far below.
      {"log", {nullptr, 1e-6}},
      {"rsqrt", {nullptr, 1e-6}},
      {"sqrt", {nullptr, 1e-6}},
      // A pole at y = 0: the row's divisors come arbitrarily close to it.
      {"div", {[](std::mt19937& rng, std::size_t i) {
         return i == 0 ? uniform(rng, -3, 3) : nonzero(rng, i);
       }}},
      // Negative bases give NaN; exponents of both signs.
      {"pow", {[](std::mt19937& rng, std::size_t i) {
         return i == 0 ? uniform(rng, 0.1, 3) : uniform(rng, -3, 3);
       }}},
      // rem jumps where x / y is an integer: x = ±(k + 1/2 ± 0.2) with y = ±1 or ±2 keeps x / y
      // at least 0.15 from one.
      {"rem", {[](std::mt19937& rng, std::size_t i) {
         if (i == 1) return sign_of(rng) * (uniform(rng, 0, 1) < 0.5 ? 1 : 2);
         return sign_of(rng) * (std::round(uniform(rng, 0, 3)) + 0.5 + uniform(rng, -0.2, 0.2));
       }}},
      {"abs", {nonzero}},
      // Derivatives without bound at 0 (cbrt) and at ±1 (asin, acos): keep clear of them.
      {"cbrt", {nonzero}},
      // Products of up to 40 factors: of magnitudes near 1, so that they stay where a step of
      // eps is measurable in float64.
      {"cumprod/axis1", {[](std::mt19937& rng, std::size_t) {
         return sign_of(rng) * uniform(rng, 0.7, 1.3);
       }}},
      {"asin", {[](std::mt19937& rng, std::size_t) { return uniform(rng, -0.9, 0.9); }}},
      {"acos", {[](std::mt19937& rng, std::size_t) { return uniform(rng, -0.9, 0.9); }}},
      {"sign", {nonzero}},
      {"floor", {fraction_in(0.1, 0.9)}},
      {"ceil", {fraction_in(0.1, 0.9)}},
      {"round", {fraction_in(-0.4, 0.4)}},
      {"max", {separated(2)}},
      {"min", {separated(2)}},
      // lo < hi, and x below, between or above them by at least 0.2. (lo > hi is the test case
      // "clamp with lo > hi" below.)
      {"clamp", {[](std::mt19937& rng, std::size_t i) {
         double u = uniform(rng, -0.4, 0.4);
         return i == 0 ? -2 + u : i == 2 ? 2 + u : 2 * std::round(uniform(rng, -2, 1)) + 1 + u;
       }}},
      {"select_n/bool", {separated(4)}},  // `which` is a[0] < a[1]
      // `which` is a[0] converted to int32: keep it away from the integers.
      {"select_n/int32", {fraction_in(0.1, 0.9)}},
      // The rows' samples reach 6e9, where a step of eps is lost to rounding. to_float32's
      // output rounds to float32 (about 1e-7 relative): eps = 1e-2 keeps that rounding over
      // 2 eps small, and the tolerance is float32's.
      {"convert_element_type/to_float32", {uniform_3, 1e-2, 1e-4}},
      {"convert_element_type/to_float64", {uniform_3}},
  };
  return specs;
}

// stop_gradient's derivative is zero by definition, which finite differences cannot check; the
// special cases below check it against that closed form.
bool skipped(const OpRow& row) { return row.primitive == "stop_gradient"; }

std::string shapes_str(const std::vector<Shape>& shapes) {
  std::ostringstream os;
  for (const Shape& s : shapes) os << " " << shape_str(s);
  return os.str();
}

Arrays draw(const OpRow& row, const GradSpec& spec, const std::vector<Shape>& shapes,
            std::mt19937& rng) {
  Arrays args;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    HostArray h{shapes[k], {}};
    for (std::int64_t i = 0; i < shape_size(shapes[k]); ++i)
      h.values.push_back(spec.sample ? spec.sample(rng, k) : sample_value(row, rng, float64));
    args.push_back(from_host(h, float64));
  }
  return args;
}

}  // namespace

TEST_CASE("grad op table: every differentiable row's jvp and vjp match finite differences",
          "[grad_op_table]") {
  for (const OpRow& row : op_table()) {
    if (std::find(row.dtypes.begin(), row.dtypes.end(), float64) == row.dtypes.end() ||
        skipped(row))
      continue;
    // Each row draws from its own stream, so that adding a row changes no other row's points.
    std::mt19937 rng(static_cast<std::uint32_t>(std::hash<std::string>()(row.name)));
    auto it = grad_specs().find(row.name);
    GradSpec spec = it == grad_specs().end() ? GradSpec{} : it->second;
    for (const auto& shapes : row.shape_sets) {
      Arrays args = draw(row, spec, shapes, rng);
      // Comparisons, argmax/argmin and conversions to integers have no derivative. Conversions
      // to bfloat16 and float16 have one (the identity), but their values step by 2^-8 or
      // 2^-11 relative: central differences of size eps measure those steps, not the
      // derivative. Derivatives are checked in float32 and float64; the 16-bit floats' dtype
      // rules are checked below.
      DType out = row.apply(args).dtype();
      if (out != float32 && out != float64) continue;
      INFO(row.name << " float64 shapes" << shapes_str(shapes));
      try {
        check_grads(row.apply, args, 2, spec.eps, spec.tol, spec.tol);
      } catch (const std::exception& e) {
        FAIL_CHECK("exception: " << e.what());  // the other rows still run
      }
    }
  }
}

TEST_CASE("grad op table: every primitive with a float64 row is checked", "[grad_op_table]") {
  std::set<std::string> checked, float_rows;
  for (const OpRow& row : op_table()) {
    if (std::find(row.dtypes.begin(), row.dtypes.end(), float64) == row.dtypes.end()) continue;
    float_rows.insert(row.primitive);
    if (!skipped(row)) checked.insert(row.primitive);
  }
  for (const char* p :
       {"exp", "tanh", "mul", "pow", "max", "select_n", "clamp", "reduce_max", "reduce_prod",
        "dot_general", "pad", "dynamic_update_slice", "concatenate", "convert_element_type"}) {
    INFO(p);
    CHECK(checked.count(p) == 1);
  }
  CHECK(float_rows.size() == checked.size() + 1);  // stop_gradient only
}

TEST_CASE("grad op table: 16-bit float primals get tangents and cotangents of their dtype",
          "[grad_op_table]") {
  std::mt19937 rng(0);
  int checked = 0;
  for (DType d : {bfloat16, float16}) {
    for (const OpRow& row : op_table()) {
      if (std::find(row.dtypes.begin(), row.dtypes.end(), d) == row.dtypes.end() || skipped(row))
        continue;
      // The first shape set with elements in every operand.
      const std::vector<Shape>* shapes = nullptr;
      for (const auto& s : row.shape_sets) {
        bool nonempty = true;
        for (const Shape& x : s) nonempty = nonempty && shape_size(x) > 0;
        if (nonempty) {
          shapes = &s;
          break;
        }
      }
      if (!shapes) continue;
      Arrays args;
      for (const Shape& s : *shapes) {
        HostArray h{s, {}};
        for (std::int64_t i = 0; i < shape_size(s); ++i)
          h.values.push_back(sample_value(row, rng, d));
        args.push_back(from_host(h, d));
      }
      Array primal_out = row.apply(args);
      if (!is_floating(primal_out.dtype())) continue;
      INFO(row.name << " " << dtype_name(d) << " shapes" << shapes_str(*shapes));
      auto f = [&row](const Arrays& a) { return Arrays{row.apply(a)}; };
      try {
        Arrays tangents;
        for (const Array& a : args) tangents.push_back(np::ones(a.shape(), a.dtype()));
        auto [out, t_out] = jx::jvp(f, std::tuple{args}, std::tuple{tangents});
        REQUIRE(t_out.size() == 1);
        CHECK(out[0].dtype() == primal_out.dtype());
        CHECK(t_out[0].dtype() == primal_out.dtype());
        CHECK(t_out[0].shape() == primal_out.shape());
        auto [y, pullback] = jx::vjp(f, args);
        Arrays cts = std::get<0>(pullback(Arrays{np::ones(y[0].shape(), y[0].dtype())}));
        REQUIRE(cts.size() == args.size());
        for (std::size_t k = 0; k < args.size(); ++k) {
          INFO("cotangent of operand " << k);
          CHECK(cts[k].dtype() == d);
          CHECK(cts[k].shape() == args[k].shape());
        }
        ++checked;
      } catch (const std::exception& e) {
        FAIL_CHECK("exception: " << e.what());
      }
    }
  }
  CHECK(checked > 100);
}

TEST_CASE("grad through bfloat16 and float16: the conversion's derivative is the identity",
          "[grad_op_table]") {
  for (DType d : {bfloat16, float16}) {
    INFO(dtype_name(d));
    // float32 → 16 bits → float32: the value rounds, the derivative is 1 (as JAX's).
    auto round_trip = [d](const Array& x) {
      return lax::convert_element_type(lax::convert_element_type(x, d), float32);
    };
    Array g = jx::grad(round_trip)(np::array(Array(0.3f)));
    CHECK(g.dtype() == float32);
    CHECK(g.item<float>() == 1.0f);
    // float64 → 16 bits, times itself: d/dx x16^2 = 2 x16, in float64 (x16 = x rounded).
    auto square = [d](const Array& x) {
      Array h = lax::convert_element_type(x, d);
      return lax::convert_element_type(h * h, float64);
    };
    Array g2 = jx::grad(square)(f64(0.3));
    CHECK(g2.dtype() == float64);
    const double x16 = f64(0.3).astype(d).item<double>();
    CHECK(g2.item<double>() == Approx(2 * x16).epsilon(2 * unit_roundoff(d)));
    // sin in 16 bits: the gradient is cos, rounded to the 16-bit dtype.
    Array x = np::array(Array(0.5f)).astype(d);
    Array gs = jx::grad([](const Array& v) { return lax::sin(v); })(x);
    CHECK(gs.dtype() == d);
    CHECK(gs.item<double>() == Approx(std::cos(0.5)).epsilon(2 * unit_roundoff(d)));
  }
}

// ---- special points, against closed forms --------------------------------------------------

namespace {

double d1(const std::function<Array(const Array&)>& f, double x) {
  return jx::grad(f)(f64(x)).item<double>();
}
double d2(const std::function<Array(const Array&)>& f, double x) {
  return jx::grad(jx::grad(f))(f64(x)).item<double>();
}
// The vjp of f (two arrays to one) with a cotangent of ones.
std::pair<std::vector<double>, std::vector<double>> vjp_ones(
    const std::function<Array(const Array&, const Array&)>& f, const Array& x, const Array& y) {
  auto [out, pullback] = jx::vjp(f, x, y);
  auto [cx, cy] = pullback(np::ones_like(out));
  return {cx.to_vector<double>(), cy.to_vector<double>()};
}

}  // namespace

TEST_CASE("grad special points: tanh saturates to exactly 0", "[grad_op_table]") {
  auto tanh = [](const Array& x) { return lax::tanh(x); };
  for (double x : {1000.0, -1000.0}) {
    INFO("x = " << x);
    CHECK(d1(tanh, x) == 0.0);  // 1 - tanh(x)^2, with tanh(x) exactly ±1
    CHECK(d2(tanh, x) == 0.0);  // -2 tanh(x) (1 - tanh(x)^2)
  }
}

TEST_CASE("grad special points: sqrt near 0+", "[grad_op_table]") {
  auto sqrt = [](const Array& x) { return lax::sqrt(x); };
  for (double x : {1e-8, 1e-300}) {
    INFO("x = " << x);
    CHECK(std::isfinite(d1(sqrt, x)));
    CHECK(d1(sqrt, x) == Approx(0.5 / std::sqrt(x)).epsilon(1e-12));
  }
  CHECK(d2(sqrt, 1e-8) == Approx(-0.25 / (1e-8 * std::sqrt(1e-8))).epsilon(1e-12));
}

TEST_CASE("grad special points: x / y with y near 0", "[grad_op_table]") {
  const double x = 3, y = 1e-6;
  auto [dx, dy] =
      jx::grad<0, 1>([](const Array& a, const Array& b) { return lax::div(a, b); })(f64(x), f64(y));
  CHECK(dx.item<double>() == Approx(1 / y).epsilon(1e-12));
  CHECK(dy.item<double>() == Approx(-x / (y * y)).epsilon(1e-12));
  auto d2y = jx::grad<1>(jx::grad<1>([](const Array& a, const Array& b) { return a / b; }));
  CHECK(d2y(f64(x), f64(y)).item<double>() == Approx(2 * x / (y * y * y)).epsilon(1e-12));
}

TEST_CASE("grad special points: logistic at +-100", "[grad_op_table]") {
  auto logistic = [](const Array& x) { return lax::logistic(x); };
  for (double x : {100.0, -100.0}) {
    INFO("x = " << x);
    const double e = std::exp(-std::abs(x)), want = e / ((1 + e) * (1 + e));  // about 3.7e-44
    double g = d1(logistic, x);
    // s (1 - s) rounds to 0 at x = 100 (s is 1.0 in double); at -100 it is accurate.
    if (x > 0)
      CHECK((g >= 0 && g <= 2 * want));
    else
      CHECK(g == Approx(want).epsilon(1e-12));
    CHECK(std::isfinite(d2(logistic, x)));
    CHECK(std::abs(d2(logistic, x)) <= 2 * want);  // s (1 - s) (1 - 2 s)
  }
}

TEST_CASE("grad special points: log1p near -1+", "[grad_op_table]") {
  auto log1p = [](const Array& x) { return lax::log1p(x); };
  for (double x : {-1 + 1e-10, -1 + 1e-15}) {
    INFO("x = " << x);
    CHECK(d1(log1p, x) == Approx(1 / (1 + x)).epsilon(1e-12));
    CHECK(d2(log1p, x) == Approx(-1 / ((1 + x) * (1 + x))).epsilon(1e-12));
  }
}

TEST_CASE("grad special points: max and min split the gradient evenly at ties", "[grad_op_table]") {
  for (auto op : {lax::max, lax::min}) {
    auto [dx, dy] = jx::grad<0, 1>(op)(f64(2), f64(2));
    CHECK(dx.item<double>() == 0.5);
    CHECK(dy.item<double>() == 0.5);
    // Ties and non-ties side by side; a 0-d operand gets the sum over the elements.
    auto [cx, cy] = vjp_ones(op, np::array({1.0, 2.0, 3.0}), np::array({1.0, 5.0, 0.0}));
    bool is_max = op == lax::max;
    CHECK(cx == std::vector<double>{0.5, is_max ? 0.0 : 1.0, is_max ? 1.0 : 0.0});
    CHECK(cy == std::vector<double>{0.5, is_max ? 1.0 : 0.0, is_max ? 0.0 : 1.0});
    auto [sx, sy] = vjp_ones(op, np::array({2.0, 2.0, 7.0}), f64(2));
    CHECK(sx == std::vector<double>{0.5, 0.5, is_max ? 1.0 : 0.0});
    CHECK(sy == std::vector<double>{is_max ? 1.0 : 2.0});
    // Forward mode: the tangent at a tie is the mean of the operands' tangents.
    auto [out, t] = jx::jvp([op](const Array& a, const Array& b) { return op(a, b); },
                            std::tuple{f64(1), f64(1)}, std::tuple{f64(3), f64(5)});
    CHECK(t.item<double>() == 4.0);
  }
}

TEST_CASE("grad special points: reduce_max and reduce_min split the gradient among ties",
          "[grad_op_table]") {
  struct Case {
    std::vector<double> x;
    Shape shape;
    std::vector<std::int64_t> axes;
    std::vector<double> want_max, want_min;
  };
  for (const Case& c : std::vector<Case>{
           {{1, 3, 3, 2}, {4}, {0}, {0, 0.5, 0.5, 0}, {1, 0, 0, 0}},
           {{3, 3, 3}, {3}, {0}, {1. / 3, 1. / 3, 1. / 3}, {1. / 3, 1. / 3, 1. / 3}},
           {{1, 1, 2, 0, 4, 4},
            {3, 2},
            {1},
            {0.5, 0.5, 1, 0, 0.5, 0.5},
            {0.5, 0.5, 0, 1, 0.5, 0.5}},
           {{1, 5, 5, 0, 5, 0},
            {2, 3},
            {0, 1},
            {0, 1. / 3, 1. / 3, 0, 1. / 3, 0},
            {0, 0, 0, 0.5, 0, 0.5}},
       }) {
    Array x = np::array(c.x, c.shape);
    auto axes = c.axes;
    for (bool is_max : {true, false}) {
      INFO((is_max ? "reduce_max" : "reduce_min") << " of " << x.repr());
      auto [out, pullback] = jx::vjp(
          [&](const Array& a) {
            return is_max ? lax::reduce_max(a, axes) : lax::reduce_min(a, axes);
          },
          x);
      std::vector<double> g = std::get<0>(pullback(np::ones_like(out))).to_vector<double>();
      const std::vector<double>& want = is_max ? c.want_max : c.want_min;
      REQUIRE(g.size() == want.size());
      for (std::size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(want[i]).epsilon(1e-15));
    }
  }
}

TEST_CASE("grad special points: clamp with lo > hi is hi, whatever x", "[grad_op_table]") {
  // clamp(lo, x, hi) = min(max(x, lo), hi): with lo > hi the output is hi for every x, so its
  // gradient is (0, 0, 1). x below, between and above the bounds.
  auto clamp = [](const Array& lo, const Array& x, const Array& hi) {
    return lax::clamp(lo, x, hi);
  };
  for (double x : {0.0, 1.5, 5.0}) {
    INFO("clamp(2, " << x << ", 1)");
    auto [dlo, dx, dhi] = jx::grad<0, 1, 2>(clamp)(f64(2), f64(x), f64(1));
    CHECK(dlo.item<double>() == 0.0);
    CHECK(dx.item<double>() == 0.0);
    CHECK(dhi.item<double>() == 1.0);
  }
}

TEST_CASE("grad special points: abs at 0 has gradient 0", "[grad_op_table]") {
  auto abs = [](const Array& x) { return lax::abs(x); };
  CHECK(d1(abs, 0.0) == 0.0);
  CHECK(d1(abs, -0.0) == 0.0);
  CHECK(d1(abs, -2.5) == -1.0);
  CHECK(d1(abs, 1e-300) == 1.0);
}

TEST_CASE("grad special points: pow at y == 0 and at x == 0", "[grad_op_table]") {
  auto pow = [](const Array& x, const Array& y) { return lax::pow(x, y); };
  auto dx = [&](double x, double y) { return jx::grad<0>(pow)(f64(x), f64(y)).item<double>(); };
  auto dy = [&](double x, double y) { return jx::grad<1>(pow)(f64(x), f64(y)).item<double>(); };
  // JAX: d/dx x^0 = 0 everywhere, 0^0 included (not 0 * 0^-1 = NaN).
  for (double x : {0.0, 2.0, -1.5}) {
    INFO("x = " << x);
    CHECK(dx(x, 0) == 0.0);
  }
  // JAX: d/dy x^y = log(x) x^y, taken as 0 at x = 0 (not log(0) * 0^y = NaN).
  for (double y : {0.0, 0.5, 2.0}) {
    INFO("y = " << y);
    CHECK(dy(0, y) == 0.0);
  }
  CHECK(dx(0, 1) == 1.0);  // 1 * 0^0
  CHECK(dx(0, 2) == 0.0);
  CHECK(dx(2, 3) == Approx(12.0).epsilon(1e-15));
  CHECK(dy(2, 3) == Approx(8 * std::log(2.0)).epsilon(1e-15));
}

TEST_CASE("grad special points: integer_pow, including x = 0", "[grad_op_table]") {
  for (int n : {0, 1, 2, 3, -2}) {
    auto f = [n](const Array& x) { return lax::integer_pow(x, n); };
    for (double x : {0.0, 1.5, -2.0}) {
      if (n < 0 && x == 0) continue;
      INFO("x^" << n << " at x = " << x);
      // n x^(n-1) and n (n-1) x^(n-2), with 0 * anything = 0 and x^0 = 1 at x = 0.
      double want1 = n == 0 ? 0 : n * std::pow(x, n - 1);
      double want2 = n == 0 || n == 1 ? 0 : n * (n - 1) * std::pow(x, n - 2);
      CHECK(d1(f, x) == Approx(want1).epsilon(1e-15));
      CHECK(d2(f, x) == Approx(want2).epsilon(1e-15));
    }
  }
}

TEST_CASE("grad special points: integer_pow at the smallest int exponent", "[grad_op_table]") {
  // n x^(n-1) with n - 1 past int: at x = 1 it is n; at x = 2, 2^-2147483649 is below every
  // double, so -0.
  constexpr int n = std::numeric_limits<int>::min();
  auto f = [](const Array& x) { return lax::integer_pow(x, n); };
  CHECK(d1(f, 1.0) == static_cast<double>(n));
  double at_two = d1(f, 2.0);
  CHECK(at_two == 0.0);
  CHECK(std::signbit(at_two));
}

TEST_CASE("grad special points: stop_gradient has derivative 0", "[grad_op_table]") {
  auto f = [](const Array& x) { return lax::mul(x, lax::stop_gradient(x)); };  // d/dx = x
  CHECK(d1(f, 3.0) == 3.0);
  CHECK(d1([](const Array& x) { return lax::stop_gradient(lax::sin(x)); }, 0.5) == 0.0);
}

TEST_CASE("check_grads passes non-float arguments through unchanged", "[grad_op_table]") {
  // A bool `which` and integer start indices: only the float arguments are perturbed.
  check_grads(
      [](const Arrays& a) {
        return lax::mul(lax::select_n(a[0], {a[1], a[2]}), a[1]);
      },
      {np::array({true, false, true}), np::array({0.5, -1.0, 2.0}), np::array({1.5, 2.0, -0.3})},
      2);
  check_grads([](const Arrays& a) { return lax::sin(lax::dynamic_slice(a[0], {a[1]}, {2})); },
              {np::array({0.1, 0.2, 0.3, 0.4}), np::array(std::int64_t{1})}, 2);
}

namespace {

// sin with a custom jvp rule t * scale * cos(x); with `frozen` the cos is under stop_gradient,
// so the first derivative is right and the second (0 instead of -sin) is wrong.
std::function<Array(const Arrays&)> custom_sin(double scale, bool frozen) {
  auto f = jx::custom_jvp([](const Array& x) { return lax::sin(x); },
                          [scale, frozen](const auto& primals, const auto& tangents) {
                            const Array& x = std::get<0>(primals);
                            Array d = lax::mul(f64(scale), lax::cos(x));
                            if (frozen) d = lax::stop_gradient(d);
                            return std::pair{lax::sin(x), lax::mul(std::get<0>(tangents), d)};
                          });
  return [f](const Arrays& a) { return f(a[0]); };
}

}  // namespace

TEST_CASE("check_grads passes a right first derivative", "[grad_op_table]") {
  check_grads(custom_sin(1, false), {np::array({0.5, 1.0})}, 2);
  check_grads(custom_sin(1, true), {np::array({0.5, 1.0})}, 1);
}

// Both modes must catch a jvp rule off by a factor 2 (the failures name both).
TEST_CASE("check_grads fails on a wrong first derivative", "[grad_op_table][!shouldfail]") {
  check_grads(custom_sin(2, false), {np::array({0.5, 1.0})}, 1);
}

TEST_CASE("check_grads fails on a wrong second derivative", "[grad_op_table][!shouldfail]") {
  check_grads(custom_sin(1, true), {np::array({0.5, 1.0})}, 2);
}

}  // namespace jx::testing
