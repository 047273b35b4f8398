// Family helpers for elementwise primitives: the shape/dtype rule, the eager loops that apply a
// scalar function to every element, and the rules of a primitive that is one HLO opcode.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "core/dtype_set.hpp"
#include "core/element_convert.hpp"
#include "core/primitive.hpp"
#include "hlo/builder.hpp"
#include "hlo/scalar_ops.hpp"
#include "transforms/batch_rules.hpp"

namespace jx {

// A parsed jaxpr may apply a primitive to any number of operands; rules reject a wrong count
// before indexing: jx::TypeError "add takes 2 operands, got 1".
inline void check_arity(const std::string& op, std::size_t got, std::size_t want) {
  if (got != want)
    throw TypeError(op + " takes " + std::to_string(want) + " operand" + (want == 1 ? "" : "s") +
                    ", got " + std::to_string(got));
}

// Throws jx::TypeError "sin does not accept dtype int32. Accepted dtypes are ...".
void check_dtype(const std::string& op, DType d, DTypeSet accepted);

// The rule of an n-ary elementwise op: equal dtypes (checked against `accepted`), equal shapes
// where 0-d operands broadcast, and with `size_one` (JAX's binary ops) equal ranks where size-1
// dims broadcast too; weak only if every operand is weak. `out_dtype` overrides the result dtype
// (comparisons give bool).
ShapedArray elementwise_aval(const std::string& op, std::span<const ShapedArray> in,
                             DTypeSet accepted, std::optional<DType> out_dtype = std::nullopt,
                             bool size_one = false);

// x with its 0-d or size-1 dims repeated to `shape` (eagerly, for impls).
Array expand_to(const Array& x, const Shape& shape);

// out[i] = f(x[i]) with f called on x's compute type (float for the 16-bit floats); the result
// is rounded once to out's dtype.
template <class F>
Array map_unary(const Array& x, const ShapedArray& out, F f) {
  Array r = make_array(out);
  const Buffer& xb = concrete_buffer(x, "impl");
  dispatch(x.dtype(), [&]<class T>() {
    dispatch(out.dtype, [&]<class O>() {
      using C = compute_t<T>;
      const T* a = xb.as<T>();
      O* o = r.impl()->buffer->as<O>();
      for (std::int64_t i = 0, n = out.size(); i < n; ++i)
        o[i] = static_cast<O>(f(static_cast<C>(a[i])));
    });
  });
  return r;
}

// out[i] = f(x[i], y[i]); a 0-d operand or size-1 dim is repeated. f gets both operands as x's
// compute type.
template <class F>
Array map_binary(const Array& x_in, const Array& y_in, const ShapedArray& out, F f) {
  Array x = x_in.ndim() == 0 ? x_in : expand_to(x_in, out.shape);
  Array y = y_in.ndim() == 0 ? y_in : expand_to(y_in, out.shape);
  Array r = make_array(out);
  const Buffer& xb = concrete_buffer(x, "impl");
  const Buffer& yb = concrete_buffer(y, "impl");
  std::int64_t sx = x.ndim() == 0 ? 0 : 1, sy = y.ndim() == 0 ? 0 : 1;
  dispatch(x.dtype(), [&]<class T>() {
    dispatch(out.dtype, [&]<class O>() {
      using C = compute_t<T>;
      const T* a = xb.as<T>();
      const T* b = yb.as<T>();
      O* o = r.impl()->buffer->as<O>();
      for (std::int64_t i = 0, n = out.size(); i < n; ++i)
        o[i] = static_cast<O>(f(static_cast<C>(a[i * sx]), static_cast<C>(b[i * sy])));
    });
  });
  return r;
}

// An HLO broadcast of x to `shape`, x's dim i going to dims[i]. HLO's broadcast maps operand dims
// to equal-sized output dims, so x's size-1 dims that expand are reshaped away first.
hlo::Instruction* lower_broadcast(hlo::Builder& b, hlo::Instruction* x, const Shape& shape,
                                  const std::vector<std::int64_t>& dims);

// HLO's elementwise ops want equal shapes: 0-d operands and size-1 dims are broadcast to the
// output's shape.
std::vector<hlo::Instruction*> broadcast_scalars(hlo::Builder& b,
                                                 std::span<hlo::Instruction* const> operands,
                                                 const Shape& dims);
// The lowering of an elementwise primitive to one HLO opcode (with `direction` for compare).
LowerRule lower_elementwise(hlo::Opcode opcode, std::string direction = {});

// The rules every elementwise primitive of `arity` operands shares: the shape and dtype rule
// (elementwise_aval over `accepted`) and the elementwise batch rule.
void def_elementwise(Primitive& p, std::size_t arity, DTypeSet accepted,
                     std::optional<DType> out_dtype = std::nullopt);

// A unary primitive that is HLO opcode `op` on one array: its dtypes are the opcode's
// (opcodes.def), its impl the opcode's scalar semantics (hlo/scalar_ops.hpp), its lowering the
// opcode itself. `out_dtype`: the result's dtype when it is not the operand's (is_finite: bool).
template <hlo::Opcode op>
void def_unary(Primitive& p, std::optional<DType> out_dtype = std::nullopt) {
  def_elementwise(p, 1, hlo::info(op).dtypes, out_dtype);
  p.impl = [](std::span<const Array> in, const Params&, std::span<const ShapedArray> out) {
    return std::vector<Array>{map_unary(in[0], out[0], hlo::Scalar<op>{})};
  };
  p.lower = lower_elementwise(op);
}

// A binary primitive that is HLO opcode `op`, as def_unary.
template <hlo::Opcode op>
void def_binary(Primitive& p) {
  def_elementwise(p, 2, hlo::info(op).dtypes);
  p.impl = [](std::span<const Array> in, const Params&, std::span<const ShapedArray> out) {
    return std::vector<Array>{map_binary(in[0], in[1], out[0], hlo::Scalar<op>{})};
  };
  p.lower = lower_elementwise(op);
}

}  // namespace jx
