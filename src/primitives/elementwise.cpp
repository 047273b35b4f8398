#include "primitives/elementwise.hpp"

#include <numeric>
#include <sstream>

#include "jx/lax.hpp"

namespace jx {

void check_dtype(const std::string& op, DType d, DTypeSet accepted) {
  if (accepted.contains(d)) return;
  std::vector<std::string> kinds;
  if (accepted.contains(bool_)) kinds.push_back("bool");
  if (accepted.contains(int32))
    kinds.push_back("integer");
  else if (accepted.contains(uint32))
    kinds.push_back("unsignedinteger");
  if (accepted.contains(float32)) kinds.push_back("floating");
  std::ostringstream os;
  os << op << " does not accept dtype " << dtype_name(d) << ". Accepted dtypes are subtypes of ";
  for (std::size_t i = 0; i < kinds.size(); ++i) os << (i ? ", " : "") << kinds[i];
  os << ".";
  throw TypeError(os.str());
}

ShapedArray elementwise_aval(const std::string& op, std::span<const ShapedArray> in,
                             DTypeSet accepted, std::optional<DType> out_dtype, bool size_one) {
  const ShapedArray* shaped = &in[0];
  bool weak = true;
  for (const auto& a : in) {
    check_dtype(op, a.dtype, accepted);
    if (a.dtype != in[0].dtype) {
      std::ostringstream os;
      os << op << " requires arguments to have the same dtypes, got ";
      for (std::size_t i = 0; i < in.size(); ++i) os << (i ? ", " : "") << dtype_name(in[i].dtype);
      os << " (jx::np promotes types automatically).";
      throw TypeError(os.str());
    }
    weak = weak && a.weak_type;
    if (a.ndim() > 0) shaped = &a;
  }
  auto fail = [&](const char* what) {
    std::ostringstream os;
    os << op << what;
    for (std::size_t i = 0; i < in.size(); ++i) os << (i ? ", " : "") << shape_str(in[i].shape);
    throw ShapeError(os.str());
  };
  Shape shape = shaped->shape;
  for (const auto& a : in) {
    if (a.ndim() == 0 || a.shape == shape) continue;
    if (!size_one) fail(" got incompatible shapes for broadcasting: ");
    if (a.ndim() != static_cast<int>(shape.size()))
      fail(": arrays must have same number of dimensions, got ");
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (a.shape[d] == shape[d] || a.shape[d] == 1) continue;
      if (shape[d] != 1) fail(" got incompatible shapes for broadcasting: ");
      shape[d] = a.shape[d];
    }
  }
  if (out_dtype) return ShapedArray{shape, *out_dtype, false};
  return ShapedArray{shape, in[0].dtype, weak};
}

std::vector<hlo::Instruction*> broadcast_scalars(hlo::Builder& b,
                                                 std::span<hlo::Instruction* const> operands,
                                                 const Shape& dims) {
  std::vector<hlo::Instruction*> out;
  for (hlo::Instruction* op : operands) {
    if (op->shape.dims == dims) {
      out.push_back(op);
      continue;
    }
    std::vector<std::int64_t> same_dims(op->shape.dims.size());  // 0-d, or the output's rank
    std::iota(same_dims.begin(), same_dims.end(), 0);
    out.push_back(lower_broadcast(b, op, dims, same_dims));
  }
  return out;
}

hlo::Instruction* lower_broadcast(hlo::Builder& b, hlo::Instruction* x, const Shape& shape,
                                  const std::vector<std::int64_t>& dims) {
  Shape kept_shape;
  std::vector<std::int64_t> kept_dims;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    std::int64_t size = x->shape.dims[i];
    if (size == 1 && shape[static_cast<std::size_t>(dims[i])] != 1) continue;
    kept_shape.push_back(size);
    kept_dims.push_back(dims[i]);
  }
  if (kept_shape != x->shape.dims) x = b.reshape(x, kept_shape);
  return b.broadcast(x, shape, kept_dims);
}

Array expand_to(const Array& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  std::vector<std::int64_t> dims(static_cast<std::size_t>(x.ndim()));
  std::iota(dims.begin(), dims.end(), shape.size() - dims.size());
  return lax::broadcast_in_dim(x, shape, dims);
}

void def_elementwise(Primitive& p, std::size_t arity, DTypeSet accepted,
                     std::optional<DType> out_dtype) {
  p.abstract_eval = [&p, arity, accepted, out_dtype](std::span<const ShapedArray> in,
                                                     const Params&) {
    check_arity(p.name, in.size(), arity);
    return std::vector<ShapedArray>{
        elementwise_aval(p.name, in, accepted, out_dtype, /*size_one=*/arity == 2)};
  };
  batching::def_elementwise_batch(p);
}

LowerRule lower_elementwise(hlo::Opcode opcode, std::string direction) {
  return [opcode, direction](hlo::Builder& b, std::span<hlo::Instruction* const> operands,
                             const Params&, std::span<const ShapedArray> out) {
    auto ops = broadcast_scalars(b, operands, out[0].shape);
    if (!direction.empty())
      return std::vector<hlo::Instruction*>{b.compare(ops[0], ops[1], direction)};
    return std::vector<hlo::Instruction*>{
        b.op(opcode, hlo::HloShape::array(out[0].dtype, out[0].shape), std::move(ops))};
  };
}

}  // namespace jx
