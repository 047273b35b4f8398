// Family helpers for elementwise primitives: dtype sets, the shape/dtype rule, and the eager
// loops that apply a scalar function to every element.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "core/primitive.hpp"
#include "hlo/builder.hpp"
#include "primitives/batch_rules.hpp"

namespace jx {

class DTypeSet {
 public:
  constexpr DTypeSet(std::initializer_list<DType> ds) {
    for (DType d : ds) bits_ |= 1u << static_cast<unsigned>(d);
  }
  constexpr bool contains(DType d) const { return bits_ & (1u << static_cast<unsigned>(d)); }
  constexpr DTypeSet operator|(DTypeSet o) const {
    DTypeSet s{};
    s.bits_ = bits_ | o.bits_;
    return s;
  }

 private:
  unsigned bits_ = 0;
};

inline constexpr DTypeSet kFloating{float32, float64};
inline constexpr DTypeSet kInteger{int32, int64, uint32};
inline constexpr DTypeSet kBool{bool_};
inline constexpr DTypeSet kNumeric = kInteger | kFloating;
inline constexpr DTypeSet kAnyDType = kNumeric | kBool;

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
// where 0-d operands broadcast; weak only if every operand is weak. `out_dtype` overrides the
// result dtype (comparisons give bool).
ShapedArray elementwise_aval(const std::string& op, std::span<const ShapedArray> in,
                             DTypeSet accepted, std::optional<DType> out_dtype = std::nullopt);

// out[i] = f(x[i]) with f called on x's C++ element type; the result is cast to out's dtype.
template <class F>
Array map_unary(const Array& x, const ShapedArray& out, F f) {
  Array r = make_array(out);
  const Buffer& xb = concrete_buffer(x, "impl");
  dispatch(x.dtype(), [&]<class T>() {
    dispatch(out.dtype, [&]<class O>() {
      const T* a = xb.as<T>();
      O* o = r.impl()->buffer->as<O>();
      for (std::int64_t i = 0, n = out.size(); i < n; ++i) o[i] = static_cast<O>(f(a[i]));
    });
  });
  return r;
}

// out[i] = f(x[i], y[i]); a 0-d operand is repeated. f gets both operands as x's element type.
template <class F>
Array map_binary(const Array& x, const Array& y, const ShapedArray& out, F f) {
  Array r = make_array(out);
  const Buffer& xb = concrete_buffer(x, "impl");
  const Buffer& yb = concrete_buffer(y, "impl");
  std::int64_t sx = x.ndim() == 0 ? 0 : 1, sy = y.ndim() == 0 ? 0 : 1;
  dispatch(x.dtype(), [&]<class T>() {
    dispatch(out.dtype, [&]<class O>() {
      const T* a = xb.as<T>();
      const T* b = yb.as<T>();
      O* o = r.impl()->buffer->as<O>();
      for (std::int64_t i = 0, n = out.size(); i < n; ++i)
        o[i] = static_cast<O>(f(a[i * sx], b[i * sy]));
    });
  });
  return r;
}

// HLO's elementwise ops want equal shapes: 0-d operands are broadcast to the output's shape.
std::vector<hlo::Instruction*> broadcast_scalars(hlo::Builder& b,
                                                 std::span<hlo::Instruction* const> operands,
                                                 const Shape& dims);
// The lowering of an elementwise primitive to one HLO opcode (with `direction` for compare).
LowerRule lower_elementwise(hlo::Opcode opcode, std::string direction = {});

// Fills a unary primitive's rules: `accepted` dtypes, same aval out, impl = map_unary(f),
// lowering to `opcode`, the elementwise batch rule.
template <class F>
void def_unary(Primitive& p, hlo::Opcode opcode, DTypeSet accepted, F f) {
  p.abstract_eval = [&p, accepted](std::span<const ShapedArray> in, const Params&) {
    check_arity(p.name, in.size(), 1);
    return std::vector<ShapedArray>{elementwise_aval(p.name, in, accepted)};
  };
  p.impl = [f](std::span<const Array> in, const Params&, std::span<const ShapedArray> out) {
    return std::vector<Array>{map_unary(in[0], out[0], f)};
  };
  p.lower = lower_elementwise(opcode);
  batching::def_elementwise_batch(p);
}

// Fills a binary primitive's rules, lowering to `opcode`, the elementwise batch rule;
// comparisons pass `direction`, and their out_dtype is bool.
template <class F>
void def_binary(Primitive& p, hlo::Opcode opcode, DTypeSet accepted, F f,
                std::string direction = {}) {
  std::optional<DType> out_dtype;
  if (!direction.empty()) out_dtype = bool_;
  p.abstract_eval = [&p, accepted, out_dtype](std::span<const ShapedArray> in, const Params&) {
    check_arity(p.name, in.size(), 2);
    return std::vector<ShapedArray>{elementwise_aval(p.name, in, accepted, out_dtype)};
  };
  p.impl = [f](std::span<const Array> in, const Params&, std::span<const ShapedArray> out) {
    return std::vector<Array>{map_binary(in[0], in[1], out[0], f)};
  };
  p.lower = lower_elementwise(opcode, std::move(direction));
  batching::def_elementwise_batch(p);
}

}  // namespace jx
