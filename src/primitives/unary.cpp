// Unary elementwise primitives: neg exp exp2 log log1p expm1 sin cos tan asin acos atan sinh
// cosh tanh asinh acosh atanh logistic sqrt rsqrt cbrt abs sign floor ceil round erf is_finite
// integer_pow not. Each primitive's rules stand together; most are one HLO opcode (def_unary)
// and a derivative.
#include <cmath>
#include <limits>

#include <numbers>

#include "jx/lax.hpp"
#include "jx/numpy.hpp"
#include "transforms/ad_rules.hpp"
#include "primitives/elementwise.hpp"
#include "trace/tracer.hpp"

namespace jx {
namespace {

using trace::bind1;

}  // namespace

Primitive neg_p("neg"), exp_p("exp"), exp2_p("exp2"), log_p("log"), log1p_p("log1p"),
    expm1_p("expm1"), sin_p("sin"), cos_p("cos"), tan_p("tan"), asin_p("asin"), acos_p("acos"),
    atan_p("atan"), sinh_p("sinh"), cosh_p("cosh"), tanh_p("tanh"), asinh_p("asinh"),
    acosh_p("acosh"), atanh_p("atanh"), logistic_p("logistic"), sqrt_p("sqrt"), rsqrt_p("rsqrt"),
    cbrt_p("cbrt"), abs_p("abs"), sign_p("sign"), floor_p("floor"), ceil_p("ceil"),
    round_p("round"), erf_p("erf"), is_finite_p("is_finite"), integer_pow_p("integer_pow"),
    not_p("not");

namespace {

using hlo::Opcode;

// tangent_out = t * d(x, ans): the derivative from the input x and the result ans.
void def_derivative(Primitive& p, std::function<Array(const Array& x, const Array& ans)> d) {
  ad::def_elementwise_jvp(p, {[d](const Array& t, std::span<const Array> x, const Array& ans) {
                            return t * d(x[0], ans);
                          }});
}

const bool kRegistered = [] {
  def_unary<Opcode::kNegate>(neg_p);
  ad::def_linear(neg_p);
  neg_p.transpose = [](std::span<const Array> cts, std::span<const LinearOperand>, const Params&) {
    return std::vector<Array>{lax::neg(cts[0])};
  };

  def_unary<Opcode::kExp>(exp_p);
  def_derivative(exp_p, [](const Array&, const Array& ans) { return ans; });

  def_unary<Opcode::kExp2>(exp2_p);
  def_derivative(exp2_p, [](const Array&, const Array& ans) { return std::numbers::ln2 * ans; });

  def_unary<Opcode::kLog>(log_p);
  def_derivative(log_p, [](const Array& x, const Array&) { return 1.0 / x; });

  def_unary<Opcode::kLog1p>(log1p_p);
  def_derivative(log1p_p, [](const Array& x, const Array&) { return 1.0 / (1.0 + x); });

  def_unary<Opcode::kExpm1>(expm1_p);
  def_derivative(expm1_p, [](const Array&, const Array& ans) { return ans + 1.0; });

  def_unary<Opcode::kSin>(sin_p);
  def_derivative(sin_p, [](const Array& x, const Array&) { return lax::cos(x); });

  def_unary<Opcode::kCos>(cos_p);
  def_derivative(cos_p, [](const Array& x, const Array&) { return -lax::sin(x); });

  def_unary<Opcode::kTan>(tan_p);
  def_derivative(tan_p, [](const Array&, const Array& ans) { return 1.0 + ans * ans; });

  def_unary<Opcode::kAsin>(asin_p);
  def_derivative(asin_p, [](const Array& x, const Array&) { return lax::rsqrt(1.0 - x * x); });

  def_unary<Opcode::kAcos>(acos_p);
  def_derivative(acos_p, [](const Array& x, const Array&) { return -lax::rsqrt(1.0 - x * x); });

  def_unary<Opcode::kAtan>(atan_p);
  def_derivative(atan_p, [](const Array& x, const Array&) { return 1.0 / (1.0 + x * x); });

  def_unary<Opcode::kSinh>(sinh_p);
  def_derivative(sinh_p, [](const Array& x, const Array&) { return lax::cosh(x); });

  def_unary<Opcode::kCosh>(cosh_p);
  def_derivative(cosh_p, [](const Array& x, const Array&) { return lax::sinh(x); });

  def_unary<Opcode::kTanh>(tanh_p);
  def_derivative(tanh_p, [](const Array&, const Array& ans) { return 1.0 - ans * ans; });

  def_unary<Opcode::kAsinh>(asinh_p);
  def_derivative(asinh_p, [](const Array& x, const Array&) { return lax::rsqrt(x * x + 1.0); });

  // (x - 1)(x + 1) rather than x² - 1: no cancellation near 1.
  def_unary<Opcode::kAcosh>(acosh_p);
  def_derivative(acosh_p,
                 [](const Array& x, const Array&) { return lax::rsqrt((x - 1.0) * (x + 1.0)); });

  def_unary<Opcode::kAtanh>(atanh_p);
  def_derivative(atanh_p,
                 [](const Array& x, const Array&) { return 1.0 / ((1.0 + x) * (1.0 - x)); });

  def_unary<Opcode::kLogistic>(logistic_p);
  def_derivative(logistic_p, [](const Array&, const Array& ans) { return ans * (1.0 - ans); });

  def_unary<Opcode::kSqrt>(sqrt_p);
  def_derivative(sqrt_p, [](const Array&, const Array& ans) { return 0.5 / ans; });

  def_unary<Opcode::kRsqrt>(rsqrt_p);
  def_derivative(rsqrt_p, [](const Array& x, const Array& ans) { return -0.5 * ans / x; });

  def_unary<Opcode::kCbrt>(cbrt_p);
  def_derivative(cbrt_p, [](const Array&, const Array& ans) {
    return (1.0 / 3.0) * lax::integer_pow(ans, -2);
  });

  def_unary<Opcode::kAbs>(abs_p);
  def_derivative(abs_p, [](const Array& x, const Array&) { return lax::sign(x); });

  def_unary<Opcode::kSign>(sign_p);
  ad::def_zero_jvp(sign_p);

  def_unary<Opcode::kFloor>(floor_p);
  ad::def_zero_jvp(floor_p);

  def_unary<Opcode::kCeil>(ceil_p);
  ad::def_zero_jvp(ceil_p);

  // round[rounding_method=0|1]: away from zero, or half to even; one opcode for each.
  def_unary<Opcode::kRoundAfz>(round_p);
  round_p.impl = [](std::span<const Array> in, const Params& params,
                    std::span<const ShapedArray> out) {
    bool even = params.get("rounding_method").as_int() == 1;
    return std::vector<Array>{
        even ? map_unary(in[0], out[0], hlo::Scalar<Opcode::kRoundEven>{})
             : map_unary(in[0], out[0], hlo::Scalar<Opcode::kRoundAfz>{})};
  };
  round_p.lower = [](hlo::Builder& b, std::span<hlo::Instruction* const> operands,
                     const Params& params, std::span<const ShapedArray>) {
    bool even = params.get("rounding_method").as_int() == 1;
    return std::vector<hlo::Instruction*>{
        b.unary(even ? Opcode::kRoundEven : Opcode::kRoundAfz, operands[0])};
  };
  ad::def_zero_jvp(round_p);

  def_unary<Opcode::kErf>(erf_p);
  def_derivative(erf_p, [](const Array& x, const Array&) {
    return 2.0 / std::sqrt(std::numbers::pi) * lax::exp(-(x * x));
  });

  def_unary<Opcode::kIsFinite>(is_finite_p, bool_);
  ad::def_zero_jvp(is_finite_p);

  def_unary<Opcode::kNot>(not_p);
  ad::def_zero_jvp(not_p);

  // integer_pow[y=n]: x^n by repeated squaring in x's own type; negative n needs floats.
  def_elementwise(integer_pow_p, 1, kNumeric);
  auto base_rule = integer_pow_p.abstract_eval;
  integer_pow_p.abstract_eval = [base_rule](std::span<const ShapedArray> in, const Params& params) {
    if (params.get("y").as_int() < 0 && !in.empty() && !is_floating(in[0].dtype))
      throw TypeError("integer_pow with a negative exponent needs a floating dtype, got " +
                      std::string(dtype_name(in[0].dtype)));
    return base_rule(in, params);
  };
  integer_pow_p.impl = [](std::span<const Array> in, const Params& params,
                          std::span<const ShapedArray> out) {
    std::int64_t y = params.get("y").as_int();
    return std::vector<Array>{map_unary(in[0], out[0], [y](auto x) {
      using T = decltype(x);
      // Integers multiply as XLA's do, wrapping instead of overflowing (hlo::wrapping).
      auto times = [](T a, T b) { return hlo::wrapping(a, b, std::multiplies<>{}); };
      T acc = T(1), base = x;
      for (std::int64_t n = y < 0 ? -y : y; n; n >>= 1) {
        if (n & 1) acc = times(acc, base);
        if (n > 1) base = times(base, base);
      }
      if constexpr (std::is_floating_point_v<T>)
        if (y < 0) return T(1) / acc;
      return acc;
    })};
  };
  // As XLA: repeated squaring with multiplies; a negative power divides 1 by the result.
  integer_pow_p.lower = [](hlo::Builder& b, std::span<hlo::Instruction* const> operands,
                           const Params& params, std::span<const ShapedArray> out) {
    std::int64_t y = params.get("y").as_int();
    hlo::Instruction* base = operands[0];
    hlo::Instruction* acc = nullptr;
    for (std::int64_t n = y < 0 ? -y : y; n; n >>= 1) {
      if (n & 1) acc = acc ? b.binary(Opcode::kMultiply, acc, base) : base;
      if (n > 1) base = b.binary(Opcode::kMultiply, base, base);
    }
    hlo::Instruction* one = b.broadcast(b.constant(make_scalar(1, out[0].dtype)), out[0].shape, {});
    if (!acc) return std::vector<hlo::Instruction*>{one};
    if (y < 0) acc = b.binary(Opcode::kDivide, one, acc);
    return std::vector<hlo::Instruction*>{acc};
  };
  // d/dx x^n = n x^(n-1); x^0 is constant.
  integer_pow_p.jvp = [](std::span<const Array> primals, std::span<const Array> tangents,
                         const Params& params) {
    const Array& x = primals[0];
    std::int64_t y = params.get("y").as_int();
    JvpResult r{{lax::integer_pow(x, static_cast<int>(y))}, {Array()}};
    if (y == 0) return r;
    if (y == 1) {
      r.tangents[0] = tangents[0];
      return r;
    }
    // x^(n-1) for n = INT_MIN is past int: x^n / x.
    Array below = y > std::numeric_limits<int>::min() ? lax::integer_pow(x, static_cast<int>(y - 1))
                                                      : r.primals[0] / x;
    r.tangents[0] = tangents[0] * (static_cast<double>(y) * below);
    return r;
  };
  return true;
}();

}  // namespace

namespace lax {

Array neg(const Array& x) { return bind1(neg_p, {x}); }
Array exp(const Array& x) { return bind1(exp_p, {x}); }
Array exp2(const Array& x) { return bind1(exp2_p, {x}); }
Array log(const Array& x) { return bind1(log_p, {x}); }
Array log1p(const Array& x) { return bind1(log1p_p, {x}); }
Array expm1(const Array& x) { return bind1(expm1_p, {x}); }
Array sin(const Array& x) { return bind1(sin_p, {x}); }
Array cos(const Array& x) { return bind1(cos_p, {x}); }
Array tan(const Array& x) { return bind1(tan_p, {x}); }
Array asin(const Array& x) { return bind1(asin_p, {x}); }
Array acos(const Array& x) { return bind1(acos_p, {x}); }
Array atan(const Array& x) { return bind1(atan_p, {x}); }
Array sinh(const Array& x) { return bind1(sinh_p, {x}); }
Array cosh(const Array& x) { return bind1(cosh_p, {x}); }
Array tanh(const Array& x) { return bind1(tanh_p, {x}); }
Array asinh(const Array& x) { return bind1(asinh_p, {x}); }
Array acosh(const Array& x) { return bind1(acosh_p, {x}); }
Array atanh(const Array& x) { return bind1(atanh_p, {x}); }
Array logistic(const Array& x) { return bind1(logistic_p, {x}); }
Array sqrt(const Array& x) { return bind1(sqrt_p, {x}); }
Array rsqrt(const Array& x) { return bind1(rsqrt_p, {x}); }
Array cbrt(const Array& x) { return bind1(cbrt_p, {x}); }
Array abs(const Array& x) { return bind1(abs_p, {x}); }
Array sign(const Array& x) { return bind1(sign_p, {x}); }
Array floor(const Array& x) { return bind1(floor_p, {x}); }
Array ceil(const Array& x) { return bind1(ceil_p, {x}); }
Array round(const Array& x, RoundingMethod method) {
  return bind1(round_p, {x}, {{"rounding_method", Param::integer(static_cast<int>(method))}});
}
Array erf(const Array& x) { return bind1(erf_p, {x}); }
Array is_finite(const Array& x) { return bind1(is_finite_p, {x}); }
Array integer_pow(const Array& x, int y) {
  return bind1(integer_pow_p, {x}, {{"y", Param::integer(y)}});
}
Array bitwise_not(const Array& x) { return bind1(not_p, {x}); }

}  // namespace lax
}  // namespace jx
