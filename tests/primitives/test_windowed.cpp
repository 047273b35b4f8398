// Op-table rows and focused tests for the windowed families: reduce_window_sum, _max, _min,
// select_and_gather_add, select_and_scatter_add, lax::reduce_window and jx::Padding. Each oracle
// walks the windows with explicit loops written here, independently of the implementation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "support/op_table.hpp"

namespace jx::testing {
namespace {

using Ints = std::vector<std::int64_t>;

// A window as the primitives take it; empty dilations are 1s.
struct Win {
  std::string name;
  Shape x;
  Ints dims, strides;
  PadPairs pad;
  Ints base = {}, dilation = {};
  std::int64_t base_at(std::size_t d) const { return base.empty() ? 1 : base[d]; }
  std::int64_t dilation_at(std::size_t d) const { return dilation.empty() ? 1 : dilation[d]; }
  bool undilated() const {
    for (std::size_t d = 0; d < dims.size(); ++d)
      if (base_at(d) != 1 || dilation_at(d) != 1) return false;
    return true;
  }
};

// How many windows fit along each dim.
Shape windows_of(const Win& w) {
  Shape out;
  for (std::size_t d = 0; d < w.x.size(); ++d) {
    std::int64_t dilated = w.x[d] == 0 ? 0 : (w.x[d] - 1) * w.base_at(d) + 1;
    std::int64_t padded = dilated + w.pad[d].first + w.pad[d].second;
    std::int64_t span = (w.dims[d] - 1) * w.dilation_at(d) + 1;
    out.push_back(padded < span ? 0 : (padded - span) / w.strides[d] + 1);
  }
  return out;
}

// The operand index (per dim) each tap of window `o` reads along dim d, or -1 for padding and
// holes.
Ints taps_along(const Win& w, std::size_t d, std::int64_t o) {
  Ints out;
  for (std::int64_t j = 0; j < w.dims[d]; ++j) {
    std::int64_t p = o * w.strides[d] + j * w.dilation_at(d) - w.pad[d].first;
    bool real = p >= 0 && p % w.base_at(d) == 0 && p / w.base_at(d) < w.x[d];
    out.push_back(real ? p / w.base_at(d) : -1);
  }
  return out;
}

std::vector<Ints> all_indices(const Shape& shape) {
  std::vector<Ints> out;
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  for (std::int64_t flat = 0; flat < n; ++flat) {
    Ints index(shape.size());
    std::int64_t r = flat;
    for (std::size_t d = shape.size(); d-- > 0;) {
      index[d] = r % shape[d];
      r /= shape[d];
    }
    out.push_back(index);
  }
  return out;
}

// The flat operand offsets of window `o`'s taps in row-major tap order (-1: padding, holes).
Ints window_elements(const Win& w, const Ints& o) {
  std::vector<Ints> along;
  Shape taps;
  for (std::size_t d = 0; d < w.x.size(); ++d) {
    along.push_back(taps_along(w, d, o[d]));
    taps.push_back(w.dims[d]);
  }
  Ints out;
  for (const Ints& t : all_indices(taps)) {
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < t.size() && flat >= 0; ++d) {
      std::int64_t i = along[d][static_cast<std::size_t>(t[d])];
      flat = i < 0 ? -1 : flat * w.x[d] + i;
    }
    out.push_back(flat);
  }
  return out;
}

double lowest(DType d) {
  if (is_floating(d)) return -INFINITY;
  if (d == bool_) return 0;
  return is_unsigned(d) ? 0 : -std::ldexp(1.0, static_cast<int>(8 * itemsize(d)) - 1);
}
double highest(DType d) {
  if (is_floating(d)) return INFINITY;
  if (d == bool_) return 1;
  return std::ldexp(1.0, static_cast<int>(8 * itemsize(d)) - (is_unsigned(d) ? 0 : 1)) - 1;
}

// Per window, the position of the first greatest (is_max) or least element, padding and holes
// counting as lowest (highest); -1 when that is padding.
Ints chosen_positions(const HostArray& x, const Win& w, bool is_max, DType d) {
  Ints out;
  for (const Ints& o : all_indices(windows_of(w))) {
    Ints taps = window_elements(w, o);
    double fill = is_max ? lowest(d) : highest(d);
    auto value = [&](std::int64_t k) { return k < 0 ? fill : x.values[static_cast<size_t>(k)]; };
    std::int64_t best = taps[0];
    for (std::int64_t k : taps)
      if (is_max ? value(k) > value(best) : value(k) < value(best)) best = k;
    out.push_back(best);
  }
  return out;
}

enum class Fold { kSum, kMax, kMin };

HostArray reduce_window_oracle(const HostArray& x, const Win& w, Fold fold, DType d) {
  HostArray out{windows_of(w), {}};
  for (const Ints& o : all_indices(out.shape)) {
    double acc = fold == Fold::kSum ? 0 : fold == Fold::kMax ? lowest(d) : highest(d);
    for (std::int64_t k : window_elements(w, o)) {
      if (k < 0) continue;
      double v = x.values[static_cast<std::size_t>(k)];
      acc = fold == Fold::kSum ? acc + v : fold == Fold::kMax ? std::max(acc, v) : std::min(acc, v);
    }
    out.values.push_back(fold == Fold::kSum && !is_floating(d) ? wrap(acc, d) : acc);
  }
  return out;
}

HostArray gather_oracle(const HostArray& t, const HostArray& x, const Win& w, bool is_max,
                        DType d) {
  HostArray out{windows_of(w), {}};
  for (std::int64_t k : chosen_positions(x, w, is_max, d))
    out.values.push_back(k < 0 ? 0 : t.values[static_cast<std::size_t>(k)]);
  return out;
}

HostArray scatter_oracle(const HostArray& s, const HostArray& x, const Win& w, bool is_max,
                         DType d) {
  HostArray out{x.shape, std::vector<double>(x.values.size(), 0)};
  Ints chosen = chosen_positions(x, w, is_max, d);
  for (std::size_t o = 0; o < chosen.size(); ++o)
    if (chosen[o] >= 0) out.values[static_cast<std::size_t>(chosen[o])] += s.values[o];
  if (!is_floating(d))
    for (double& v : out.values) v = wrap(v, d);
  return out;
}

// Whole numbers in the 16-bit floats, so that sums are exact in any order.
double sum_sample(std::mt19937& rng, DType d) {
  double v = uniform(rng, is_unsigned(d) ? 0 : -3, is_unsigned(d) ? 6 : 3);
  return d == float32 || d == float64 ? v : std::round(v);
}

// Strides, padding (negative too), base and window dilation, 0-d to 3-D, windows past the
// operand and empty operands.
const std::vector<Win> kWindows = {
    {"scalar", {}, {}, {}, {}},
    {"1d", {7}, {3}, {2}, {{1, 1}}},
    {"1d_negative_pad", {6}, {2}, {1}, {{-1, -2}}},
    {"1d_window_past_operand", {2}, {3}, {1}, {{0, 0}}},
    {"2d", {5, 6}, {2, 3}, {2, 1}, {{1, 0}, {0, 2}}},
    {"2d_overlapping_3x3_stride2", {7, 6}, {3, 3}, {2, 2}, {{1, 1}, {0, 1}}},
    {"2d_empty", {0, 3}, {1, 2}, {1, 1}, {{0, 0}, {0, 0}}},
    {"2d_base_dilation", {3, 4}, {2, 2}, {1, 2}, {{0, 1}, {1, 1}}, {2, 1}, {1, 1}},
    {"2d_window_dilation", {6, 5}, {2, 2}, {1, 1}, {{0, 0}, {1, 0}}, {1, 1}, {2, 2}},
    {"3d_dilated", {2, 4, 5}, {1, 2, 3}, {1, 2, 2}, {{0, 0}, {1, 1}, {1, 0}}, {1, 1, 2}, {1, 2, 1}},
    {"3d", {2, 4, 5}, {2, 2, 2}, {1, 1, 2}, {{0, 1}, {1, 0}, {0, 1}}},
    // Windows that tile the operand (stride = size): a position past the last window, padding
    // on either side, a negative pad cropping the first position.
    {"2d_tiled", {7, 6}, {2, 2}, {2, 2}, {{0, 0}, {0, 0}}},
    {"3d_tiled_padded", {2, 5, 6}, {1, 2, 3}, {1, 2, 3}, {{0, 0}, {1, 0}, {0, 2}}},
    {"1d_tiled_negative_pad", {7}, {2}, {2}, {{-1, 0}}},
};

using ReduceFn = Array (*)(const Array&, const Ints&, const Ints&, const PadPairs&, const Ints&,
                           const Ints&);

OpRow reduce_window_row(const std::string& prim, ReduceFn op, Fold fold, const Win& w) {
  OpRow r;
  r.name = prim + "/" + w.name;
  r.primitive = prim;
  r.dtypes = fold == Fold::kSum ? kNumericTypes : kAllTypes;
  r.shape_sets = {{w.x}};
  if (fold == Fold::kSum) {
    r.sample = sum_sample;
    r.subset_reason = "bool is rejected in JAX's words for reduce_window_sum (its error test)";
  }
  r.apply = [op, w](const std::vector<Array>& a) {
    return op(a[0], w.dims, w.strides, w.pad, w.base, w.dilation);
  };
  r.oracle = [w, fold](const std::vector<HostArray>& in, DType d) {
    return reduce_window_oracle(in[0], w, fold, d);
  };
  return r;
}

OpRow select_row(const std::string& prim, lax::SelectPrim select, const Win& w) {
  bool is_max = select == lax::SelectPrim::kGe;
  bool gather = prim == "select_and_gather_add";
  OpRow r;
  r.name = prim + (is_max ? "/ge/" : "/le/") + w.name;
  r.primitive = prim;
  r.dtypes = kNumericTypes;
  r.shape_sets = {{gather ? w.x : windows_of(w), w.x}};
  r.sample = sum_sample;  // integers in the 16-bit floats: ties, and exact sums
  r.apply = [select, w, gather](const std::vector<Array>& a) {
    if (gather)
      return lax::select_and_gather_add(a[0], a[1], select, w.dims, w.strides, w.pad, w.base,
                                        w.dilation);
    return lax::select_and_scatter_add(a[0], a[1], select, w.dims, w.strides, w.pad);
  };
  r.oracle = [w, is_max, gather](const std::vector<HostArray>& in, DType d) {
    return gather ? gather_oracle(in[0], in[1], w, is_max, d)
                  : scatter_oracle(in[0], in[1], w, is_max, d);
  };
  return r;
}

const bool kRows = [] {
  std::vector<OpRow> rows;
  for (const Win& w : kWindows) {
    rows.push_back(reduce_window_row("reduce_window_sum", lax::reduce_window_sum, Fold::kSum, w));
    rows.push_back(reduce_window_row("reduce_window_max", lax::reduce_window_max, Fold::kMax, w));
    rows.push_back(reduce_window_row("reduce_window_min", lax::reduce_window_min, Fold::kMin, w));
    for (auto select : {lax::SelectPrim::kGe, lax::SelectPrim::kLe}) {
      rows.push_back(select_row("select_and_gather_add", select, w));
      if (w.undilated()) rows.push_back(select_row("select_and_scatter_add", select, w));
    }
  }
  return add_rows(rows);
}();

#define CHECK_ERROR(expr, type, msg) CHECK_THROWS_MATCHES(expr, type, Catch::Message(msg))

std::vector<double> values(const Array& a) { return a.to_vector<double>(); }

// A jaxpr's text on one line: the printer breaks long equations after "[" and between params.
std::string one_line(const std::string& text) {
  std::string out;
  for (char c : text) {
    bool space = c == ' ' || c == '\n';
    if (space && (out.empty() || out.back() == ' ' || out.back() == '[')) continue;
    if (c == ']' && !out.empty() && out.back() == ' ') out.pop_back();
    out += space ? ' ' : c;
  }
  return out;
}

}  // namespace

TEST_CASE("windowed reductions: JAX's errors", "[windowed][errors]") {
  Array x = np::zeros({4, 4});
  PadPairs none = {{0, 0}, {0, 0}};
  CHECK_ERROR(lax::reduce_window_max(x, {0, 2}, {1, 1}, none), TypeError,
              "reduce_window window_dimensions must have every element be strictly positive, "
              "got (0, 2).");
  CHECK_ERROR(lax::reduce_window_sum(x, {2, 2}, {1, 0}, none), TypeError,
              "reduce_window window_strides must have every element be strictly positive, got "
              "(1, 0).");
  CHECK_ERROR(lax::reduce_window_min(x, {2, 2}, {1, 1}, none, {-1, 1}), TypeError,
              "reduce_window base_dilation must have every element be nonnegative, got (-1, 1).");
  CHECK_ERROR(lax::reduce_window_max(x, {2}, {1}, {{0, 0}}), TypeError,
              "reduce_window got the wrong number of window_dimensions for operand: got operand "
              "shape (4, 4) with window_dimensions (2,).");
  CHECK_ERROR(lax::reduce_window_max(x, {2, 2}, {1}, none), TypeError,
              "reduce_window got inconsistent window_strides and window_dimensions: got "
              "window_strides (1,) and window_dimensions (2, 2).");
  CHECK_ERROR(lax::reduce_window_max(x, {2, 2}, {1, 1}, none, {1, 1, 1}), TypeError,
              "reduce_window got inconsistent base_dilation and window_dimensions: got "
              "base_dilation (1, 1, 1) and window_dimensions (2, 2).");
  CHECK_ERROR(lax::reduce_window_max(x, {2, 2}, {1, 1}, none, {1, 1}, {2}), TypeError,
              "reduce_window got inconsistent window_dilation and window_dimensions: got "
              "window_dilation (2,) and window_dimensions (2, 2).");
  CHECK_ERROR(lax::reduce_window_sum(np::zeros({3}, bool_), {2}, {1}, {{0, 0}}), TypeError,
              "operand to reduce_window_sum must have a number dtype, got bool");
  CHECK_ERROR(
      lax::select_and_gather_add(np::zeros({3}), x, lax::SelectPrim::kGe, {2, 2}, {1, 1}, none),
      TypeError,
      "select_and_gather_add tangents and operand shapes must match, got (3,) and "
      "(4, 4).");
  CHECK_ERROR(
      lax::select_and_scatter_add(np::zeros({2, 2}), x, lax::SelectPrim::kGe, {2, 2}, {2, 1}, none),
      TypeError,
      "select_and_scatter_add source shape must be the shape of the operand's windows, "
      "got source shape (2, 2) for windows of shape (2, 3).");
  CHECK_ERROR(lax::reduce_window(x, Array(0.0f), lax::mul, {2, 2}, {1, 1}, "VALID"), ValueError,
              "reduce_window takes lax::add, lax::max or lax::min as its computation; got another "
              "function.");
  CHECK_ERROR(lax::reduce_window(x, np::zeros({}, int32), lax::add, {2, 2}, {1, 1}, "VALID"),
              TypeError,
              "reduce_window got inconsistent dtypes for operands and init_values: got operand "
              "dtypes [dtype('float32')] and init_value dtypes [dtype('int32')].");
  CHECK_ERROR(lax::reduce_window(x, np::zeros({3}), lax::add, {2, 2}, {1, 1}, "VALID"), TypeError,
              "reduce_window expected init_values to be scalars but init_values have shapes "
              "[(3,)].");
  CHECK_ERROR(lax::reduce_window(x, Array(0.0f), lax::add, {2, 2}, {1, 1}, "FULL"), ValueError,
              "Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got FULL.");
}

TEST_CASE("windowed primitives print as JAX prints them", "[windowed]") {
  Array x = np::zeros({4, 4});
  auto text = [&](auto f) { return one_line(make_jaxpr(f)(x).str()); };
  using Catch::Contains;
  CHECK_THAT(text([](const Array& a) {
               return lax::reduce_window_max(a, {2, 2}, {2, 2}, {{0, 0}, {0, 1}});
             }),
             Contains("b:f32[2,2] = reduce_window_max[base_dilation=(1, 1) padding=((0, 0), (0, "
                      "1)) window_dilation=(1, 1) window_dimensions=(2, 2) window_strides=(2, 2)] "
                      "a"));
  auto grad_text = text([](const Array& a) {
    return jx::grad([](const Array& v) {
      return np::sum(lax::reduce_window_max(v, {2, 2}, {1, 1}, {{0, 0}, {0, 0}}));
    })(a);
  });
  CHECK_THAT(grad_text, Contains("select_and_scatter_add[padding=((0, 0), (0, 0)) select_prim=ge "
                                 "window_dimensions=(2, 2) window_strides=(1, 1)]"));
  auto jvp_text = text([](const Array& a) {
    return jx::jvp(
               [](const Array& v) {
                 return lax::reduce_window_min(v, {2, 2}, {1, 1}, {{0, 0}, {0, 0}});
               },
               std::tuple{a}, std::tuple{a})
        .second;
  });
  CHECK_THAT(jvp_text, Contains("select_and_gather_add[base_dilation=(1, 1) padding=((0, 0), (0, "
                                "0)) select_prim=le window_dilation=(1, 1)"));
}

TEST_CASE("select: the first of equal maxima wins; NaN loses to the element after it",
          "[windowed]") {
  using lax::SelectPrim;
  Array t = np::array({10.f, 20.f, 30.f, 40.f});
  // One window of four: ties pick the first, eagerly and compiled.
  auto gather = [](const Array& tv, const Array& xv) {
    return lax::select_and_gather_add(tv, xv, SelectPrim::kGe, {4}, {1}, {{0, 0}});
  };
  auto scatter = [](const Array& s, const Array& xv) {
    return lax::select_and_scatter_add(s, xv, SelectPrim::kGe, {4}, {1}, {{0, 0}});
  };
  auto jgather = jx::jit(gather);
  auto jscatter = jx::jit(scatter);
  Array one = np::array({1.f});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    std::vector<float> x;
    float picked;
  };
  // XLA's select-and-scatter keeps the current element while current >= candidate holds: a NaN
  // current gives way to the next element, a NaN candidate takes over.
  for (const Case& c : std::vector<Case>{{{1, 5, 5, 2}, 20},
                                         {{5, 5, 5, 5}, 10},
                                         {{1, nan, 3, 2}, 30},
                                         {{1, 3, 2, nan}, 40},
                                         {{nan, nan, nan, nan}, 40}}) {
    Array x = np::array(c.x);
    INFO(x);
    CHECK(values(gather(t, x)) == std::vector<double>{c.picked});
    CHECK(values(jgather(t, x)) == std::vector<double>{c.picked});
    std::vector<double> want(4, 0.0);
    want[static_cast<std::size_t>(c.picked / 10 - 1)] = 1;
    CHECK(values(scatter(one, x)) == want);
    CHECK(values(jscatter(one, x)) == want);
  }
  // le picks the first minimum.
  Array m = lax::select_and_gather_add(t, np::array({4.f, 1.f, 1.f, 3.f}), SelectPrim::kLe, {4},
                                       {1}, {{0, 0}});
  CHECK(values(m) == std::vector<double>{20});
}

TEST_CASE("reduce_window_max's gradient goes to the first maximum of each window", "[windowed]") {
  // Overlapping windows of 3, stride 1: [3, 1, 3] → its first 3; [1, 3, 2] → the second 3.
  Array x = np::array({3.0, 1.0, 3.0, 2.0});
  auto f = [](const Array& v) { return np::sum(lax::reduce_window_max(v, {3}, {1}, {{0, 0}})); };
  CHECK(values(jx::grad(f)(x)) == std::vector<double>{1, 0, 1, 0});
  CHECK(values(jx::jit(jx::grad(f))(x)) == std::vector<double>{1, 0, 1, 0});
  // Window dilation (JAX's transpose stops there): windows {x0, x2} (a tie), {x1, x3}.
  auto g = [](const Array& v) {
    return np::sum(lax::reduce_window_max(v, {2}, {1}, {{0, 0}}, {1}, {2}));
  };
  CHECK(values(jx::grad(g)(x)) == std::vector<double>{1, 0, 0, 1});
  CHECK(values(jx::jit(jx::grad(g))(x)) == std::vector<double>{1, 0, 0, 1});
}

TEST_CASE("lax::reduce_window: XLA's init, which padding holds and each window folds once",
          "[windowed]") {
  Array x = np::array({1.0f, 2.0f, 3.0f});
  // Identity inits bind the primitive.
  CHECK_THAT(one_line(make_jaxpr([](const Array& a) {
                        return lax::reduce_window(a, Array(0.0f), lax::add, {2}, {1}, "SAME");
                      })(x)
                          .str()),
             Catch::Contains("reduce_window_sum[base_dilation=(1,) padding=((0, 1),)"));
  // init 10, SAME padding (0, 1): windows [1, 2], [2, 3], [3, pad]; each folds 10 once and the
  // pad holds 10.
  Array s = lax::reduce_window(x, Array(10.0f), lax::add, {2}, {1}, "SAME");
  CHECK(values(s) == std::vector<double>{13, 15, 23});
  Array m = lax::reduce_window(x, Array(2.5f), lax::max, {2}, {1}, PadPairs{{1, 0}});
  CHECK(values(m) == std::vector<double>{2.5, 2.5, 3});
  // Base dilation 2: [1, h, 2, h, 3], holes hold init.
  Array d = lax::reduce_window(x, Array(1.0f), lax::add, {2}, {1}, "VALID", {2});
  CHECK(values(d) == std::vector<double>{3, 4, 4, 5});
  // SAME places windows of the dilated size: 2 taps 2 apart span 3, so 5 elements pad (1, 1).
  Array y = np::array({1.0f, 2.0f, 3.0f, 4.0f, 5.0f});
  Array same = lax::reduce_window(y, Array(0.0f), lax::add, {2}, {1}, "SAME", {}, {2});
  CHECK(values(same) == std::vector<double>{2, 4, 6, 8, 4});
  auto jitted = jx::jit([](const Array& a) {
    return lax::reduce_window(a, Array(10.0f), lax::add, {2}, {1}, "SAME");
  });
  CHECK(values(jitted(x)) == std::vector<double>{13, 15, 23});
}

namespace {

// The kernels a compiled program's thunk sequence runs.
int kernels_in(const std::string& thunks) {
  int kernels = 0;
  std::istringstream in(thunks);
  for (std::string line; std::getline(in, line);) kernels += line.rfind("kernel ", 0) == 0;
  return kernels;
}

}  // namespace

TEST_CASE("select_and_scatter_add and select_and_gather_add compile to one fused loop kernel",
          "[windowed][fusion]") {
  Shape s = {2, 9, 8, 4};
  std::mt19937 rng(3);
  std::vector<float> xv(static_cast<std::size_t>(shape_size(s)));
  for (float& v : xv) v = static_cast<float>(uniform(rng, -3, 3));
  Array x = np::array(xv, s);
  const PadPairs pads = {{0, 0}, {1, 1}, {0, 1}, {0, 0}};
  // Overlapping 3x3 windows at stride 2: no opcode of their own, one loop kernel each.
  Array src = np::ones({2, 5, 4, 4});
  auto scatter = jx::jit([&pads](const Array& source, const Array& a) {
    return lax::select_and_scatter_add(source, a, lax::SelectPrim::kGe, {1, 3, 3, 1}, {1, 2, 2, 1},
                                       pads);
  });
  auto compiled = scatter.lower(src, x).compile();
  INFO(compiled.thunk_sequence());
  CHECK(kernels_in(compiled.thunk_sequence()) == 1);
  CHECK(values(compiled(src, x)) ==
        values(lax::select_and_scatter_add(src, x, lax::SelectPrim::kGe, {1, 3, 3, 1}, {1, 2, 2, 1},
                                           pads)));
  auto gather = jx::jit([&pads](const Array& t, const Array& a) {
    return lax::select_and_gather_add(t, a, lax::SelectPrim::kGe, {1, 3, 3, 1}, {1, 2, 2, 1}, pads);
  });
  auto gcompiled = gather.lower(x, x).compile();
  INFO(gcompiled.thunk_sequence());
  CHECK(kernels_in(gcompiled.thunk_sequence()) == 1);
  CHECK(values(gcompiled(x, x)) ==
        values(lax::select_and_gather_add(x, x, lax::SelectPrim::kGe, {1, 3, 3, 1}, {1, 2, 2, 1},
                                          pads)));
}

}  // namespace jx::testing
