// The CPU's inline exp, log, tanh, logistic, erf, sin and cos (codegen/elemental/vector_math.cpp),
// run through jit in their 1-ULP forms (--precise_math) and, for exp, tanh, erf and logistic,
// their fast forms: float32 sweeps of bit patterns against a float64 oracle rounded to float32,
// exact special values, NaN propagation, and the float64 paths against long double.
// docs/math_accuracy.md records the bounds checked here.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <jx/jx.hpp>

#include "codegen/cpu/cpu_isa.hpp"
#include "support/config_guard.hpp"
#include "support/float_ulps.hpp"

namespace jx {
namespace {

using testing::identical;
using testing::ulp_distance;

using UnaryFn = Array (*)(const Array&);
using Oracle = long double (*)(long double);

constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr float kNaNF = std::numeric_limits<float>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Array exp_(const Array& x) { return np::exp(x); }
Array log_(const Array& x) { return np::log(x); }
Array tanh_(const Array& x) { return np::tanh(x); }
Array logistic_(const Array& x) { return lax::logistic(x); }
Array erf_(const Array& x) { return lax::erf(x); }
Array sin_(const Array& x) { return np::sin(x); }
Array cos_(const Array& x) { return np::cos(x); }

Array exp2_(const Array& x) { return np::exp2(x); }
Array log2_(const Array& x) { return np::log2(x); }
Array log10_(const Array& x) { return np::log10(x); }
Array asin_(const Array& x) { return np::arcsin(x); }
Array acos_(const Array& x) { return np::arccos(x); }
Array atan_(const Array& x) { return np::arctan(x); }
Array sinh_(const Array& x) { return np::sinh(x); }
Array cosh_(const Array& x) { return np::cosh(x); }
Array asinh_(const Array& x) { return np::arcsinh(x); }
Array acosh_(const Array& x) { return np::arccosh(x); }
Array atanh_(const Array& x) { return np::arctanh(x); }
Array cbrt_(const Array& x) { return np::cbrt(x); }

long double logistic_ref(long double x) { return 1 / (1 + std::exp(-x)); }

// Runs with denormals kept (IEEE 754), as the oracle computes: jx's default flushes them. The
// functions take their 1-ULP forms unless `precise` is false.
template <class T>
std::vector<T> run_jit(UnaryFn fn, const std::vector<T>& xs, bool precise = true) {
  testing::ConfigGuard ieee;
  config().cpu_flush_denormals = false;
  config().precise_math = precise;
  auto f = jit([fn](const Array& x) { return fn(x); });
  return f(np::array(xs)).template to_vector<T>();
}

template <class T>
struct Accuracy {
  double max_ulp = 0;
  T worst = 0;             // the input with the largest error
  std::int64_t wrong = 0;  // results that should be ±inf, NaN or finite and are not
  T first_wrong = 0;
};

// Compares fn under jit with the oracle rounded to T: finite results by ULP distance, the rest
// exactly.
template <class T>
Accuracy<T> measure(UnaryFn fn, Oracle oracle, const std::vector<T>& xs, bool precise = true) {
  std::vector<T> got = run_jit(fn, xs, precise);
  Accuracy<T> acc;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    auto want = static_cast<T>(oracle(xs[i]));
    if (!std::isfinite(want) || !std::isfinite(got[i])) {
      if (!identical(got[i], want) && acc.wrong++ == 0) acc.first_wrong = xs[i];
      continue;
    }
    double d = ulp_distance(got[i], want);
    if (d > acc.max_ulp) {
      acc.max_ulp = d;
      acc.worst = xs[i];
    }
  }
  return acc;
}

// About n float32 bit patterns spread evenly over [0, max_abs] with an odd stride (so every low
// mantissa bit varies), with their negatives when `both_signs`.
std::vector<float> sweep_f32(float max_abs, std::size_t n, bool both_signs = true) {
  auto top = std::bit_cast<std::uint32_t>(max_abs);
  std::uint32_t stride = top / static_cast<std::uint32_t>(n) | 1u;
  std::vector<float> xs;
  for (std::uint64_t b = 0; b <= top; b += stride) {
    auto x = std::bit_cast<float>(static_cast<std::uint32_t>(b));
    xs.push_back(x);
    if (both_signs) xs.push_back(-x);
  }
  return xs;
}

// Likewise for float64 over [min_abs, max_abs].
std::vector<double> sweep_f64(double min_abs, double max_abs, std::size_t n) {
  auto lo = std::bit_cast<std::uint64_t>(min_abs), hi = std::bit_cast<std::uint64_t>(max_abs);
  std::uint64_t stride = (hi - lo) / n | 1u;
  std::vector<double> xs;
  for (std::uint64_t b = lo; b <= hi; b += stride) {
    auto x = std::bit_cast<double>(b);
    xs.push_back(x);
    xs.push_back(-x);
  }
  return xs;
}

struct Case {
  const char* name;
  UnaryFn fn;
  Oracle oracle;
  float max_abs;  // the sweep's range; past it the result is a constant or out of range
  double bound;   // ULP
  bool both_signs = true;
};

// The bounds of docs/math_accuracy.md.
const Case kF32Cases[] = {
    {"exp", exp_, [](long double x) { return std::exp(x); }, 105.0f, 1},
    {"log", log_, [](long double x) { return std::log(x); }, std::numeric_limits<float>::max(), 1,
     false},
    {"tanh", tanh_, [](long double x) { return std::tanh(x); }, 12.0f, 1},
    {"logistic", logistic_, logistic_ref, 105.0f, 2},
    {"erf", erf_, [](long double x) { return std::erf(x); }, 5.0f, 2},
    {"sin", sin_, [](long double x) { return std::sin(x); }, 32767.0f, 2},
    {"cos", cos_, [](long double x) { return std::cos(x); }, 32767.0f, 2},
    // portable_math's float64 compositions, rounded once (portable_math_composite.cpp).
    {"exp2", exp2_, [](long double x) { return std::exp2(x); }, 150.0f, 2},
    {"asin", asin_, [](long double x) { return std::asin(x); }, 1.0f, 2},
    {"acos", acos_, [](long double x) { return std::acos(x); }, 1.0f, 2},
    {"atan", atan_, [](long double x) { return std::atan(x); }, std::numeric_limits<float>::max(),
     2},
    {"sinh", sinh_, [](long double x) { return std::sinh(x); }, 90.0f, 2},
    {"cosh", cosh_, [](long double x) { return std::cosh(x); }, 90.0f, 2},
    {"asinh", asinh_, [](long double x) { return std::asinh(x); },
     std::numeric_limits<float>::max(), 2},
    {"acosh", acosh_, [](long double x) { return std::acosh(x); },
     std::numeric_limits<float>::max(), 2, false},
    {"atanh", atanh_, [](long double x) { return std::atanh(x); }, 1.0f, 2},
    {"cbrt", cbrt_, [](long double x) { return std::cbrt(x); }, std::numeric_limits<float>::max(),
     2},
    // jnp's compositions: log(x) / log(base) in float32.
    {"log2", log2_, [](long double x) { return std::log2(x); }, std::numeric_limits<float>::max(),
     2, false},
    {"log10", log10_, [](long double x) { return std::log10(x); },
     std::numeric_limits<float>::max(), 2, false},
};

// The fast forms (the default without --precise_math): exp is the precise one's polynomial,
// whose portable form flushes subnormal results to 0 below -87.33 (with AVX-512's vscalef it is
// the precise form), tanh and erf one rational function each; logistic follows exp.
const Case kFastF32Cases[] = {
    {"exp", exp_, [](long double x) { return std::exp(x); }, 87.33f, 1},
    {"tanh", tanh_, [](long double x) { return std::tanh(x); }, 12.0f, 5},
    {"logistic", logistic_, logistic_ref, 87.33f, 2},
    {"erf", erf_, [](long double x) { return std::erf(x); }, 5.0f, 5},
};

void check_f32(const Case& c, const std::vector<float>& xs, bool precise = true) {
  Accuracy<float> acc = measure(c.fn, c.oracle, xs, precise);
  INFO(c.name << " over " << xs.size() << " inputs: max " << acc.max_ulp << " ULP at " << acc.worst
              << "; first wrong special value at " << acc.first_wrong);
  CHECK(acc.wrong == 0);
  CHECK(acc.max_ulp <= c.bound);
}

TEST_CASE("vector math: float32 functions within their ULP bounds over a sweep",
          "[codegen][vector_math]") {
  for (const Case& c : kF32Cases) check_f32(c, sweep_f32(c.max_abs, 1 << 19, c.both_signs));
}

TEST_CASE("vector math: the fast float32 forms within their ULP bounds over a sweep",
          "[codegen][vector_math]") {
  for (const Case& c : kFastF32Cases)
    check_f32(c, sweep_f32(c.max_abs, 1 << 19, c.both_signs), /*precise=*/false);
  // tanh and erf never leave [-1, 1], though their roundings can reach past it.
  for (UnaryFn fn : {tanh_, erf_}) {
    std::vector<float> xs = sweep_f32(12.0f, 1 << 19);
    std::vector<float> got = run_jit(fn, xs, /*precise=*/false);
    CHECK(std::all_of(got.begin(), got.end(), [](float y) { return std::abs(y) <= 1; }));
  }
}

// The fast exp is the precise one with a cheaper scaling by 2^n: the same values wherever the
// result is normal. The portable fast form flushes subnormal results to 0; with AVX-512's
// vscalef, which rounds y·2^n once, the two are one form and agree there too.
TEST_CASE("vector math: the fast exp has the precise exp's values", "[codegen][vector_math]") {
  std::vector<float> xs = sweep_f32(110.0f, 1 << 18);
  for (int k = 0; k <= 30000; ++k) {  // densely where results turn subnormal and overflow
    xs.push_back(-80.0f - 30.0f * static_cast<float>(k) / 30000);
    xs.push_back(85.0f + 5.0f * static_cast<float>(k) / 30000);
  }
  for (const char* isa : {"avx2", "native"}) {
    testing::ConfigGuard guard;
    config().cpu_isa = isa;
    bool vscalef = codegen::cpu::cpu_isa(isa).name == "avx512";
    std::vector<float> fast = run_jit(exp_, xs, /*precise=*/false);
    std::vector<float> precise = run_jit(exp_, xs, /*precise=*/true);
    std::int64_t differ = 0, subnormal = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      bool flushed = !vscalef && std::fpclassify(precise[i]) == FP_SUBNORMAL;
      subnormal += std::fpclassify(precise[i]) == FP_SUBNORMAL;
      differ += !identical(fast[i], flushed ? 0.0f : precise[i]);
    }
    INFO("--cpu_isa=" << isa);
    CHECK(subnormal > 1000);
    CHECK(differ == 0);
  }
}

// Every float32 input in each function's range: about 15 minutes, so hidden; run with
// `jx_tests "[vector_math_exhaustive]"`.
TEST_CASE("vector math: float32 functions within their ULP bounds on every input",
          "[.][vector_math_exhaustive]") {
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 24;
  auto all_inputs = [](const Case& c, bool precise) {
    auto top = std::bit_cast<std::uint32_t>(c.max_abs);
    for (std::uint64_t start = 0; start <= top; start += kChunk) {
      std::vector<float> xs;
      for (std::uint64_t b = start; b < start + kChunk && b <= top; ++b) {
        auto x = std::bit_cast<float>(static_cast<std::uint32_t>(b));
        xs.push_back(x);
        if (c.both_signs) xs.push_back(-x);
      }
      check_f32(c, xs, precise);
    }
  };
  for (const Case& c : kF32Cases) all_inputs(c, true);
  for (const Case& c : kFastF32Cases) all_inputs(c, false);
}

struct Special {
  float x, want;
};

void check_specials(const char* name, UnaryFn fn, const std::vector<Special>& cases,
                    bool precise = true) {
  std::vector<float> xs;
  for (const Special& s : cases) xs.push_back(s.x);
  std::vector<float> got = run_jit(fn, xs, precise);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO(name << "(" << cases[i].x << ") = " << got[i] << ", want " << cases[i].want);
    CHECK(identical(got[i], cases[i].want));
  }
}

TEST_CASE("vector math: float32 special values are exact", "[codegen][vector_math]") {
  constexpr float kMax = std::numeric_limits<float>::max();
  constexpr float kTrueMin = std::numeric_limits<float>::denorm_min();
  // exp: the largest finite result is at 0x1.62e42ep+6 and the smallest nonzero near -103.97.
  check_specials("exp", exp_,
                 {{kInfF, kInfF},
                  {-kInfF, 0},
                  {kNaNF, kNaNF},
                  {0, 1},
                  {-0.0f, 1},
                  {0x1.62e430p+6f, kInfF},
                  {1000, kInfF},
                  {-104, 0},
                  {-1000, 0},
                  {-kMax, 0},
                  {kMax, kInfF},
                  {-103.9f, kTrueMin}});
  CHECK(std::isfinite(run_jit<float>(exp_, {0x1.62e42ep+6f})[0]));
  check_specials("log", log_,
                 {{0, -kInfF},
                  {-0.0f, -kInfF},
                  {-1, kNaNF},
                  {-kTrueMin, kNaNF},
                  {-kInfF, kNaNF},
                  {kInfF, kInfF},
                  {kNaNF, kNaNF},
                  {1, 0}});
  check_specials("tanh", tanh_,
                 {{kInfF, 1},
                  {-kInfF, -1},
                  {kNaNF, kNaNF},
                  {0, 0},
                  {-0.0f, -0.0f},
                  {kTrueMin, kTrueMin},
                  {-kTrueMin, -kTrueMin},
                  {20, 1},
                  {-kMax, -1}});
  check_specials("logistic", logistic_,
                 {{kInfF, 1},
                  {-kInfF, 0},
                  {kNaNF, kNaNF},
                  {0, 0.5f},
                  {-0.0f, 0.5f},
                  {-1000, 0},
                  {-103.9f, kTrueMin},
                  {kMax, 1}});
  check_specials("erf", erf_,
                 {{kInfF, 1},
                  {-kInfF, -1},
                  {kNaNF, kNaNF},
                  {0, 0},
                  {-0.0f, -0.0f},
                  {kTrueMin, kTrueMin},
                  {10, 1},
                  {-kMax, -1}});
  check_specials("sin", sin_,
                 {{kInfF, kNaNF},
                  {-kInfF, kNaNF},
                  {kNaNF, kNaNF},
                  {0, 0},
                  {-0.0f, -0.0f},
                  {kTrueMin, kTrueMin},
                  {-kTrueMin, -kTrueMin}});
  check_specials("cos", cos_,
                 {{kInfF, kNaNF}, {-kInfF, kNaNF}, {kNaNF, kNaNF}, {0, 1}, {-0.0f, 1}});
}

TEST_CASE("vector math: fast float32 special values are exact", "[codegen][vector_math]") {
  constexpr float kMax = std::numeric_limits<float>::max();
  constexpr float kTrueMin = std::numeric_limits<float>::denorm_min();
  auto fast = [](const char* name, UnaryFn fn, const std::vector<Special>& cases) {
    check_specials(name, fn, cases, /*precise=*/false);
  };
  // Below the normal range the portable form gives 0, as flushing a subnormal result does; with
  // AVX-512's vscalef it is the precise form and gives the subnormal.
  for (const char* isa : {"avx2", "native"}) {
    testing::ConfigGuard guard;
    config().cpu_isa = isa;
    bool vscalef = codegen::cpu::cpu_isa(isa).name == "avx512";
    INFO("--cpu_isa=" << isa);
    fast("exp", exp_,
         {{kInfF, kInfF},
          {-kInfF, 0},
          {kNaNF, kNaNF},
          {0, 1},
          {-0.0f, 1},
          {88.7f, std::exp(88.7f)},
          {88.73f, kInfF},
          {1000, kInfF},
          {kMax, kInfF},
          {-87.34f, vscalef ? 0x1.fe3c6p-127f : 0},
          {-103.9f, vscalef ? kTrueMin : 0},
          {-1000, 0},
          {-kMax, 0}});
  }
  fast("tanh", tanh_,
       {{kInfF, 1},
        {-kInfF, -1},
        {kNaNF, kNaNF},
        {0, 0},
        {-0.0f, -0.0f},
        {kTrueMin, kTrueMin},
        {-kTrueMin, -kTrueMin},
        {1e-5f, 1e-5f},
        {9.01091385f, 1},
        {std::nextafter(9.01091385f, 10.0f), 1},  // past the clamp
        {-std::nextafter(9.01091385f, 10.0f), -1},
        {20, 1},
        {-kMax, -1}});
  fast("erf", erf_,
       {{kInfF, 1},
        {-kInfF, -1},
        {kNaNF, kNaNF},
        {0, 0},
        {-0.0f, -0.0f},
        {3.9192059f, 1},
        {std::nextafter(3.9192059f, 4.0f), 1},  // past the clamp
        {-std::nextafter(3.9192059f, 4.0f), -1},
        {10, 1},
        {-kMax, -1}});
  fast("logistic", logistic_, {{kInfF, 1}, {-kInfF, 0}, {kNaNF, kNaNF}, {0, 0.5f}, {kMax, 1}});
}

// exp(a - max(a)) over an axis, the max broadcast back (a softmax's shifted logits), is never of
// a positive number: it takes a fast form without overflow handling (hlo::never_positive). Its
// values are the fast exp's of the same differences, computed where the max is not in sight.
TEST_CASE("vector math: exp of shifted logits equals the fast exp of the same differences",
          "[codegen][vector_math]") {
  testing::ConfigGuard fast;
  config().precise_math = false;
  const std::int64_t cols = 80;  // a vector loop and a remainder
  std::vector<float> x;
  for (std::int64_t c = 0; c < cols; ++c) x.push_back(-120.0f + 1.6f * static_cast<float>(c));
  for (std::int64_t c = 0; c < cols; ++c) x.push_back(c % 3 ? -kInfF : 0.5f);
  for (std::int64_t c = 0; c < cols; ++c) x.push_back(c == 7 ? kInfF : 1.0f);
  for (std::int64_t c = 0; c < cols; ++c) x.push_back(c == 9 ? kNaNF : -0.0f);
  for (std::int64_t c = 0; c < cols; ++c) x.push_back(-kInfF);
  Array a = np::array(x, {5, cols});
  auto shifted = jit([](const Array& a) { return np::exp(a - np::max(a, 1, true)); });
  auto differences = jit([](const Array& a) { return a - np::max(a, 1, true); });
  auto exp = jit([](const Array& d) { return np::exp(d); });
  std::vector<float> got = shifted(a).to_vector<float>();
  std::vector<float> want = exp(differences(a)).to_vector<float>();
  std::size_t differ = 0;
  for (std::size_t i = 0; i < got.size(); ++i) differ += !identical(got[i], want[i]);
  CHECK(differ == 0);
  CHECK(got[cols - 1] == 1.0f);          // the row's max
  CHECK(got[0] == 0.0f);                 // e^-126.4
  CHECK(std::isnan(got[2 * cols + 7]));  // inf - inf
  CHECK(std::isnan(got[3 * cols]));      // a NaN row
  CHECK(std::isnan(got[4 * cols]));      // -inf - -inf

  // A difference from another array's max, or from the max of the wrong rows, may be positive:
  // those overflow to infinity as exp does.
  auto other = jit([](const Array& a, const Array& b) { return np::exp(a - np::max(b, 1, true)); });
  std::vector<float> big = other(np::array(std::vector<float>{100, 0}, {1, 2}),
                                 np::array(std::vector<float>{0, 0}, {1, 2}))
                               .to_vector<float>();
  CHECK(big == std::vector<float>({kInfF, 1}));
  // Row maxes [100, 0] subtracted along the columns: x[0, 1] - 0 = 100.
  auto across = jit([](const Array& a) { return np::exp(a - np::max(a, 1)); });
  std::vector<float> crossed =
      across(np::array(std::vector<float>{0, 100, 0, 0}, {2, 2})).to_vector<float>();
  CHECK(crossed == std::vector<float>({0, kInfF, 0, 1}));
}

TEST_CASE("vector math: sin and cos stay finite in [-1, 1] past the reduction's range",
          "[codegen][vector_math]") {
  std::vector<float> xs;
  for (float x = 32768; std::isfinite(x); x *= 1.0009765625f) {
    xs.push_back(x);
    xs.push_back(-x);
  }
  xs.push_back(std::numeric_limits<float>::max());
  xs.push_back(-std::numeric_limits<float>::max());
  for (UnaryFn fn : {sin_, cos_}) {
    std::vector<float> got = run_jit(fn, xs);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      if (std::abs(got[i]) <= 1) continue;  // false for NaN too
      INFO("f(" << xs[i] << ") = " << got[i]);
      FAIL_CHECK("out of [-1, 1]");
    }
  }
}

TEST_CASE("vector math: NaN in, NaN out", "[codegen][vector_math]") {
  // Quiet and signaling NaNs of both signs, with and without payloads; and NaN reached by
  // arithmetic inside the jitted function.
  std::vector<float> nans = {kNaNF,
                             -kNaNF,
                             std::bit_cast<float>(0x7fc12345u),
                             std::bit_cast<float>(0xffc00001u),
                             std::bit_cast<float>(0x7f800001u),
                             std::bit_cast<float>(0xff812345u)};
  std::vector<float> ones(nans.size(), 1.0f);
  for (UnaryFn fn : {exp_, log_, tanh_, logistic_, erf_, sin_, cos_}) {
    for (float y : run_jit(fn, nans)) CHECK(std::isnan(y));
    for (float y : run_jit(fn, nans, /*precise=*/false)) CHECK(std::isnan(y));
    auto via_arithmetic = jit([fn](const Array& x, const Array& nan) { return fn(x + 0 * nan); });
    for (float y : via_arithmetic(np::array(ones), np::array(nans)).to_vector<float>())
      CHECK(std::isnan(y));
  }
}

TEST_CASE("vector math: float64 exp and log within 1 ULP, other float64 functions as libm",
          "[codegen][vector_math]") {
  struct Case64 {
    const char* name;
    UnaryFn fn;
    Oracle oracle;
    double min_abs, max_abs, bound;
  };
  const Case64 cases[] = {
      {"exp", exp_, [](long double x) { return std::exp(x); }, 0, 746, 1},
      {"log", log_, [](long double x) { return std::log(x); }, 0,
       std::numeric_limits<double>::max(), 1},
      {"log near 1", log_, [](long double x) { return std::log(x); }, 0.5, 2, 1},
      {"logistic", logistic_, logistic_ref, 0, 746, 2},
      {"tanh", tanh_, [](long double x) { return std::tanh(x); }, 0, 20, 2},
      {"erf", erf_, [](long double x) { return std::erf(x); }, 0, 6, 2},
      {"sin", sin_, [](long double x) { return std::sin(x); }, 0, 1e6, 2},
      {"cos", cos_, [](long double x) { return std::cos(x); }, 0, 1e6, 2},
  };
  for (const Case64& c : cases) {
    std::vector<double> xs = sweep_f64(c.min_abs, c.max_abs, 1 << 15);
    Accuracy<double> acc = measure(c.fn, c.oracle, xs);
    INFO(c.name << ": max " << acc.max_ulp << " ULP at " << acc.worst
                << "; first wrong special value at " << acc.first_wrong);
    CHECK(acc.wrong == 0);
    CHECK(acc.max_ulp <= c.bound);
  }
  // Results that are exact: 0, 1, ±inf and NaN.
  std::vector<double> specials = {0, -0.0, 1, -1, kInf, -kInf, std::nan(""), 710, -746, -5e-324};
  std::vector<double> exps = run_jit<double>(exp_, specials),
                      logs = run_jit<double>(log_, specials);
  for (std::size_t i = 0; i < specials.size(); ++i) {
    INFO("x = " << specials[i] << ": exp " << exps[i] << ", log " << logs[i]);
    if (specials[i] != 1 && specials[i] != -1) CHECK(identical(exps[i], std::exp(specials[i])));
    CHECK(identical(logs[i], std::log(specials[i])));
  }
}

}  // namespace
}  // namespace jx
