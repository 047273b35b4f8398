// Op-table rows and focused tests for the reduce family: each oracle is an explicit loop over the
// input's multi-indices, written here independently of the implementation.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <optional>

#include "core/primitive.hpp"
#include "support/op_table.hpp"

namespace jx::testing {
namespace {

using Axes = std::vector<std::int64_t>;

const std::vector<DType>& kNum = kNumericTypes;
const std::vector<DType>& kAll = kAllTypes;

// Odometer over a shape; false once every index was visited (or the shape is empty).
bool next_index(std::vector<std::int64_t>& index, const Shape& shape) {
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    if (++index[d] < shape[d]) return true;
    index[d] = 0;
  }
  return false;
}

bool has_axis(const Axes& axes, std::size_t d) {
  for (auto a : axes)
    if (a == static_cast<std::int64_t>(d)) return true;
  return false;
}

// Folds f over every input index that projects to each output index.
HostArray fold_oracle(const HostArray& x, const Axes& axes, double init,
                      const std::function<double(double, double)>& f) {
  HostArray out;
  for (std::size_t d = 0; d < x.shape.size(); ++d)
    if (!has_axis(axes, d)) out.shape.push_back(x.shape[d]);
  out.values.assign(static_cast<std::size_t>(shape_size(out.shape)), init);
  if (shape_size(x.shape) == 0) return out;
  std::vector<std::int64_t> index(x.shape.size(), 0);
  do {
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < x.shape.size(); ++d)
      if (!has_axis(axes, d)) flat = flat * x.shape[d] + index[d];
    double& acc = out.values[static_cast<std::size_t>(flat)];
    acc = f(acc, x.at(index));
  } while (next_index(index, x.shape));
  return out;
}

// The identities of max and min: the dtype's least and greatest values (as doubles: the 64-bit
// bounds round to ±2^63 and 2^64), ±inf for floats.
double lowest(DType d) {
  if (d == bool_) return 0;
  if (is_floating(d)) return -INFINITY;
  return is_unsigned(d) ? 0 : -std::ldexp(1.0, static_cast<int>(8 * itemsize(d)) - 1);
}
double highest(DType d) {
  if (d == bool_) return 1;
  if (is_floating(d)) return INFINITY;
  return std::ldexp(1.0, static_cast<int>(8 * itemsize(d)) - (is_unsigned(d) ? 0 : 1)) - 1;
}

// The axes choices a reduction row runs, each with shapes for which the choice is valid;
// no axes given means all of them.
struct AxesChoice {
  std::string name;
  std::optional<Axes> axes;
  std::vector<Shape> shapes;
};

const std::vector<AxesChoice> kAxesChoices = {
    {"all", std::nullopt, {{}, {0}, {1}, {5}, {2, 3}, {3, 0, 2}, {1, 4, 1}, {2, 3, 4}}},
    {"none", Axes{}, {{}, {0}, {2, 3}}},
    {"axis0", Axes{0}, {{0}, {1}, {5}, {2, 3}, {0, 3}, {3, 0, 2}, {1, 4, 1}}},
    {"axis1", Axes{1}, {{2, 3}, {2, 0}, {3, 0, 2}, {1, 4, 1}, {2, 3, 4}}},
    {"axes02", Axes{0, 2}, {{3, 0, 2}, {1, 4, 1}, {2, 3, 4}, {2, 3, 0}}},
    {"axes21", Axes{2, 1}, {{2, 3, 4}, {2, 0, 1}}},  // unsorted on purpose
};

Axes axes_for(const std::optional<Axes>& axes, std::size_t ndim) {
  if (axes) return *axes;
  Axes all;
  for (std::size_t d = 0; d < ndim; ++d) all.push_back(static_cast<std::int64_t>(d));
  return all;
}

using ReduceFn = Array (*)(const Array&, const Axes&);

using Sample = std::function<double(std::mt19937&, DType)>;

// Sums: integer values in the 16-bit floats, so that a sum is exact in any order (bfloat16 holds
// every integer up to 256; 24 samples in [-3, 3] stay within 72); the default samples else.
double sum_sample(std::mt19937& rng, DType d) {
  double v = uniform(rng, is_unsigned(d) ? 0 : -3, is_unsigned(d) ? 6 : 3);
  if (d == bool_) return double(v > 0);
  return d == float32 || d == float64 ? v : std::round(v);
}
// Products: [-2, 2] ([0, 2] unsigned), so that 24 factors stay exact in float32 and bfloat16
// (powers of 2); float16 draws from {-1, 0, 1}, as its partial products would pass 65504 (and a
// later 0 would make the overflow NaN).
double product_sample(std::mt19937& rng, DType d) {
  double hi = d == float16 ? 1.4 : 2, v = std::round(uniform(rng, is_unsigned(d) ? 0 : -hi, hi));
  return d == bool_ ? double(v > 0) : v;
}

// `wraps`: the exact result is reduced modulo 2^bits for integer dtypes (sums and products).
std::vector<OpRow> reduce_rows(const std::string& prim, ReduceFn op, std::vector<DType> dtypes,
                               std::function<double(DType)> init,
                               std::function<double(double, double)> f, Sample sample = nullptr,
                               bool wraps = false) {
  std::vector<OpRow> rows;
  for (const AxesChoice& choice : kAxesChoices) {
    OpRow r;
    r.name = prim + "/" + choice.name;
    r.primitive = prim;
    r.dtypes = dtypes;
    for (const Shape& s : choice.shapes) r.shape_sets.push_back({s});
    r.sample = sample;
    std::optional<Axes> axes = choice.axes;
    r.apply = [op, axes](const std::vector<Array>& a) {
      return op(a[0], axes_for(axes, a[0].shape().size()));
    };
    r.oracle = [axes, init, f, wraps](const std::vector<HostArray>& in, DType d) {
      HostArray out = fold_oracle(in[0], axes_for(axes, in[0].shape.size()), init(d), f);
      if (wraps)
        for (double& v : out.values) v = wrap(v, d);
      return out;
    };
    rows.push_back(std::move(r));
  }
  return rows;
}

// The first maximal (argmax) or minimal (argmin) index along `axis`; inputs here have no NaN.
HostArray arg_oracle(const HostArray& x, std::int64_t axis, bool is_max) {
  HostArray out;
  for (std::size_t d = 0; d < x.shape.size(); ++d)
    if (static_cast<std::int64_t>(d) != axis) out.shape.push_back(x.shape[d]);
  out.values.assign(static_cast<std::size_t>(shape_size(out.shape)), 0);
  std::vector<double> best(out.values.size());
  if (shape_size(x.shape) == 0) return out;
  std::vector<std::int64_t> index(x.shape.size(), 0);
  do {
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < x.shape.size(); ++d)
      if (static_cast<std::int64_t>(d) != axis) flat = flat * x.shape[d] + index[d];
    auto j = static_cast<std::size_t>(flat);
    double v = x.at(index), k = static_cast<double>(index[static_cast<std::size_t>(axis)]);
    if (k == 0 || (is_max ? v > best[j] : v < best[j])) {
      best[j] = v;
      out.values[j] = k;
    }
  } while (next_index(index, x.shape));
  return out;
}

std::vector<OpRow> arg_rows(const std::string& prim,
                            Array (*op)(const Array&, std::int64_t, DType)) {
  struct Choice {
    std::string name;
    std::int64_t axis;
    DType index_dtype;
    std::vector<Shape> shapes;
  };
  const std::vector<Choice> choices = {
      {"axis0", 0, int32, {{1}, {5}, {2, 3}, {3, 0, 2}, {1, 4, 1}, {4, 1}}},
      {"axis1", 1, int32, {{2, 3}, {0, 3}, {1, 4, 1}, {2, 3, 4}, {3, 1}}},
      {"axis2_int64", 2, int64, {{2, 3, 4}, {1, 4, 1}, {0, 2, 3}}},
  };
  std::vector<OpRow> rows;
  bool is_max = prim == "argmax";
  for (const Choice& c : choices) {
    OpRow r;
    r.name = prim + "/" + c.name;
    r.primitive = prim;
    r.dtypes = kAll;
    for (const Shape& s : c.shapes) r.shape_sets.push_back({s});
    r.apply = [op, c](const std::vector<Array>& a) {
      Array out = op(a[0], c.axis, c.index_dtype);
      CHECK(out.dtype() == c.index_dtype);
      return out;
    };
    r.oracle = [c, is_max](const std::vector<HostArray>& in, DType) {
      return arg_oracle(in[0], c.axis, is_max);
    };
    rows.push_back(std::move(r));
  }
  return rows;
}

double max_of(double a, double b) { return std::max(a, b); }
double min_of(double a, double b) { return std::min(a, b); }

const bool kRows = [] {
  add_rows(reduce_rows(
      "reduce_sum", lax::reduce_sum, kNum, [](DType) { return 0.0; },
      [](double a, double b) { return a + b; }, sum_sample, true));
  add_rows(reduce_rows(
      "reduce_prod", lax::reduce_prod, kNum, [](DType) { return 1.0; },
      [](double a, double b) { return a * b; }, product_sample, true));
  add_rows(reduce_rows("reduce_max", lax::reduce_max, kAll, lowest, max_of));
  add_rows(reduce_rows("reduce_min", lax::reduce_min, kAll, highest, min_of));
  add_rows(arg_rows("argmax", lax::argmax));
  add_rows(arg_rows("argmin", lax::argmin));
  return true;
}();

}  // namespace

TEST_CASE("reductions over 0-sized axes give the identity", "[reduce]") {
  Array f = np::zeros({2, 0}, float32);
  CHECK(lax::reduce_sum(f, {1}).shape() == Shape{2});
  CHECK(lax::reduce_sum(f, {1}).to_vector<float>() == std::vector<float>{0, 0});
  CHECK(lax::reduce_prod(f, {1}).to_vector<float>() == std::vector<float>{1, 1});
  CHECK(lax::reduce_max(f, {1}).to_vector<float>() == std::vector<float>(2, -INFINITY));
  CHECK(lax::reduce_min(f, {1}).to_vector<float>() == std::vector<float>(2, INFINITY));
  CHECK(lax::reduce_sum(f, {0}).shape() == Shape{0});
  CHECK(lax::reduce_sum(f, {0, 1}).item<float>() == 0);

  Array i = np::zeros({0}, int32);
  CHECK(lax::reduce_max(i, {0}).item<std::int32_t>() == std::numeric_limits<std::int32_t>::min());
  CHECK(lax::reduce_min(i, {0}).item<std::int32_t>() == std::numeric_limits<std::int32_t>::max());
  Array l = np::zeros({0}, int64);
  CHECK(lax::reduce_max(l, {0}).item<std::int64_t>() == std::numeric_limits<std::int64_t>::min());
  CHECK(lax::reduce_min(l, {0}).item<std::int64_t>() == std::numeric_limits<std::int64_t>::max());
  Array u = np::zeros({0}, uint32);
  CHECK(lax::reduce_max(u, {0}).item<std::uint32_t>() == 0);
  CHECK(lax::reduce_min(u, {0}).item<std::uint32_t>() == 0xffffffffu);
  CHECK(lax::reduce_prod(u, {0}).item<std::uint32_t>() == 1);
  Array b = np::zeros({0}, bool_);
  CHECK(lax::reduce_max(b, {0}).item<bool>() == false);
  CHECK(lax::reduce_min(b, {0}).item<bool>() == true);
  Array d = np::zeros({0}, float64);
  CHECK(lax::reduce_max(d, {0}).item<double>() == -INFINITY);
  CHECK(lax::reduce_min(d, {0}).item<double>() == INFINITY);
}

TEST_CASE("reduce_max and reduce_min propagate NaN", "[reduce]") {
  const float nan = NAN;
  Array x = np::array(std::vector<float>{1, nan, 3, -INFINITY, 2, INFINITY}, {2, 3});
  CHECK(std::isnan(lax::reduce_max(x, {0, 1}).item<float>()));
  CHECK(std::isnan(lax::reduce_min(x, {0, 1}).item<float>()));
  std::vector<float> mx = lax::reduce_max(x, {0}).to_vector<float>();
  CHECK(mx[0] == 1);
  CHECK(std::isnan(mx[1]));
  CHECK(mx[2] == INFINITY);
  std::vector<float> mn = lax::reduce_min(x, {1}).to_vector<float>();
  CHECK(std::isnan(mn[0]));
  CHECK(mn[1] == -INFINITY);
  // NaN first or last in the fold makes no difference.
  CHECK(std::isnan(lax::reduce_max(np::array({double(NAN), 1.0}), {0}).item<double>()));
  CHECK(std::isnan(lax::reduce_min(np::array({1.0, double(NAN)}), {0}).item<double>()));
  CHECK(std::isnan(lax::reduce_sum(np::array({1.0, double(NAN)}), {0}).item<double>()));
}

TEST_CASE("argmax and argmin: first NaN wins, else the first extremal index", "[reduce]") {
  Array x = np::array({1.0f, NAN, 5.0f, NAN});
  CHECK(lax::argmax(x, 0).item<std::int32_t>() == 1);
  CHECK(lax::argmin(x, 0).item<std::int32_t>() == 1);
  Array y = np::array({3.0, 1.0, 3.0, 1.0});
  CHECK(lax::argmax(y, 0).item<std::int32_t>() == 0);
  CHECK(lax::argmin(y, 0).item<std::int32_t>() == 1);
  Array inf = np::array({-INFINITY, -INFINITY});
  CHECK(lax::argmax(inf, 0).item<std::int32_t>() == 0);
  Array b = np::array({false, true, true});
  CHECK(lax::argmax(b, 0).item<std::int32_t>() == 1);
  CHECK(lax::argmin(b, 0).item<std::int32_t>() == 0);
  Array m = np::array(std::vector<std::int32_t>{4, 7, 7, 9, 2, 9}, {2, 3});
  CHECK(lax::argmax(m, 1, int64).to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 0});
  CHECK(lax::argmin(m, 0).to_vector<std::int32_t>() == std::vector<std::int32_t>{0, 1, 0});
  CHECK(lax::argmax(m, 1, int64).dtype() == int64);
}

TEST_CASE("integer sums and products wrap around", "[reduce]") {
  constexpr auto kMax32 = std::numeric_limits<std::int32_t>::max();
  CHECK(lax::reduce_sum(np::array({kMax32, 1}), {0}).item<std::int32_t>() ==
        std::numeric_limits<std::int32_t>::min());
  CHECK(lax::reduce_prod(np::array({65536, 65536}), {0}).item<std::int32_t>() == 0);
  CHECK(lax::reduce_prod(np::array({65536, -65537}), {0}).item<std::int32_t>() == -65536);
  constexpr auto kMax64 = std::numeric_limits<std::int64_t>::max();
  CHECK(lax::reduce_sum(np::array({kMax64, kMax64}), {0}).item<std::int64_t>() == -2);
  CHECK(lax::reduce_sum(np::array({0xffffffffu, 2u}), {0}).item<std::uint32_t>() == 1);
  CHECK(lax::reduce_prod(np::array({0x80000000u, 2u}), {0}).item<std::uint32_t>() == 0);
}

TEST_CASE("reductions keep the weak type; argmax does not", "[reduce]") {
  Array weak = lax::convert_element_type(np::array({1.0f, 2.0f}), float32, /*weak_type=*/true);
  CHECK(lax::reduce_sum(weak, {0}).weak_type());
  CHECK(lax::reduce_max(weak, {0}).weak_type());
  CHECK(lax::reduce_sum(weak, {}).weak_type());
  CHECK_FALSE(lax::argmax(weak, 0).weak_type());
  CHECK_FALSE(lax::reduce_sum(np::array({1.0f}), {0}).weak_type());
  CHECK(lax::reduce_sum(weak, {0}).item<float>() == 3);
}

TEST_CASE("reductions print their params as JAX does", "[reduce]") {
  Array x = np::zeros({2, 3, 4});
  std::string s = jx::make_jaxpr([](const Array& a) {
                    return lax::reduce_sum(a, {2, 0});
                  })(x)
                      .str();
  CHECK_THAT(s, Catch::Contains("reduce_sum[axes=(0, 2) out_sharding=None] a"));
  CHECK_THAT(s, Catch::Contains("f32[3] = "));
  s = jx::make_jaxpr([](const Array& a) { return lax::argmax(a, 1); })(x).str();
  CHECK_THAT(s, Catch::Contains("i32[2,4] = argmax[axes=(1,) index_dtype=int32] a"));
  s = jx::make_jaxpr([](const Array& a) { return lax::reduce_max(a, {}); })(x).str();
  CHECK_THAT(s, Catch::Contains("reduce_max[axes=()] a"));
}

TEST_CASE("reductions reject bad axes and dtypes, in JAX's words", "[reduce][errors]") {
  Array x = np::zeros({2, 3});
  CHECK_THROWS_MATCHES(lax::reduce_sum(x, {1, 1}), ShapeError,
                       Catch::Message("duplicate value in 'axes' of reduction: (1, 1)"));
  CHECK_THROWS_MATCHES(lax::reduce_max(x, {2}), ShapeError,
                       Catch::Message("reduction axes (2,) contains out-of-bounds indices for "
                                      "f32[2,3]."));
  CHECK_THROWS_MATCHES(lax::reduce_min(x, {-1, 0}), ShapeError,
                       Catch::Message("reduction axes (-1, 0) contains out-of-bounds indices for "
                                      "f32[2,3]."));
  CHECK_THROWS_MATCHES(lax::reduce_prod(np::array(1.0f), {0}), ShapeError,
                       Catch::Message("reduction axes (0,) contains out-of-bounds indices for "
                                      "f32[]."));
  CHECK_THROWS_MATCHES(lax::reduce_sum(np::array({true}), {0}), TypeError,
                       Catch::Message("reduce_sum does not accept dtype bool. Accepted dtypes are "
                                      "subtypes of integer, floating."));
  CHECK_THROWS_MATCHES(lax::reduce_prod(np::array({true}), {0}), TypeError,
                       Catch::Message("reduce_prod does not accept dtype bool. Accepted dtypes "
                                      "are subtypes of integer, floating."));
}

TEST_CASE("argmax and argmin reject bad axes, empty axes and index dtypes", "[reduce][errors]") {
  Array x = np::zeros({2, 3});
  CHECK_THROWS_MATCHES(lax::argmax(x, 2), ShapeError,
                       Catch::Message("Invalid axis 2 for operand shape (2, 3)"));
  CHECK_THROWS_MATCHES(lax::argmin(x, -1), ShapeError,
                       Catch::Message("Invalid axis -1 for operand shape (2, 3)"));
  CHECK_THROWS_MATCHES(lax::argmax(np::array(1.0f), 0), ShapeError,
                       Catch::Message("Invalid axis 0 for operand shape ()"));
  CHECK_THROWS_MATCHES(lax::argmax(np::zeros({2, 0}), 1), ShapeError,
                       Catch::Message("argmin and argmax require non-empty reduced dimension. "
                                      "operand.shape=(2, 0) axis=1"));
  CHECK_THROWS_MATCHES(lax::argmin(np::zeros({0}), 0), ShapeError,
                       Catch::Message("argmin and argmax require non-empty reduced dimension. "
                                      "operand.shape=(0,) axis=0"));
  CHECK_THROWS_MATCHES(lax::argmax(x, 0, float32), TypeError,
                       Catch::Message("argmax index_dtype must be int32 or int64, got float32"));
  CHECK_THROWS_MATCHES(lax::argmin(x, 0, uint32), TypeError,
                       Catch::Message("argmin index_dtype must be int32 or int64, got uint32"));
}

TEST_CASE("reduce rules reject malformed params and operand counts", "[reduce][errors]") {
  // Reachable from parsed jaxprs only: the lax wrappers always build well-formed params.
  const Primitive* argmax = find_primitive("argmax");
  const Primitive* sum = find_primitive("reduce_sum");
  REQUIRE(argmax);
  REQUIRE(sum);
  std::vector<ShapedArray> in{ShapedArray{{2, 3}, float32, false}};
  Params two_axes{{"axes", Param::ints({0, 1})}, {"index_dtype", Param::dtype(int32)}};
  CHECK_THROWS_MATCHES(argmax->abstract_eval(in, two_axes), ShapeError,
                       Catch::Message("argmax reduces exactly one axis, got axes (0, 1)"));
  CHECK_THROWS_MATCHES(sum->abstract_eval({}, Params{{"axes", Param::ints({})}}), TypeError,
                       Catch::Message("reduce_sum takes 1 operand, got 0"));
  CHECK_THROWS_AS(sum->abstract_eval(in, Params{}), Error);  // no axes param
}

}  // namespace jx::testing
