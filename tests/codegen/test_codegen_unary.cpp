// CPU codegen of unary elementwise ops and convert, against closed forms over edge values.
#include <cmath>
#include <limits>

#include "codegen/codegen_testing.hpp"
#include "core/dtype_dispatch.hpp"
#include "support/float16_oracle.hpp"

namespace jx::codegen::testing {
namespace {

using hlo::Opcode;
using jx::testing::nearest_bf16;
using jx::testing::nearest_f16;

template <class T>
using Store = std::conditional_t<std::is_same_v<T, bool>, pred, T>;

template <class T>
std::vector<T> float_edges() {
  constexpr T inf = std::numeric_limits<T>::infinity();
  return {T(-2.5), T(-1),    T(-0.5), T(-0.0), T(0),
          T(0.25), T(0.5),   T(1.5),  T(2.5),  T(3),
          T(100),  T(-1e-3), inf,     -inf,    std::numeric_limits<T>::quiet_NaN()};
}

// The closed form of each float unary opcode.
template <class T>
T reference(Opcode op, T x) {
  switch (op) {
    case Opcode::kNegate:
      return -x;
    case Opcode::kExp:
      return std::exp(x);
    case Opcode::kLog:
      return std::log(x);
    case Opcode::kLog1p:
      return std::log1p(x);
    case Opcode::kExpm1:
      return std::expm1(x);
    case Opcode::kSin:
      return std::sin(x);
    case Opcode::kCos:
      return std::cos(x);
    case Opcode::kTan:
      return std::tan(x);
    case Opcode::kTanh:
      return std::tanh(x);
    case Opcode::kLogistic:
      return T(1) / (T(1) + std::exp(-x));
    case Opcode::kSqrt:
      return std::sqrt(x);
    case Opcode::kRsqrt:
      return T(1) / std::sqrt(x);
    case Opcode::kAbs:
      return std::fabs(x);
    case Opcode::kSign:
      return std::isnan(x) ? x : x > 0 ? T(1) : x < 0 ? T(-1) : T(0);
    case Opcode::kFloor:
      return std::floor(x);
    case Opcode::kCeil:
      return std::ceil(x);
    case Opcode::kRoundAfz:
      return std::round(x);
    case Opcode::kRoundEven:
      return std::nearbyint(x);  // the default mode: ties to even
    case Opcode::kErf:
      return std::erf(x);
    default:
      FAIL("no reference");
      return x;
  }
}

constexpr Opcode kFloatUnary[] = {
    Opcode::kNegate, Opcode::kExp,      Opcode::kLog,       Opcode::kLog1p, Opcode::kExpm1,
    Opcode::kSin,    Opcode::kCos,      Opcode::kTan,       Opcode::kTanh,  Opcode::kLogistic,
    Opcode::kSqrt,   Opcode::kRsqrt,    Opcode::kAbs,       Opcode::kSign,  Opcode::kFloor,
    Opcode::kCeil,   Opcode::kRoundAfz, Opcode::kRoundEven, Opcode::kErf};

template <class T>
void check_float_unary(double rtol) {
  std::vector<T> x = float_edges<T>();
  for (Opcode op : kFloatUnary) {
    INFO(hlo::info(op).name << " on " << dtype_name(dtype_for<T>()));
    Hlo h;
    auto* p = h.param(0, dtype_for<T>(), {static_cast<std::int64_t>(x.size())});
    auto got = run<T>(h.b.unary(op, p), {x.data()});
    std::vector<T> want;
    for (T v : x) want.push_back(reference(op, v));
    check_all(got, want, rtol);
  }
}

TEST_CASE("codegen: float unary ops match their closed forms on edge values", "[codegen]") {
  check_float_unary<float>(1e-6);
  check_float_unary<double>(1e-14);
}

TEST_CASE("codegen: rounding ties and the sign of zeros and NaN", "[codegen]") {
  std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.49f};
  Hlo h;
  auto* p = h.param(0, float32, {7});
  check_all(run<float>(h.b.unary(Opcode::kRoundAfz, p), {x.data()}),
            {1.f, 2.f, 3.f, -1.f, -2.f, -3.f, 3.f});
  check_all(run<float>(h.b.unary(Opcode::kRoundEven, p), {x.data()}),
            {0.f, 2.f, 2.f, -0.f, -2.f, -2.f, 3.f});
  std::vector<double> s = {-0.0, std::nan(""), -7.0, 1e-300};
  Hlo h2;
  auto got = run<double>(h2.b.unary(Opcode::kSign, h2.param(0, float64, {4})), {s.data()});
  CHECK(got[0] == 0.0);
  CHECK(!std::signbit(got[0]));  // sign(-0.0) = +0.0, as the eager impl's (0 < x) - (x < 0)
  CHECK(std::isnan(got[1]));
  CHECK(got[2] == -1.0);
  CHECK(got[3] == 1.0);
}

template <class T>
void check_int_unary() {
  using L = std::numeric_limits<T>;
  std::vector<T> x = {L::min(), T(L::min() + 1), T(-7), T(-1), T(0), T(1), T(5), L::max()};
  if constexpr (std::is_unsigned_v<T>) x = {T(0), T(1), T(5), T(1u << 31), L::max()};
  auto n = static_cast<std::int64_t>(x.size());
  auto apply = [&](Opcode op) {
    Hlo h;
    return run<T>(h.b.unary(op, h.param(0, dtype_for<T>(), {n})), {x.data()});
  };
  std::vector<T> neg, abs, sign, bit_not;
  for (T v : x) {
    using U = std::make_unsigned_t<T>;
    neg.push_back(static_cast<T>(U(0) - static_cast<U>(v)));  // wraps: -INT_MIN = INT_MIN
    abs.push_back(std::is_signed_v<T> && v < 0 ? static_cast<T>(U(0) - static_cast<U>(v)) : v);
    sign.push_back(v > 0 ? T(1) : v == 0 ? T(0) : static_cast<T>(-1));
    bit_not.push_back(static_cast<T>(~static_cast<U>(v)));
  }
  INFO(dtype_name(dtype_for<T>()));
  check_all(apply(Opcode::kNegate), neg);
  check_all(apply(Opcode::kAbs), abs);
  check_all(apply(Opcode::kSign), sign);
  check_all(apply(Opcode::kNot), bit_not);
}

TEST_CASE("codegen: integer negate/abs/sign/not wrap like two's complement", "[codegen]") {
  check_int_unary<std::int32_t>();
  check_int_unary<std::int64_t>();
  check_int_unary<std::uint32_t>();
  std::vector<pred> x = {0, 1, 1, 0};
  Hlo h;
  check_all(run<pred>(h.b.unary(Opcode::kNot, h.param(0, bool_, {4})), {x.data()}),
            std::vector<pred>{1, 0, 0, 1});
}

template <class T>
constexpr bool kIs16 = std::is_same_v<T, BFloat16> || std::is_same_v<T, Float16>;

// Values of each source dtype that reach every conversion edge.
template <class T>
std::vector<T> convert_sources() {
  if constexpr (std::is_same_v<T, bool>) {
    return {false, true};
  } else if constexpr (kIs16<T>) {
    // Bit patterns: NaN, ±inf, ±0, the least subnormal, the largest subnormal, the least normal,
    // the largest finite value and its negation; then values near the integer types' bounds
    // (rounded where the format lacks them).
    constexpr bool kBF = std::is_same_v<T, BFloat16>;
    std::vector<T> out;
    for (std::uint16_t bits : {kBF ? 0x7FC0 : 0x7E00, kBF ? 0xFF80 : 0xFC00, kBF ? 0x7F80 : 0x7C00,
                               0x8000, 0x0000, 0x0001, kBF ? 0x007F : 0x03FF, kBF ? 0x0080 : 0x0400,
                               kBF ? 0x7F7F : 0x7BFF, kBF ? 0xFF7F : 0xFBFF})
      out.push_back(T::from_bits(bits));
    for (double v : {-3.75, -0.5, 0.5, 2.5, 255.0, 256.0, -129.0, 1000.0, -32768.0, 40000.0})
      out.push_back(T::from_bits(kBF ? nearest_bf16(v) : nearest_f16(v)));
    return out;
  } else if constexpr (std::is_floating_point_v<T>) {
    constexpr T inf = std::numeric_limits<T>::infinity();
    std::vector<T> out{std::numeric_limits<T>::quiet_NaN(),
                       -inf,
                       inf,
                       T(-3.7),
                       T(-0.5),
                       T(-0.0),
                       T(0),
                       T(0.5),
                       T(2.5),
                       T(3e9),
                       T(-3e9),
                       T(1e20),
                       T(-1e20),
                       T(4294967295.0),
                       T(2147483648.0),
                       T(-2147483648.0),
                       T(9.3e18)};
    // 16-bit edges: 1 + 2^-8 and 1 + 2^-11 (ties to even), float16's largest finite value and
    // the tie past it (overflow), a float16 subnormal, bfloat16's tie past its largest value.
    for (double v : {1 + 0x1p-8, 1 + 0x1p-11, 65504.0, 65520.0, -65519.0, 0x1p-24, 0x1.FFp127})
      out.push_back(static_cast<T>(v));
    return out;
  } else {
    using L = std::numeric_limits<T>;
    std::vector<T> out{L::min(), static_cast<T>(-1),        T(0),    T(1),
                       T(7),     static_cast<T>(123456789), L::max()};
    // Past 2^53: a double would round 2^62 + 2^54 + 1 onto a bfloat16 tie.
    if constexpr (sizeof(T) == 8) out.push_back(static_cast<T>(0x4040000000000001));
    return out;
  }
}

// The exact value of a source element.
template <class T>
long double exact(T x) {
  if constexpr (kIs16<T>)
    return static_cast<long double>(static_cast<double>(x));
  else
    return static_cast<long double>(x);
}

// XLA's convert in closed form: anything → pred is `!= 0`; float → int drops the fraction,
// saturates and maps NaN to 0; to a 16-bit float, the nearest value by the bit-pattern oracle
// (support/float16_oracle.hpp); other conversions are C++'s (modular for integers).
template <class O, class T>
O convert_reference(T x) {
  if constexpr (std::is_same_v<O, bool>) {
    return exact(x) != 0;  // NaN != 0 holds
  } else if constexpr (kIs16<O>) {
    if constexpr (std::is_same_v<O, BFloat16>)
      return O::from_bits(nearest_bf16(exact(x)));
    else
      return O::from_bits(nearest_f16(exact(x)));
  } else if constexpr (is_float_element_v<T> && std::is_integral_v<O>) {
    long double v = exact(x);
    if (std::isnan(v)) return O(0);
    long double t = std::trunc(v);
    if (t <= static_cast<long double>(std::numeric_limits<O>::min()))
      return std::numeric_limits<O>::min();
    if (t >= static_cast<long double>(std::numeric_limits<O>::max()))
      return std::numeric_limits<O>::max();
    return static_cast<O>(t);
  } else if constexpr (kIs16<T>) {
    return static_cast<O>(static_cast<double>(x));  // to float32 or float64: exact
  } else {
    return static_cast<O>(x);
  }
}

TEST_CASE("codegen: convert between every pair of dtypes", "[codegen]") {
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      INFO(dtype_name(from) << " -> " << dtype_name(to));
      dispatch(from, [&]<class T>() {
        dispatch(to, [&]<class O>() {
          std::vector<T> src = convert_sources<T>();
          std::vector<Store<T>> in(src.begin(), src.end());
          Hlo h;
          auto* p = h.param(0, from, {static_cast<std::int64_t>(in.size())});
          auto* root =
              from == to ? h.op(Opcode::kConvert, to, p->shape.dims, {p}) : h.b.convert(p, to);
          auto got = run<Store<O>>(root, {in.data()});
          std::vector<Store<O>> want;
          for (T v : src) want.push_back(static_cast<Store<O>>(convert_reference<O>(v)));
          check_all(got, want);
        });
      });
    }
  }
}

TEST_CASE("codegen: unary ops on 0-d and 0-sized and 1-sized shapes", "[codegen]") {
  for (const Shape& s : std::vector<Shape>{{}, {0}, {1}, {3, 0, 2}, {1, 1, 1}, {2, 1, 3}}) {
    INFO(shape_str(s));
    std::vector<float> x = ramp<float>(shape_size(s), -1.5, 0.75);
    Hlo h;
    auto got = run<float>(h.b.unary(Opcode::kExp, h.param(0, float32, s)), {x.data()});
    std::vector<float> want;
    for (float v : x) want.push_back(std::exp(v));
    check_all(got, want, 1e-6);
  }
}

}  // namespace
}  // namespace jx::codegen::testing
