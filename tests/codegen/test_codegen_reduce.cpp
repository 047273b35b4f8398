// CPU codegen of reduce (to_apply emitted through the element generators), argmax/argmin and
// dot with generic dimension numbers, against explicit loops.
#include <algorithm>
#include <cmath>
#include <limits>

#include "codegen/codegen_testing.hpp"

namespace jx::codegen::testing {
namespace {

using hlo::Opcode;

// The oracle: out[kept index] folds f over the reduced dims in row-major order, from init.
template <class T, class F>
std::vector<T> reduce_oracle(const std::vector<T>& x, const Shape& xs, const Ints& dims, T init,
                             F f) {
  Shape os;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(xs.size()); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end())
      os.push_back(xs[static_cast<std::size_t>(d)]);
  std::vector<T> out(static_cast<std::size_t>(shape_size(os)), init);
  Ints xst = strides_of(xs), ost = strides_of(os);
  for_each(xs, [&](const Ints& i) {
    Ints o;
    for (std::size_t d = 0; d < i.size(); ++d)
      if (std::find(dims.begin(), dims.end(), static_cast<std::int64_t>(d)) == dims.end())
        o.push_back(i[d]);
    T& acc = out[static_cast<std::size_t>(offset(o, ost))];
    acc = f(acc, x[static_cast<std::size_t>(offset(i, xst))]);
  });
  return out;
}

TEST_CASE("codegen: reduce sum and product over every subset of axes", "[codegen]") {
  Shape xs = {2, 3, 4};
  std::vector<Ints> subsets = {{}, {0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}, {0, 1, 2}, {2, 0}};
  std::vector<float> xf = ramp<float>(24, -3, 0.37);
  std::vector<std::int32_t> xi = ramp<std::int32_t>(24, -10, 1);
  for (const Ints& dims : subsets) {
    INFO("dims " << dims.size());
    Hlo h;
    float zf = 0.5f;
    auto* rf = h.b.reduce(h.param(0, float32, xs), h.param(1, float32, {}), dims, Opcode::kAdd);
    check_all(run<float>(rf, {xf.data(), &zf}),
              reduce_oracle<float>(xf, xs, dims, zf, [](float a, float b) { return a + b; }), 1e-6);
    std::int32_t zi = 0;
    auto* ri = h.b.reduce(h.param(2, int32, xs), h.param(3, int32, {}), dims, Opcode::kMultiply);
    check_all(run<std::int32_t>(ri, {xi.data(), &zi}),
              reduce_oracle<std::int32_t>(xi, xs, dims, zi, [](std::int32_t a, std::int32_t b) {
                return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) *
                                                 static_cast<std::uint32_t>(b));
              }));
  }
}

TEST_CASE("codegen: batched column reductions, whole and an entry range at a time", "[codegen]") {
  // Keeping the first and last dims: 21 rows an entry (two groups of 8, then 5 one by one) and
  // 37 columns (vectors and a partial one); a thread's part is a range of entries.
  Shape xs = {5, 3, 7, 37};
  std::vector<float> x = ramp<float>(shape_size(xs), -40, 0.013);
  float init = 0.25f;
  Hlo h;
  auto* r = h.b.reduce(h.param(0, float32, xs), h.param(1, float32, {}), {1, 2}, Opcode::kAdd);
  std::vector<float> want =
      reduce_oracle<float>(x, xs, {1, 2}, init, [](float a, float b) { return a + b; });
  check_all(run<float>(r, {x.data(), &init}), want, 1e-5);
  auto code = compile_kernels({{r, "kernel", /*partitioned=*/true}}, {});
  auto fn = reinterpret_cast<KernelFn>(code->symbol("kernel"));
  REQUIRE(kernel_rows(*r) == 5);
  std::vector<float> out(want.size(), -1.0f);
  std::vector<void*> buffers = {x.data(), &init, out.data()};
  fn(buffers.data(), 3, 5);
  fn(buffers.data(), 0, 3);
  check_all(out, want, 1e-5);
}

TEST_CASE("codegen: reductions of empty axes give the init value", "[codegen]") {
  Hlo h;
  double init = -7.25;
  std::vector<double> x;
  auto* r = h.b.reduce(h.param(0, float64, {3, 0}), h.param(1, float64, {}), {1}, Opcode::kAdd);
  check_all(run<double>(r, {x.data(), &init}), {init, init, init});
  auto* all =
      h.b.reduce(h.param(2, float64, {0, 4}), h.param(3, float64, {}), {0, 1}, Opcode::kMaximum);
  check_all(run<double>(all, {x.data(), &init}), {init});
  auto* none =
      h.b.reduce(h.param(4, float64, {0, 4}), h.param(5, float64, {}), {0}, Opcode::kMaximum);
  check_all(run<double>(none, {x.data(), &init}), {init, init, init, init});
  auto* keep =
      h.b.reduce(h.param(6, float64, {0, 4}), h.param(7, float64, {}), {1}, Opcode::kMaximum);
  CHECK(run<double>(keep, {x.data(), &init}).empty());
}

TEST_CASE("codegen: reduce max/min propagate NaN - pred and/or - u32 and s64 wrap", "[codegen]") {
  const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {1.f, nan, 3.f, -2.f, 5.f, 0.f};  // [2, 3]
  float lo = -inf, hi = inf;
  Hlo h;
  auto* mx =
      h.b.reduce(h.param(0, float32, {2, 3}), h.param(1, float32, {}), {1}, Opcode::kMaximum);
  check_all(run<float>(mx, {x.data(), &lo}), {nan, 5.f});
  auto* mn =
      h.b.reduce(h.param(2, float32, {2, 3}), h.param(3, float32, {}), {0}, Opcode::kMinimum);
  check_all(run<float>(mn, {x.data(), &hi}), {-2.f, nan, 0.f});
  std::vector<pred> p = {1, 0, 1, 1, 1, 1};
  pred t = 1, f = 0;
  auto* all = h.b.reduce(h.param(4, bool_, {2, 3}), h.param(5, bool_, {}), {1}, Opcode::kAnd);
  CHECK(run<pred>(all, {p.data(), &t}) == std::vector<pred>{0, 1});
  auto* any = h.b.reduce(h.param(6, bool_, {2, 3}), h.param(7, bool_, {}), {0}, Opcode::kOr);
  CHECK(run<pred>(any, {p.data(), &f}) == std::vector<pred>{1, 1, 1});
  std::vector<std::uint32_t> u = {0xFFFFFFFFu, 2u, 7u};
  std::uint32_t z = 0;
  auto* us = h.b.reduce(h.param(8, uint32, {3}), h.param(9, uint32, {}), {0}, Opcode::kAdd);
  CHECK(run<std::uint32_t>(us, {u.data(), &z}) == std::vector<std::uint32_t>{8u});  // wraps
  auto* um = h.b.reduce(h.param(10, uint32, {3}), h.param(11, uint32, {}), {0}, Opcode::kMaximum);
  CHECK(run<std::uint32_t>(um, {u.data(), &z}) == std::vector<std::uint32_t>{0xFFFFFFFFu});
  std::vector<std::int64_t> s = {INT64_MAX, 1, -5};
  std::int64_t s0 = 0;
  auto* ss = h.b.reduce(h.param(12, int64, {3}), h.param(13, int64, {}), {0}, Opcode::kAdd);
  CHECK(run<std::int64_t>(ss, {s.data(), &s0}) == std::vector<std::int64_t>{INT64_MAX - 4});
}

// A row of 100 takes the vectorized fold, which leaves the sign of a zero open and folds a zero
// result again: each row below ends at a zero of a known sign, or at NaN.
template <class T>
void check_long_extreme_rows(Opcode op) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const bool is_max = op == Opcode::kMaximum;
  const T sign = is_max ? T(1) : T(-1);  // rows for min are the max rows negated
  constexpr std::int64_t kRows = 6, kCols = 100;
  std::vector<T> x(static_cast<std::size_t>(kRows * kCols));
  for (std::int64_t c = 0; c < kCols; ++c) {
    T below = -sign * T(1 + c % 7);  // below zero for max, above for min
    auto at = [&](std::int64_t r) -> T& { return x[static_cast<std::size_t>(r * kCols + c)]; };
    at(0) = c == 31 ? T(0) : c == 64 ? -T(0) : below;  // both zeros: +0 for max, -0 for min
    at(1) = -sign * T(0);                              // only the zero the other way
    at(2) = c == 90 ? -sign * T(0) : below;            // one zero, the other way
    at(3) = c == 70 ? nan : T(c);                      // a NaN
    at(4) = T(c) * sign - T(3);                        // no zero
    at(5) = below;
  }
  for (T init : {sign * -std::numeric_limits<T>::infinity(), T(0)}) {
    INFO("init " << init);
    Hlo h;
    auto* r = h.b.reduce(h.param(0, dtype_of<T>(), {kRows, kCols}), h.param(1, dtype_of<T>(), {}),
                         {1}, op);
    std::vector<T> got = run<T>(r, {x.data(), &init});
    for (std::int64_t row = 0; row < kRows; ++row) {
      T want = init;
      for (std::int64_t c = 0; c < kCols; ++c) {
        T v = x[static_cast<std::size_t>(row * kCols + c)];
        want = is_max ? ieee_max(want, v) : ieee_min(want, v);
      }
      INFO("row " << row << ": " << got[static_cast<std::size_t>(row)] << ", want " << want);
      T g = got[static_cast<std::size_t>(row)];
      CHECK(std::isnan(g) == std::isnan(want));
      if (!std::isnan(want)) {
        CHECK(g == want);
        CHECK(std::signbit(g) == std::signbit(want));
      }
    }
  }
}

TEST_CASE("codegen: a long float max or min reduction gives IEEE's NaN and sign of zero",
          "[codegen]") {
  for (Opcode op : {Opcode::kMaximum, Opcode::kMinimum}) {
    check_long_extreme_rows<float>(op);
    check_long_extreme_rows<double>(op);
  }
}

TEST_CASE("codegen: reduce emits a multi-instruction to_apply with a constant", "[codegen]") {
  // to_apply(a, b) = a + b * b * 2: a sum of doubled squares.
  Hlo h;
  hlo::Computation* region = h.module.add_computation("sumsq");
  hlo::Builder rb(region);
  auto* a = rb.parameter(0, shape(float64, {}));
  auto* b = rb.parameter(1, shape(float64, {}));
  auto* two = rb.constant(Array(2.0).astype(float64));
  auto* sq = rb.binary(Opcode::kMultiply, rb.binary(Opcode::kMultiply, b, b), two);
  region->set_root(rb.binary(Opcode::kAdd, a, sq));
  std::vector<double> x = {1, 2, 3, 4, 5, 6};
  double init = 0.5;
  auto* r =
      h.op(Opcode::kReduce, float64, {2}, {h.param(0, float64, {2, 3}), h.param(1, float64, {})},
           attrs({{"dimensions", Ints{1}}}), {region});
  check_all(run<double>(r, {x.data(), &init}), {0.5 + 2 * (1 + 4 + 9), 0.5 + 2 * (16 + 25 + 36)});
}

template <class I>
std::vector<I> arg_run(Opcode op, DType d, const Shape& xs, std::int64_t axis, const void* x) {
  Shape os = xs;
  os.erase(os.begin() + axis);
  Hlo h;
  auto* r = h.op(op, dtype_for<I>(), os, {h.param(0, d, xs)}, attrs({{"dimensions", Ints{axis}}}));
  return run<I>(r, {x});
}

TEST_CASE("codegen: argmax/argmin give the first NaN or else the first extreme", "[codegen]") {
  const float nan = std::nanf("");
  std::vector<float> x = {1.f, 3.f,  3.f,  0.f,   // ties: the first 3 (argmax), the 0 (argmin)
                          nan, 2.f,  nan,  -1.f,  // first NaN
                          2.f, -1.f, -1.f, nan};  // NaN last wins
  CHECK(arg_run<std::int32_t>(Opcode::kArgMax, float32, {3, 4}, 1, x.data()) ==
        std::vector<std::int32_t>{1, 0, 3});
  CHECK(arg_run<std::int64_t>(Opcode::kArgMin, float32, {3, 4}, 1, x.data()) ==
        std::vector<std::int64_t>{3, 0, 3});
  CHECK(arg_run<std::int32_t>(Opcode::kArgMax, float32, {3, 4}, 0, x.data()) ==
        std::vector<std::int32_t>{1, 0, 1, 2});
  std::vector<std::uint32_t> u = {5u, 0x80000000u, 1u, 0x80000000u};
  CHECK(arg_run<std::int32_t>(Opcode::kArgMax, uint32, {4}, 0, u.data()) ==
        std::vector<std::int32_t>{1});
  CHECK(arg_run<std::int32_t>(Opcode::kArgMin, uint32, {4}, 0, u.data()) ==
        std::vector<std::int32_t>{2});
  std::vector<std::int64_t> s = {-1, INT64_MIN, 4, INT64_MIN, 4};
  CHECK(arg_run<std::int64_t>(Opcode::kArgMin, int64, {5}, 0, s.data()) ==
        std::vector<std::int64_t>{1});
  CHECK(arg_run<std::int64_t>(Opcode::kArgMax, int64, {5}, 0, s.data()) ==
        std::vector<std::int64_t>{2});
  std::vector<pred> p = {0, 0, 1, 1};
  CHECK(arg_run<std::int32_t>(Opcode::kArgMax, bool_, {4}, 0, p.data()) ==
        std::vector<std::int32_t>{2});
  std::vector<double> one = {4.0, 5.0};  // axis of size 1, and 0-sized outer dims
  CHECK(arg_run<std::int32_t>(Opcode::kArgMax, float64, {2, 1}, 1, one.data()) ==
        std::vector<std::int32_t>{0, 0});
  CHECK(arg_run<std::int32_t>(Opcode::kArgMax, float64, {0, 3}, 1, one.data()).empty());
  std::vector<std::int32_t> m = ramp<std::int32_t>(24, 7, -1);  // [2, 3, 4], middle axis
  CHECK(arg_run<std::int32_t>(Opcode::kArgMax, int32, {2, 3, 4}, 1, m.data()) ==
        std::vector<std::int32_t>(8, 0));
  CHECK(arg_run<std::int32_t>(Opcode::kArgMin, int32, {2, 3, 4}, 1, m.data()) ==
        std::vector<std::int32_t>(8, 2));
}

struct DotCase {
  Shape ls, rs;
  Ints lc, rc, lb, rb;
};

// The oracle: a loop over output indices and contracting indices, in the output dtype.
template <class T, class O>
std::vector<O> dot_oracle(const DotCase& c, const std::vector<T>& l, const std::vector<T>& r,
                          Shape& out_shape) {
  auto free_of = [](const Shape& s, const Ints& con, const Ints& bat) {
    Ints f;
    for (std::int64_t d = 0; d < static_cast<std::int64_t>(s.size()); ++d)
      if (std::find(con.begin(), con.end(), d) == con.end() &&
          std::find(bat.begin(), bat.end(), d) == bat.end())
        f.push_back(d);
    return f;
  };
  Ints lf = free_of(c.ls, c.lc, c.lb), rf = free_of(c.rs, c.rc, c.rb);
  out_shape.clear();
  for (auto d : c.lb) out_shape.push_back(c.ls[static_cast<std::size_t>(d)]);
  for (auto d : lf) out_shape.push_back(c.ls[static_cast<std::size_t>(d)]);
  for (auto d : rf) out_shape.push_back(c.rs[static_cast<std::size_t>(d)]);
  Shape cs;
  for (auto d : c.lc) cs.push_back(c.ls[static_cast<std::size_t>(d)]);
  Ints lst = strides_of(c.ls), rst = strides_of(c.rs);
  std::vector<O> out;
  for_each(out_shape, [&](const Ints& o) {
    Ints li(c.ls.size()), ri(c.rs.size());
    std::size_t k = 0;
    for (std::size_t i = 0; i < c.lb.size(); ++i, ++k)
      li[static_cast<std::size_t>(c.lb[i])] = ri[static_cast<std::size_t>(c.rb[i])] = o[k];
    for (auto d : lf) li[static_cast<std::size_t>(d)] = o[k++];
    for (auto d : rf) ri[static_cast<std::size_t>(d)] = o[k++];
    O acc = 0;
    for_each(cs, [&](const Ints& ci) {
      for (std::size_t i = 0; i < ci.size(); ++i) {
        li[static_cast<std::size_t>(c.lc[i])] = ci[i];
        ri[static_cast<std::size_t>(c.rc[i])] = ci[i];
      }
      acc = static_cast<O>(acc + static_cast<O>(l[static_cast<std::size_t>(offset(li, lst))]) *
                                     static_cast<O>(r[static_cast<std::size_t>(offset(ri, rst))]));
    });
    out.push_back(acc);
  });
  return out;
}

template <class T, class O>
void check_dot(const DotCase& c, double rtol) {
  std::vector<T> l = ramp<T>(shape_size(c.ls), -2, 0.5), r = ramp<T>(shape_size(c.rs), 3, -0.25);
  if constexpr (std::is_integral_v<T>) {
    l = ramp<T>(shape_size(c.ls), std::is_signed_v<T> ? -5 : 0, 1);
    r = ramp<T>(shape_size(c.rs), 3, 1);
  }
  Shape os;
  std::vector<O> want = dot_oracle<T, O>(c, l, r, os);
  Hlo h;
  auto* d = h.op(Opcode::kDot, dtype_for<O>(), os,
                 {h.param(0, dtype_for<T>(), c.ls), h.param(1, dtype_for<T>(), c.rs)},
                 attrs({{"lhs_contracting_dims", c.lc},
                        {"rhs_contracting_dims", c.rc},
                        {"lhs_batch_dims", c.lb},
                        {"rhs_batch_dims", c.rb}}));
  check_all(run<O>(d, {l.data(), r.data()}), want, rtol);
}

TEST_CASE("codegen: dot with generic dimension numbers and sizes", "[codegen]") {
  std::vector<DotCase> cases = {
      {{3, 4}, {4, 5}, {1}, {0}, {}, {}},              // matmul
      {{4, 3}, {5, 4}, {0}, {1}, {}, {}},              // both transposed
      {{2, 3, 4}, {2, 4, 5}, {2}, {1}, {0}, {0}},      // batched
      {{3, 2, 4}, {4, 5, 2}, {2}, {0}, {1}, {2}},      // batch dims anywhere
      {{6}, {6}, {0}, {0}, {}, {}},                    // vector · vector → 0-d
      {{3}, {4}, {}, {}, {}, {}},                      // outer product
      {{3, 0}, {0, 2}, {1}, {0}, {}, {}},              // empty contraction: zeros
      {{0, 3}, {3, 2}, {1}, {0}, {}, {}},              // empty output
      {{2, 3, 4}, {3, 4, 2}, {1, 2}, {0, 1}, {}, {}},  // two contracting dims
      {{2, 4, 3}, {3, 2, 4}, {2, 1}, {0, 2}, {}, {}},  // contracting dims out of order
      {{1, 1}, {1, 1}, {1}, {0}, {}, {}},
      {{17, 33}, {33, 9}, {1}, {0}, {}, {}},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i);
    check_dot<float, float>(cases[i], 1e-5);
    check_dot<double, double>(cases[i], 1e-13);
    check_dot<std::int32_t, std::int32_t>(cases[i], 0);
    check_dot<std::int64_t, std::int64_t>(cases[i], 0);
    check_dot<std::uint32_t, std::uint32_t>(cases[i], 0);
    check_dot<std::int32_t, float>(cases[i], 1e-6);  // preferred_element_type wider
    check_dot<float, double>(cases[i], 1e-13);
  }
}

}  // namespace
}  // namespace jx::codegen::testing
