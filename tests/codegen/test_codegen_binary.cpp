// CPU codegen of binary and ternary elementwise ops: integer division edges, NaN-propagating
// max/min, comparisons with NaN and unsigned values, select, clamp, bitwise ops.
#include <cmath>
#include <limits>

#include <jx/jx.hpp>

#include "codegen/codegen_testing.hpp"
#include "support/config_guard.hpp"

namespace jx::codegen::testing {
namespace {

using hlo::Opcode;

template <class T>
std::vector<T> binary_run(Opcode op, const std::vector<T>& x, const std::vector<T>& y) {
  Hlo h;
  auto n = static_cast<std::int64_t>(x.size());
  auto* a = h.param(0, dtype_for<T>(), {n});
  auto* b = h.param(1, dtype_for<T>(), {n});
  return run<T>(h.b.binary(op, a, b), {x.data(), y.data()});
}

template <class T>
void check_int_arithmetic() {
  using L = std::numeric_limits<T>;
  using U = std::make_unsigned_t<T>;
  std::vector<T> x, y;
  std::vector<T> vals = {L::min(), static_cast<T>(-7), static_cast<T>(-1), T(0), T(1), T(7), T(13),
                         L::max()};
  for (T a : vals)
    for (T b : vals) x.push_back(a), y.push_back(b);
  std::vector<T> add, sub, mul, div, rem, max, min;
  for (std::size_t i = 0; i < x.size(); ++i) {
    T a = x[i], b = y[i];
    add.push_back(static_cast<T>(static_cast<U>(a) + static_cast<U>(b)));
    sub.push_back(static_cast<T>(static_cast<U>(a) - static_cast<U>(b)));
    mul.push_back(static_cast<T>(static_cast<U>(a) * static_cast<U>(b)));
    // x / 0 = -1 (all bits), INT_MIN / -1 = INT_MIN; x % 0 = x, x % -1 = 0.
    if (b == 0)
      div.push_back(static_cast<T>(-1)), rem.push_back(a);
    else if (std::is_signed_v<T> && b == static_cast<T>(-1))
      div.push_back(static_cast<T>(U(0) - static_cast<U>(a))), rem.push_back(0);
    else
      div.push_back(static_cast<T>(a / b)), rem.push_back(static_cast<T>(a % b));
    max.push_back(std::max(a, b));
    min.push_back(std::min(a, b));
  }
  INFO(dtype_name(dtype_for<T>()));
  check_all(binary_run(Opcode::kAdd, x, y), add);
  check_all(binary_run(Opcode::kSubtract, x, y), sub);
  check_all(binary_run(Opcode::kMultiply, x, y), mul);
  check_all(binary_run(Opcode::kDivide, x, y), div);
  check_all(binary_run(Opcode::kRemainder, x, y), rem);
  check_all(binary_run(Opcode::kMaximum, x, y), max);
  check_all(binary_run(Opcode::kMinimum, x, y), min);
}

TEST_CASE("codegen: integer arithmetic wraps - division by 0 and INT_MIN / -1", "[codegen]") {
  check_int_arithmetic<std::int32_t>();
  check_int_arithmetic<std::int64_t>();
  check_int_arithmetic<std::uint32_t>();
  // Spot values, so the table above cannot hide a shared mistake.
  CHECK(binary_run<std::int32_t>(Opcode::kDivide, {-7, 7, INT32_MIN, 5}, {2, -2, -1, 0}) ==
        std::vector<std::int32_t>{-3, -3, INT32_MIN, -1});
  CHECK(binary_run<std::int32_t>(Opcode::kRemainder, {-7, 7, INT32_MIN, 5}, {2, -2, -1, 0}) ==
        std::vector<std::int32_t>{-1, 1, 0, 5});
  CHECK(binary_run<std::uint32_t>(Opcode::kDivide, {7, 9}, {0, 2}) ==
        std::vector<std::uint32_t>{0xFFFFFFFFu, 4});
  CHECK(binary_run<std::uint32_t>(Opcode::kRemainder, {7, 9}, {0, 2}) ==
        std::vector<std::uint32_t>{7, 1});
}

template <class T>
void check_float_binary(double rtol) {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  std::vector<T> vals = {T(-2.5), T(-1), T(-0.0), T(0), T(0.5), T(3), inf, -inf, nan};
  std::vector<T> x, y;
  for (T a : vals)
    for (T b : vals) x.push_back(a), y.push_back(b);
  std::vector<T> add, sub, mul, div, rem, pow, atan2, max, min;
  for (std::size_t i = 0; i < x.size(); ++i) {
    T a = x[i], b = y[i];
    add.push_back(a + b);
    sub.push_back(a - b);
    mul.push_back(a * b);
    div.push_back(a / b);
    rem.push_back(std::fmod(a, b));
    pow.push_back(std::pow(a, b));
    atan2.push_back(std::atan2(a, b));
    max.push_back(std::isnan(a) || std::isnan(b) ? nan : std::max(a, b));
    min.push_back(std::isnan(a) || std::isnan(b) ? nan : std::min(a, b));
  }
  INFO(dtype_name(dtype_for<T>()));
  check_all(binary_run(Opcode::kAdd, x, y), add);
  check_all(binary_run(Opcode::kSubtract, x, y), sub);
  check_all(binary_run(Opcode::kMultiply, x, y), mul);
  check_all(binary_run(Opcode::kDivide, x, y), div);
  check_all(binary_run(Opcode::kRemainder, x, y), rem);
  check_all(binary_run(Opcode::kPower, x, y), pow, rtol);
  check_all(binary_run(Opcode::kAtan2, x, y), atan2, rtol);
  check_all(binary_run(Opcode::kMaximum, x, y), max);
  check_all(binary_run(Opcode::kMinimum, x, y), min);
}

TEST_CASE("codegen: float arithmetic - max and min propagate NaN - rem is fmod", "[codegen]") {
  check_float_binary<float>(1e-6);
  check_float_binary<double>(1e-14);
  CHECK(binary_run<float>(Opcode::kRemainder, {-7.5f, 7.5f}, {2.f, -2.f}) ==
        std::vector<float>{-1.5f, 1.5f});  // the dividend's sign
}

// A constant bound takes one instruction on x86 (math_table.cpp): each sign of zero and NaN
// against each bound, either operand the constant, in the vector loop and its remainder.
template <class T>
void check_max_min_against_constants(const char* isa) {
  using L = std::numeric_limits<T>;
  const std::vector<T> values = {L::quiet_NaN(), -T(0),    T(0),       T(-1),
                                 T(1),           T(2.5),   T(-2.5),    -L::infinity(),
                                 L::infinity(),  L::max(), L::lowest()};
  std::vector<T> xs;
  for (std::size_t i = 0; i < 37; ++i) xs.push_back(values[(i * 7) % values.size()]);
  jx::testing::ConfigGuard guard;
  config().cpu_isa = isa;
  config().enable_x64 = true;
  for (bool is_max : {true, false})
    for (T c : {T(0), -T(0), T(2.5), T(-1), L::infinity(), -L::infinity()})
      for (bool constant_first : {false, true}) {
        auto f = jit([=](const Array& x) {
          Array k = Array(double{c}).astype(x.dtype());
          Array a = constant_first ? k : x, b = constant_first ? x : k;
          return is_max ? np::maximum(a, b) : np::minimum(a, b);
        });
        std::vector<T> got = f(np::array(xs)).template to_vector<T>();
        for (std::size_t i = 0; i < xs.size(); ++i) {
          T want = is_max ? ieee_max(xs[i], c) : ieee_min(xs[i], c);
          INFO(isa << ": " << (is_max ? "max" : "min") << "(" << xs[i] << ", " << c
                   << ") = " << got[i] << ", want " << want);
          CHECK(same(got[i], want));
          if (!std::isnan(want)) CHECK(std::signbit(got[i]) == std::signbit(want));
        }
      }
}

TEST_CASE("codegen: max and min against a constant keep NaN and the sign of zero", "[codegen]") {
  for (const char* isa : {"avx2", "native"}) {
    check_max_min_against_constants<float>(isa);
    check_max_min_against_constants<double>(isa);
  }
}

TEST_CASE("codegen: and/or/max/min on pred and integers", "[codegen]") {
  std::vector<pred> x = {0, 0, 1, 1}, y = {0, 1, 0, 1};
  check_all(binary_run<pred>(Opcode::kAnd, x, y), std::vector<pred>{0, 0, 0, 1});
  check_all(binary_run<pred>(Opcode::kOr, x, y), std::vector<pred>{0, 1, 1, 1});
  check_all(binary_run<pred>(Opcode::kMaximum, x, y), std::vector<pred>{0, 1, 1, 1});
  check_all(binary_run<pred>(Opcode::kMinimum, x, y), std::vector<pred>{0, 0, 0, 1});
  CHECK(binary_run<std::int64_t>(Opcode::kAnd, {0xF0F0, -1}, {0x0FF0, 5}) ==
        std::vector<std::int64_t>{0x00F0, 5});
  CHECK(binary_run<std::uint32_t>(Opcode::kOr, {0xF0000000u, 1}, {0x0000000Fu, 2}) ==
        std::vector<std::uint32_t>{0xF000000Fu, 3});
}

template <class T>
std::vector<pred> compare_run(const char* dir, const std::vector<T>& x, const std::vector<T>& y) {
  Hlo h;
  auto n = static_cast<std::int64_t>(x.size());
  auto* a = h.param(0, dtype_for<T>(), {n});
  auto* b = h.param(1, dtype_for<T>(), {n});
  return run<pred>(h.b.compare(a, b, dir), {x.data(), y.data()});
}

template <class T>
void check_compare(const std::vector<T>& vals) {
  std::vector<T> x, y;
  for (T a : vals)
    for (T b : vals) x.push_back(a), y.push_back(b);
  struct Dir {
    const char* name;
    bool (*f)(T, T);
  };
  const Dir dirs[] = {
      {"EQ", [](T a, T b) { return a == b; }}, {"NE", [](T a, T b) { return a != b; }},
      {"LT", [](T a, T b) { return a < b; }},  {"LE", [](T a, T b) { return a <= b; }},
      {"GT", [](T a, T b) { return a > b; }},  {"GE", [](T a, T b) { return a >= b; }}};
  for (const Dir& d : dirs) {
    INFO(dtype_name(dtype_for<T>()) << " " << d.name);
    std::vector<pred> want;
    for (std::size_t i = 0; i < x.size(); ++i) want.push_back(d.f(x[i], y[i]));
    check_all(compare_run(d.name, x, y), want);
  }
}

TEST_CASE("codegen: compare in every direction - NaN is unordered and unsigned compares unsigned",
          "[codegen]") {
  check_compare<float>(
      {-1.f, -0.f, 0.f, 2.f, std::numeric_limits<float>::infinity(), std::nanf("")});
  check_compare<double>({-1.0, 0.0, 2.0, std::nan("")});
  check_compare<std::int32_t>({INT32_MIN, -1, 0, 1, INT32_MAX});
  check_compare<std::int64_t>({INT64_MIN, -1, 0, 1, INT64_MAX});
  check_compare<std::uint32_t>({0u, 1u, 0x80000000u, 0xFFFFFFFFu});
  // pred: false < true.
  std::vector<pred> x = {0, 0, 1, 1}, y = {0, 1, 0, 1};
  check_all(compare_run<pred>("LT", x, y), std::vector<pred>{0, 1, 0, 0});
  check_all(compare_run<pred>("GE", x, y), std::vector<pred>{1, 0, 1, 1});
}

TEST_CASE("codegen: select with an array or a 0-d predicate", "[codegen]") {
  std::vector<pred> p = {1, 0, 1};
  std::vector<std::int64_t> a = {1, 2, 3}, b = {-1, -2, -3};
  Hlo h;
  auto* pp = h.param(0, bool_, {3});
  auto* pa = h.param(1, int64, {3});
  auto* pb = h.param(2, int64, {3});
  auto* sel = h.op(Opcode::kSelect, int64, {3}, {pp, pa, pb});
  CHECK(run<std::int64_t>(sel, {p.data(), a.data(), b.data()}) ==
        std::vector<std::int64_t>{1, -2, 3});
  Hlo h2;
  pred s = 0;
  auto* sp = h2.param(0, bool_, {});
  auto* sa = h2.param(1, int64, {3});
  auto* sb = h2.param(2, int64, {3});
  auto* sel2 = h2.op(Opcode::kSelect, int64, {3}, {sp, sa, sb});
  CHECK(run<std::int64_t>(sel2, {&s, a.data(), b.data()}) == b);
}

TEST_CASE("codegen: clamp with array and 0-d bounds - NaN anywhere gives NaN", "[codegen]") {
  const float nan = std::nanf("");
  std::vector<float> lo = {0.f, 0.f, 0.f, nan, 5.f}, x = {-1.f, 0.5f, 9.f, 1.f, 1.f},
                     hi = {1.f, 1.f, 1.f, 2.f, 2.f};
  Hlo h;
  auto* c = h.op(Opcode::kClamp, float32, {5},
                 {h.param(0, float32, {5}), h.param(1, float32, {5}), h.param(2, float32, {5})});
  // lo > hi gives hi.
  check_all(run<float>(c, {lo.data(), x.data(), hi.data()}), {0.f, 0.5f, 1.f, nan, 2.f});
  std::vector<float> xn = {nan, 3.f};
  float l = -1.f, u = 2.f;
  Hlo h2;
  auto* c2 = h2.op(Opcode::kClamp, float32, {2},
                   {h2.param(0, float32, {}), h2.param(1, float32, {2}), h2.param(2, float32, {})});
  check_all(run<float>(c2, {&l, xn.data(), &u}), {nan, 2.f});
  std::vector<std::uint32_t> xu = {0u, 5u, 0xFFFFFFFFu};
  std::uint32_t ul = 1u, uh = 7u;
  Hlo h3;
  auto* c3 = h3.op(Opcode::kClamp, uint32, {3},
                   {h3.param(0, uint32, {}), h3.param(1, uint32, {3}), h3.param(2, uint32, {})});
  CHECK(run<std::uint32_t>(c3, {&ul, xu.data(), &uh}) == std::vector<std::uint32_t>{1u, 5u, 7u});
  std::vector<std::int32_t> xi = {-5, 0, 5};
  std::int32_t il = -2, ih = 3;
  Hlo h4;
  auto* c4 = h4.op(Opcode::kClamp, int32, {3},
                   {h4.param(0, int32, {}), h4.param(1, int32, {3}), h4.param(2, int32, {})});
  CHECK(run<std::int32_t>(c4, {&il, xi.data(), &ih}) == std::vector<std::int32_t>{-2, 0, 3});
}

TEST_CASE("codegen: a long elementwise loop over unaligned buffers", "[codegen]") {
  // Offsets by one element: kernels must not assume more than element alignment.
  std::vector<double> xs = ramp<double>(1001, -3, 0.01), ys = ramp<double>(1001, 2, -0.003);
  Hlo h;
  auto* a = h.param(0, float64, {1000});
  auto* b = h.param(1, float64, {1000});
  auto got = run<double>(h.b.binary(Opcode::kMultiply, a, b), {xs.data() + 1, ys.data() + 1});
  std::vector<double> want;
  for (int i = 1; i <= 1000; ++i) want.push_back(xs[i] * ys[i]);
  check_all(got, want);
}

}  // namespace
}  // namespace jx::codegen::testing
