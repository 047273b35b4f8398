// Op-table rows and focused tests for the shape_ops family; oracles are explicit index loops.
#include <catch2/catch.hpp>

#include <algorithm>

#include "support/op_table.hpp"

namespace jx::testing {
namespace {

using Ints = std::vector<std::int64_t>;
using Shapes = std::vector<std::vector<Shape>>;

const std::vector<DType>& kAll = kAllTypes;

// Row-major walk by division, written here so the oracles share no code with jx's impls.
template <class F>
void each_index(const Shape& shape, F f) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  Ints index(shape.size());
  for (std::int64_t flat = 0; flat < n; ++flat) {
    for (std::int64_t r = flat, d = static_cast<std::int64_t>(shape.size()) - 1; d >= 0; --d) {
      index[d] = r % shape[d];
      r /= shape[d];
    }
    f(index);
  }
}

// The host array of `shape` whose element at each index is value(index).
template <class F>
HostArray build(const Shape& shape, F value) {
  HostArray out{shape, {}};
  each_index(shape, [&](const Ints& index) { out.values.push_back(value(index)); });
  return out;
}

OpRow row(std::string name, Shapes shape_sets,
          std::function<Array(const std::vector<Array>&)> apply,
          std::function<HostArray(const std::vector<HostArray>&)> oracle,
          std::vector<DType> dtypes = kAll) {
  OpRow r;
  r.primitive = name.substr(0, name.find('/'));
  r.name = std::move(name);
  r.dtypes = std::move(dtypes);
  r.shape_sets = std::move(shape_sets);
  r.apply = std::move(apply);
  r.oracle = [oracle](const std::vector<HostArray>& in, DType) { return oracle(in); };
  return r;
}

Shapes singles(const std::vector<Shape>& shapes) {
  Shapes out;
  for (const Shape& s : shapes) out.push_back({s});
  return out;
}

const Shapes kOne = singles(kElementwiseShapes);  // {}, {0}, {1}, {5}, {2, 3}, {3, 0, 2}, {1, 4, 1}
std::int64_t rank(const Shape& s) { return static_cast<std::int64_t>(s.size()); }

// broadcast_in_dim/prepend: a new leading dim of 2; size-1 dims grow to 3.
Shape prepend_target(const Shape& s) {
  Shape t{2};
  for (auto d : s) t.push_back(d == 1 ? 3 : d);
  return t;
}
Ints iota_ints(std::int64_t lo, std::int64_t n) {
  Ints v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(lo + i);
  return v;
}
// broadcast_in_dim/interleave: a dim of 2 after every operand dim; size-1 dims go to 0.
Shape interleave_target(const Shape& s) {
  Shape t;
  for (auto d : s) t.insert(t.end(), {d == 1 ? 0 : d, 2});
  return t;
}
Ints even_dims(std::int64_t n) {
  Ints v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(2 * i);
  return v;
}
HostArray broadcast_oracle(const HostArray& x, const Shape& target, const Ints& dims) {
  return build(target, [&](const Ints& out) {
    Ints in;
    for (std::size_t i = 0; i < dims.size(); ++i) in.push_back(x.shape[i] == 1 ? 0 : out[dims[i]]);
    return x.at(in);
  });
}

HostArray transpose_oracle(const HostArray& x, const Ints& perm) {
  Shape shape;
  for (auto p : perm) shape.push_back(x.shape[p]);
  return build(shape, [&](const Ints& out) {
    Ints in(perm.size());
    for (std::size_t k = 0; k < perm.size(); ++k) in[perm[k]] = out[k];
    return x.at(in);
  });
}
Ints reversed(std::int64_t n) {
  Ints v = iota_ints(0, n);
  std::reverse(v.begin(), v.end());
  return v;
}
Ints rotated(std::int64_t n) {
  Ints v = iota_ints(1, n);
  if (n) v.back() = 0;
  return v;
}

Ints unit_dims(const Shape& s) {
  Ints v;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s[i] == 1) v.push_back(static_cast<std::int64_t>(i));
  return v;
}

// slice rows: per-dim (start, limit, stride) chosen from the dim size.
struct SliceArgs {
  Ints start, limit, stride;
};
SliceArgs trim_one(const Shape& s) {
  SliceArgs a;
  for (auto d : s) {
    a.start.push_back(std::min<std::int64_t>(1, d));
    a.limit.push_back(d > 2 ? d - 1 : d);
    a.stride.push_back(1);
  }
  return a;
}
SliceArgs strided(const Shape& s) {
  SliceArgs a;
  for (std::size_t i = 0; i < s.size(); ++i) {
    a.start.push_back(s[i] > 1 ? 1 : 0);
    a.limit.push_back(s[i]);
    a.stride.push_back(2 + static_cast<std::int64_t>(i % 2));
  }
  return a;
}
HostArray slice_oracle(const HostArray& x, const SliceArgs& a) {
  Shape shape;
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    std::int64_t n = 0;
    for (std::int64_t i = a.start[d]; i < a.limit[d]; i += a.stride[d]) ++n;
    shape.push_back(n);
  }
  return build(shape, [&](const Ints& out) {
    Ints in;
    for (std::size_t d = 0; d < out.size(); ++d) in.push_back(a.start[d] + out[d] * a.stride[d]);
    return x.at(in);
  });
}

// dynamic slices: requested starts cycle through in-range, too large and negative values.
std::int64_t requested_start(std::size_t d) { return Ints{1, 100, -3}[d % 3]; }
std::int64_t clamp_start(std::size_t d, std::int64_t dim, std::int64_t size) {
  return std::max<std::int64_t>(0, std::min(requested_start(d), dim - size));
}
std::vector<Array> start_arrays(std::size_t n, DType index_dtype) {
  std::vector<Array> v;
  for (std::size_t d = 0; d < n; ++d)
    v.push_back(np::array(static_cast<double>(requested_start(d))).astype(index_dtype));
  return v;
}
Shape half_sizes(const Shape& s) {
  Shape v;
  for (auto d : s) v.push_back((d + 1) / 2);
  return v;
}
HostArray dynamic_slice_oracle(const HostArray& x) {
  Shape sizes = half_sizes(x.shape);
  return build(sizes, [&](const Ints& out) {
    Ints in;
    for (std::size_t d = 0; d < out.size(); ++d)
      in.push_back(clamp_start(d, x.shape[d], sizes[d]) + out[d]);
    return x.at(in);
  });
}
HostArray dynamic_update_slice_oracle(const HostArray& x, const HostArray& u) {
  return build(x.shape, [&](const Ints& out) {
    Ints in;
    for (std::size_t d = 0; d < out.size(); ++d) {
      std::int64_t k = out[d] - clamp_start(d, x.shape[d], u.shape[d]);
      if (k < 0 || k >= u.shape[d]) return x.at(out);
      in.push_back(k);
    }
    return u.at(in);
  });
}

HostArray concatenate_oracle(const std::vector<HostArray>& xs, std::int64_t dim) {
  Shape shape = xs[0].shape;
  shape[dim] = 0;
  for (const auto& x : xs) shape[dim] += x.shape[dim];
  return build(shape, [&](const Ints& out) {
    Ints in = out;
    for (const auto& x : xs) {
      if (in[dim] < x.shape[dim]) return x.at(in);
      in[dim] -= x.shape[dim];
    }
    return -1.0;  // unreachable
  });
}

// pad rows: configs (low, high, interior) that keep every dim size >= 0 for any operand size.
lax::PaddingConfig pad_config(const Shape& s) {
  const lax::PaddingConfig table = {{1, 2, 0}, {-1, 1, 1}, {2, -1, 1}, {0, 0, 2}};
  lax::PaddingConfig c;
  for (std::size_t d = 0; d < s.size(); ++d) c.push_back(table[d % table.size()]);
  return c;
}
HostArray pad_oracle(const HostArray& x, double value) {
  auto config = pad_config(x.shape);
  Shape shape;
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    auto [lo, hi, interior] = config[d];
    std::int64_t dilated = x.shape[d] == 0 ? 0 : x.shape[d] + (x.shape[d] - 1) * interior;
    shape.push_back(lo + hi + dilated);
  }
  return build(shape, [&](const Ints& out) {
    Ints in;
    for (std::size_t d = 0; d < out.size(); ++d) {
      auto [lo, hi, interior] = config[d];
      std::int64_t p = out[d] - lo;
      if (p < 0 || p % (interior + 1) != 0 || p / (interior + 1) >= x.shape[d]) return value;
      in.push_back(p / (interior + 1));
    }
    return x.at(in);
  });
}

const bool kRows = add_rows({
    row("broadcast_in_dim/prepend", kOne,
        [](const auto& a) {
          return lax::broadcast_in_dim(a[0], prepend_target(a[0].shape()),
                                       iota_ints(1, a[0].ndim()));
        },
        [](const auto& h) {
          return broadcast_oracle(h[0], prepend_target(h[0].shape), iota_ints(1, rank(h[0].shape)));
        }),
    row("broadcast_in_dim/interleave", kOne,
        [](const auto& a) {
          return lax::broadcast_in_dim(a[0], interleave_target(a[0].shape()),
                                       even_dims(a[0].ndim()));
        },
        [](const auto& h) {
          return broadcast_oracle(h[0], interleave_target(h[0].shape), even_dims(rank(h[0].shape)));
        }),
    row("reshape/reverse_shape", kOne,
        [](const auto& a) {
          Shape s = a[0].shape();
          std::reverse(s.begin(), s.end());
          return lax::reshape(a[0], s);
        },
        [](const auto& h) {
          HostArray r = h[0];
          std::reverse(r.shape.begin(), r.shape.end());
          return r;
        }),
    row("reshape/flatten", kOne,
        [](const auto& a) { return lax::reshape(a[0], {1, a[0].size(), 1}); },
        [](const auto& h) {
          return HostArray{{1, static_cast<std::int64_t>(h[0].values.size()), 1}, h[0].values};
        }),
    row("transpose/reverse", kOne,
        [](const auto& a) { return lax::transpose(a[0], reversed(a[0].ndim())); },
        [](const auto& h) { return transpose_oracle(h[0], reversed(rank(h[0].shape))); }),
    row("transpose/rotate", kOne,
        [](const auto& a) { return lax::transpose(a[0], rotated(a[0].ndim())); },
        [](const auto& h) { return transpose_oracle(h[0], rotated(rank(h[0].shape))); }),
    row("squeeze", singles({{}, {0}, {1}, {2, 3}, {1, 1}, {0, 1}, {1, 4, 1}, {3, 0, 2}}),
        [](const auto& a) { return lax::squeeze(a[0], unit_dims(a[0].shape())); },
        [](const auto& h) {
          HostArray r = h[0];
          std::erase(r.shape, 1);
          return r;
        }),
    row("expand_dims/first_and_last", kOne,
        [](const auto& a) { return lax::expand_dims(a[0], {0, a[0].ndim() + 1}); },
        [](const auto& h) {
          HostArray r = h[0];
          r.shape.insert(r.shape.begin(), 1);
          r.shape.push_back(1);
          return r;
        }),
    row("expand_dims/negative", kOne, [](const auto& a) { return lax::expand_dims(a[0], {-1}); },
        [](const auto& h) {
          HostArray r = h[0];
          r.shape.push_back(1);
          return r;
        }),
    row("slice", kOne,
        [](const auto& a) {
          SliceArgs s = trim_one(a[0].shape());
          return lax::slice(a[0], s.start, s.limit);
        },
        [](const auto& h) { return slice_oracle(h[0], trim_one(h[0].shape)); }),
    row("slice/strided", kOne,
        [](const auto& a) {
          SliceArgs s = strided(a[0].shape());
          return lax::slice(a[0], s.start, s.limit, s.stride);
        },
        [](const auto& h) { return slice_oracle(h[0], strided(h[0].shape)); }),
    row("dynamic_slice", kOne,
        [](const auto& a) {
          return lax::dynamic_slice(a[0], start_arrays(a[0].ndim(), int32),
                                    half_sizes(a[0].shape()));
        },
        [](const auto& h) { return dynamic_slice_oracle(h[0]); }),
    row("dynamic_slice/int64_indices", kOne,
        [](const auto& a) {
          return lax::dynamic_slice(a[0], start_arrays(a[0].ndim(), int64),
                                    half_sizes(a[0].shape()));
        },
        [](const auto& h) { return dynamic_slice_oracle(h[0]); }),
    row("dynamic_update_slice",
        {{{}, {}}, {{0}, {0}}, {{4}, {0}}, {{5}, {2}}, {{2, 3}, {1, 2}}, {{3, 0, 2}, {2, 0, 1}},
         {{1, 4, 1}, {1, 4, 1}}},
        [](const auto& a) {
          return lax::dynamic_update_slice(a[0], a[1], start_arrays(a[0].ndim(), int32));
        },
        [](const auto& h) { return dynamic_update_slice_oracle(h[0], h[1]); }),
    row("concatenate", {{{0}, {0}}, {{1}}, {{5}, {2}, {0}}, {{2, 3}, {1, 3}, {0, 3}}},
        [](const auto& a) { return lax::concatenate(a, 0); },
        [](const auto& h) { return concatenate_oracle(h, 0); }),
    row("concatenate/last_axis",
        {{{2, 3}, {2, 0}, {2, 1}}, {{3, 0, 2}, {3, 0, 5}}, {{1, 4, 1}, {1, 4, 1}}},
        [](const auto& a) { return lax::concatenate(a, a[0].ndim() - 1); },
        [](const auto& h) { return concatenate_oracle(h, rank(h[0].shape) - 1); }),
    row("pad", {{{}, {}}, {{0}, {}}, {{1}, {}}, {{5}, {}}, {{2, 3}, {}}, {{3, 0, 2}, {}},
                {{1, 4, 1, 2}, {}}},
        [](const auto& a) { return lax::pad(a[0], a[1], pad_config(a[0].shape())); },
        [](const auto& h) { return pad_oracle(h[0], h[1].values[0]); }),
    // iota has no operands: the row's single operand only carries the dtype and the shape.
    row("iota", singles({{1}, {5}, {0}, {2, 3}, {3, 0, 2}}),
        [](const auto& a) { return lax::iota(a[0].dtype(), a[0].shape(), 0); },
        [](const auto& h) { return build(h[0].shape, [](const Ints& i) { return double(i[0]); }); },
        kNumericTypes),
    row("iota/last_dim", singles({{4}, {2, 3}, {3, 0, 2}, {1, 4, 1}}),
        [](const auto& a) { return lax::iota(a[0].dtype(), a[0].shape(), a[0].ndim() - 1); },
        [](const auto& h) {
          return build(h[0].shape, [](const Ints& i) { return double(i.back()); });
        },
        kNumericTypes),
});

// 0, 1, 2, ... laid out in `shape`.
Array range(const Shape& shape, DType dtype = float32) {
  std::vector<double> v(static_cast<std::size_t>(shape_size(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return np::array(v, shape).astype(dtype);
}
std::vector<double> values(const Array& x) { return x.to_vector<double>(); }
using V = std::vector<double>;

}  // namespace

TEST_CASE("dynamic_slice clamps start indices so the slice stays in bounds", "[shape_ops]") {
  Array x = range({5});
  CHECK(values(lax::dynamic_slice(x, {Array(1)}, {3})) == V{1, 2, 3});
  CHECK(values(lax::dynamic_slice(x, {Array(4)}, {3})) == V{2, 3, 4});
  CHECK(values(lax::dynamic_slice(x, {Array(-2)}, {3})) == V{0, 1, 2});
  CHECK(values(lax::dynamic_slice(x, {np::array(7u)}, {5})) == V{0, 1, 2, 3, 4});
  CHECK(values(lax::dynamic_slice(x, {Array(3)}, {0})).empty());
  Array m = range({3, 4});
  Array s = lax::dynamic_slice(m, {Array(std::int64_t{2}), Array(std::int64_t{-9})}, {2, 2});
  CHECK(s.shape() == Shape{2, 2});
  CHECK(values(s) == V{4, 5, 8, 9});  // rows clamped to 1, columns to 0
}

TEST_CASE("dynamic_update_slice clamps start indices so the update fits", "[shape_ops]") {
  Array x = range({5}, int32);
  Array u = np::array({70, 80});
  CHECK(values(lax::dynamic_update_slice(x, u, {Array(1)})) == V{0, 70, 80, 3, 4});
  CHECK(values(lax::dynamic_update_slice(x, u, {Array(4)})) == V{0, 1, 2, 70, 80});
  CHECK(values(lax::dynamic_update_slice(x, u, {Array(-3)})) == V{70, 80, 2, 3, 4});
  Array m = range({3, 3});
  Array r = lax::dynamic_update_slice(m, np::array(std::vector<float>{-1, -2}, {2, 1}),
                                      {Array(5), Array(1)});
  CHECK(values(r) == V{0, 1, 2, 3, -1, 5, 6, -2, 8});
}

TEST_CASE("pad: negative low/high padding crops, interior padding dilates", "[shape_ops]") {
  Array x = range({3}, int32);  // 0 1 2
  Array nine = np::array(9);
  CHECK(values(lax::pad(x, nine, {{1, 2, 0}})) == V{9, 0, 1, 2, 9, 9});
  CHECK(values(lax::pad(x, nine, {{0, 0, 2}})) == V{0, 9, 9, 1, 9, 9, 2});
  CHECK(values(lax::pad(x, nine, {{-1, 2, 1}})) == V{9, 1, 9, 2, 9, 9});
  CHECK(values(lax::pad(x, nine, {{-2, -1, 0}})).empty());
  CHECK(values(lax::pad(x, nine, {{-1, -1, 1}})) == V{9, 1, 9});
  CHECK(lax::pad(x, nine, {{-3, 0, 0}}).shape() == Shape{0});
  Array m = range({2, 2});
  Array p = lax::pad(m, np::array(-1.0f), {{1, -1, 0}, {0, 1, 1}});
  CHECK(p.shape() == Shape{2, 4});
  CHECK(values(p) == V{-1, -1, -1, -1, 0, -1, 1, -1});
}

TEST_CASE("slice with strides", "[shape_ops]") {
  Array x = range({10});
  CHECK(values(lax::slice(x, {2}, {9}, {3})) == V{2, 5, 8});
  CHECK(values(lax::slice(x, {2}, {8}, {3})) == V{2, 5});
  CHECK(values(lax::slice(x, {0}, {10}, {100})) == V{0});
  CHECK(values(lax::slice(x, {4}, {4}, {2})).empty());
  Array m = range({4, 5});
  Array s = lax::slice(m, {1, 0}, {4, 5}, {2, 2});
  CHECK(s.shape() == Shape{2, 3});
  CHECK(values(s) == V{5, 7, 9, 15, 17, 19});
}

TEST_CASE("iota counts along each dimension", "[shape_ops]") {
  CHECK(values(lax::iota(int32, {2, 3}, 0)) == V{0, 0, 0, 1, 1, 1});
  CHECK(values(lax::iota(float32, {2, 3}, 1)) == V{0, 1, 2, 0, 1, 2});
  Shape s{2, 3, 2};
  for (std::int64_t dim = 0; dim < 3; ++dim) {
    Array i = lax::iota(uint32, s, dim);
    CHECK(i.aval() == ShapedArray{s, uint32, false});
    std::vector<double> want;
    for (std::int64_t a = 0; a < 2; ++a)
      for (std::int64_t b = 0; b < 3; ++b)
        for (std::int64_t c = 0; c < 2; ++c) want.push_back(double(Ints{a, b, c}[dim]));
    CHECK(values(i) == want);
  }
}

TEST_CASE("expand_dims inserts size-1 dims at output positions", "[shape_ops]") {
  Array x = range({2, 3});
  auto shape_after = [&](Ints dims) { return lax::expand_dims(x, dims).shape(); };
  CHECK(shape_after({0}) == Shape{1, 2, 3});
  CHECK(shape_after({1}) == Shape{2, 1, 3});
  CHECK(shape_after({2}) == Shape{2, 3, 1});
  CHECK(shape_after({-1}) == Shape{2, 3, 1});
  CHECK(shape_after({-3}) == Shape{1, 2, 3});
  CHECK(shape_after({3, 0}) == Shape{1, 2, 3, 1});
  CHECK(shape_after({0, 1}) == Shape{1, 1, 2, 3});
  CHECK(shape_after({1, 3, 4}) == Shape{2, 1, 3, 1, 1});
  CHECK(shape_after({}) == Shape{2, 3});
  CHECK(values(lax::expand_dims(x, {1, 3})) == values(x));
  CHECK(lax::expand_dims(np::array(1.0f), {0, 1}).shape() == Shape{1, 1});
}

TEST_CASE("weak types pass through layout ops", "[shape_ops]") {
  Array weak = Array(2.0f), strong = np::array(2.0f);
  CHECK(lax::broadcast_in_dim(weak, {3}, {}).weak_type());
  CHECK(lax::reshape(lax::broadcast_in_dim(weak, {2}, {}), {2, 1}).weak_type());
  CHECK(lax::expand_dims(weak, {0}).weak_type());
  CHECK(lax::pad(weak, weak, {}).weak_type());
  CHECK_FALSE(lax::pad(weak, strong, {}).weak_type());
  Array w1 = lax::expand_dims(weak, {0}), s1 = lax::expand_dims(strong, {0});
  CHECK(lax::concatenate({w1, w1}, 0).weak_type());
  CHECK_FALSE(lax::concatenate({w1, s1}, 0).weak_type());
  CHECK(lax::dynamic_update_slice(w1, s1, {Array(0)}).weak_type());
  CHECK_FALSE(lax::iota(float32, {2}).weak_type());
}

TEST_CASE("shape_ops params print as JAX prints them", "[shape_ops]") {
  Array x = range({2, 3});
  auto eqn = [&](auto f) { return make_jaxpr(f)(x).str(); };
  using Catch::Contains;
  CHECK_THAT(eqn([](const Array& a) { return lax::broadcast_in_dim(a, {2, 3, 4}, {0, 1}); }),
             Contains("broadcast_in_dim[broadcast_dimensions=(0, 1)] a"));
  CHECK_THAT(eqn([](const Array&) { return np::zeros({2}); }),
             Contains("b:f32[2] = broadcast_in_dim 0.0:f32[]"));
  CHECK_THAT(eqn([](const Array& a) { return lax::reshape(a, {3, 2}); }),
             Contains("reshape[dimensions=None new_sizes=(3, 2) sharding=None] a"));
  CHECK_THAT(eqn([](const Array& a) { return lax::transpose(a, {1, 0}); }),
             Contains("transpose[permutation=(1, 0)] a"));
  CHECK_THAT(eqn([](const Array& a) { return lax::squeeze(lax::expand_dims(a, {0}), {0}); }),
             Contains("broadcast_in_dim[broadcast_dimensions=(1, 2)] a") &&
                 Contains("squeeze[dimensions=(0,)] b"));
  CHECK_THAT(eqn([](const Array& a) { return lax::slice(a, {1, 0}, {2, 3}); }),
             Contains("slice[limit_indices=(2, 3) start_indices=(1, 0) strides=(1, 1)] a"));
  CHECK_THAT(eqn([](const Array& a) { return lax::dynamic_slice(a, {Array(1), 0}, {1, 2}); }),
             Contains("dynamic_slice[slice_sizes=(1, 2)] a 1:i32[] 0:i32[]"));
  CHECK_THAT(eqn([](const Array& a) { return lax::concatenate({a, a}, 1); }),
             Contains("concatenate[dimension=1] a a"));
  CHECK_THAT(eqn([](const Array& a) { return lax::pad(a, 0.0f, {{1, 2, 0}, {0, 0, 1}}); }),
             Contains("pad[padding_config=((1, 2, 0), (0, 0, 1))] a 0.0:f32[]"));
}

}  // namespace jx::testing
