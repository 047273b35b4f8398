// The HLO evaluator's elementwise opcodes (one functor each, applied per dtype), the opcode →
// function table, and whole-computation evaluation.
#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>
#include <unordered_map>

#include "hlo/evaluator_internal.hpp"
#include "support/shifts.hpp"

namespace jx::hlo {
namespace {

using eval::data;
using eval::EvalFn;
using eval::fresh;
using eval::mutable_data;

template <class T>
constexpr bool kInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
// Float-only functions run on integers too (the verifier rejects those programs), in double.
template <class T>
using Wide = std::conditional_t<std::is_floating_point_v<T>, T, double>;

// Integer arithmetic wraps, as XLA's does: it runs in the unsigned type of the same width.
template <class T, class Op>
T wrapping(T x, T y, Op op) {
  if constexpr (kInt<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(op(static_cast<U>(x), static_cast<U>(y)));
  } else {
    return static_cast<T>(op(x, y));
  }
}

// ---- unary functors --------------------------------------------------------------------------

#define JX_FLOAT_FN(Name, expr)    \
  struct Name {                    \
    template <class T>             \
    T operator()(T x) const {      \
      using W = Wide<T>;           \
      W v = static_cast<W>(x);     \
      return static_cast<T>(expr); \
    }                              \
  };
JX_FLOAT_FN(Exp, std::exp(v))
JX_FLOAT_FN(Log, std::log(v))
JX_FLOAT_FN(Log1p, std::log1p(v))
JX_FLOAT_FN(Expm1, std::expm1(v))
JX_FLOAT_FN(Sin, std::sin(v))
JX_FLOAT_FN(Cos, std::cos(v))
JX_FLOAT_FN(Tan, std::tan(v))
JX_FLOAT_FN(Tanh, std::tanh(v))
JX_FLOAT_FN(Logistic, W(1) / (W(1) + std::exp(-v)))
JX_FLOAT_FN(Sqrt, std::sqrt(v))
JX_FLOAT_FN(Rsqrt, W(1) / std::sqrt(v))
JX_FLOAT_FN(Floor, std::floor(v))
JX_FLOAT_FN(Ceil, std::ceil(v))
JX_FLOAT_FN(RoundAfz, std::round(v))
JX_FLOAT_FN(RoundEven, v - std::remainder(v, W(1)))
JX_FLOAT_FN(Erf, std::erf(v))
#undef JX_FLOAT_FN

struct Negate {
  template <class T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>)
      return x;
    else
      return wrapping(T(0), x, std::minus<>{});
  }
};
struct Abs {
  template <class T>
  T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>)
      return x;
    else
      return x < T(0) ? Negate{}(x) : x;
  }
};
struct Sign {
  template <class T>
  T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x)) return x;
    return static_cast<T>((T(0) < x) - (x < T(0)));
  }
};
struct Not {
  template <class T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>)
      return !x;
    else if constexpr (kInt<T>)
      return static_cast<T>(~x);
    else
      return x;
  }
};

// ---- binary functors -------------------------------------------------------------------------

struct Add {
  template <class T>
  T operator()(T x, T y) const {
    return wrapping(x, y, std::plus<>{});
  }
};
struct Subtract {
  template <class T>
  T operator()(T x, T y) const {
    return wrapping(x, y, std::minus<>{});
  }
};
struct Multiply {
  template <class T>
  T operator()(T x, T y) const {
    return wrapping(x, y, std::multiplies<>{});
  }
};
struct Divide {  // integers: toward zero, x / 0 = -1, INT_MIN / -1 = INT_MIN
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (kInt<T>) {
      if (y == 0) return static_cast<T>(-1);
      if constexpr (std::is_signed_v<T>)
        if (x == std::numeric_limits<T>::min() && y == T(-1)) return x;
    }
    if constexpr (std::is_same_v<T, bool>)
      return x;
    else
      return static_cast<T>(x / y);
  }
};
struct Remainder {  // the dividend's sign; integers: x % 0 = x, INT_MIN % -1 = 0
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::fmod(x, y);
    } else if constexpr (kInt<T>) {
      if (y == 0) return x;
      if constexpr (std::is_signed_v<T>)
        if (y == T(-1)) return T(0);
      return static_cast<T>(x % y);
    } else {
      return x;
    }
  }
};
struct Power {
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::pow(x, y);
    } else if constexpr (std::is_same_v<T, bool>) {
      return y ? x : true;
    } else {
      if constexpr (std::is_signed_v<T>)
        if (y < 0) return x == 1 ? T(1) : x == -1 ? T(y % 2 ? -1 : 1) : T(0);
      T acc = 1;
      for (T base = x; y; y = static_cast<T>(y >> 1), base = Multiply{}(base, base))
        if (y & 1) acc = Multiply{}(acc, base);
      return acc;
    }
  }
};
struct Maximum {  // NaN propagates
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x) || std::isnan(y)) return std::isnan(x) ? x : y;
    return x > y ? x : y;
  }
};
struct Minimum {
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x) || std::isnan(y)) return std::isnan(x) ? x : y;
    return x < y ? x : y;
  }
};
struct Atan2 {
  template <class T>
  T operator()(T x, T y) const {
    return static_cast<T>(std::atan2(static_cast<Wide<T>>(x), static_cast<Wide<T>>(y)));
  }
};
struct And {
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>)
      return x;
    else
      return static_cast<T>(x & y);
  }
};
struct Or {
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>)
      return x;
    else
      return static_cast<T>(x | y);
  }
};
struct Xor {
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>)
      return x;
    else
      return static_cast<T>(x ^ y);
  }
};
// `op` on integers; the verifier rejects other dtypes before evaluation.
template <auto op>
struct IntegerOnly {
  template <class T>
  T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      return op(x, y);
    else
      return x;
  }
};
using ShiftLeft = IntegerOnly<[](auto x, auto y) { return shift_left(x, y); }>;
using ShiftRightLogical = IntegerOnly<[](auto x, auto y) { return shift_right_logical(x, y); }>;
using ShiftRightArithmetic =
    IntegerOnly<[](auto x, auto y) { return shift_right_arithmetic(x, y); }>;

// ---- elementwise drivers ---------------------------------------------------------------------

template <class Op>
Array unary(const Instruction& inst, std::span<const Array> in) {
  Array out = fresh(inst.shape);
  dispatch(inst.shape.dtype, [&]<class T>() {
    const T* x = data<T>(in[0]);
    T* o = mutable_data<T>(out);
    for (std::int64_t i = 0, n = inst.shape.size(); i < n; ++i) o[i] = Op{}(x[i]);
  });
  return out;
}

template <class Op>
Array binary(const Instruction& inst, std::span<const Array> in) {
  Array out = fresh(inst.shape);
  dispatch(inst.shape.dtype, [&]<class T>() {
    const T *x = data<T>(in[0]), *y = data<T>(in[1]);
    T* o = mutable_data<T>(out);
    for (std::int64_t i = 0, n = inst.shape.size(); i < n; ++i) o[i] = Op{}(x[i], y[i]);
  });
  return out;
}

template <class Cmp>
Array compare_with(const Instruction& inst, std::span<const Array> in) {
  Array out = fresh(inst.shape);
  dispatch(in[0].dtype(), [&]<class T>() {
    const T *x = data<T>(in[0]), *y = data<T>(in[1]);
    bool* o = mutable_data<bool>(out);
    for (std::int64_t i = 0, n = inst.shape.size(); i < n; ++i) o[i] = Cmp{}(x[i], y[i]);
  });
  return out;
}

// NaN compares unequal to everything and unordered, as IEEE and XLA say: the C++ operators.
Array compare(const Instruction& inst, std::span<const Array> in) {
  static const std::unordered_map<std::string, EvalFn> kByDirection{
      {"EQ", compare_with<std::equal_to<>>}, {"NE", compare_with<std::not_equal_to<>>},
      {"LT", compare_with<std::less<>>},     {"LE", compare_with<std::less_equal<>>},
      {"GT", compare_with<std::greater<>>},  {"GE", compare_with<std::greater_equal<>>}};
  auto it = kByDirection.find(inst.attrs.get_string("direction"));
  if (it == kByDirection.end()) throw CompileError("HLO evaluator: bad compare direction");
  return it->second(inst, in);
}

Array select(const Instruction& inst, std::span<const Array> in) {
  Array out = fresh(inst.shape);
  dispatch(inst.shape.dtype, [&]<class T>() {
    const bool* p = data<bool>(in[0]);
    const T *a = data<T>(in[1]), *b = data<T>(in[2]);
    T* o = mutable_data<T>(out);
    for (std::int64_t i = 0, n = inst.shape.size(); i < n; ++i) o[i] = p[i] ? a[i] : b[i];
  });
  return out;
}

// clamp(lo, x, hi) = min(max(x, lo), hi); lo and hi may be scalars; NaN anywhere gives NaN.
Array clamp(const Instruction& inst, std::span<const Array> in) {
  Array out = fresh(inst.shape);
  std::int64_t s_lo = in[0].ndim() ? 1 : 0, s_hi = in[2].ndim() ? 1 : 0;
  dispatch(inst.shape.dtype, [&]<class T>() {
    const T *lo = data<T>(in[0]), *x = data<T>(in[1]), *hi = data<T>(in[2]);
    T* o = mutable_data<T>(out);
    for (std::int64_t i = 0, n = inst.shape.size(); i < n; ++i) {
      T v = x[i], a = lo[i * s_lo], b = hi[i * s_hi];
      if constexpr (std::is_floating_point_v<T>)
        if (std::isnan(v) || std::isnan(a) || std::isnan(b)) {
          o[i] = std::numeric_limits<T>::quiet_NaN();
          continue;
        }
      v = v < a ? a : v;
      o[i] = v > b ? b : v;
    }
  });
  return out;
}

// XLA's conversions: float → int saturates and maps NaN to 0; f64 → f32 overflow gives ±inf.
template <class O, class T>
O convert_one(T x) {
  if constexpr (std::is_same_v<O, bool>) {
    return x != T(0);
  } else if constexpr (std::is_floating_point_v<T> && kInt<O>) {
    if (std::isnan(x)) return O(0);
    using L = std::numeric_limits<O>;
    if (x <= static_cast<T>(L::lowest())) return L::lowest();
    if (x >= static_cast<T>(L::max())) return L::max();
    return static_cast<O>(x);
  } else if constexpr (std::is_same_v<O, float> && std::is_same_v<T, double>) {
    // Past FLT_MAX plus half an ulp the cast is undefined in C++; IEEE rounds to infinity.
    constexpr double kLimit = std::numeric_limits<float>::max() + 0x1p103;
    constexpr float kInf = std::numeric_limits<float>::infinity();
    if (std::isfinite(x) && std::abs(x) >= kLimit) return x > 0 ? kInf : -kInf;
    return static_cast<O>(x);
  } else {
    return static_cast<O>(x);
  }
}

Array convert(const Instruction& inst, std::span<const Array> in) {
  Array out = fresh(inst.shape);
  dispatch(in[0].dtype(), [&]<class T>() {
    dispatch(inst.shape.dtype, [&]<class O>() {
      const T* x = data<T>(in[0]);
      O* o = mutable_data<O>(out);
      for (std::int64_t i = 0, n = inst.shape.size(); i < n; ++i) o[i] = convert_one<O>(x[i]);
    });
  });
  return out;
}

const std::unordered_map<Opcode, EvalFn>& table() {
  static const std::unordered_map<Opcode, EvalFn> kTable{
      {Opcode::kNegate, unary<Negate>},
      {Opcode::kExp, unary<Exp>},
      {Opcode::kLog, unary<Log>},
      {Opcode::kLog1p, unary<Log1p>},
      {Opcode::kExpm1, unary<Expm1>},
      {Opcode::kSin, unary<Sin>},
      {Opcode::kCos, unary<Cos>},
      {Opcode::kTan, unary<Tan>},
      {Opcode::kTanh, unary<Tanh>},
      {Opcode::kLogistic, unary<Logistic>},
      {Opcode::kSqrt, unary<Sqrt>},
      {Opcode::kRsqrt, unary<Rsqrt>},
      {Opcode::kAbs, unary<Abs>},
      {Opcode::kSign, unary<Sign>},
      {Opcode::kFloor, unary<Floor>},
      {Opcode::kCeil, unary<Ceil>},
      {Opcode::kRoundAfz, unary<RoundAfz>},
      {Opcode::kRoundEven, unary<RoundEven>},
      {Opcode::kErf, unary<Erf>},
      {Opcode::kNot, unary<Not>},
      {Opcode::kConvert, convert},
      {Opcode::kAdd, binary<Add>},
      {Opcode::kSubtract, binary<Subtract>},
      {Opcode::kMultiply, binary<Multiply>},
      {Opcode::kDivide, binary<Divide>},
      {Opcode::kRemainder, binary<Remainder>},
      {Opcode::kPower, binary<Power>},
      {Opcode::kMaximum, binary<Maximum>},
      {Opcode::kMinimum, binary<Minimum>},
      {Opcode::kAtan2, binary<Atan2>},
      {Opcode::kAnd, binary<And>},
      {Opcode::kOr, binary<Or>},
      {Opcode::kXor, binary<Xor>},
      {Opcode::kShiftLeft, binary<ShiftLeft>},
      {Opcode::kShiftRightLogical, binary<ShiftRightLogical>},
      {Opcode::kShiftRightArithmetic, binary<ShiftRightArithmetic>},
      {Opcode::kCompare, compare},
      {Opcode::kSelect, select},
      {Opcode::kClamp, clamp},
      {Opcode::kIota, eval::iota},
      {Opcode::kBroadcast, eval::broadcast},
      {Opcode::kReshape, eval::reshape},
      {Opcode::kTranspose, eval::transpose},
      {Opcode::kSlice, eval::slice},
      {Opcode::kDynamicSlice, eval::dynamic_slice},
      {Opcode::kDynamicUpdateSlice, eval::dynamic_update_slice},
      {Opcode::kConcatenate, eval::concatenate},
      {Opcode::kPad, eval::pad},
      {Opcode::kReduce, eval::reduce},
      {Opcode::kArgMax, eval::arg_max},
      {Opcode::kArgMin, eval::arg_min},
      {Opcode::kDot, eval::dot},
      {Opcode::kFusion, eval::fusion},
  };
  return kTable;
}

// The elements of a tuple-shaped instruction's value.
std::vector<Array> evaluate_elements(const Instruction& inst, std::span<const Array> operands) {
  switch (inst.opcode) {
    case Opcode::kTuple:
      return {operands.begin(), operands.end()};
    case Opcode::kSort:
      return eval::sort(inst, operands);
    case Opcode::kWhile:
      return eval::while_loop(inst, operands);
    case Opcode::kConditional:
      return eval::conditional(inst, operands);
    default:
      throw CompileError("HLO evaluator: cannot evaluate %" + inst.name + " (" +
                         std::string(info(inst.opcode).name) + ")");
  }
}

}  // namespace

bool can_evaluate(const Instruction& inst) {
  return !inst.shape.is_tuple && table().count(inst.opcode);
}

Array evaluate(const Instruction& inst, std::span<const Array> operands) {
  if (!can_evaluate(inst))
    throw CompileError("HLO evaluator: cannot evaluate %" + inst.name + " (" +
                       std::string(info(inst.opcode).name) + ")");
  if (operands.size() != inst.operands.size())
    throw CompileError("HLO evaluator: %" + inst.name + " needs " +
                       std::to_string(inst.operands.size()) + " operand values");
  for (std::size_t k = 0; k < operands.size(); ++k)
    if (operands[k].dtype() != inst.operands[k]->shape.dtype ||
        operands[k].shape() != inst.operands[k]->shape.dims)
      throw CompileError("HLO evaluator: operand " + std::to_string(k) + " of %" + inst.name +
                         " must be " + inst.operands[k]->shape.str());
  return table().at(inst.opcode)(inst, operands);
}

std::vector<Array> evaluate_outputs(const Computation& computation, std::span<const Array> args) {
  std::unordered_map<const Instruction*, Array> values;
  std::unordered_map<const Instruction*, std::vector<Array>> tuples;  // their elements
  for (const Instruction* inst : computation.instructions()) {
    const Instruction* tuple = inst->operands.empty() ? nullptr : inst->operands[0];
    if (inst->opcode == Opcode::kParameter) {
      auto n = static_cast<std::size_t>(inst->parameter_number);
      if (n >= args.size() || args[n].dtype() != inst->shape.dtype ||
          args[n].shape() != inst->shape.dims)
        throw CompileError("HLO evaluator: argument " + std::to_string(n) + " of %" +
                           computation.name() + " must be " + inst->shape.str());
      values.emplace(inst, args[n]);
    } else if (inst->opcode == Opcode::kConstant) {
      values.emplace(inst, *inst->literal);
    } else if (inst->opcode == Opcode::kGetTupleElement && tuples.count(tuple)) {
      values.emplace(inst,
                     tuples.at(tuple).at(static_cast<std::size_t>(inst->attrs.get_int("index"))));
    } else {
      std::vector<Array> operands;
      for (const Instruction* op : inst->operands) operands.push_back(values.at(op));
      if (inst->shape.is_tuple)
        tuples.emplace(inst, evaluate_elements(*inst, operands));
      else
        values.emplace(inst, evaluate(*inst, operands));
    }
  }
  const Instruction* root = computation.root();
  if (root->shape.is_tuple) return tuples.at(root);
  return {values.at(root)};
}

Array evaluate(const Computation& computation, std::span<const Array> args) {
  if (computation.root()->shape.is_tuple)
    throw CompileError("HLO evaluator: %" + computation.name() + " returns a tuple");
  return evaluate_outputs(computation, args).at(0);
}

}  // namespace jx::hlo
