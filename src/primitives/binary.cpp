// Binary elementwise primitives: add sub mul div rem pow max min atan2 and or xor shift_left
// shift_right_logical shift_right_arithmetic, and add_any (autodiff's sum of tangents or
// cotangents, an add by another name as in JAX). Each is one HLO opcode (def_binary); its
// derivative and, for the linear ones, its transpose follow it.
#include <functional>

#include "jx/lax.hpp"
#include "jx/numpy.hpp"
#include "primitives/elementwise.hpp"
#include "support/check.hpp"
#include "trace/tracer.hpp"
#include "transforms/ad_rules.hpp"

namespace jx {

Primitive add_p("add"), add_any_p("add_any"), sub_p("sub"), mul_p("mul"), div_p("div"), rem_p("rem"), pow_p("pow"),
    max_p("max"), min_p("min"), atan2_p("atan2"), and_p("and"), or_p("or"), xor_p("xor"),
    shift_left_p("shift_left"), shift_right_logical_p("shift_right_logical"),
    shift_right_arithmetic_p("shift_right_arithmetic");

namespace {

using hlo::Opcode;
using trace::bind1;
using ad::unbroadcast;
using Xs = std::span<const Array>;

Array tangent(const Array& t, Xs, const Array&) { return t; }

// JAX's convention where max/min tie: each side gets half the tangent.
Array balanced_eq(const Array& x, const Array& ans, const Array& y) {
  auto indicator = [&](const Array& a) {
    return lax::convert_element_type(np::equal(a, ans), ans.dtype());
  };
  return indicator(x) / (1.0 + indicator(y));
}

// Transpose rules for ops linear in each operand: `scale(k, ct, other)` is operand k's cotangent
// given the other operand's value (empty when that one is linear too).
TransposeRule transpose_by(
    std::function<Array(std::size_t k, const Array& ct, const Array& other)> scale) {
  return [scale](std::span<const Array> cts, std::span<const LinearOperand> ops, const Params&) {
    std::vector<Array> out(2);
    for (std::size_t k = 0; k < 2; ++k)
      if (ops[k].is_linear()) out[k] = unbroadcast(scale(k, cts[0], ops[1 - k].value), ops[k].aval);
    return out;
  };
}

const bool kRegistered = [] {
  def_binary<Opcode::kAdd>(add_p);
  ad::def_elementwise_jvp(add_p, {tangent, tangent});
  add_p.transpose = transpose_by([](std::size_t, const Array& ct, const Array&) { return ct; });
  def_binary<Opcode::kAdd>(add_any_p);
  ad::def_elementwise_jvp(add_any_p, {tangent, tangent});
  add_any_p.transpose = add_p.transpose;

  def_binary<Opcode::kSubtract>(sub_p);
  ad::def_elementwise_jvp(sub_p,
                          {tangent, [](const Array& t, Xs, const Array&) { return lax::neg(t); }});
  sub_p.transpose = transpose_by(
      [](std::size_t k, const Array& ct, const Array&) { return k == 0 ? ct : lax::neg(ct); });

  def_binary<Opcode::kMultiply>(mul_p);
  ad::def_elementwise_jvp(mul_p,
                          {[](const Array& t, Xs x, const Array&) { return lax::mul(t, x[1]); },
                           [](const Array& t, Xs x, const Array&) { return lax::mul(x[0], t); }});
  mul_p.transpose = transpose_by([](std::size_t k, const Array& ct, const Array& other) {
    JX_CHECK(other.valid(), "mul is linear in one operand at a time");
    return k == 0 ? lax::mul(ct, other) : lax::mul(other, ct);
  });

  def_binary<Opcode::kDivide>(div_p);
  ad::def_elementwise_jvp(div_p,
                          {[](const Array& t, Xs x, const Array&) { return lax::div(t, x[1]); },
                           [](const Array& t, Xs x, const Array& ans) {
                             return lax::div(lax::mul(lax::neg(t), ans), x[1]);
                           }});
  div_p.transpose = transpose_by([](std::size_t k, const Array& ct, const Array& y) {
    JX_CHECK(k == 0 && y.valid(), "div is linear in its numerator only");
    return lax::div(ct, y);
  });

  // x - y * trunc(x / y): the quotient is piecewise constant.
  def_binary<Opcode::kRemainder>(rem_p);
  ad::def_elementwise_jvp(rem_p, {tangent, [](const Array& t, Xs x, const Array&) {
                                    Array q = x[0] / x[1];
                                    return -t * (np::sign(q) * np::floor(np::abs(q)));
                                  }});

  // Floats only, as JAX's pow (the opcode also raises integers). As JAX: d/dx is 0 where
  // y == 0, and d/dy is 0 where x == 0 (log x is not taken there).
  def_binary<Opcode::kPower>(pow_p);
  def_elementwise(pow_p, 2, kFloating);
  ad::def_elementwise_jvp(pow_p, {[](const Array& t, Xs x, const Array&) {
                                    Array d = x[1] * lax::pow(x[0], x[1] - 1.0);
                                    return t * np::where(np::equal(x[1], 0.0), 0.0, d);
                                  },
                                  [](const Array& t, Xs x, const Array& ans) {
                                    Array safe = np::where(np::equal(x[0], 0.0), 1.0, x[0]);
                                    return t * (np::log(safe) * ans);
                                  }});

  def_binary<Opcode::kMaximum>(max_p);
  def_binary<Opcode::kMinimum>(min_p);
  for (Primitive* p : {&max_p, &min_p})
    ad::def_elementwise_jvp(
        *p,
        {[](const Array& t, Xs x, const Array& ans) { return t * balanced_eq(x[0], ans, x[1]); },
         [](const Array& t, Xs x, const Array& ans) { return t * balanced_eq(x[1], ans, x[0]); }});

  def_binary<Opcode::kAtan2>(atan2_p);
  ad::def_elementwise_jvp(atan2_p, {[](const Array& t, Xs x, const Array&) {
                                      return t * (x[1] / (x[0] * x[0] + x[1] * x[1]));
                                    },
                                    [](const Array& t, Xs x, const Array&) {
                                      return t * (-x[0] / (x[0] * x[0] + x[1] * x[1]));
                                    }});

  // Bitwise on integers, logical on bool; shifts on integers. Piecewise constant.
  def_binary<Opcode::kAnd>(and_p);
  def_binary<Opcode::kOr>(or_p);
  def_binary<Opcode::kXor>(xor_p);
  def_binary<Opcode::kShiftLeft>(shift_left_p);
  def_binary<Opcode::kShiftRightLogical>(shift_right_logical_p);
  def_binary<Opcode::kShiftRightArithmetic>(shift_right_arithmetic_p);
  for (Primitive* p : {&and_p, &or_p, &xor_p, &shift_left_p, &shift_right_logical_p,
                       &shift_right_arithmetic_p})
    ad::def_zero_jvp(*p);
  return true;
}();

}  // namespace

namespace lax {

Array add(const Array& x, const Array& y) { return bind1(add_p, {x, y}); }
Array sub(const Array& x, const Array& y) { return bind1(sub_p, {x, y}); }
Array mul(const Array& x, const Array& y) { return bind1(mul_p, {x, y}); }
Array div(const Array& x, const Array& y) { return bind1(div_p, {x, y}); }
Array rem(const Array& x, const Array& y) { return bind1(rem_p, {x, y}); }
Array pow(const Array& x, const Array& y) { return bind1(pow_p, {x, y}); }
Array max(const Array& x, const Array& y) { return bind1(max_p, {x, y}); }
Array min(const Array& x, const Array& y) { return bind1(min_p, {x, y}); }
Array atan2(const Array& x, const Array& y) { return bind1(atan2_p, {x, y}); }
Array bitwise_and(const Array& x, const Array& y) { return bind1(and_p, {x, y}); }
Array bitwise_or(const Array& x, const Array& y) { return bind1(or_p, {x, y}); }
Array bitwise_xor(const Array& x, const Array& y) { return bind1(xor_p, {x, y}); }
Array shift_left(const Array& x, const Array& y) { return bind1(shift_left_p, {x, y}); }
Array shift_right_logical(const Array& x, const Array& y) {
  return bind1(shift_right_logical_p, {x, y});
}
Array shift_right_arithmetic(const Array& x, const Array& y) {
  return bind1(shift_right_arithmetic_p, {x, y});
}

}  // namespace lax
}  // namespace jx
