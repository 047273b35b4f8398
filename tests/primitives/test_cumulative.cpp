// Op-table rows and focused tests for the cumulative family (cumsum cumprod cummax cummin
// cumlogsumexp), and rev's rows: each oracle is an explicit loop over the rows along the axis,
// written here independently of the implementation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "core/primitive.hpp"
#include "support/op_table.hpp"

namespace jx::testing {
namespace {

using Ints = std::vector<std::int64_t>;
using CumFn = Array (*)(const Array&, std::int64_t, bool);
using Sample = std::function<double(std::mt19937&, DType)>;

// x seen as [outer, n, inner]: every (outer, inner) row folds f from init along the axis, from
// its end when reversed; each output is the fold so far, reduced as `finish` says.
HostArray scan_oracle(const HostArray& x, std::size_t axis, bool reverse, double init,
                      const std::function<double(double, double)>& f,
                      const std::function<double(double)>& finish) {
  HostArray out{x.shape, std::vector<double>(x.values.size())};
  std::int64_t outer = 1, n = x.shape[axis], inner = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= x.shape[d];
  for (std::size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      double acc = init;
      for (std::int64_t k = 0; k < n; ++k) {
        auto at = static_cast<std::size_t>((o * n + (reverse ? n - 1 - k : k)) * inner + i);
        acc = f(acc, x.values[at]);
        out.values[at] = finish(acc);
      }
    }
  return out;
}

// Sums: whole numbers in the 16-bit floats, so every partial sum is exact in any order (40
// samples in [-3, 3] stay within 120, below bfloat16's 256); the default samples else.
double sum_sample(std::mt19937& rng, DType d) {
  double v = uniform(rng, is_unsigned(d) ? 0 : -3, is_unsigned(d) ? 6 : 3);
  return d == float32 || d == float64 ? v : std::round(v);
}
// Products: factors near 1 in [0.5, 2] (signed: either sign), so 40 of them stay in every float
// type's range; integers draw from [-3, 3] and wrap.
double product_sample(std::mt19937& rng, DType d) {
  if (!is_floating(d)) return std::round(uniform(rng, is_unsigned(d) ? 0 : -3, 3));
  double v = uniform(rng, 0.5, 2);
  return is_unsigned(d) || uniform(rng, 0, 1) < 0.5 ? v : -v;
}

double lowest(DType d) {
  if (is_floating(d)) return -INFINITY;
  return is_unsigned(d) ? 0 : -std::ldexp(1.0, static_cast<int>(8 * itemsize(d)) - 1);
}
double highest(DType d) {
  if (is_floating(d)) return INFINITY;
  return std::ldexp(1.0, static_cast<int>(8 * itemsize(d)) - (is_unsigned(d) ? 0 : 1)) - 1;
}

double log_add_exp(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  double m = std::max(a, b);
  return m + std::log1p(std::exp(-std::abs(a - b)));
}

struct AxisChoice {
  std::string name;
  std::int64_t axis;
  bool reverse;
  std::vector<Shape> shapes;
};

// Short rows, size 0 and 1 dims; a 40-long last axis takes the CPU's vectorized row scan.
const std::vector<AxisChoice> kChoices = {
    {"axis0", 0, false, {{0}, {1}, {5}, {2, 3}, {3, 0, 2}, {1, 4, 1}, {40}}},
    {"axis0_reverse", 0, true, {{5}, {2, 3}, {3, 0, 2}, {40}}},
    {"axis1", 1, false, {{2, 3}, {2, 0}, {1, 4, 1}, {2, 3, 4}, {2, 40}}},
    {"axis1_reverse", 1, true, {{2, 3}, {1, 4, 1}, {2, 3, 4}, {3, 40}}},
    {"axis2", 2, false, {{2, 3, 4}, {1, 4, 1}, {3, 0, 2}}},
};

std::vector<OpRow> cumulative_rows(const std::string& prim, CumFn op, std::vector<DType> dtypes,
                                   std::function<double(DType)> init,
                                   std::function<double(double, double)> f, Sample sample,
                                   bool wraps, double rtol = 1e-5) {
  std::vector<OpRow> rows;
  for (const AxisChoice& c : kChoices) {
    OpRow r;
    r.name = prim + "/" + c.name;
    r.primitive = prim;
    r.dtypes = dtypes;
    for (const Shape& s : c.shapes) r.shape_sets.push_back({s});
    r.sample = sample;
    r.rtol = rtol;
    r.apply = [op, c](const std::vector<Array>& a) { return op(a[0], c.axis, c.reverse); };
    r.oracle = [c, init, f, wraps](const std::vector<HostArray>& in, DType d) {
      auto finish = [wraps, d](double v) { return wraps ? wrap(v, d) : v; };
      return scan_oracle(in[0], static_cast<std::size_t>(c.axis), c.reverse, init(d), f, finish);
    };
    rows.push_back(std::move(r));
  }
  return rows;
}

const bool kRows = [] {
  const std::vector<DType>& num = kNumericTypes;
  add_rows(cumulative_rows(
      "cumsum", lax::cumsum, num, [](DType) { return 0.0; },
      [](double a, double b) { return a + b; }, sum_sample, /*wraps=*/true, 1e-4));
  add_rows(cumulative_rows(
      "cumprod", lax::cumprod, num, [](DType) { return 1.0; },
      [](double a, double b) { return a * b; }, product_sample, /*wraps=*/true, 1e-4));
  add_rows(cumulative_rows(
      "cummax", lax::cummax, num, lowest, [](double a, double b) { return std::max(a, b); },
      nullptr, /*wraps=*/false));
  add_rows(cumulative_rows(
      "cummin", lax::cummin, num, highest, [](double a, double b) { return std::min(a, b); },
      nullptr, /*wraps=*/false));
  add_rows(cumulative_rows(
      "cumlogsumexp", lax::cumlogsumexp, kFloatingTypes, [](DType) { return -INFINITY; },
      log_add_exp, nullptr, /*wraps=*/false, 1e-4));
  return true;
}();

// rev: the element at the mirrored index along each reversed dim.
HostArray rev_oracle(const HostArray& x, const Ints& dims) {
  HostArray out{x.shape, std::vector<double>(x.values.size())};
  if (x.values.empty()) return out;
  Ints index(x.shape.size(), 0);
  for (std::size_t flat = 0; flat < x.values.size(); ++flat) {
    Ints from = index;
    for (auto d : dims) from[d] = x.shape[d] - 1 - index[d];
    out.values[flat] = x.at(from);
    for (int d = static_cast<int>(index.size()) - 1; d >= 0 && ++index[d] == x.shape[d]; --d)
      index[d] = 0;
  }
  return out;
}

OpRow rev_row(std::string name, std::function<Ints(std::int64_t)> dims) {
  OpRow r;
  r.name = "rev/" + name;
  r.primitive = "rev";
  r.dtypes = kAllTypes;
  for (const Shape& s : kElementwiseShapes) r.shape_sets.push_back({s});
  r.shape_sets.push_back({{2, 3, 4}});
  r.apply = [dims](const std::vector<Array>& a) { return lax::rev(a[0], dims(a[0].ndim())); };
  r.oracle = [dims](const std::vector<HostArray>& in, DType) {
    return rev_oracle(in[0], dims(static_cast<std::int64_t>(in[0].shape.size())));
  };
  r.exact = true;
  return r;
}

const bool kRevRows = add_rows({
    rev_row("none", [](std::int64_t) { return Ints{}; }),
    rev_row("first", [](std::int64_t n) { return n ? Ints{0} : Ints{}; }),
    rev_row("last", [](std::int64_t n) { return n ? Ints{n - 1} : Ints{}; }),
    rev_row("all_unsorted",
            [](std::int64_t n) {
              Ints d;
              for (std::int64_t k = n - 1; k >= 0; --k) d.push_back(k);
              return d;
            }),
});

#define CHECK_ERROR(expr, type, msg) CHECK_THROWS_MATCHES(expr, type, Catch::Message(msg))

}  // namespace

TEST_CASE("cumulative reductions: JAX's errors", "[cumulative][errors]") {
  Array m = np::zeros({2, 3}), v = np::zeros({3});
  CHECK_ERROR(lax::cumsum(m, 2), ValueError, "axis 2 is out of bounds for array of shape (2, 3)");
  CHECK_ERROR(lax::cummax(v, -1), ValueError, "axis -1 is out of bounds for array of shape (3,)");
  CHECK_ERROR(lax::cumprod(np::array(1.0f), 0), ValueError,
              "axis 0 is out of bounds for array of shape ()");
  CHECK_ERROR(lax::cumsum(np::zeros({3}, bool_)), TypeError,
              "cumsum does not accept dtype bool. Accepted dtypes are subtypes of integer, "
              "floating.");
  CHECK_ERROR(lax::cumlogsumexp(np::zeros({3}, int32)), TypeError,
              "cumlogsumexp does not accept dtype int32. Accepted dtypes are subtypes of "
              "floating.");
  // The shape rule runs first, as in JAX.
  CHECK_ERROR(lax::cummin(np::zeros({3}, bool_), 1), ValueError,
              "axis 1 is out of bounds for array of shape (3,)");
}

TEST_CASE("rev: JAX's errors", "[cumulative][errors]") {
  Array m = np::zeros({2, 3});
  CHECK_ERROR(lax::rev(m, {0, 0}), ShapeError, "rev dimensions must be unique, got (0, 0).");
  CHECK_ERROR(lax::rev(m, {2}), ShapeError,
              "rev dimensions must all be less than operand ndim, got dimensions (2,) for operand "
              "ndim 2.");
  CHECK_ERROR(lax::rev(m, {-1}), ShapeError,
              "rev dimensions must have every element be nonnegative, got (-1,).");
}

TEST_CASE("cumulative reductions and rev print as JAX prints them", "[cumulative]") {
  Array x = np::zeros({2, 3});
  auto text = [&](auto f) { return make_jaxpr(f)(x).str(); };
  using Catch::Contains;
  CHECK_THAT(text([](const Array& a) { return lax::cumsum(a, 0); }),
             Contains("b:f32[2,3] = cumsum[axis=0 reverse=False] a"));
  CHECK_THAT(text([](const Array& a) { return lax::cumlogsumexp(a, 1, true); }),
             Contains("cumlogsumexp[axis=1 reverse=True] a"));
  CHECK_THAT(text([](const Array& a) { return lax::rev(a, {0}); }),
             Contains("b:f32[2,3] = rev[dimensions=(0,)] a"));
  CHECK_THAT(text([](const Array& a) {
               return lax::cummax(lax::rev(a, {1, 0}), 1);
             }),
             Contains("rev[dimensions=(1, 0)] a") && Contains("cummax[axis=1 reverse=False] b"));
}

TEST_CASE("cumulative reductions keep the weak type and the integer wrap", "[cumulative]") {
  Array weak = lax::broadcast_in_dim(Array(2.0f), {3}, {});
  CHECK(lax::cumsum(weak).weak_type());
  CHECK(lax::rev(weak, {0}).weak_type());
  Array big = np::array(std::vector<std::int32_t>{2147483647, 1, 1});
  CHECK(lax::cumsum(big).to_vector<std::int64_t>() ==
        std::vector<std::int64_t>{2147483647, -2147483648LL, -2147483647});
}

TEST_CASE("cumsum transposes to a reversed cumsum; the others differentiate exactly at zeros",
          "[cumulative]") {
  Array x = np::array({1.0, 2.0, 0.0, 3.0});
  // d/dx_j sum_i cumsum(x)_i * w_i = sum_{i >= j} w_i.
  Array w = np::array({1.0, 10.0, 100.0, 1000.0});
  Array g = jx::grad([&](const Array& a) { return np::sum(lax::cumsum(a) * w); })(x);
  CHECK(g.to_vector<double>() == std::vector<double>{1111, 1110, 1100, 1000});
  Array gr = jx::grad([&](const Array& a) { return np::sum(lax::cumsum(a, 0, true) * w); })(x);
  CHECK(gr.to_vector<double>() == std::vector<double>{1, 11, 111, 1111});
  // cumprod through a zero: d cumprod(x)_3 / dx_2 = x0 * x1 * x3 = 6, the others 0.
  Array gp =
      jx::grad([](const Array& a) { return np::sum(lax::slice(lax::cumprod(a), {3}, {4})); })(x);
  CHECK(gp.to_vector<double>() == std::vector<double>{0, 0, 6, 0});
  // cummax picks the running maximum's element.
  Array gm = jx::grad([](const Array& a) { return np::sum(lax::cummax(a)); })(x);
  CHECK(gm.to_vector<double>() == std::vector<double>{1, 2, 0, 1});
}

}  // namespace jx::testing
