// The portable MathTable (codegen/elemental/portable_math.hpp), what GPU kernels compute their
// math with when libdevice is absent, run on the CPU: every function at float32 and float64
// against <cmath> in a wider type (double for float32, long double for float64), C's special
// values, NaN propagation, and IR that declares no function but target-independent intrinsics.
// docs/math_accuracy.md records the bounds checked here.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "codegen/codegen_testing.hpp"
#include "codegen/elemental/portable_math.hpp"
#include "support/float_ulps.hpp"
#include "support/scratch_dir.hpp"

namespace jx::codegen::testing {
namespace {

using jx::testing::identical;
using jx::testing::ulp_distance;

template <class T>
using Wide = std::conditional_t<sizeof(T) == 4, double, long double>;
template <class T>
using Vec = std::vector<T>;

// The intrinsics every LLVM target lowers to instructions (llc -march=nvptx64 turns each into
// one or a few PTX instructions): all that the table's IR may declare.
const std::set<std::string> kAllowedIntrinsics = {
    "llvm.fmuladd", "llvm.fma",    "llvm.fabs",      "llvm.floor",  "llvm.ceil",
    "llvm.rint",    "llvm.round",  "llvm.roundeven", "llvm.sqrt",   "llvm.copysign",
    "llvm.minnum",  "llvm.maxnum", "llvm.minimum",   "llvm.maximum"};

// Every function the module text declares that is not an allowed intrinsic.
std::vector<std::string> foreign_calls(const std::string& ir) {
  std::vector<std::string> out;
  std::istringstream lines(ir);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("declare", 0) != 0) continue;
    auto at = line.find('@'), paren = line.find('(', at);
    std::string name = line.substr(at + 1, paren - at - 1);
    // llvm.fmuladd.f64 → llvm.fmuladd
    std::string base = name.substr(0, name.rfind('.'));
    if (!kAllowedIntrinsics.count(base)) out.push_back(name);
  }
  return out;
}

// Compiles HLO `opcode` over T[n] operands with the portable table, checks that its IR calls
// nothing, and runs it.
template <class T>
Vec<T> run_op(const std::string& opcode, const std::vector<Vec<T>>& operands) {
  const std::string shape =
      std::string(sizeof(T) == 4 ? "f32[" : "f64[") + std::to_string(operands[0].size()) + "]";
  std::string params, body, args;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    std::string name = "p" + std::to_string(i), sep = i ? ", " : "";
    params += sep + name + ": " + shape;
    body += "  %" + name + " = " + shape + "{0} parameter(" + std::to_string(i) + ")\n";
    args += sep + shape + "{0} %" + name;
  }
  auto module =
      hlo::parse_module("HloModule m\nENTRY %main (" + params + ") -> " + shape + " {\n" + body +
                        "  ROOT %r = " + shape + "{0} " + opcode + "(" + args + ")\n}\n");
  jx::testing::ScratchDir dir;
  CpuCompileOptions options;
  options.math = &portable_math_table();
  options.dump_prefix = dir / "kernel";
  std::vector<const void*> inputs;
  for (const Vec<T>& v : operands) inputs.push_back(v.data());
  Vec<T> out = run<T>(module->entry()->root(), inputs, options);
  std::ifstream file(dir / "kernel.ir-no-opt.ll");
  std::stringstream ir;
  ir << file.rdbuf();
  INFO(opcode << " at " << shape);
  CHECK(ir.str().find("define") != std::string::npos);
  CHECK(foreign_calls(ir.str()) == std::vector<std::string>{});
  return out;
}

// A function of the table: its HLO opcode, arity, and oracles at double and long double.
struct Fn {
  const char* opcode;
  double (*f64)(double, double);
  long double (*f80)(long double, long double);
  bool binary = false;
};

template <class T>
Wide<T> oracle(const Fn& fn, Wide<T> x, Wide<T> y) {
  if constexpr (sizeof(T) == 4)
    return fn.f64(x, y);
  else
    return fn.f80(x, y);
}

const Fn kExp{"exponential", [](double x, double) { return std::exp(x); },
              [](long double x, long double) { return std::exp(x); }};
const Fn kLog{"log", [](double x, double) { return std::log(x); },
              [](long double x, long double) { return std::log(x); }};
const Fn kLog1p{"log-plus-one", [](double x, double) { return std::log1p(x); },
                [](long double x, long double) { return std::log1p(x); }};
const Fn kExpm1{"exponential-minus-one", [](double x, double) { return std::expm1(x); },
                [](long double x, long double) { return std::expm1(x); }};
const Fn kSin{"sine", [](double x, double) { return std::sin(x); },
              [](long double x, long double) { return std::sin(x); }};
const Fn kCos{"cosine", [](double x, double) { return std::cos(x); },
              [](long double x, long double) { return std::cos(x); }};
const Fn kTan{"tan", [](double x, double) { return std::tan(x); },
              [](long double x, long double) { return std::tan(x); }};
const Fn kTanh{"tanh", [](double x, double) { return std::tanh(x); },
               [](long double x, long double) { return std::tanh(x); }};
const Fn kErf{"erf", [](double x, double) { return std::erf(x); },
              [](long double x, long double) { return std::erf(x); }};
const Fn kExp2{"exp2", [](double x, double) { return std::exp2(x); },
               [](long double x, long double) { return std::exp2(x); }};
const Fn kCbrt{"cbrt", [](double x, double) { return std::cbrt(x); },
               [](long double x, long double) { return std::cbrt(x); }};
const Fn kAsin{"asin", [](double x, double) { return std::asin(x); },
               [](long double x, long double) { return std::asin(x); }};
const Fn kAcos{"acos", [](double x, double) { return std::acos(x); },
               [](long double x, long double) { return std::acos(x); }};
const Fn kAtan{"atan", [](double x, double) { return std::atan(x); },
               [](long double x, long double) { return std::atan(x); }};
const Fn kSinh{"sinh", [](double x, double) { return std::sinh(x); },
               [](long double x, long double) { return std::sinh(x); }};
const Fn kCosh{"cosh", [](double x, double) { return std::cosh(x); },
               [](long double x, long double) { return std::cosh(x); }};
const Fn kAsinh{"asinh", [](double x, double) { return std::asinh(x); },
                [](long double x, long double) { return std::asinh(x); }};
const Fn kAcosh{"acosh", [](double x, double) { return std::acosh(x); },
                [](long double x, long double) { return std::acosh(x); }};
const Fn kAtanh{"atanh", [](double x, double) { return std::atanh(x); },
                [](long double x, long double) { return std::atanh(x); }};
const Fn kPow{"power", [](double x, double y) { return std::pow(x, y); },
              [](long double x, long double y) { return std::pow(x, y); }, true};
const Fn kAtan2{"atan2", [](double x, double y) { return std::atan2(x, y); },
                [](long double x, long double y) { return std::atan2(x, y); }, true};

struct Accuracy {
  double max_ulp = 0;
  std::size_t worst = 0;   // the index with the largest error
  std::int64_t wrong = 0;  // results that should be ±inf, NaN or finite and are not
  std::size_t first_wrong = 0;
};

// fn over xs (and ys) compared with the oracle rounded to T: finite results by ULP distance, the
// rest exactly.
template <class T>
Accuracy measure(const Fn& fn, const Vec<T>& xs, const Vec<T>& ys = {}) {
  Vec<T> got = fn.binary ? run_op<T>(fn.opcode, {xs, ys}) : run_op<T>(fn.opcode, {xs});
  Accuracy acc;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    auto want = static_cast<T>(oracle<T>(fn, xs[i], fn.binary ? ys[i] : 0));
    if (!std::isfinite(want) || !std::isfinite(got[i])) {
      if (!identical(got[i], want) && acc.wrong++ == 0) acc.first_wrong = i;
      continue;
    }
    double d = ulp_distance(got[i], want);
    if (d > acc.max_ulp) {
      acc.max_ulp = d;
      acc.worst = i;
    }
  }
  return acc;
}

// How dense the sweeps are (a multiple of the default), and whether to print the maxima.
struct Sweeps {
  std::size_t scale = 1;
  bool report = false;
};

template <class T>
void check_accuracy(const Fn& fn, const char* what, double bound, const Sweeps& sweeps,
                    const Vec<T>& xs, const Vec<T>& ys = {}) {
  Accuracy acc = measure(fn, xs, ys);
  auto at = [&](std::size_t i) {
    std::ostringstream s;
    s.precision(std::numeric_limits<T>::max_digits10);
    s << xs[i];
    if (fn.binary) s << ", " << ys[i];
    return s.str();
  };
  std::ostringstream summary;
  summary << fn.opcode << " " << (sizeof(T) == 4 ? "f32 " : "f64 ") << what << " over " << xs.size()
          << " inputs: max " << acc.max_ulp << " ULP at (" << at(acc.worst) << ")";
  if (sweeps.report) WARN(summary.str());
  INFO(summary.str());
  INFO(acc.wrong << " wrong special values, the first at (" << at(acc.first_wrong) << ")");
  CHECK(acc.wrong == 0);
  CHECK(acc.max_ulp <= bound);
}

// About n bit patterns spread evenly over [0, max_abs] with an odd stride (so every low mantissa
// bit varies), and their negatives.
template <class T>
Vec<T> sweep_bits(T max_abs, std::size_t n) {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  auto top = std::bit_cast<U>(max_abs);
  U stride = static_cast<U>(top / n) | 1u;
  Vec<T> xs;
  for (U b = 0; b <= top; b += stride) {
    auto x = std::bit_cast<T>(b);
    xs.push_back(x);
    xs.push_back(-x);
  }
  return xs;
}

// n values evenly spaced in [-max_abs, max_abs], nudged off the grid.
template <class T>
Vec<T> sweep_linear(T max_abs, std::size_t n) {
  Vec<T> xs;
  for (std::size_t i = 0; i < n; ++i)
    xs.push_back(static_cast<T>(max_abs * (2 * (i + 0.3183) / static_cast<double>(n) - 1)));
  return xs;
}

// The nearest floats to k·π/2 and their neighbours, for k log-uniform up to max_k: where the
// reduced argument is smallest and the reduction's precision shows.
template <class T>
Vec<T> near_multiples_of_pio2(double max_k, std::size_t n) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0, std::log2(max_k));
  const long double pio2 = std::acos(-1.0L) / 2;
  Vec<T> xs;
  for (std::size_t i = 0; i < n; ++i) {
    auto x = static_cast<T>(std::round(std::exp2(u(rng))) * pio2);
    for (T v : {x, std::nextafter(x, T(0)), std::nextafter(x, T(INFINITY))}) {
      xs.push_back(v);
      xs.push_back(-v);
    }
  }
  return xs;
}

// A unary function's sweeps: bit patterns over [0, max_abs], evenly spaced values over
// [-linear_abs, linear_abs], and for sin, cos and tan the floats nearest k·π/2 for k up to
// pio2_k; within `bound` ULP.
struct UnaryCase {
  const Fn& fn;
  double max_abs, linear_abs, bound;
  double pio2_k = 0;
};

template <class T>
void check_unary(const UnaryCase& c, const Sweeps& sweeps) {
  const std::size_t n = (sizeof(T) == 4 ? 1 << 17 : 1 << 15) * sweeps.scale;
  check_accuracy<T>(c.fn, "bit patterns", c.bound, sweeps,
                    sweep_bits<T>(static_cast<T>(c.max_abs), n));
  check_accuracy<T>(c.fn, "evenly spaced", c.bound, sweeps,
                    sweep_linear<T>(static_cast<T>(c.linear_abs), n));
  if (c.pio2_k > 0)
    check_accuracy<T>(c.fn, "near k·π/2", c.bound, sweeps,
                      near_multiples_of_pio2<T>(c.pio2_k, n / 16));
}

// The bounds of docs/math_accuracy.md. float32 sin, cos and tan reduce exactly for |x| < 2^15,
// float64 for |x| < 2^26·π/2 (about 1.05e8).
void check_unary_f32(const Sweeps& sweeps) {
  constexpr double kMax = std::numeric_limits<float>::max();
  for (const UnaryCase& c :
       {UnaryCase{kExp, 105, 90, 1}, UnaryCase{kLog, kMax, 4, 1}, UnaryCase{kLog1p, kMax, 1, 1},
        UnaryCase{kExpm1, 90, 3, 1}, UnaryCase{kSin, 32767, 32767, 2, 20860},
        UnaryCase{kCos, 32767, 32767, 2, 20860}, UnaryCase{kTan, 32767, 32767, 2, 20860},
        UnaryCase{kTanh, 12, 5, 1}, UnaryCase{kErf, 5, 5, 2},
        // Composed at float64 and rounded once.
        UnaryCase{kExp2, 150, 126, 1}, UnaryCase{kCbrt, kMax, 8, 1}, UnaryCase{kAsin, 1, 1, 1},
        UnaryCase{kAcos, 1, 1, 1}, UnaryCase{kAtan, kMax, 10, 1}, UnaryCase{kSinh, 90, 5, 1},
        UnaryCase{kCosh, 90, 5, 1}, UnaryCase{kAsinh, kMax, 10, 1}, UnaryCase{kAcosh, kMax, 10, 1},
        UnaryCase{kAtanh, 1, 1, 1}})
    check_unary<float>(c, sweeps);
}

void check_unary_f64(const Sweeps& sweeps) {
  constexpr double kMax = std::numeric_limits<double>::max();
  for (const UnaryCase& c :
       {UnaryCase{kExp, 746, 710, 1}, UnaryCase{kLog, kMax, 4, 1}, UnaryCase{kLog1p, kMax, 1, 1},
        UnaryCase{kExpm1, 710, 3, 1}, UnaryCase{kSin, 1.05e8, 20, 1, 6.7e7},
        UnaryCase{kCos, 1.05e8, 20, 1, 6.7e7}, UnaryCase{kTan, 1.05e8, 20, 2, 6.7e7},
        UnaryCase{kTanh, 25, 5, 2}, UnaryCase{kErf, 7, 7, 2},
        // Compositions of the functions above (portable_math_composite.cpp).
        UnaryCase{kExp2, 1075, 1000, 1}, UnaryCase{kCbrt, kMax, 8, 1}, UnaryCase{kAsin, 1, 1, 2},
        UnaryCase{kAcos, 1, 1, 1}, UnaryCase{kAtan, kMax, 10, 1}, UnaryCase{kSinh, 711, 5, 2},
        UnaryCase{kCosh, 711, 5, 1}, UnaryCase{kAsinh, kMax, 10, 2}, UnaryCase{kAcosh, kMax, 10, 2},
        UnaryCase{kAtanh, 1, 1, 2}})
    check_unary<double>(c, sweeps);
}

// Pairs for atan2: magnitudes log-uniform over most of the exponent range with random signs,
// and pairs whose ratio is near 1 and near tan(π/8), where the reduction switches.
template <class T>
void atan2_pairs(std::size_t n, Vec<T>& ys, Vec<T>& xs) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  const double span = std::log2(std::numeric_limits<T>::max()) - 2;
  auto sign = [&] { return u(rng) < 0.5 ? -1.0 : 1.0; };
  for (std::size_t i = 0; i < n; ++i) {
    auto x = static_cast<T>(sign() * std::exp2((2 * u(rng) - 1) * span));
    double ratio = i % 4 == 0   ? std::exp2((2 * u(rng) - 1) * span)
                   : i % 4 == 1 ? 1 + (u(rng) - 0.5) * 1e-3
                   : i % 4 == 2 ? 0.41421356 + (u(rng) - 0.5) * 1e-3
                                : u(rng) * 4;
    ys.push_back(static_cast<T>(sign() * std::abs(x) * ratio));
    xs.push_back(x);
  }
}

// Pairs for pow: x log-uniform with random sign, y such that x^y spans the finite range (and a
// little past), integral for negative x; and x near 1 with large y.
template <class T>
void pow_pairs(std::size_t n, Vec<T>& xs, Vec<T>& ys) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  const double span = std::log2(std::numeric_limits<T>::max()) - 1;
  const double lo = sizeof(T) == 4 ? -105 : -750, hi = sizeof(T) == 4 ? 90 : 712;
  for (std::size_t i = 0; i < n; ++i) {
    double x = i % 4 == 3 ? 1 + (u(rng) - 0.5) * 1e-2 : std::exp2((2 * u(rng) - 1) * span);
    double y = (lo + (hi - lo) * u(rng)) / std::log(x);
    if (i % 4 == 1) {  // negative x, integral y
      x = -x;
      y = std::round(y);
    }
    xs.push_back(static_cast<T>(x));
    ys.push_back(static_cast<T>(y));
  }
}

void check_binary(const Sweeps& sweeps) {
  Vec<float> y32, x32, b32, e32;
  atan2_pairs<float>((1 << 18) * sweeps.scale, y32, x32);
  check_accuracy<float>(kAtan2, "pairs", 1, sweeps, y32, x32);
  pow_pairs<float>((1 << 18) * sweeps.scale, b32, e32);
  check_accuracy<float>(kPow, "pairs", 1, sweeps, b32, e32);
  Vec<double> y64, x64, b64, e64;
  atan2_pairs<double>((1 << 16) * sweeps.scale, y64, x64);
  check_accuracy<double>(kAtan2, "pairs", 1, sweeps, y64, x64);
  pow_pairs<double>((1 << 16) * sweeps.scale, b64, e64);
  check_accuracy<double>(kPow, "pairs", 1, sweeps, b64, e64);
}

TEST_CASE("portable math: float32 unary functions within their ULP bounds",
          "[codegen][portable_math]") {
  check_unary_f32({});
}

TEST_CASE("portable math: float64 unary functions within their ULP bounds",
          "[codegen][portable_math]") {
  check_unary_f64({});
}

TEST_CASE("portable math: atan2 and pow within their ULP bounds", "[codegen][portable_math]") {
  check_binary({});
}

// The same sweeps 128 times as dense, printing the maxima (docs/math_accuracy.md's numbers):
// a few minutes, so hidden; run with `jx_tests "[portable_math_dense]"`.
TEST_CASE("portable math: ULP maxima over dense sweeps", "[.][portable_math_dense]") {
  const Sweeps dense{.scale = 128, .report = true};
  check_unary_f32(dense);
  check_unary_f64(dense);
  check_binary(dense);
}

// Every float32 input of the functions this table adds at float32 (the rest are vector_math's,
// which test_vector_math.cpp sweeps exhaustively): minutes, so hidden; run with
// `jx_tests "[portable_math_exhaustive]"`.
TEST_CASE("portable math: float32 log1p, expm1 and tan on every input",
          "[.][portable_math_exhaustive]") {
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 24;
  for (const Fn* fn : {&kLog1p, &kExpm1, &kTan}) {
    double worst = 0;
    for (std::uint64_t start = 0; start < (std::uint64_t{1} << 32); start += kChunk) {
      Vec<float> xs;
      for (std::uint64_t b = start; b < start + kChunk; ++b) {
        auto x = std::bit_cast<float>(static_cast<std::uint32_t>(b));
        // Past tan's reduction range the result is only finite, which the special values check.
        xs.push_back(fn == &kTan && !(std::abs(x) < 32768) ? 0 : x);
      }
      Accuracy acc = measure(*fn, xs);
      CHECK(acc.wrong == 0);
      worst = std::max(worst, acc.max_ulp);
    }
    WARN(fn->opcode << " f32 on every input: max " << worst << " ULP");
    CHECK(worst <= (fn == &kTan ? 2 : 1));
  }
}

template <class T>
Vec<T> special_values() {
  using L = std::numeric_limits<T>;
  Vec<T> v = {0,  L::denorm_min(), L::min(),     T(0.5), T(0.75), 1, T(1.5), 2, 3,
              10, L::max(),        L::infinity()};
  std::size_t n = v.size();
  for (std::size_t i = 0; i < n; ++i) v.push_back(-v[i]);
  v.push_back(L::quiet_NaN());
  return v;
}

// Results that are 0, ±1, ±inf or NaN, and all results for 0, ±inf or NaN arguments, are those
// of C's <cmath> exactly; the others are within `bound`, or only finite past `max_abs`.
template <class T>
void check_special(const Fn& fn, double bound, const Vec<T>& xs, const Vec<T>& ys = {},
                   double max_abs = INFINITY) {
  Vec<T> got = fn.binary ? run_op<T>(fn.opcode, {xs, ys}) : run_op<T>(fn.opcode, {xs});
  auto special = [](T v) { return v == 0 || !std::isfinite(v); };
  for (std::size_t i = 0; i < xs.size(); ++i) {
    T y = fn.binary ? ys[i] : 0;
    auto want = static_cast<T>(oracle<T>(fn, xs[i], y));
    INFO(fn.opcode << "(" << xs[i] << (fn.binary ? ", " + std::to_string(y) : "")
                   << ") = " << got[i] << ", want " << want);
    if (std::abs(xs[i]) > max_abs && std::isfinite(xs[i]))
      CHECK(std::isfinite(got[i]));
    else if (special(want) || std::abs(want) == 1 || special(xs[i]) || (fn.binary && special(y)))
      CHECK(identical(got[i], want));
    else
      CHECK(ulp_distance(got[i], want) <= bound);
  }
}

template <class T>
void check_specials() {
  Vec<T> s = special_values<T>();
  for (const Fn* fn : {&kExp, &kLog, &kLog1p, &kExpm1, &kTanh, &kErf, &kExp2, &kCbrt, &kAsin,
                       &kAcos, &kAtan, &kSinh, &kCosh, &kAsinh, &kAcosh, &kAtanh})
    check_special<T>(*fn, 2, s);
  // Past the reduction's range (docs/math_accuracy.md) sin, cos and tan are only finite.
  const double trig_range = sizeof(T) == 4 ? 32768 : 1e8;
  for (const Fn* fn : {&kSin, &kCos, &kTan}) check_special<T>(*fn, 2, s, {}, trig_range);
  Vec<T> xs, ys;
  for (T x : s)
    for (T y : s) {
      xs.push_back(x);
      ys.push_back(y);
    }
  check_special<T>(kPow, 2, xs, ys);
  check_special<T>(kAtan2, 2, xs, ys);
}

TEST_CASE("portable math: special values as C's <cmath>", "[codegen][portable_math]") {
  check_specials<float>();
  check_specials<double>();
  // pow's sign and integer cases, (-1)^±inf, and log1p at -1 and below.
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Vec<double> px = {-2, -2, -2, -0.0, -0.0, -kInf, -kInf, -1, -1, 0.5, -8, -2},
              py = {3, -3, 0.5, -3, 4, 3, -3, kInf, -kInf, -kInf, 1.0 / 3, 1e300};
  check_special<double>(kPow, 0, px, py);
  check_special<double>(kLog1p, 0, {-1, -1.5, -kInf, -0.0, 5e-324});
}

TEST_CASE("portable math: NaN in, NaN out", "[codegen][portable_math]") {
  Vec<float> nans32 = {std::numeric_limits<float>::quiet_NaN(), std::bit_cast<float>(0xffc00001u),
                       std::bit_cast<float>(0x7f800001u), std::bit_cast<float>(0xff812345u)};
  Vec<double> nans64 = {std::numeric_limits<double>::quiet_NaN(),
                        std::bit_cast<double>(0xfff8000000000001ull),
                        std::bit_cast<double>(0x7ff0000000000001ull)};
  for (const Fn* fn :
       {&kExp,  &kLog,  &kLog1p, &kExpm1, &kSin,  &kCos,   &kTan,   &kTanh,  &kErf, &kExp2, &kCbrt,
        &kAsin, &kAcos, &kAtan,  &kSinh,  &kCosh, &kAsinh, &kAcosh, &kAtanh, &kPow, &kAtan2}) {
    INFO(fn->opcode);
    Vec<float> twos32(nans32.size(), 2.0f);
    Vec<double> twos64(nans64.size(), 2.0);
    for (float y : fn->binary ? run_op<float>(fn->opcode, {nans32, twos32})
                              : run_op<float>(fn->opcode, {nans32}))
      CHECK(std::isnan(y));
    for (double y : fn->binary ? run_op<double>(fn->opcode, {twos64, nans64})
                               : run_op<double>(fn->opcode, {nans64}))
      CHECK(std::isnan(y));
  }
}

template <class T>
void check_bounded_past_range(T from) {
  Vec<T> xs = {std::numeric_limits<T>::max(), -std::numeric_limits<T>::max()};
  for (T x = from; std::isfinite(x); x *= T(1.37)) {
    xs.push_back(x);
    xs.push_back(-x);
  }
  for (const Fn* fn : {&kSin, &kCos, &kTan}) {
    Vec<T> got = run_op<T>(fn->opcode, {xs});
    for (std::size_t i = 0; i < xs.size(); ++i) {
      INFO(fn->opcode << "(" << xs[i] << ") = " << got[i]);
      CHECK(std::abs(got[i]) <= (fn == &kTan ? std::numeric_limits<T>::max() : 1));
    }
  }
}

TEST_CASE("portable math: sin and cos stay in [-1, 1] and tan finite past the reduction's range",
          "[codegen][portable_math]") {
  check_bounded_past_range<float>(32768);
  check_bounded_past_range<double>(1.05e8);
}

// The rest of the table are single instructions: compared exactly on edge values.
TEST_CASE("portable math: rounding, abs, sqrt, max and min exact", "[codegen][portable_math]") {
  Vec<double> s = special_values<double>();
  for (double v : {2.5, -2.5, 0.49999999999999994, 1e300}) s.push_back(v);
  struct Exact {
    const char* opcode;
    double (*f)(double);
  };
  for (Exact e : {Exact{"floor", [](double x) { return std::floor(x); }},
                  Exact{"ceil", [](double x) { return std::ceil(x); }},
                  Exact{"round-nearest-afz", [](double x) { return std::round(x); }},
                  Exact{"round-nearest-even", [](double x) { return std::nearbyint(x); }},
                  Exact{"abs", [](double x) { return std::fabs(x); }},
                  Exact{"sqrt", [](double x) { return std::sqrt(x); }}}) {
    Vec<double> got = run_op<double>(e.opcode, {s});
    for (std::size_t i = 0; i < s.size(); ++i) {
      INFO(e.opcode << "(" << s[i] << ") = " << got[i]);
      CHECK(identical(got[i], e.f(s[i])));
    }
  }
  Vec<float> a = {1, -0.0f, 0, std::numeric_limits<float>::quiet_NaN(), 3};
  Vec<float> b = {2, 0, -0.0f, 1, std::numeric_limits<float>::quiet_NaN()};
  Vec<float> hi = run_op<float>("maximum", {a, b}), lo = run_op<float>("minimum", {a, b});
  CHECK(identical(hi[0], 2.0f));
  CHECK(identical(hi[1], 0.0f));
  CHECK(identical(lo[2], -0.0f));
  CHECK((std::isnan(hi[3]) && std::isnan(lo[4])));
}

}  // namespace
}  // namespace jx::codegen::testing
