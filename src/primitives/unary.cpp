// Unary elementwise primitives: neg exp log log1p expm1 sin cos tan tanh logistic sqrt rsqrt
// abs sign floor ceil round erf integer_pow not.
#include <cmath>

#include <numbers>

#include "jx/lax.hpp"
#include "jx/numpy.hpp"
#include "primitives/ad_rules.hpp"
#include "primitives/elementwise.hpp"
#include "trace/tracer.hpp"

namespace jx {
namespace {

using trace::bind1;

// Floating-point functions are only instantiated for float types at run time (abstract_eval
// rejects others), but must compile for all; `F` widens integers to double.
template <class T>
using F = std::conditional_t<std::is_floating_point_v<T>, T, double>;

// The type integer arithmetic wraps in: the unsigned twin of a signed integer.
template <class T>
struct Wrapping {
  using type = T;
};
template <class T>
requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) struct Wrapping<T> {
  using type = std::make_unsigned_t<T>;
};

}  // namespace

Primitive neg_p("neg"), exp_p("exp"), log_p("log"), log1p_p("log1p"), expm1_p("expm1"),
    sin_p("sin"), cos_p("cos"), tan_p("tan"), tanh_p("tanh"), logistic_p("logistic"),
    sqrt_p("sqrt"), rsqrt_p("rsqrt"), abs_p("abs"), sign_p("sign"), floor_p("floor"),
    ceil_p("ceil"), round_p("round"), erf_p("erf"), integer_pow_p("integer_pow"), not_p("not");

namespace {

const bool kRegistered = [] {
  def_unary(neg_p, hlo::Opcode::kNegate, kNumeric,
            [](auto x) { return static_cast<decltype(x)>(-x); });
  def_unary(exp_p, hlo::Opcode::kExp, kFloating,
            [](auto x) { return std::exp(F<decltype(x)>(x)); });
  def_unary(log_p, hlo::Opcode::kLog, kFloating,
            [](auto x) { return std::log(F<decltype(x)>(x)); });
  def_unary(log1p_p, hlo::Opcode::kLog1p, kFloating,
            [](auto x) { return std::log1p(F<decltype(x)>(x)); });
  def_unary(expm1_p, hlo::Opcode::kExpm1, kFloating,
            [](auto x) { return std::expm1(F<decltype(x)>(x)); });
  def_unary(sin_p, hlo::Opcode::kSin, kFloating,
            [](auto x) { return std::sin(F<decltype(x)>(x)); });
  def_unary(cos_p, hlo::Opcode::kCos, kFloating,
            [](auto x) { return std::cos(F<decltype(x)>(x)); });
  def_unary(tan_p, hlo::Opcode::kTan, kFloating,
            [](auto x) { return std::tan(F<decltype(x)>(x)); });
  def_unary(tanh_p, hlo::Opcode::kTanh, kFloating,
            [](auto x) { return std::tanh(F<decltype(x)>(x)); });
  // With e = exp(-|x|), which never overflows: large negative x keeps its tiny result.
  def_unary(logistic_p, hlo::Opcode::kLogistic, kFloating, [](auto x) {
    using T = F<decltype(x)>;
    T e = std::exp(-std::abs(T(x)));
    return (T(x) >= T(0) ? T(1) : e) / (T(1) + e);
  });
  def_unary(sqrt_p, hlo::Opcode::kSqrt, kFloating,
            [](auto x) { return std::sqrt(F<decltype(x)>(x)); });
  def_unary(rsqrt_p, hlo::Opcode::kRsqrt, kFloating, [](auto x) {
    using T = F<decltype(x)>;
    return T(1) / std::sqrt(T(x));
  });
  def_unary(abs_p, hlo::Opcode::kAbs, kNumeric, [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_unsigned_v<T>)
      return x;
    else
      return static_cast<T>(x < T(0) ? -x : x);
  });
  def_unary(sign_p, hlo::Opcode::kSign, kNumeric, [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x)) return x;
    return static_cast<T>((T(0) < x) - (x < T(0)));
  });
  def_unary(floor_p, hlo::Opcode::kFloor, kFloating,
            [](auto x) { return std::floor(F<decltype(x)>(x)); });
  def_unary(ceil_p, hlo::Opcode::kCeil, kFloating,
            [](auto x) { return std::ceil(F<decltype(x)>(x)); });
  def_unary(erf_p, hlo::Opcode::kErf, kFloating,
            [](auto x) { return std::erf(F<decltype(x)>(x)); });
  def_unary(not_p, hlo::Opcode::kNot, kInteger | kBool, [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, bool>)
      return !x;
    else if constexpr (std::is_integral_v<T>)
      return static_cast<T>(~x);
    else
      return x;  // unreachable: floats are rejected by the dtype check
  });

  // round[rounding_method=0|1]: away from zero, or half to even.
  def_unary(round_p, hlo::Opcode::kRoundAfz, kFloating, [](auto) { return 0.0; });
  round_p.impl = [](std::span<const Array> in, const Params& params,
                    std::span<const ShapedArray> out) {
    bool even = params.get("rounding_method").as_int() == 1;
    return std::vector<Array>{map_unary(in[0], out[0], [even](auto x) {
      F<decltype(x)> v = x;
      return even ? std::nearbyint(v) : std::round(v);  // the default FP mode rounds to even
    })};
  };

  round_p.lower = [](hlo::Builder& b, std::span<hlo::Instruction* const> operands,
                     const Params& params, std::span<const ShapedArray>) {
    bool even = params.get("rounding_method").as_int() == 1;
    return std::vector<hlo::Instruction*>{
        b.unary(even ? hlo::Opcode::kRoundEven : hlo::Opcode::kRoundAfz, operands[0])};
  };

  // integer_pow[y=n]: x^n by repeated squaring in x's own type; negative n needs floats.
  def_unary(integer_pow_p, hlo::Opcode::kMultiply, kNumeric, [](auto) { return 0; });
  auto base_rule = integer_pow_p.abstract_eval;
  integer_pow_p.abstract_eval = [base_rule](std::span<const ShapedArray> in, const Params& params) {
    if (params.get("y").as_int() < 0 && !is_floating(in[0].dtype))
      throw TypeError("integer_pow with a negative exponent needs a floating dtype, got " +
                      std::string(dtype_name(in[0].dtype)));
    return base_rule(in, params);
  };
  integer_pow_p.impl = [](std::span<const Array> in, const Params& params,
                          std::span<const ShapedArray> out) {
    std::int64_t y = params.get("y").as_int();
    return std::vector<Array>{map_unary(in[0], out[0], [y](auto x) {
      using T = decltype(x);
      // Integers multiply in their unsigned type, so overflow wraps instead of being UB.
      using M = typename Wrapping<T>::type;
      M acc = M(1), base = static_cast<M>(x);
      for (std::int64_t n = y < 0 ? -y : y; n; n >>= 1) {
        if (n & 1) acc = static_cast<M>(acc * base);
        if (n > 1) base = static_cast<M>(base * base);
      }
      if constexpr (std::is_floating_point_v<T>)
        if (y < 0) return T(1) / acc;
      return static_cast<T>(acc);
    })};
  };
  // As XLA: repeated squaring with multiplies; a negative power divides 1 by the result.
  integer_pow_p.lower = [](hlo::Builder& b, std::span<hlo::Instruction* const> operands,
                           const Params& params, std::span<const ShapedArray> out) {
    std::int64_t y = params.get("y").as_int();
    hlo::Instruction* base = operands[0];
    hlo::Instruction* acc = nullptr;
    for (std::int64_t n = y < 0 ? -y : y; n; n >>= 1) {
      if (n & 1) acc = acc ? b.binary(hlo::Opcode::kMultiply, acc, base) : base;
      if (n > 1) base = b.binary(hlo::Opcode::kMultiply, base, base);
    }
    hlo::Instruction* one = b.broadcast(b.constant(make_scalar(1, out[0].dtype)), out[0].shape, {});
    if (!acc) return std::vector<hlo::Instruction*>{one};
    if (y < 0) acc = b.binary(hlo::Opcode::kDivide, one, acc);
    return std::vector<hlo::Instruction*>{acc};
  };
  return true;
}();

// Derivatives: tangent_out = t * d(x, ans). Rounding, sign and bit ops are piecewise constant.
void def_derivative(Primitive& p, std::function<Array(const Array& x, const Array& ans)> d) {
  ad::def_elementwise_jvp(p, {[d](const Array& t, std::span<const Array> x, const Array& ans) {
                            return t * d(x[0], ans);
                          }});
}

const bool kDifferentiated = [] {
  ad::def_linear(neg_p);
  neg_p.transpose = [](std::span<const Array> cts, std::span<const LinearOperand>, const Params&) {
    return std::vector<Array>{lax::neg(cts[0])};
  };
  def_derivative(exp_p, [](const Array&, const Array& ans) { return ans; });
  def_derivative(log_p, [](const Array& x, const Array&) { return 1.0 / x; });
  def_derivative(log1p_p, [](const Array& x, const Array&) { return 1.0 / (1.0 + x); });
  def_derivative(expm1_p, [](const Array&, const Array& ans) { return ans + 1.0; });
  def_derivative(sin_p, [](const Array& x, const Array&) { return lax::cos(x); });
  def_derivative(cos_p, [](const Array& x, const Array&) { return -lax::sin(x); });
  def_derivative(tan_p, [](const Array&, const Array& ans) { return 1.0 + ans * ans; });
  def_derivative(tanh_p, [](const Array&, const Array& ans) { return 1.0 - ans * ans; });
  def_derivative(logistic_p, [](const Array&, const Array& ans) { return ans * (1.0 - ans); });
  def_derivative(sqrt_p, [](const Array&, const Array& ans) { return 0.5 / ans; });
  def_derivative(rsqrt_p, [](const Array& x, const Array& ans) { return -0.5 * ans / x; });
  def_derivative(abs_p, [](const Array& x, const Array&) { return lax::sign(x); });
  def_derivative(erf_p, [](const Array& x, const Array&) {
    return 2.0 / std::sqrt(std::numbers::pi) * lax::exp(-(x * x));
  });
  for (Primitive* p : {&sign_p, &floor_p, &ceil_p, &round_p, &not_p}) ad::def_zero_jvp(*p);
  // d/dx x^n = n x^(n-1); x^0 is constant.
  integer_pow_p.jvp = [](std::span<const Array> primals, std::span<const Array> tangents,
                         const Params& params) {
    const Array& x = primals[0];
    std::int64_t y = params.get("y").as_int();
    JvpResult r{{lax::integer_pow(x, static_cast<int>(y))}, {Array()}};
    if (y == 0) return r;
    r.tangents[0] =
        y == 1
            ? tangents[0]
            : tangents[0] * (static_cast<double>(y) * lax::integer_pow(x, static_cast<int>(y - 1)));
    return r;
  };
  return true;
}();

}  // namespace

namespace lax {

Array neg(const Array& x) { return bind1(neg_p, {x}); }
Array exp(const Array& x) { return bind1(exp_p, {x}); }
Array log(const Array& x) { return bind1(log_p, {x}); }
Array log1p(const Array& x) { return bind1(log1p_p, {x}); }
Array expm1(const Array& x) { return bind1(expm1_p, {x}); }
Array sin(const Array& x) { return bind1(sin_p, {x}); }
Array cos(const Array& x) { return bind1(cos_p, {x}); }
Array tan(const Array& x) { return bind1(tan_p, {x}); }
Array tanh(const Array& x) { return bind1(tanh_p, {x}); }
Array logistic(const Array& x) { return bind1(logistic_p, {x}); }
Array sqrt(const Array& x) { return bind1(sqrt_p, {x}); }
Array rsqrt(const Array& x) { return bind1(rsqrt_p, {x}); }
Array abs(const Array& x) { return bind1(abs_p, {x}); }
Array sign(const Array& x) { return bind1(sign_p, {x}); }
Array floor(const Array& x) { return bind1(floor_p, {x}); }
Array ceil(const Array& x) { return bind1(ceil_p, {x}); }
Array round(const Array& x, RoundingMethod method) {
  return bind1(round_p, {x}, {{"rounding_method", Param::integer(static_cast<int>(method))}});
}
Array erf(const Array& x) { return bind1(erf_p, {x}); }
Array integer_pow(const Array& x, int y) {
  return bind1(integer_pow_p, {x}, {{"y", Param::integer(y)}});
}
Array bitwise_not(const Array& x) { return bind1(not_p, {x}); }

}  // namespace lax
}  // namespace jx
