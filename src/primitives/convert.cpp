// convert_element_type: casts between dtypes, and toggles the weak-type flag.
#include "jx/lax.hpp"
#include "transforms/ad_rules.hpp"
#include "primitives/elementwise.hpp"
#include "trace/tracer.hpp"

namespace jx {

Primitive convert_element_type_p("convert_element_type");

namespace {

const bool kRegistered = [] {
  auto& p = convert_element_type_p;
  p.folds_scalar_constants = true;
  p.abstract_eval = [](std::span<const ShapedArray> in, const Params& params) {
    check_arity("convert_element_type", in.size(), 1);
    return std::vector<ShapedArray>{
        {in[0].shape, params.get("new_dtype").as_dtype(), params.get("weak_type").as_bool()}};
  };
  // XLA's conversions (core/element_convert.hpp): float → int saturates, NaN → 0.
  p.impl = [](std::span<const Array> in, const Params&, std::span<const ShapedArray> out) {
    Array r = make_array(out[0]);
    const Buffer& xb = concrete_buffer(in[0], "impl");
    dispatch(in[0].dtype(), [&]<class T>() {
      dispatch(out[0].dtype, [&]<class O>() {
        const T* x = xb.as<T>();
        O* o = r.impl()->buffer->as<O>();
        for (std::int64_t i = 0, n = out[0].size(); i < n; ++i) o[i] = convert_element<O>(x[i]);
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
  if (x.impl() && x.impl()->literal)  // a C++ double: one rounding from its exact value
    return with_aval(make_scalar(*x.impl()->literal, new_dtype), {{}, new_dtype, weak_type});
  return trace::bind1(
      convert_element_type_p, {x},
      {{"new_dtype", Param::dtype(new_dtype)}, {"weak_type", Param::boolean(weak_type)}});
}

}  // namespace lax
}  // namespace jx
