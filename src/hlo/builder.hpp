// Builds HLO instructions into one computation; lowering rules use it.
#pragma once

#include <optional>

#include "hlo/ir.hpp"
#include "hlo/window.hpp"

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
  // x's dims in the order `permutation` gives (result dim k is x's dim permutation[k]); x itself
  // for the identity.
  Instruction* transpose(Instruction* x, const std::vector<std::int64_t>& permutation);
  // A reduction whose combiner is one binary opcode (add, multiply, maximum, minimum, and, or).
  Instruction* reduce(Instruction* x, Instruction* init, const std::vector<std::int64_t>& dims,
                      Opcode combiner);
  // A two-parameter scalar computation (XLA's to_apply) returning `combiner` of its
  // parameters, or, without one, its second parameter (a scatter that replaces).
  Computation* combiner(DType dtype, std::optional<Opcode> combiner);
  // A reduce-window (hlo/window.hpp) folding each window with `to_apply`, a computation of two
  // scalars of x's dtype made with module()->add_computation and its own Builder.
  Instruction* reduce_window(Instruction* x, Instruction* init,
                             const std::vector<WindowDim>& window, Computation* to_apply);
  Instruction* tuple(std::vector<Instruction*> elements);
  Instruction* get_tuple_element(Instruction* tuple, int index);
  // Control flow over computations made with module()->add_computation and their own Builder.
  // while: `condition` maps the carry to pred[], `body` to a tuple of the carry; the result is
  // the final carry as a tuple. conditional: `index` (s32[]) picks the branch that runs on
  // `operands`; each branch returns the same tuple, which is the result.
  Instruction* while_loop(std::vector<Instruction*> init, Computation* condition,
                          Computation* body);
  Instruction* conditional(Instruction* index, std::vector<Instruction*> operands,
                           std::vector<Computation*> branches);

 private:
  Computation* c_;
};

}  // namespace jx::hlo
