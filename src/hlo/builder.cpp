#include "hlo/builder.hpp"

#include <algorithm>

#include "support/check.hpp"

namespace jx::hlo {

Instruction* Builder::parameter(std::int64_t number, HloShape shape, std::string_view name) {
  auto inst = std::make_unique<Instruction>(Instruction{Opcode::kParameter, std::move(shape)});
  inst->parameter_number = number;
  return c_->add(std::move(inst), name.empty() ? "Arg_" + std::to_string(number) : name);
}

Instruction* Builder::constant(const Array& literal) {
  auto inst = std::make_unique<Instruction>(
      Instruction{Opcode::kConstant, HloShape::array(literal.dtype(), literal.shape())});
  inst->literal = literal;
  return c_->add(std::move(inst));
}

Instruction* Builder::op(Opcode opcode, HloShape shape, std::vector<Instruction*> operands,
                         Attrs attrs, std::vector<Computation*> called) {
  int arity = info(opcode).arity;
  JX_CHECK(arity < 0 || arity == static_cast<int>(operands.size()),
           info(opcode).name << " takes " << arity << " operands");
  auto inst = std::make_unique<Instruction>(Instruction{
      opcode, std::move(shape), std::move(operands), std::move(attrs), std::move(called)});
  return c_->add(std::move(inst));
}

Instruction* Builder::unary(Opcode opcode, Instruction* x) { return op(opcode, x->shape, {x}); }

Instruction* Builder::binary(Opcode opcode, Instruction* x, Instruction* y) {
  return op(opcode, x->shape, {x, y});
}

Instruction* Builder::compare(Instruction* x, Instruction* y, std::string_view direction) {
  Attrs attrs;
  attrs.set("direction", std::string(direction));
  return op(Opcode::kCompare, HloShape::array(bool_, x->shape.dims), {x, y}, std::move(attrs));
}

Instruction* Builder::convert(Instruction* x, DType dtype) {
  if (x->shape.dtype == dtype) return x;
  return op(Opcode::kConvert, HloShape::array(dtype, x->shape.dims), {x});
}

Instruction* Builder::broadcast(Instruction* x, const Shape& dims,
                                const std::vector<std::int64_t>& broadcast_dimensions) {
  Attrs attrs;
  attrs.set("dimensions", broadcast_dimensions);
  return op(Opcode::kBroadcast, HloShape::array(x->shape.dtype, dims), {x}, std::move(attrs));
}

Instruction* Builder::reshape(Instruction* x, const Shape& dims) {
  if (x->shape.dims == dims) return x;
  return op(Opcode::kReshape, HloShape::array(x->shape.dtype, dims), {x});
}

Instruction* Builder::transpose(Instruction* x, const std::vector<std::int64_t>& permutation) {
  Shape dims;
  bool identity = true;
  for (std::size_t k = 0; k < permutation.size(); ++k) {
    dims.push_back(x->shape.dims[static_cast<std::size_t>(permutation[k])]);
    identity = identity && permutation[k] == static_cast<std::int64_t>(k);
  }
  if (identity) return x;
  Attrs a;
  a.set("dimensions", permutation);
  return op(Opcode::kTranspose, HloShape::array(x->shape.dtype, std::move(dims)), {x},
            std::move(a));
}

Instruction* Builder::reduce(Instruction* x, Instruction* init,
                             const std::vector<std::int64_t>& dims, Opcode combiner) {
  Shape out;
  for (int d = 0; d < x->shape.rank(); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) out.push_back(x->shape.dims[d]);
  Attrs attrs;
  attrs.set("dimensions", dims);
  return op(Opcode::kReduce, HloShape::array(x->shape.dtype, out), {x, init}, std::move(attrs),
            {this->combiner(x->shape.dtype, combiner)});
}

Computation* Builder::combiner(DType dtype, std::optional<Opcode> combiner) {
  Computation* region = c_->module()->add_computation("region");
  Builder rb(region);
  HloShape scalar = HloShape::array(dtype, {});
  Instruction* a = rb.parameter(0, scalar);
  Instruction* b = rb.parameter(1, scalar);
  region->set_root(combiner ? rb.binary(*combiner, a, b) : b);
  return region;
}

Instruction* Builder::reduce_window(Instruction* x, Instruction* init,
                                    const std::vector<WindowDim>& window, Computation* to_apply) {
  Attrs attrs;
  attrs.set("window", window_attr(window));
  return op(Opcode::kReduceWindow,
            HloShape::array(x->shape.dtype, window_output_dims(x->shape.dims, window)), {x, init},
            std::move(attrs), {to_apply});
}

Instruction* Builder::tuple(std::vector<Instruction*> elements) {
  std::vector<HloShape> shapes;
  for (auto* e : elements) shapes.push_back(e->shape);
  return op(Opcode::kTuple, HloShape::tuple(std::move(shapes)), std::move(elements));
}

Instruction* Builder::get_tuple_element(Instruction* tuple, int index) {
  JX_CHECK(tuple->shape.is_tuple && index >= 0 &&
               index < static_cast<int>(tuple->shape.tuple_shapes.size()),
           "get_tuple_element(" << index << ") of " << tuple->shape.str());
  Attrs attrs;
  attrs.set("index", std::int64_t{index});
  return op(Opcode::kGetTupleElement, tuple->shape.tuple_shapes[static_cast<std::size_t>(index)],
            {tuple}, std::move(attrs));
}

Instruction* Builder::while_loop(std::vector<Instruction*> init, Computation* condition,
                                 Computation* body) {
  std::vector<HloShape> carry;
  for (const Instruction* x : init) carry.push_back(x->shape);
  return op(Opcode::kWhile, HloShape::tuple(std::move(carry)), std::move(init), {},
            {condition, body});
}

Instruction* Builder::conditional(Instruction* index, std::vector<Instruction*> operands,
                                  std::vector<Computation*> branches) {
  JX_CHECK(!branches.empty() && branches[0]->root(), "conditional needs built branches");
  HloShape result = branches[0]->root()->shape;
  operands.insert(operands.begin(), index);
  return op(Opcode::kConditional, std::move(result), std::move(operands), {}, std::move(branches));
}

}  // namespace jx::hlo
