// The HLO evaluator: elementwise opcodes through their scalar semantics (scalar_ops.hpp), the
// opcode → function table, and whole-computation evaluation.
#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "core/host_callbacks.hpp"
#include "hlo/evaluator_internal.hpp"
#include "hlo/scalar_ops.hpp"

namespace jx::hlo {
namespace {

using eval::data;
using eval::EvalFn;
using eval::fresh;
using eval::mutable_data;

// ---- elementwise drivers ---------------------------------------------------------------------

// The result's element type is what Op returns for the operand's (bool for is-finite).
template <class Op>
Array unary(const Instruction& inst, std::span<const Array> in) {
  Array out = fresh(inst.shape);
  dispatch(in[0].dtype(), [&]<class T>() {
    using C = compute_t<T>;
    using R = std::conditional_t<std::is_same_v<decltype(Op{}(C{})), bool>, bool, T>;
    const T* x = data<T>(in[0]);
    R* o = mutable_data<R>(out);
    for (std::int64_t i = 0, n = inst.shape.size(); i < n; ++i)
      o[i] = static_cast<R>(Op{}(static_cast<C>(x[i])));
  });
  return out;
}

template <class Op>
Array binary(const Instruction& inst, std::span<const Array> in) {
  Array out = fresh(inst.shape);
  dispatch(inst.shape.dtype, [&]<class T>() {
    using C = compute_t<T>;
    const T *x = data<T>(in[0]), *y = data<T>(in[1]);
    T* o = mutable_data<T>(out);
    for (std::int64_t i = 0, n = inst.shape.size(); i < n; ++i)
      o[i] = static_cast<T>(Op{}(static_cast<C>(x[i]), static_cast<C>(y[i])));
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

// clamp(lo, x, hi): lo and hi may be scalars.
Array clamp(const Instruction& inst, std::span<const Array> in) {
  Array out = fresh(inst.shape);
  std::int64_t s_lo = in[0].ndim() ? 1 : 0, s_hi = in[2].ndim() ? 1 : 0;
  dispatch(inst.shape.dtype, [&]<class T>() {
    const T *lo = data<T>(in[0]), *x = data<T>(in[1]), *hi = data<T>(in[2]);
    T* o = mutable_data<T>(out);
    for (std::int64_t i = 0, n = inst.shape.size(); i < n; ++i)
      o[i] = Scalar<Opcode::kClamp>{}(lo[i * s_lo], x[i], hi[i * s_hi]);
  });
  return out;
}

Array convert(const Instruction& inst, std::span<const Array> in) {
  Array out = fresh(inst.shape);
  dispatch(in[0].dtype(), [&]<class T>() {
    dispatch(inst.shape.dtype, [&]<class O>() {
      const T* x = data<T>(in[0]);
      O* o = mutable_data<O>(out);
      for (std::int64_t i = 0, n = inst.shape.size(); i < n; ++i) o[i] = convert_element<O>(x[i]);
    });
  });
  return out;
}

// Every opcode with scalar semantics (scalar_ops.hpp) evaluates through them.
template <std::size_t... I>
void add_scalar_ops(std::unordered_map<Opcode, EvalFn>& table, std::index_sequence<I...>) {
  auto add = [&]<Opcode op>() {
    if constexpr (kHasUnaryScalar<op>)
      table.emplace(op, unary<Scalar<op>>);
    else if constexpr (kHasBinaryScalar<op>)
      table.emplace(op, binary<Scalar<op>>);
  };
  (add.template operator()<static_cast<Opcode>(I)>(), ...);
}

const std::unordered_map<Opcode, EvalFn>& table() {
  static const std::unordered_map<Opcode, EvalFn> kTable = [] {
    std::unordered_map<Opcode, EvalFn> t{
        {Opcode::kConvert, convert},
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
        {Opcode::kGather, eval::gather_slices},
        {Opcode::kScatter, eval::scatter},
        {Opcode::kReduce, eval::reduce},
        {Opcode::kReverse, eval::reverse},
        {Opcode::kReduceWindow, eval::reduce_window},
        {Opcode::kConvolution, eval::convolution},
        {Opcode::kArgMax, eval::arg_max},
        {Opcode::kArgMin, eval::arg_min},
        {Opcode::kDot, eval::dot},
        {Opcode::kFusion, eval::fusion},
    };
    add_scalar_ops(t, std::make_index_sequence<kNumOpcodes>());
    return t;
  }();
  return kTable;
}

// The elements of a tuple-shaped instruction's value.
std::vector<Array> evaluate_elements(const Instruction& inst, std::span<const Array> operands) {
  switch (inst.opcode) {
    case Opcode::kTuple:
    case Opcode::kOptimizationBarrier:
      return {operands.begin(), operands.end()};
    case Opcode::kSort:
      return eval::sort(inst, operands);
    case Opcode::kHostCallback:
      host_callback(inst.attrs.get_int("callback"))({operands.begin(), operands.end()});
      return {};
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
