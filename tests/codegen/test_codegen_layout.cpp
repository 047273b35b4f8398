// CPU codegen of layout ops (broadcast, reshape, transpose, slice, dynamic-slice,
// dynamic-update-slice, concatenate, pad), iota and constants. Oracles scatter from the operand,
// where the kernels gather into the output.
#include <algorithm>

#include <jx/numpy.hpp>

#include "codegen/codegen_testing.hpp"
#include "core/dtype_dispatch.hpp"

namespace jx::codegen::testing {
namespace {

using hlo::Opcode;

TEST_CASE("codegen: broadcast maps operand dims and repeats size-1 dims", "[codegen]") {
  std::vector<float> x = {1.f, 2.f, 3.f};
  Hlo h;
  auto* p = h.param(0, float32, {3});
  check_all(run<float>(h.b.broadcast(p, {2, 3}, {1}), {x.data()}), {1.f, 2.f, 3.f, 1.f, 2.f, 3.f});
  check_all(run<float>(h.b.broadcast(p, {3, 2}, {0}), {x.data()}), {1.f, 1.f, 2.f, 2.f, 3.f, 3.f});
  // Equal shapes but a swapped map: a transpose, not the identity.
  std::vector<float> sq = {1.f, 2.f, 3.f, 4.f};
  auto* swap = h.b.broadcast(h.param(1, float32, {2, 2}), {2, 2}, {1, 0});
  check_all(run<float>(swap, {sq.data()}), {1.f, 3.f, 2.f, 4.f});
  Hlo h2;
  auto* q = h2.param(0, float32, {1, 3});
  check_all(run<float>(h2.b.broadcast(q, {2, 3}, {0, 1}), {x.data()}),
            {1.f, 2.f, 3.f, 1.f, 2.f, 3.f});
  Hlo h3;
  pred t = 1;
  auto got = run<pred>(h3.b.broadcast(h3.param(0, bool_, {}), {2, 0, 2}, {}), {&t});
  CHECK(got.empty());
  check_all(run<pred>(h3.b.broadcast(h3.param(1, bool_, {}), {2, 2}, {}), {&t}),
            std::vector<pred>{1, 1, 1, 1});
}

TEST_CASE("codegen: reshape keeps row-major order", "[codegen]") {
  std::vector<std::int32_t> x = ramp<std::int32_t>(6);
  for (const Shape& s : std::vector<Shape>{{3, 2}, {6}, {1, 2, 1, 3}, {2, 3}}) {
    Hlo h;
    auto* r = h.op(Opcode::kReshape, int32, s, {h.param(0, int32, {2, 3})});  // also 2x3 → 2x3
    CHECK(run<std::int32_t>(r, {x.data()}) == x);
  }
  Hlo h;
  CHECK(run<std::int32_t>(h.b.reshape(h.param(0, int32, {0, 3}), {3, 0}), {x.data()}).empty());
}

TEST_CASE("codegen: transpose by a permutation", "[codegen]") {
  // Permutations that move the last dim are written in 16 x 16 tiles (kernel.cpp): tiles cut at
  // both ends, and a kernel called for a few of its rows at a time.
  struct Case {
    Shape xs;
    Ints perm;
  };
  for (const Case& c : std::vector<Case>{{{2, 3, 4}, {2, 0, 1}},
                                         {{37, 5, 20}, {2, 1, 0}},
                                         {{3, 40, 18}, {0, 2, 1}},
                                         {{6, 7}, {0, 1}}}) {
    INFO("shape " << shape_str(c.xs) << " perm " << c.perm[0] << c.perm[1]
                  << (c.perm.size() > 2 ? std::to_string(c.perm[2]) : ""));
    Shape os;
    for (std::int64_t p : c.perm) os.push_back(c.xs[static_cast<std::size_t>(p)]);
    std::vector<double> x = ramp<double>(shape_size(c.xs));
    std::vector<double> want(x.size());
    Ints xst = strides_of(c.xs), ost = strides_of(os);
    for_each(c.xs, [&](const Ints& i) {
      Ints o(i.size());
      for (std::size_t k = 0; k < i.size(); ++k) o[k] = i[static_cast<std::size_t>(c.perm[k])];
      want[static_cast<std::size_t>(offset(o, ost))] = x[static_cast<std::size_t>(offset(i, xst))];
    });
    Hlo h;
    auto* t = h.op(Opcode::kTranspose, float64, os, {h.param(0, float64, c.xs)},
                   attrs({{"dimensions", c.perm}}));
    check_all(run<double>(t, {x.data()}), want);
    auto code = compile_kernels({{t, "kernel", /*partitioned=*/true}}, {});
    auto fn = reinterpret_cast<KernelFn>(code->symbol("kernel"));
    std::vector<double> parts(x.size());
    void* buffers[] = {x.data(), parts.data()};
    std::int64_t rows = kernel_rows(*t);  // dim 0's, or with the next dims' folded in
    for (std::int64_t row = 0; row < rows; row += 3) fn(buffers, row, std::min(row + 3, rows));
    check_all(parts, want);
  }
}

TEST_CASE("codegen: slice with strides", "[codegen]") {
  std::vector<std::int64_t> x = ramp<std::int64_t>(30);  // [5, 6]
  Hlo h;
  auto* s = h.op(Opcode::kSlice, int64, {2, 2}, {h.param(0, int64, {5, 6})},
                 attrs({{"slice", Ints{1, 5, 2, 0, 6, 3}}}));
  CHECK(run<std::int64_t>(s, {x.data()}) == std::vector<std::int64_t>{6, 9, 18, 21});
  auto* e = h.op(Opcode::kSlice, int64, {0, 6}, {h.param(1, int64, {5, 6})},
                 attrs({{"slice", Ints{2, 2, 1, 0, 6, 1}}}));
  CHECK(run<std::int64_t>(e, {x.data()}).empty());
}

// x[5, 4] = 0..19; a [2, 3] window at (r, c), clamped into bounds.
template <class I>
void check_dynamic_slice(I r, I c, std::int64_t want_r, std::int64_t want_c) {
  INFO(dtype_name(dtype_for<I>()) << " start (" << +r << ", " << +c << ")");
  std::vector<float> x = ramp<float>(20);
  Hlo h;
  auto* ds = h.op(
      Opcode::kDynamicSlice, float32, {2, 3},
      {h.param(0, float32, {5, 4}), h.param(1, dtype_for<I>(), {}), h.param(2, dtype_for<I>(), {})},
      attrs({{"dynamic_slice_sizes", Ints{2, 3}}}));
  std::vector<float> want;
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      want.push_back(x[static_cast<std::size_t>((want_r + i) * 4 + want_c + j)]);
  check_all(run<float>(ds, {x.data(), &r, &c}), want);
}

TEST_CASE("codegen: dynamic-slice clamps start indices into bounds", "[codegen]") {
  check_dynamic_slice<std::int32_t>(1, 1, 1, 1);
  check_dynamic_slice<std::int32_t>(-1, 3, 0, 1);
  check_dynamic_slice<std::int64_t>(10, -100, 3, 0);
  check_dynamic_slice<std::int64_t>(std::numeric_limits<std::int64_t>::min(), 2, 0, 1);
  check_dynamic_slice<std::uint32_t>(0xFFFFFFFFu, 0u, 3, 0);  // unsigned: huge, not -1
}

TEST_CASE("codegen: dynamic-update-slice clamps and keeps the rest", "[codegen]") {
  for (auto [r, c] : std::vector<std::pair<std::int32_t, std::int32_t>>{{1, 1}, {3, -5}, {-2, 9}}) {
    INFO("start (" << r << ", " << c << ")");
    std::vector<std::int32_t> x = ramp<std::int32_t>(16), u = {-1, -2, -3, -4};
    std::vector<std::int32_t> want = x;
    std::int32_t cr = std::clamp(r, 0, 2), cc = std::clamp(c, 0, 2);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        want[static_cast<std::size_t>((cr + i) * 4 + cc + j)] =
            u[static_cast<std::size_t>(i * 2 + j)];
    Hlo h;
    auto* d = h.op(Opcode::kDynamicUpdateSlice, int32, {4, 4},
                   {h.param(0, int32, {4, 4}), h.param(1, int32, {2, 2}), h.param(2, int32, {}),
                    h.param(3, int32, {})});
    CHECK(run<std::int32_t>(d, {x.data(), u.data(), &r, &c}) == want);
  }
  // An empty update leaves the operand; a full-size one replaces it.
  std::vector<double> x = {1, 2, 3}, full = {7, 8, 9};
  std::int64_t s = 2;
  Hlo h;
  auto* e = h.op(Opcode::kDynamicUpdateSlice, float64, {3},
                 {h.param(0, float64, {3}), h.param(1, float64, {0}), h.param(2, int64, {})});
  check_all(run<double>(e, {x.data(), full.data(), &s}), x);
  auto* f = h.op(Opcode::kDynamicUpdateSlice, float64, {3},
                 {h.param(3, float64, {3}), h.param(4, float64, {3}), h.param(5, int64, {})});
  check_all(run<double>(f, {x.data(), full.data(), &s}), full);
}

TEST_CASE("codegen: concatenate with an empty operand", "[codegen]") {
  std::vector<std::uint32_t> a = {1, 2}, c = {3, 4, 5, 6, 7, 8};
  Hlo h;
  auto* cat =
      h.op(Opcode::kConcatenate, uint32, {2, 4},
           {h.param(0, uint32, {2, 1}), h.param(1, uint32, {2, 0}), h.param(2, uint32, {2, 3})},
           attrs({{"dimensions", Ints{1}}}));
  CHECK(run<std::uint32_t>(cat, {a.data(), nullptr, c.data()}) ==
        std::vector<std::uint32_t>{1, 3, 4, 5, 2, 6, 7, 8});
  auto* cat0 = h.op(Opcode::kConcatenate, uint32, {3, 2},
                    {h.param(3, uint32, {1, 2}), h.param(4, uint32, {2, 2})},
                    attrs({{"dimensions", Ints{0}}}));
  CHECK(run<std::uint32_t>(cat0, {a.data(), c.data()}) ==
        std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("codegen: concatenate along an inner dim, whole and a few rows at a time", "[codegen]") {
  // Written row by row of the dims before the concatenated one, each operand's block in turn
  // (kernel.cpp); the kernel also runs for two rows of dim 0 at a time.
  for (std::int64_t dim : {1, 2}) {
    INFO("dim " << dim);
    std::vector<Shape> parts = dim == 1 ? std::vector<Shape>{{5, 3, 4}, {5, 2, 4}, {5, 1, 4}}
                                        : std::vector<Shape>{{5, 3, 1}, {5, 3, 6}, {5, 3, 2}};
    Shape os = parts[0];
    os[static_cast<std::size_t>(dim)] = 0;
    for (const Shape& p : parts)
      os[static_cast<std::size_t>(dim)] += p[static_cast<std::size_t>(dim)];
    std::vector<std::vector<double>> xs;
    std::vector<double> want(static_cast<std::size_t>(shape_size(os)));
    Hlo h;
    std::vector<hlo::Instruction*> operands;
    std::int64_t at = 0;
    for (std::size_t k = 0; k < parts.size(); ++k) {
      std::vector<double>& x = xs.emplace_back(ramp<double>(shape_size(parts[k])));
      for (double& v : x) v += 100.0 * static_cast<double>(k);
      Ints xst = strides_of(parts[k]), ost = strides_of(os);
      for_each(parts[k], [&](const Ints& i) {
        Ints o = i;
        o[static_cast<std::size_t>(dim)] += at;
        want[static_cast<std::size_t>(offset(o, ost))] =
            x[static_cast<std::size_t>(offset(i, xst))];
      });
      at += parts[k][static_cast<std::size_t>(dim)];
      operands.push_back(h.param(static_cast<int>(k), float64, parts[k]));
    }
    auto* cat =
        h.op(Opcode::kConcatenate, float64, os, operands, attrs({{"dimensions", Ints{dim}}}));
    check_all(run<double>(cat, {xs[0].data(), xs[1].data(), xs[2].data()}), want);
    auto code = compile_kernels({{cat, "kernel", /*partitioned=*/true}}, {});
    auto fn = reinterpret_cast<KernelFn>(code->symbol("kernel"));
    std::vector<double> got(want.size());
    void* buffers[] = {xs[0].data(), xs[1].data(), xs[2].data(), got.data()};
    for (std::int64_t row = 0; row < os[0]; row += 2) fn(buffers, row, std::min(row + 2, os[0]));
    check_all(got, want);
  }
}

TEST_CASE("codegen: a loop kernel's rows take in leading dims up to 64 rows", "[codegen]") {
  // A batch of one, f32[1, 1, 20, 37]: an elementwise root and a transpose root (whose nest is
  // tiled) take dim 2's rows. A few, f32[2, 5, 9, 37]: dims 0 to 2's 90 rows. Each runs here a
  // few rows at a time, against loops.
  for (Shape xs : {Shape{1, 1, 20, 37}, Shape{2, 5, 9, 37}}) {
    INFO("shape " << shape_str(xs));
    Shape os = xs;
    std::swap(os[2], os[3]);
    std::vector<float> x = ramp<float>(shape_size(xs), -3, 0.25);
    Hlo h;
    auto* p = h.param(0, float32, xs);
    auto* doubled = h.b.binary(Opcode::kAdd, p, p);
    auto* swapped =
        h.op(Opcode::kTranspose, float32, os, {p}, attrs({{"dimensions", Ints{0, 1, 3, 2}}}));
    std::vector<float> want_doubled, want_swapped(x.size());
    for (float v : x) want_doubled.push_back(v + v);
    std::int64_t m = xs[2], n = xs[3];
    for (std::int64_t b = 0; b < xs[0] * xs[1]; ++b)
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j)
          want_swapped[static_cast<std::size_t>((b * n + j) * m + i)] =
              x[static_cast<std::size_t>((b * m + i) * n + j)];
    for (auto [root, want] : {std::pair{doubled, want_doubled}, std::pair{swapped, want_swapped}}) {
      std::int64_t rows = kernel_rows(*root);
      CHECK(rows == root->shape.dims[0] * root->shape.dims[1] * root->shape.dims[2]);
      auto code = compile_kernels({{root, "kernel", /*partitioned=*/true}}, {});
      auto fn = reinterpret_cast<KernelFn>(code->symbol("kernel"));
      std::vector<float> got(want.size(), -1.0f);
      std::vector<void*> buffers(root->operands.size(), x.data());  // p, once per operand
      buffers.push_back(got.data());
      for (std::int64_t row = 0; row < rows; row += 6)
        fn(buffers.data(), row, std::min(row + 6, rows));
      check_all(got, want);
    }
  }
}

// The pad oracle scatters: every operand element lands at low + i * (interior + 1) if inside.
std::vector<float> pad_oracle(const std::vector<float>& x, const Shape& xs, const Ints& cfg,
                              const Shape& os, float value) {
  std::vector<float> out(static_cast<std::size_t>(shape_size(os)), value);
  Ints xst = strides_of(xs), ost = strides_of(os);
  for_each(xs, [&](const Ints& i) {
    Ints o(i.size());
    for (std::size_t d = 0; d < i.size(); ++d) {
      o[d] = cfg[3 * d] + i[d] * (cfg[3 * d + 2] + 1);
      if (o[d] < 0 || o[d] >= os[d]) return;
    }
    out[static_cast<std::size_t>(offset(o, ost))] = x[static_cast<std::size_t>(offset(i, xst))];
  });
  return out;
}

TEST_CASE("codegen: pad with negative low/high and interior padding", "[codegen]") {
  struct Case {
    Shape xs;
    Ints cfg;
  };
  for (const Case& c : std::vector<Case>{{{3}, {-1, 2, 1}},
                                         {{3}, {2, -3, 0}},
                                         {{2, 3}, {1, -1, 2, -2, 1, 1}},
                                         {{2, 3}, {0, 0, 0, 0, 0, 0}},
                                         {{0}, {1, 2, 3}},
                                         {{4}, {-4, 0, 0}},
                                         {{1, 2}, {0, 1, 5, 1, 0, 3}}}) {
    Shape os;
    for (std::size_t d = 0; d < c.xs.size(); ++d) {
      std::int64_t n = c.xs[d];
      os.push_back(c.cfg[3 * d] + c.cfg[3 * d + 1] +
                   (n > 0 ? (n - 1) * (c.cfg[3 * d + 2] + 1) + 1 : 0));
    }
    INFO(shape_str(c.xs) << " -> " << shape_str(os));
    std::vector<float> x = ramp<float>(shape_size(c.xs), 1);
    float v = -9.f;
    Hlo h;
    auto* p = h.op(Opcode::kPad, float32, os, {h.param(0, float32, c.xs), h.param(1, float32, {})},
                   attrs({{"padding", c.cfg}}));
    check_all(run<float>(p, {x.data(), &v}), pad_oracle(x, c.xs, c.cfg, os, v));
  }
}

TEST_CASE("codegen: iota along each dimension", "[codegen]") {
  Hlo h;
  auto* a = h.op(Opcode::kIota, int32, {2, 3}, {}, attrs({{"iota_dimension", std::int64_t{1}}}));
  CHECK(run<std::int32_t>(a, {}) == std::vector<std::int32_t>{0, 1, 2, 0, 1, 2});
  auto* b = h.op(Opcode::kIota, float32, {2, 3}, {}, attrs({{"iota_dimension", std::int64_t{0}}}));
  check_all(run<float>(b, {}), {0.f, 0.f, 0.f, 1.f, 1.f, 1.f});
  auto* c = h.op(Opcode::kIota, uint32, {4}, {}, attrs({{"iota_dimension", std::int64_t{0}}}));
  CHECK(run<std::uint32_t>(c, {}) == std::vector<std::uint32_t>{0, 1, 2, 3});
  auto* d = h.op(Opcode::kIota, float64, {3, 0}, {}, attrs({{"iota_dimension", std::int64_t{0}}}));
  CHECK(run<double>(d, {}).empty());
}

TEST_CASE("codegen: constants are read from the literal", "[codegen]") {
  Hlo h;
  auto* m = h.b.constant(np::array(std::vector<float>{1.5f, -2.f, 3.f, 4.25f, 5.f, 6.f}, {2, 3}));
  check_all(run<float>(m, {}), {1.5f, -2.f, 3.f, 4.25f, 5.f, 6.f});
  auto* s = h.b.constant(np::array(std::vector<std::int64_t>{-5}, {}));
  CHECK(run<std::int64_t>(s, {}) == std::vector<std::int64_t>{-5});
  auto* pr = h.b.constant(np::array(std::vector<std::int32_t>{0, 3, 0}).astype(bool_));
  CHECK(run<pred>(pr, {}) == std::vector<pred>{0, 1, 0});
  auto* u = h.b.constant(np::array(std::vector<std::uint32_t>{0xFFFFFFFFu, 7u}));
  CHECK(run<std::uint32_t>(u, {}) == std::vector<std::uint32_t>{0xFFFFFFFFu, 7u});
  // A constant operand is passed as a buffer like any other.
  std::vector<float> x = {1, 1, 1, 1, 1, 1}, k = {1.5f, -2.f, 3.f, 4.25f, 5.f, 6.f};
  auto* add = h.b.binary(Opcode::kAdd, h.param(0, float32, {2, 3}), m);
  check_all(run<float>(add, {x.data(), k.data()}), {2.5f, -1.f, 4.f, 5.25f, 6.f, 7.f});
}

// Layout ops only move elements: one pass over every dtype (pred is stored as a byte).
TEST_CASE("codegen: layout ops move elements of every dtype", "[codegen]") {
  for (DType d : kAllDTypes) {
    INFO(dtype_name(d));
    dispatch(d, [&]<class T>() {
      using S = std::conditional_t<std::is_same_v<T, bool>, pred, T>;
      std::vector<S> x;  // [2, 3]
      for (int i = 0; i < 6; ++i) x.push_back(static_cast<S>(d == bool_ ? i % 2 : i + 1));
      S pad = static_cast<S>(d == bool_ ? 1 : 9);
      Hlo h;
      auto* t = h.op(Opcode::kTranspose, d, {3, 2}, {h.param(0, d, {2, 3})},
                     attrs({{"dimensions", Ints{1, 0}}}));
      CHECK(run<S>(t, {x.data()}) == std::vector<S>{x[0], x[3], x[1], x[4], x[2], x[5]});
      auto* c =
          h.op(Opcode::kConcatenate, d, {2, 5}, {h.param(1, d, {2, 3}), h.param(2, d, {2, 2})},
               attrs({{"dimensions", Ints{1}}}));  // x, and x's first 4 as [2, 2]
      CHECK(run<S>(c, {x.data(), x.data()}) ==
            std::vector<S>{x[0], x[1], x[2], x[0], x[1], x[3], x[4], x[5], x[2], x[3]});
      auto* p = h.op(Opcode::kPad, d, {2, 4}, {h.param(3, d, {2, 3}), h.param(4, d, {})},
                     attrs({{"padding", Ints{0, 0, 0, -1, 0, 1}}}));
      CHECK(run<S>(p, {x.data(), &pad}) ==
            std::vector<S>{pad, x[1], pad, x[2], pad, x[4], pad, x[5]});
      std::int32_t one = 1;
      auto* ds = h.op(Opcode::kDynamicSlice, d, {1, 2},
                      {h.param(5, d, {2, 3}), h.param(6, int32, {}), h.param(7, int32, {})},
                      attrs({{"dynamic_slice_sizes", Ints{1, 2}}}));
      CHECK(run<S>(ds, {x.data(), &one, &one}) == std::vector<S>{x[4], x[5]});
      auto* b = h.b.broadcast(h.param(8, d, {3}), {2, 3}, {1});
      CHECK(run<S>(b, {x.data()}) == std::vector<S>{x[0], x[1], x[2], x[0], x[1], x[2]});
    });
  }
}

}  // namespace
}  // namespace jx::codegen::testing
