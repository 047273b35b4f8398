// convert_element_type: casts between dtypes, and toggles the weak-type flag.
#include <cmath>
#include <limits>

#include "jx/lax.hpp"
#include "primitives/ad_rules.hpp"
#include "primitives/elementwise.hpp"
#include "trace/tracer.hpp"

namespace jx {

Primitive convert_element_type_p("convert_element_type");

namespace {

// Float → integer conversion of NaN and out-of-range values is undefined in C++; XLA maps NaN
// to 0 and saturates, and so do we.
template <class O, class T>
O convert(T x) {
  if constexpr (std::is_same_v<O, bool>) {
    return x != T(0);
  } else if constexpr (std::is_floating_point_v<T> && std::is_integral_v<O>) {
    if (std::isnan(x)) return O(0);
    if (x <= static_cast<T>(std::numeric_limits<O>::lowest()))
      return std::numeric_limits<O>::lowest();
    if (x >= static_cast<T>(std::numeric_limits<O>::max())) return std::numeric_limits<O>::max();
    return static_cast<O>(x);
  } else {
    return static_cast<O>(x);
  }
}

const bool kRegistered = [] {
  auto& p = convert_element_type_p;
  p.abstract_eval = [](std::span<const ShapedArray> in, const Params& params) {
    check_arity("convert_element_type", in.size(), 1);
    return std::vector<ShapedArray>{
        {in[0].shape, params.get("new_dtype").as_dtype(), params.get("weak_type").as_bool()}};
  };
  p.impl = [](std::span<const Array> in, const Params&, std::span<const ShapedArray> out) {
    Array r = make_array(out[0]);
    const Buffer& xb = concrete_buffer(in[0], "impl");
    dispatch(in[0].dtype(), [&]<class T>() {
      dispatch(out[0].dtype, [&]<class O>() {
        const T* x = xb.as<T>();
        O* o = r.impl()->buffer->as<O>();
        for (std::int64_t i = 0, n = out[0].size(); i < n; ++i) o[i] = convert<O>(x[i]);
      });
    });
    return std::vector<Array>{r};
  };
  p.lower = [](hlo::Builder& b, std::span<hlo::Instruction* const> operands, const Params&,
               std::span<const ShapedArray> out) {
    return std::vector<hlo::Instruction*>{b.convert(operands[0], out[0].dtype)};
  };
  batching::def_elementwise_batch(p);
  // Linear between floating types; a conversion to or from integers has no tangent.
  ad::def_linear(p);
  p.transpose = [](std::span<const Array> cts, std::span<const LinearOperand> ops, const Params&) {
    return std::vector<Array>{
        lax::convert_element_type(cts[0], ops[0].aval.dtype, ops[0].aval.weak_type)};
  };
  return true;
}();

}  // namespace

namespace lax {

Array convert_element_type(const Array& x, DType new_dtype, bool weak_type) {
  return trace::bind1(
      convert_element_type_p, {x},
      {{"new_dtype", Param::dtype(new_dtype)}, {"weak_type", Param::boolean(weak_type)}});
}

}  // namespace lax
}  // namespace jx
