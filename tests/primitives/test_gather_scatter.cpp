// Op-table rows and focused tests for gather and the scatters; the oracles are explicit loops over
// fixed index lists, written here without jx's slice map.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "jaxpr/jaxpr.hpp"
#include "support/op_table.hpp"

namespace jx::testing {
namespace {

using Ints = std::vector<std::int64_t>;
using Shapes = std::vector<std::vector<Shape>>;
using V = std::vector<double>;
using Mode = lax::GatherScatterMode;

std::vector<double> values(const Array& x) { return x.to_vector<double>(); }

Array int_array(const std::vector<std::int32_t>& v, Shape shape) {
  return np::reshape(np::array(v), std::move(shape));
}

std::int64_t clamp(std::int64_t v, std::int64_t lo, std::int64_t hi) {
  return std::max(lo, std::min(v, hi));
}

// Row k of a [n, rest...] host array as a flat vector.
V row_of(const HostArray& x, std::int64_t k) {
  std::int64_t w = x.shape.empty() || x.shape[0] == 0
                       ? 0
                       : static_cast<std::int64_t>(x.values.size()) / x.shape[0];
  return V(x.values.begin() + k * w, x.values.begin() + (k + 1) * w);
}

// x[ids] along axis 0, as an embedding lookup: ids clamped into [0, n).
const std::vector<std::int32_t> kTakeIds = {3, 0, -1, 9};
Array take_rows(const Array& x, std::optional<Mode> mode,
                std::optional<double> fill = std::nullopt) {
  Ints sizes = x.shape();
  sizes[0] = 1;
  Ints offset;
  for (int d = 1; d < x.ndim(); ++d) offset.push_back(d);
  return lax::gather(x, int_array(kTakeIds, {4, 1}), {offset, {0}, {0}}, sizes, false, false, mode,
                     fill);
}
HostArray take_rows_oracle(const HostArray& x, std::optional<double> fill) {
  HostArray out{x.shape, {}};
  out.shape[0] = 4;
  for (std::int32_t id : kTakeIds) {
    bool in = id >= 0 && id < x.shape[0];
    V r = row_of(x, clamp(id, 0, x.shape[0] - 1));
    if (!in && fill) std::fill(r.begin(), r.end(), *fill);
    out.values.insert(out.values.end(), r.begin(), r.end());
  }
  return out;
}

// out[b] = x[b, ids[b]]: a batching dim pairs operand row b with index row b.
const std::vector<std::int32_t> kPerRowIds = {2, 0, 3};
Array take_per_row(const Array& x) {
  return lax::gather(x, int_array(kPerRowIds, {3, 1}), {{}, {1}, {1}, {0}, {0}}, {1, 1}, false,
                     false, Mode::kClip);
}
HostArray take_per_row_oracle(const HostArray& x) {
  HostArray out{{3}, {}};
  for (std::int64_t b = 0; b < 3; ++b) out.values.push_back(x.values[b * 4 + kPerRowIds[b]]);
  return out;
}

// 2x2 windows of a [4, 5] operand at two start vectors, the second clamped.
const std::vector<std::int32_t> kStarts = {1, 2, 3, 4};
Array windows(const Array& x) {
  return lax::gather(x, int_array(kStarts, {2, 2}), {{1, 2}, {}, {0, 1}}, {2, 2}, false, false,
                     Mode::kClip);
}
HostArray windows_oracle(const HostArray& x) {
  HostArray out{{2, 2, 2}, {}};
  for (int w = 0; w < 2; ++w) {
    std::int64_t r0 = clamp(kStarts[2 * w], 0, 2), c0 = clamp(kStarts[2 * w + 1], 0, 3);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) out.values.push_back(x.values[(r0 + i) * 5 + c0 + j]);
  }
  return out;
}

// Rows of updates combined into rows of the operand at `ids` (out-of-bounds rows dropped).
using Combine = std::function<double(double, double)>;
Array scatter_rows(const Array& x, const Array& u, const std::vector<std::int32_t>& ids,
                   decltype(&lax::scatter_add) op, bool unique) {
  Ints window;
  for (int d = 1; d < u.ndim(); ++d) window.push_back(d);
  return op(x, int_array(ids, {static_cast<std::int64_t>(ids.size()), 1}), u, {window, {0}, {0}},
            false, unique, std::nullopt);
}
HostArray scatter_rows_oracle(const HostArray& x, const HostArray& u,
                              const std::vector<std::int32_t>& ids, const Combine& f, DType d) {
  HostArray out = x;
  std::int64_t w =
      static_cast<std::int64_t>(x.values.size()) / std::max<std::int64_t>(x.shape[0], 1);
  for (std::size_t k = 0; k < ids.size(); ++k) {
    if (ids[k] < 0 || ids[k] >= x.shape[0]) continue;
    for (std::int64_t j = 0; j < w; ++j) {
      double& o = out.values[ids[k] * w + j];
      o = round_to(d,
                   is_integral(d) ? wrap(f(o, u.values[k * w + j]), d) : f(o, u.values[k * w + j]));
    }
  }
  return out;
}

const std::vector<std::int32_t> kRepeated = {3, 0, 3, 9};  // 3 twice, 9 out of bounds
const std::vector<std::int32_t> kUnique = {3, 0, 1};

OpRow scatter_row(std::string name, decltype(&lax::scatter_add) op, std::vector<std::int32_t> ids,
                  Combine f, std::vector<DType> dtypes, bool unique) {
  OpRow r;
  r.primitive = name.substr(0, name.find('/'));
  r.name = std::move(name);
  r.dtypes = std::move(dtypes);
  auto n = static_cast<std::int64_t>(ids.size());
  r.shape_sets = {{{5, 3}, {n, 3}}, {{4, 0}, {n, 0}}, {{6}, {n}}, {{4, 2, 2}, {n, 2, 2}}};
  r.apply = [=](const std::vector<Array>& a) { return scatter_rows(a[0], a[1], ids, op, unique); };
  r.oracle = [=](const std::vector<HostArray>& in, DType d) {
    return scatter_rows_oracle(in[0], in[1], ids, f, d);
  };
  return r;
}

OpRow gather_row(std::string name, Shapes shapes, std::function<Array(const Array&)> apply,
                 std::function<HostArray(const HostArray&)> oracle) {
  OpRow r;
  r.primitive = "gather";
  r.name = std::move(name);
  r.dtypes = kAllTypes;
  r.shape_sets = std::move(shapes);
  r.apply = [apply](const std::vector<Array>& a) { return apply(a[0]); };
  r.oracle = [oracle](const std::vector<HostArray>& in, DType) { return oracle(in[0]); };
  return r;
}

double max_of(double a, double b) { return std::max(a, b); }
double min_of(double a, double b) { return std::min(a, b); }

const bool kRows = add_rows({
    gather_row(
        "gather", {{{5, 3}}, {{5, 0}}, {{1, 2}}, {{6, 2, 2}}},
        [](const Array& x) { return take_rows(x, Mode::kClip); },
        [](const HostArray& x) { return take_rows_oracle(x, std::nullopt); }),
    gather_row(
        "gather/fill", {{{5, 3}}, {{6, 2, 2}}},
        [](const Array& x) { return take_rows(x, Mode::kFillOrDrop, 0.0); },
        [](const HostArray& x) { return take_rows_oracle(x, 0.0); }),
    gather_row("gather/batching_dims", {{{3, 4}}}, take_per_row, take_per_row_oracle),
    gather_row("gather/windows", {{{4, 5}}}, windows, windows_oracle),
    scatter_row("scatter-add", lax::scatter_add, kRepeated, std::plus<double>(), kNumericTypes,
                false),
    scatter_row("scatter-mul", lax::scatter_mul, kUnique, std::multiplies<double>(), kNumericTypes,
                true),
    scatter_row("scatter-min", lax::scatter_min, kUnique, min_of, kAllTypes, true),
    scatter_row("scatter-max", lax::scatter_max, kUnique, max_of, kAllTypes, true),
    scatter_row(
        "scatter", lax::scatter, kUnique, [](double, double u) { return u; }, kAllTypes, true),
});

TEST_CASE("gather's modes: clip clamps, fill gives JAX's fill values", "[gather_scatter]") {
  Array x = np::reshape(np::array(std::vector<float>{10, 11, 12, 13, 14, 15}), {3, 2});
  // ids 3, 0, -1, 9 into 3 rows: clamped to rows 2, 0, 0, 2.
  CHECK(values(take_rows(x, Mode::kClip)) == V{14, 15, 10, 11, 10, 11, 14, 15});
  CHECK(values(take_rows(x, Mode::kPromiseInBounds)) == V{14, 15, 10, 11, 10, 11, 14, 15});
  // Filled: only id 0 is in bounds.
  V filled = values(take_rows(x, Mode::kFillOrDrop));
  CHECK(std::isnan(filled[0]));
  CHECK(filled[2] == 10);
  CHECK(std::isnan(filled[4]));
  CHECK(std::isnan(filled[7]));
  double low = std::numeric_limits<std::int32_t>::lowest();
  CHECK(values(take_rows(np::reshape(np::array(std::vector<int>{1, 2, 3}), {3, 1}),
                         std::nullopt)) == V{low, 1, low, low});
  CHECK(values(take_rows(np::reshape(np::array(std::vector<std::uint8_t>{1, 2, 3}), {3, 1}),
                         std::nullopt)) == V{255, 1, 255, 255});
  CHECK(values(take_rows(x, Mode::kFillOrDrop, -1.0)) == V{-1, -1, 10, 11, -1, -1, -1, -1});
  // The same under jit: the fill is selected in the compiled program.
  auto f = jx::jit([](const Array& a) { return take_rows(a, Mode::kFillOrDrop, -1.0); });
  CHECK(values(f(x)) == V{-1, -1, 10, 11, -1, -1, -1, -1});
}

TEST_CASE("scatter-add accumulates repeated indices and drops out-of-bounds updates",
          "[gather_scatter]") {
  Array x = np::zeros({4}, float32);
  Array ids = int_array({1, 3, 1, 4, -1, 1}, {6, 1});
  Array u = np::array(std::vector<float>{1, 2, 3, 4, 5, 6});
  lax::ScatterDimensionNumbers d{{}, {0}, {0}};
  V want{0, 10, 0, 2};
  CHECK(values(lax::scatter_add(x, ids, u, d)) == want);
  auto f = jx::jit(
      [&](const Array& a, const Array& i, const Array& v) { return lax::scatter_add(a, i, v, d); });
  CHECK(values(f(x, ids, u)) == want);
  CHECK(values(x) == V{0, 0, 0, 0});  // functional: the operand is unchanged
  // kClip clamps instead: 4 → 3, -1 → 0.
  CHECK(values(lax::scatter_add(x, ids, u, d, false, false, Mode::kClip)) == V{5, 10, 0, 6});
  // Repeated updates apply in order: the last of a replacing scatter wins, min and max fold all.
  CHECK(values(lax::scatter(x, ids, u, d)) == V{0, 6, 0, 2});
  CHECK(values(lax::scatter_max(x, ids, -u, d)) == V{0, 0, 0, 0});
  CHECK(values(lax::scatter_min(x, ids, -u, d)) == V{0, -6, 0, -2});
  CHECK(values(lax::scatter_mul(np::ones({4}, float32), ids, u, d)) == V{1, 18, 1, 2});
}

// Rows added into a table, as an embedding's gradient: the kernel tests an update's bounds once for
// its whole window where the window's dims are the updates' last, and per element otherwise
// (here, the same updates transposed: the window's dim first).
TEST_CASE("scatter-add of rows drops a whole row out of bounds, its window last or first",
          "[gather_scatter]") {
  const std::vector<std::int32_t> rows{1, 4, 1, 5, -1, 0, 3};
  const std::int64_t n = 7, width = 19, height = 5;
  std::vector<float> u(static_cast<std::size_t>(n * width));
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<float>(i % 23) - 11.0f;
  V want(static_cast<std::size_t>(height * width), 0.0);
  for (std::int64_t k = 0; k < n; ++k) {
    std::int32_t r = rows[static_cast<std::size_t>(k)];
    if (r < 0 || r >= height) continue;
    for (std::int64_t j = 0; j < width; ++j)
      want[static_cast<std::size_t>(r * width + j)] += u[static_cast<std::size_t>(k * width + j)];
  }
  Array ids = int_array(rows, {n, 1});
  Array updates = np::array(u, {n, width});
  Array table = np::zeros({height, width}, float32);
  auto last = jx::jit([](const Array& t, const Array& i, const Array& v) {
    return lax::scatter_add(t, i, v, {{1}, {0}, {0}});
  });
  auto first = jx::jit([](const Array& t, const Array& i, const Array& v) {
    return lax::scatter_add(t, i, np::transpose(v), {{0}, {0}, {0}});
  });
  CHECK(values(last(table, ids, updates)) == want);
  CHECK(values(first(table, ids, updates)) == want);
  CHECK(values(lax::scatter_add(table, ids, updates, {{1}, {0}, {0}})) == want);
}

TEST_CASE("gather and scatter under vmap batch the indices as a batching dim", "[gather_scatter]") {
  // Per example b: out[b] = table[b][ids[b]] — both the table and the indices are batched.
  Array table = np::reshape(np::arange(0, 12, 1, float32), {3, 4});
  Array ids = int_array({3, 0, 2}, {3, 1});
  auto take1 = [](const Array& t, const Array& i) {
    return lax::gather(t, i, {{}, {0}, {0}}, {1}, false, false, Mode::kClip);
  };
  CHECK(values(jx::vmap(take1)(table, ids)) == V{3, 4, 10});
  auto add1 = [](const Array& t, const Array& i) {
    return lax::scatter_add(t, i, np::array(1.0f), {{}, {0}, {0}});
  };
  CHECK(values(jx::vmap(add1)(table, ids)) == V{0, 1, 2, 4, 5, 5, 6, 7, 8, 9, 11, 11});
  auto f = jx::jit(jx::vmap(add1));
  CHECK(values(f(table, ids)) == V{0, 1, 2, 4, 5, 5, 6, 7, 8, 9, 11, 11});
}

TEST_CASE("gather's gradient is a scatter-add of the cotangent", "[gather_scatter]") {
  Array x = np::reshape(np::arange(0, 6, 1, float32), {3, 2});
  auto loss = [](const Array& a) { return np::sum(take_rows(a, Mode::kClip) * 2.0); };
  // ids 3, 0, -1, 9 clamp to 2, 0, 0, 2: rows 0 and 2 are read twice each.
  CHECK(values(jx::grad(loss)(x)) == V{4, 4, 0, 0, 4, 4});
  CHECK(values(jx::jit(jx::grad(loss))(x)) == V{4, 4, 0, 0, 4, 4});
}

TEST_CASE("gather and scatter print as JAX prints them", "[gather_scatter]") {
  auto g = [](const Array& x) { return take_rows(x, Mode::kClip); };
  std::string text = jx::make_jaxpr(g)(np::zeros({5, 3}, float32)).str();
  for (const char* line :
       {"d:f32[4,3] = gather[\n",
        "dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), "
        "start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())\n",
        "fill_value=None\n", "indices_are_sorted=False\n", "mode=GatherScatterMode.CLIP\n",
        "slice_sizes=(1, 3)\n", "unique_indices=False\n", "] b c\n"})
    CHECK_THAT(text, Catch::Contains(line));
  auto s = [](const Array& x, const Array& i, const Array& u) {
    return lax::scatter_add(x, i, u, {{}, {0}, {0}});
  };
  Array x = np::arange(0, 5, 1, float32), i = int_array({1, 3, 1}, {3, 1});
  Array u = np::array(std::vector<float>{1, 2, 3});
  std::string st = jx::make_jaxpr(s)(x, i, u).str();
  for (const char* line :
       {"d:f32[5] = scatter-add[\n",
        "dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), "
        "inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), "
        "scatter_indices_batching_dims=())\n",
        "mode=GatherScatterMode.FILL_OR_DROP\n", "update_consts=()\n", "update_jaxpr=None\n",
        "] a b c\n"})
    CHECK_THAT(st, Catch::Contains(line));
  // The text reads back, runs and prints the same.
  CHECK(values(eval_jaxpr(read_jaxpr(st), {}, {x, i, u})[0]) == V{0, 5, 2, 5, 4});
  CHECK(to_string(read_jaxpr(st)) == st);
}

TEST_CASE("gather and scatter reject bad operands in JAX's words", "[gather_scatter]") {
  Array x = np::zeros({5, 3}, float32);
  CHECK_THROWS_MATCHES(lax::gather(x, np::zeros({2, 1}, float32), {{1}, {0}, {0}}, {1, 3}),
                       TypeError, Catch::Message("indices must have an integer type"));
  Array ids = int_array({1, 2}, {2, 1});
  CHECK_THROWS_MATCHES(lax::gather(x, ids, {{1}, {0}, {0}}, {2, 3}), TypeError,
                       Catch::Message("Gather op can only collapse slice dims with bound 1, but "
                                      "bound is 2 for index 0 at position 0."));
  CHECK_THROWS_MATCHES(lax::gather(x, ids, {{1}, {0}, {0}}, {1}), TypeError,
                       Catch::Message("Gather op must have one slice size for every input "
                                      "dimension; got: len(slice_sizes)=1, input_shape.rank=2"));
  CHECK_THROWS_MATCHES(lax::gather(x, ids, {{1}, {0}, {0, 1}}, {1, 3}), TypeError,
                       Catch::Message("Gather op has 2 elements in start_index_map and the bound "
                                      "of dimension index_vector_dim=1 of indices is 1. These two "
                                      "numbers must be equal."));
  CHECK_THROWS_MATCHES(lax::gather(x, ids, {{1}, {0}, {0}}, {1, 4}), TypeError,
                       Catch::Message("Slice size at index 1 in gather op is out of range, must "
                                      "be within [0, 3 + 1), got 4."));
  CHECK_THROWS_MATCHES(lax::gather(x, ids, {{2, 1}, {0}, {0}}, {1, 3}), TypeError,
                       Catch::Message("offset_dims in gather op must be sorted; got (2, 1)"));
  CHECK_THROWS_MATCHES(lax::gather(x, ids, {{1}, {5}, {0}}, {1, 3}), TypeError,
                       Catch::Message("Invalid collapsed_slice_dims set in gather op; valid range "
                                      "is [0, 2); got: 5."));
  Array u = np::zeros({2, 3}, float32);
  CHECK_THROWS_MATCHES(lax::scatter_add(x, ids, np::zeros({2, 3}, int32), {{1}, {0}, {0}}),
                       TypeError,
                       Catch::Message("scatter-add requires arguments to have the same dtypes, "
                                      "got float32, int32."));
  CHECK_THROWS_MATCHES(lax::scatter_add(x, ids, np::zeros({3, 3}, float32), {{1}, {0}, {0}}),
                       TypeError,
                       Catch::Message("Bounds of the scatter dimensions of updates must be the "
                                      "same as the bounds of the corresponding dimensions of "
                                      "scatter indices. For scatter dimension 0, updates bound is "
                                      "3, indices bound is 2."));
  CHECK_THROWS_MATCHES(lax::scatter_add(x, ids, np::zeros({2, 4}, float32), {{1}, {0}, {0}}),
                       TypeError,
                       Catch::Message("Bounds of the window dimensions of updates must not exceed "
                                      "the bounds of the corresponding dimensions of operand. For "
                                      "dimension 1, updates bound is 4, operand bound is 3."));
  CHECK_THROWS_MATCHES(lax::scatter_add(x, ids, u, {{1}, {}, {0}}), TypeError,
                       Catch::Message("Scatter op has window of size 1; doesn't match operand of "
                                      "rank 2."));
  auto bool_add = [&] {
    lax::scatter_add(np::zeros({2}, bool_), ids, np::zeros({2}, bool_), {{}, {0}, {0}});
  };
  CHECK_THROWS_AS(bool_add(), TypeError);
  CHECK_THROWS_WITH(bool_add(), Catch::StartsWith("scatter-add does not accept dtype bool."));
}

}  // namespace
}  // namespace jx::testing
