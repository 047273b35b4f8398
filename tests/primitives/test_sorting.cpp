// Op-table rows and focused tests for sort: values against a std::stable_sort oracle written here
// over doubles, the float total order, multi-key order and stability, eager vs jit, vmap against
// a loop, gradients in closed form and by finite differences, the jaxpr and HLO text, the thunk
// the CPU backend runs, and every error message.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>

#include "core/primitive.hpp"
#include "hlo/evaluator.hpp"
#include "hlo/ir.hpp"
#include "jaxpr/jaxpr.hpp"
#include "support/check_grads.hpp"
#include "support/error_of.hpp"
#include "support/op_table.hpp"

namespace jx::testing {
namespace {

using Arrays = std::vector<Array>;

const std::vector<DType>& kAll = kAllTypes;
// Every dtype but float64: rows with ties (see kRows).
const std::vector<DType> kTies = [] {
  std::vector<DType> out;
  for (DType d : kAllTypes)
    if (d != float64) out.push_back(d);
  return out;
}();

// -1, 0, 1 in the oracle's order: NaNs after everything and equal to each other; -0.0 == 0.0.
int order(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return int(std::isnan(a)) - int(std::isnan(b));
  return int(a > b) - int(a < b);
}

// The operands sorted along `dim` by the first `num_keys`, with std::stable_sort per row.
std::vector<HostArray> sort_oracle(const std::vector<HostArray>& in, std::int64_t dim,
                                   std::size_t num_keys) {
  const Shape& s = in[0].shape;
  auto d = static_cast<std::size_t>(dim);
  std::int64_t outer = 1, n = s[d], inner = 1;
  for (std::size_t k = 0; k < d; ++k) outer *= s[k];
  for (std::size_t k = d + 1; k < s.size(); ++k) inner *= s[k];
  std::vector<HostArray> out = in;
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      auto at = [&](std::int64_t j) { return static_cast<std::size_t>((o * n + j) * inner + i); };
      std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
      std::iota(perm.begin(), perm.end(), 0);
      std::stable_sort(perm.begin(), perm.end(), [&](std::int64_t a, std::int64_t b) {
        for (std::size_t k = 0; k < num_keys; ++k)
          if (int c = order(in[k].values[at(a)], in[k].values[at(b)])) return c < 0;
        return false;
      });
      for (std::size_t k = 0; k < in.size(); ++k)
        for (std::int64_t j = 0; j < n; ++j)
          out[k].values[at(j)] = in[k].values[at(perm[static_cast<std::size_t>(j)])];
    }
  }
  return out;
}

// Few distinct values: keys tie often, so the later keys and stability decide.
double few_values(std::mt19937& rng, DType d) {
  if (d == bool_) return uniform(rng, -1, 1) > 0;
  return std::round(uniform(rng, is_unsigned(d) ? 0 : -1.4, is_unsigned(d) ? 2.4 : 1.4));
}

struct Choice {
  std::string name;
  int dimension;  // as the wrapper takes it: negative counts from the end
  std::vector<Shape> shapes;
};

const std::vector<Choice> kChoices = {
    {"last", -1, {{0}, {1}, {5}, {2, 3}, {3, 0, 2}, {1, 4, 1}, {2, 3, 4}}},
    {"first", 0, {{1}, {6}, {3, 2}, {0, 3}, {4, 1, 2}}},
    {"middle", 1, {{2, 3, 4}, {2, 0, 3}, {3, 1, 2}, {2, 5, 1}}},
};

std::int64_t canonical(int dimension, const Shape& s) {
  return dimension < 0 ? dimension + static_cast<std::int64_t>(s.size()) : dimension;
}

// Rows of sort with `n` operands and `num_keys` keys; the row's result is output `result`.
std::vector<OpRow> sort_rows(const std::string& name, std::size_t n, int num_keys,
                             std::size_t result, std::vector<DType> dtypes, bool ties,
                             std::string subset_reason = "") {
  std::vector<OpRow> rows;
  for (const Choice& c : kChoices) {
    OpRow r;
    r.name = name + "/" + c.name;
    r.primitive = "sort";
    r.dtypes = dtypes;
    r.subset_reason = subset_reason;
    for (const Shape& s : c.shapes) r.shape_sets.push_back(same_shapes(s, static_cast<int>(n)));
    if (ties) r.sample = few_values;
    int dim = c.dimension;
    r.apply = [dim, num_keys, result, n](const Arrays& a) {
      if (n == 1) return lax::sort(a[0], dim);
      if (n == 2 && num_keys == 1) {
        auto [k, v] = lax::sort_key_val(a[0], a[1], dim);
        return result == 0 ? k : v;
      }
      return lax::sort(a, dim, true, num_keys)[result];
    };
    r.oracle = [dim, num_keys, result](const std::vector<HostArray>& in, DType) {
      return sort_oracle(in, canonical(dim, in[0].shape),
                         static_cast<std::size_t>(num_keys))[result];
    };
    rows.push_back(std::move(r));
  }
  return rows;
}

const bool kRows = [] {
  add_rows(sort_rows("sort", 1, 1, 0, kAll, false));
  add_rows(sort_rows("sort_key_val/values", 2, 1, 1, kAll, false));
  // Rows with ties: derivatives jump where keys are equal, so these have no float64 (the
  // gradient table checks float64 rows). Ties leave the values in their order (stability), and
  // the second key decides among equal first keys.
  const std::string no_float64 = "no float64: the gradient table would check ties";
  add_rows(sort_rows("sort/ties", 1, 1, 0, kTies, true, no_float64));
  add_rows(sort_rows("sort_key_val/ties", 2, 1, 1, kTies, true, no_float64));
  add_rows(sort_rows("sort/num_keys2", 3, 2, 2, kTies, true, no_float64));
  add_rows(sort_rows("sort/num_keys2_second_key", 3, 2, 1, kTies, true, no_float64));
  // Three operands; the gradient table checks every operand's derivative in float64, where the
  // keys are distinct.
  add_rows(sort_rows("sort/three_operands", 3, 2, 2, kAll, false));
  return true;
}();

// ---- top_k rows: the k largest along the last axis and their indices, by a stable descending
// std::stable_sort of each row (NaN largest, ties in index order) ----
std::vector<HostArray> top_k_oracle(const HostArray& x, std::int64_t k) {
  std::int64_t n = x.shape.back(), rows = n == 0 ? 0 : shape_size(x.shape) / n;
  Shape shape = x.shape;
  shape.back() = k;
  HostArray values{shape, {}}, indices{shape, {}};
  for (std::int64_t r = 0; r < rows; ++r) {
    auto at = [&](std::int64_t j) { return x.values[static_cast<std::size_t>(r * n + j)]; };
    std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
    std::iota(perm.begin(), perm.end(), 0);
    std::stable_sort(perm.begin(), perm.end(),
                     [&](std::int64_t a, std::int64_t b) { return order(at(a), at(b)) > 0; });
    for (std::int64_t j = 0; j < k; ++j) {
      values.values.push_back(at(perm[static_cast<std::size_t>(j)]));
      indices.values.push_back(static_cast<double>(perm[static_cast<std::size_t>(j)]));
    }
  }
  return {values, indices};
}

// Rows of top_k for one k over shapes whose last dim is at least k; output 0 (values) or 1.
std::vector<OpRow> top_k_rows(int k, std::vector<Shape> shapes, bool ties) {
  std::vector<OpRow> rows;
  for (int output : {0, 1}) {
    OpRow r;
    r.name = "top_k/k=" + std::to_string(k) + (ties ? "/ties" : "") +
             (output == 0 ? "/values" : "/indices");
    r.primitive = "top_k";
    r.dtypes = ties ? kTies : kAll;
    if (ties) r.subset_reason = "no float64: the gradient table would check ties";
    for (const Shape& s : shapes) r.shape_sets.push_back({s});
    if (ties) r.sample = few_values;
    r.apply = [k, output](const Arrays& a) {
      auto [values, indices] = lax::top_k(a[0], k);
      return output == 0 ? values : indices;
    };
    r.oracle = [k, output](const std::vector<HostArray>& in, DType) {
      return top_k_oracle(in[0], k)[static_cast<std::size_t>(output)];
    };
    rows.push_back(std::move(r));
  }
  return rows;
}

const bool kTopKRows = [] {
  add_rows(top_k_rows(0, {{0}, {3}, {2, 0}, {0, 4}}, false));
  add_rows(top_k_rows(1, {{1}, {4}, {3, 1}, {0, 2}}, false));
  add_rows(top_k_rows(3, {{3}, {7}, {2, 5}, {2, 3, 6}, {1, 0, 4}}, false));
  add_rows(top_k_rows(2, {{5}, {3, 4}, {2, 2, 6}}, true));
  return true;
}();

// ---- helpers for the focused tests ----
std::vector<double> values(const Array& x) { return x.to_vector<double>(); }

std::uint64_t bits(double v) { return std::bit_cast<std::uint64_t>(v); }
std::vector<std::uint64_t> bit_patterns(const Array& x) {
  std::vector<std::uint64_t> out;
  for (double v : x.astype(float64).to_vector<double>()) out.push_back(bits(v));
  return out;
}

Array f64(const std::vector<double>& v, const Shape& shape = {}) {
  return shape.empty() ? np::array(v) : np::array(v, shape);
}

}  // namespace

TEST_CASE("sort rows: eager and jit match the std::stable_sort oracle", "[sort]") {
  std::mt19937 rng(7);
  int rows = 0;
  for (const OpRow& row : op_table()) {
    if (row.primitive != "sort") continue;
    ++rows;
    auto jitted = jit([&row](const Arrays& args) { return row.apply(args); });
    for (DType dtype : row.dtypes) {
      for (const auto& shapes : row.shape_sets) {
        Arrays args;
        std::vector<HostArray> host;
        for (const Shape& s : shapes) {
          HostArray h{s, {}};
          for (std::int64_t i = 0; i < shape_size(s); ++i)
            h.values.push_back(sample_value(row, rng, dtype));
          args.push_back(from_host(h, dtype));
          host.push_back(to_host(args.back()));
        }
        INFO(row.name << " " << dtype_name(dtype) << " " << shape_str(shapes[0]));
        HostArray want = row.oracle(host, dtype);
        Array eager = row.apply(args), compiled = jitted(args);
        CHECK(eager.aval() == compiled.aval());
        CHECK(eager.shape() == want.shape);
        CHECK(values(eager) == want.values);
        CHECK(values(compiled) == want.values);
      }
    }
  }
  CHECK(rows == 21);
}

TEST_CASE("sort orders floats totally: -inf < -0.0 == 0.0 < inf < NaN", "[sort]") {
  const double nan = std::nan(""), inf = INFINITY;
  auto sort_jit = jit([](const Array& x) { return lax::sort(x); });
  for (DType dtype : {bfloat16, float16, float32, float64}) {
    INFO(dtype_name(dtype));
    // -0.0 and 0.0 are equal, and so are NaN and -NaN: each pair keeps its input order.
    Array x = f64({nan, 1, -inf, -0.0, inf, 0.0, -nan, -1, 0.0, -0.0}).astype(dtype);
    std::vector<double> want{-inf, -1, -0.0, 0.0, 0.0, -0.0, 1, inf, nan, -nan};
    // Read back through the dtype: a 16-bit NaN's conversions need not keep its sign.
    std::vector<std::uint64_t> want_bits = bit_patterns(f64(want).astype(dtype));
    CHECK(bit_patterns(lax::sort(x)) == want_bits);
    CHECK(bit_patterns(sort_jit(x)) == want_bits);
    CHECK(bit_patterns(np::sort(x)) == want_bits);
    CHECK(np::argsort(x).to_vector<std::int32_t>() ==
          std::vector<std::int32_t>{2, 7, 3, 5, 8, 9, 1, 4, 0, 6});
  }
}

TEST_CASE("sort: integers by value, uint32 unsigned, bools false first", "[sort]") {
  Array u = np::array(std::vector<std::uint32_t>{0xffffffffu, 1, 0x80000000u, 0});
  CHECK(lax::sort(u).to_vector<std::uint32_t>() ==
        std::vector<std::uint32_t>{0, 1, 0x80000000u, 0xffffffffu});
  Array i = np::array(std::vector<std::int32_t>{5, -2147483647 - 1, 2147483647, -1});
  CHECK(lax::sort(i).to_vector<std::int32_t>() ==
        std::vector<std::int32_t>{-2147483647 - 1, -1, 5, 2147483647});
  Array l = np::array(std::vector<std::int64_t>{std::int64_t{1} << 40, -3, 0});
  CHECK(lax::sort(l).to_vector<std::int64_t>() ==
        std::vector<std::int64_t>{-3, 0, std::int64_t{1} << 40});
  Array b = np::array({true, false, true, false});
  auto [keys, vals] = lax::sort_key_val(b, np::array({0, 1, 2, 3}));
  CHECK(keys.to_vector<bool>() == std::vector<bool>{false, false, true, true});
  CHECK(vals.to_vector<std::int32_t>() == std::vector<std::int32_t>{1, 3, 0, 2});
}

TEST_CASE("sort_key_val is stable; num_keys=2 orders lexicographically", "[sort]") {
  auto [k, v] = lax::sort_key_val(np::array({2, 1, 2, 1, 2}), np::array({0.f, 1.f, 2.f, 3.f, 4.f}));
  CHECK(k.to_vector<std::int32_t>() == std::vector<std::int32_t>{1, 1, 2, 2, 2});
  CHECK(v.to_vector<float>() == std::vector<float>{1, 3, 0, 2, 4});
  CHECK(v.dtype() == float32);

  Arrays ops{np::array({1, 0, 1, 0, 1}), np::array({3.0, 2.0, 1.0, 2.0, 0.0}),
             np::array(std::vector<std::uint32_t>{0, 1, 2, 3, 4})};
  auto check = [](const Arrays& out) {
    CHECK(out.size() == 3);
    CHECK(out[0].to_vector<std::int32_t>() == std::vector<std::int32_t>{0, 0, 1, 1, 1});
    CHECK(out[1].to_vector<double>() == std::vector<double>{2, 2, 0, 1, 3});
    CHECK(out[2].to_vector<std::uint32_t>() == std::vector<std::uint32_t>{1, 3, 4, 2, 0});
  };
  check(lax::sort(ops, 0, true, 2));
  check(jit([](const Arrays& a) { return lax::sort(a, 0, true, 2); })(ops));
  // num_keys=1: the second operand is a value, so ties in the first keep the input order.
  CHECK(lax::sort(ops, 0, true, 1)[2].to_vector<std::uint32_t>() ==
        std::vector<std::uint32_t>{1, 3, 0, 2, 4});
  // is_stable=false sorts the same way: the implementation is always stable.
  CHECK(lax::sort(ops, 0, false, 1)[2].to_vector<std::uint32_t>() ==
        std::vector<std::uint32_t>{1, 3, 0, 2, 4});
}

TEST_CASE("sort of 0-sized and 1-sized dims, eager and jit", "[sort]") {
  auto sort0 = jit([](const Array& x) { return lax::sort(x, 0); });
  auto sort1 = jit([](const Array& x) { return lax::sort(x, 1); });
  Array empty = np::zeros({0, 3});
  CHECK(lax::sort(empty, 0).shape() == Shape{0, 3});
  CHECK(sort0(empty).shape() == Shape{0, 3});
  CHECK(sort1(empty).shape() == Shape{0, 3});
  Array one = f64({3, 1, 2}, {1, 3});
  CHECK(values(lax::sort(one, 0)) == std::vector<double>{3, 1, 2});
  CHECK(values(sort0(one)) == std::vector<double>{3, 1, 2});
  CHECK(values(sort1(one)) == std::vector<double>{1, 2, 3});
}

TEST_CASE("np::sort and np::argsort", "[sort][numpy]") {
  Array m = f64({3, 1, 2, 0, 5, 4}, {2, 3});
  CHECK(values(np::sort(m)) == std::vector<double>{1, 2, 3, 0, 4, 5});
  CHECK(values(np::sort(m, 0)) == std::vector<double>{0, 1, 2, 3, 5, 4});
  Array idx = np::argsort(m, -2);
  CHECK(idx.dtype() == int32);
  CHECK(idx.to_vector<std::int32_t>() == std::vector<std::int32_t>{1, 0, 0, 0, 1, 1});
  // Stable: equal elements keep their order.
  CHECK(np::argsort(np::array({2, 1, 2, 1})).to_vector<std::int32_t>() ==
        std::vector<std::int32_t>{1, 3, 0, 2});
  CHECK(jit([](const Array& x) { return np::argsort(x); })(m).to_vector<std::int32_t>() ==
        std::vector<std::int32_t>{1, 2, 0, 0, 2, 1});
  CHECK_THROWS_MATCHES(np::sort(np::array(1.0f)), ShapeError,
                       Catch::Message("axis -1 is out of bounds for array of dimension 0"));
  CHECK_THROWS_MATCHES(np::argsort(m, 2), ShapeError,
                       Catch::Message("axis 2 is out of bounds for array of dimension 2"));
}

TEST_CASE("vmap of sort matches a loop over examples", "[sort][vmap]") {
  // Five examples of shape (4, 3), each sorted along its dim 0 (with values alongside).
  std::mt19937 rng(3);
  std::vector<Array> keys, vals;
  for (int b = 0; b < 5; ++b) {
    std::vector<double> k(12), v(12);
    for (double& e : k) e = std::round(uniform(rng, -2, 2));  // ties: stability matters
    for (double& e : v) e = uniform(rng, -1, 1);
    keys.push_back(f64(k, {4, 3}));
    vals.push_back(f64(v, {4, 3}));
  }
  auto f = [](const Array& k, const Array& v) { return lax::sort({k, v}, 0)[1]; };
  std::vector<Array> want;
  for (int b = 0; b < 5; ++b) want.push_back(f(keys[b], vals[b]));
  Array want_stacked = np::stack(want, 0);
  Array k0 = np::stack(keys, 0), v0 = np::stack(vals, 0);
  CHECK(values(vmap(f)(k0, v0)) == values(want_stacked));
  CHECK(values(jit(vmap(f))(k0, v0)) == values(want_stacked));
  // in_axes 1: the batch axis sits where the examples' sorted dim 0 was.
  Array k1 = np::stack(keys, 1), v1 = np::stack(vals, 1);
  CHECK(values(vmap(f, 1, 0)(k1, v1)) == values(want_stacked));
  // Batched keys, unbatched values: the values are broadcast to every example.
  std::vector<Array> shared;
  for (int b = 0; b < 5; ++b) shared.push_back(f(keys[b], vals[0]));
  CHECK(values(vmap(f, {0, none}, 0)(k0, vals[0])) == values(np::stack(shared, 0)));
  // Single-operand sort along the last dim, batch axis last.
  auto g = [](const Array& x) { return lax::sort(x); };
  std::vector<Array> sorted;
  for (int b = 0; b < 5; ++b) sorted.push_back(g(keys[b]));
  CHECK(values(vmap(g, 2, 0)(np::stack(keys, 2))) == values(np::stack(sorted, 0)));
}

TEST_CASE("grad of sum(sort(x) * w) is w permuted back", "[sort][autodiff]") {
  Array x = f64({0.3, -1.2, 2.5, 0.1, -0.7});
  Array w = f64({1, 2, 3, 4, 5});
  // sorted position j holds x[perm[j]]: perm = (1, 4, 3, 0, 2), so grad[perm[j]] = w[j].
  std::vector<double> want{4, 1, 5, 3, 2};
  auto loss = [&w](const Array& a) { return np::sum(lax::sort(a) * w); };
  CHECK(values(grad(loss)(x)) == want);
  CHECK(values(jit(grad(loss))(x)) == want);
  // Along dim 0 of a matrix, and through sort_key_val's values (the keys get no gradient).
  Array m = f64({2, 0, 1, 3, -1, 5}, {3, 2});  // columns (2, 1, -1) and (0, 3, 5)
  Array wm = f64({10, 20, 30, 40, 50, 60}, {3, 2});
  auto loss_m = [&wm](const Array& a) { return np::sum(lax::sort(a, 0) * wm); };
  CHECK(values(grad(loss_m)(m)) == std::vector<double>{50, 20, 30, 40, 10, 60});
  auto loss_kv = [&w](const Array& k, const Array& v) {
    return np::sum(lax::sort_key_val(k, v).second * w);
  };
  auto [gk, gv] = grad<0, 1>(loss_kv)(x, f64({9, 8, 7, 6, 5}));
  CHECK(values(gk) == std::vector<double>(5, 0.0));
  CHECK(values(gv) == want);
  // Forward mode: the tangent is permuted as x was.
  auto [out, t] = jvp([](const Array& a) { return lax::sort(a); }, std::tuple{x},
                      std::tuple{f64({10, 20, 30, 40, 50})});
  CHECK(values(out) == std::vector<double>{-1.2, -0.7, 0.1, 0.3, 2.5});
  CHECK(values(t) == std::vector<double>{20, 50, 40, 10, 30});
}

TEST_CASE("sort derivatives match finite differences", "[sort][autodiff]") {
  std::mt19937 rng(11);
  auto random = [&](const Shape& s) {
    std::vector<double> v(static_cast<std::size_t>(shape_size(s)));
    for (double& e : v) e = uniform(rng, -3, 3);
    return f64(v, s);
  };
  check_grads([](const Arrays& a) { return lax::sort(a[0], 1); }, {random({2, 4, 3})}, 2);
  check_grads([](const Arrays& a) { return lax::sort(a[0], 0) * lax::sort(a[0], 2); },
              {random({3, 2, 4})}, 2);
  check_grads(
      [](const Arrays& a) {
        auto [k, v] = lax::sort_key_val(a[0], a[1], 0);
        return k * v + lax::sort(a, 0, true, 2)[1];
      },
      {random({5, 2}), random({5, 2})}, 2);
  // An integer key: only the values are differentiated.
  Array ik = np::array(std::vector<std::int32_t>{3, 1, 2, 1}, {4});
  check_grads([](const Arrays& a) { return lax::sort_key_val(a[0], a[1]).second; },
              {ik, random({4})}, 2);
}

TEST_CASE("sort prints in the jaxpr as JAX does", "[sort][jaxpr]") {
  Array x = np::zeros({3});
  CHECK(make_jaxpr([](const Array& a) { return lax::sort(a); })(x).str() ==
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = sort[dimension=0 is_stable=True num_keys=1] a\n"
        "  in (b,) }");
  Array m = np::zeros({2, 3});
  std::string s = make_jaxpr([](const Array& a, const Array& b) {
                    return lax::sort({a, b}, -2, false, 2);
                  })(m, m.astype(int32))
                      .str();
  CHECK_THAT(s, Catch::Contains("c:f32[2,3] d:i32[2,3] = sort[dimension=0 is_stable=False "
                                "num_keys=2] a b"));
}

TEST_CASE("grad of sort is sorts: the jaxpr parses back and typechecks", "[sort][jaxpr]") {
  Array x = np::zeros({2, 3});
  auto loss = [](const Array& a) { return np::sum(lax::sort(a, 0) * a); };
  std::string text = make_jaxpr(grad(loss))(x).str();
  INFO(text);
  // The forward sort, the permutation (an iota sorted by the keys: int32 values) and the
  // cotangent sent back by sorting it by the permutation.
  std::size_t sorts = 0;
  const std::string eqn = "= sort[dimension=0 is_stable=True num_keys=1] ";
  for (auto at = text.find(eqn); at != std::string::npos; at = text.find(eqn, at + 1)) ++sorts;
  CHECK(sorts == 3);
  CHECK_THAT(text, Catch::Contains("_:f32[2,3] h:i32[2,3] = sort"));
  CHECK_THAT(text, Catch::Contains("_:i32[2,3] i:f32[2,3] = sort"));
  Jaxpr parsed = read_jaxpr(text);
  CHECK(to_string(parsed) == text);
  typecheck(parsed);
}

TEST_CASE("sort lowers to an HLO sort with a tuple result and runs as a host thunk",
          "[sort][jit]") {
  auto f = jit([](const Array& x) { return lax::sort(np::exp(x)) * 2.0f; });
  Array x = np::array({0.5f, -1.0f, 2.0f, 0.0f});
  auto lowered = f.lower(x);
  CHECK_THAT(lowered.hlo_text(), Catch::Contains("= (f32[4]{0}) sort(f32[4]{0} %exponential"));
  CHECK_THAT(lowered.hlo_text(), Catch::Contains("), dimensions={0}, is_stable=true, num_keys=1"));
  CHECK_THAT(lowered.hlo_text(), Catch::Contains("get-tuple-element((f32[4]{0}) %sort"));
  auto compiled = lowered.compile();
  std::string seq = compiled.thunk_sequence();
  INFO(seq);
  std::vector<std::string> kinds;
  std::istringstream in(seq);
  for (std::string line; std::getline(in, line);) kinds.push_back(line.substr(0, line.find(' ')));
  CHECK(kinds == std::vector<std::string>{"kernel", "sort", "kernel"});
  std::vector<float> got = compiled(x).to_vector<float>();
  std::vector<float> want{std::exp(-1.0f), std::exp(0.0f), std::exp(0.5f), std::exp(2.0f)};
  REQUIRE(got.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) CHECK(got[i] == Approx(2 * want[i]).epsilon(1e-6));
  CHECK(values(f(x)) == values(compiled(x)));
  // A sort whose outputs are the program's outputs writes them directly; one output unused.
  auto kv = jit([](const Array& k, const Array& v) { return lax::sort_key_val(k, v); });
  auto [k, v] = kv(np::array({3, 1, 2}), np::array({1.0, 2.0, 3.0}));
  CHECK(k.to_vector<std::int32_t>() == std::vector<std::int32_t>{1, 2, 3});
  CHECK(values(v) == std::vector<double>{2, 3, 1});
  auto vals = jit([](const Array& a, const Array& b) { return lax::sort({a, b}, 0)[1] + 1.0; });
  CHECK(values(vals(np::array({3, 1, 2}), np::array({1.0, 2.0, 3.0}))) ==
        std::vector<double>{3, 4, 2});
}

TEST_CASE("HLO sort: text round trip, verifier and evaluator", "[sort][hlo]") {
  const std::string text =
      R"(HloModule m, entry_computation_layout={(s32[2,3]{1,0}, f32[2,3]{1,0})->f32[2,3]{1,0}}

ENTRY %main (k: s32[2,3], v: f32[2,3]) -> f32[2,3] {
  %k = s32[2,3]{1,0} parameter(0)
  %v = f32[2,3]{1,0} parameter(1)
  %s = (s32[2,3]{1,0}, f32[2,3]{1,0}) sort(s32[2,3]{1,0} %k, f32[2,3]{1,0} %v), dimensions={1}, is_stable=true, num_keys=1
  ROOT %g = f32[2,3]{1,0} get-tuple-element((s32[2,3]{1,0}, f32[2,3]{1,0}) %s), index=1
}
)";
  auto m = hlo::parse_module(text);
  hlo::verify(*m);
  CHECK(hlo::to_string(*m) == text);
  Array k = np::array(std::vector<std::int32_t>{2, 0, 2, 1, 1, 0}, {2, 3});
  Array v = np::array(std::vector<float>{0, 1, 2, 3, 4, 5}, {2, 3});
  std::vector<Array> args{k, v};
  CHECK(hlo::evaluate(*m->entry(), args).to_vector<float>() ==
        std::vector<float>{1, 0, 2, 5, 3, 4});

  // The text with each (from, to) replaced everywhere, parsed and verified.
  using Edits = std::vector<std::pair<std::string, std::string>>;
  auto verify_error = [&](const Edits& edits) {
    std::string bad = text;
    for (const auto& [from, to] : edits)
      for (auto at = bad.find(from); at != std::string::npos; at = bad.find(from, at + to.size()))
        bad.replace(at, from.size(), to);
    return error_of<CompileError>([&] { hlo::verify(*hlo::parse_module(bad)); });
  };
  CHECK(verify_error({{"dimensions={1}", "dimensions={2}"}}) ==
        "HLO verifier: s: dimensions {2} must be unique dimensions in [0, 2)");
  CHECK(verify_error({{"num_keys=1", "num_keys=3"}}) ==
        "HLO verifier: s: num_keys=3 must be between 1 and the operand count");
  CHECK(verify_error({{"is_stable=true", "is_stable=maybe"}}) ==
        "HLO verifier: s: is_stable must be true or false");
  CHECK(verify_error({{", is_stable=true", ""}}) ==
        "HLO verifier: s: is_stable must be true or false");
  CHECK(verify_error({{"(s32[2,3]{1,0}, f32[2,3]{1,0}) ", "(f32[2,3]{1,0}, f32[2,3]{1,0}) "}}) ==
        "HLO verifier: s: result shape must be (s32[2,3]{1,0}, f32[2,3]{1,0}), got "
        "(f32[2,3]{1,0}, f32[2,3]{1,0})");
  CHECK(verify_error({{"f32[2,3]{1,0})->", "f32[3,2]{1,0})->"},
                      {"v: f32[2,3]", "v: f32[3,2]"},
                      {"%v = f32[2,3]", "%v = f32[3,2]"},
                      {"f32[2,3]{1,0} %v)", "f32[3,2]{1,0} %v)"}}) ==
        "HLO verifier: s: cannot sort f32[3,2]{1,0} with s32[2,3]{1,0}");
}

TEST_CASE("sort rejects bad operands and dimensions, in JAX's words", "[sort][errors]") {
  Array x = np::zeros({2, 3});
  CHECK_THROWS_MATCHES(lax::sort(Arrays{}), TypeError,
                       Catch::Message("Sort requires at least one operand"));
  CHECK_THROWS_MATCHES(lax::sort({x, x}, -1, true, 3), TypeError,
                       Catch::Message("num_keys=3 must be between 1 and len(operand)=2"));
  CHECK_THROWS_MATCHES(lax::sort({x}, -1, true, 0), TypeError,
                       Catch::Message("num_keys=0 must be between 1 and len(operand)=1"));
  CHECK_THROWS_MATCHES(lax::sort_key_val(np::zeros({3}), np::zeros({4})), TypeError,
                       Catch::Message("Arguments to sort must have equal shapes, got: (3,) (4,)"));
  CHECK_THROWS_MATCHES(lax::sort({x, x, np::zeros({3, 2})}, 0), TypeError,
                       Catch::Message("Arguments to sort must have equal shapes, got: (2, 3) (2, "
                                      "3) (3, 2)"));
  CHECK_THROWS_MATCHES(lax::sort(x, 2), ShapeError,
                       Catch::Message("axis 2 is out of bounds for array of dimension 2"));
  CHECK_THROWS_MATCHES(lax::sort(x, -3), ShapeError,
                       Catch::Message("axis -3 is out of bounds for array of dimension 2"));
  CHECK_THROWS_MATCHES(lax::sort(np::array(1.0f)), ShapeError,
                       Catch::Message("axis -1 is out of bounds for array of dimension 0"));
  // Reachable from parsed jaxprs only: the wrapper canonicalizes the dimension.
  const Primitive* sort = find_primitive("sort");
  REQUIRE(sort);
  std::vector<ShapedArray> in{ShapedArray{{2, 3}, float32, false}};
  Params negative{{"dimension", Param::integer(-1)},
                  {"is_stable", Param::boolean(true)},
                  {"num_keys", Param::integer(1)}};
  CHECK(error_of<ShapeError>([&] { sort->abstract_eval(in, negative); }) ==
        "axis -1 is out of bounds for array of dimension 2");
  CHECK(error_of<TypeError>([&] { sort->abstract_eval({}, negative); }) ==
        "Sort requires at least one operand");
  CHECK_THROWS_AS(sort->abstract_eval(in, Params{{"dimension", Param::integer(0)}}), Error);
}

}  // namespace jx::testing
