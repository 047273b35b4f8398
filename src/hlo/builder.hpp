// Builds HLO instructions into one computation; lowering rules use it.
#pragma once

#include "hlo/ir.hpp"

namespace jx::hlo {

class Builder {
 public:
  explicit Builder(Computation* computation) : c_(computation) {}
  Computation* computation() const { return c_; }

  Instruction* parameter(std::int64_t number, HloShape shape, std::string_view name = {});
  Instruction* constant(const Array& literal);  // a concrete array
  Instruction* op(Opcode opcode, HloShape shape, std::vector<Instruction*> operands,
                  Attrs attrs = {}, std::vector<Computation*> called = {});

  // Elementwise ops keep the first operand's shape (operands must agree).
  Instruction* unary(Opcode opcode, Instruction* x);
  Instruction* binary(Opcode opcode, Instruction* x, Instruction* y);
  Instruction* compare(Instruction* x, Instruction* y, std::string_view direction);  // "LT", ...
  Instruction* convert(Instruction* x, DType dtype);
  Instruction* broadcast(Instruction* x, const Shape& dims,
                         const std::vector<std::int64_t>& broadcast_dimensions);
  Instruction* reshape(Instruction* x, const Shape& dims);
  // A reduction whose combiner is one binary opcode (add, multiply, maximum, minimum, and, or).
  Instruction* reduce(Instruction* x, Instruction* init, const std::vector<std::int64_t>& dims,
                      Opcode combiner);
  Instruction* tuple(std::vector<Instruction*> elements);

 private:
  Computation* c_;
};

}  // namespace jx::hlo
