// A primitive is data: a name plus its rule table. Family files fill the rules.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/params.hpp"
#include "jx/array.hpp"

namespace jx {

namespace hlo {
struct Instruction;
class Builder;
}  // namespace hlo

// The shape/dtype rule; it is also the type checker, so it throws on ill-typed input.
using AbstractEvalRule =
    std::function<std::vector<ShapedArray>(std::span<const ShapedArray>, const Params&)>;
// The eager reference semantics on concrete arrays; `out` holds what abstract_eval returned.
using ImplRule = std::function<std::vector<Array>(std::span<const Array>, const Params&,
                                                  std::span<const ShapedArray> out)>;

// Lowering to HLO: the instructions computing the outputs, built from the operands' instructions.
using LowerRule = std::function<std::vector<hlo::Instruction*>(
    hlo::Builder&, std::span<hlo::Instruction* const> operands, const Params&,
    std::span<const ShapedArray> out)>;

// Forward mode. Tangents parallel the operands, and an empty Array is a symbolic zero: no work is
// done for it. Returns the primal outputs and their tangents (empty where zero). Rules are written
// with public ops, so a jvp rule is itself traceable: that is what makes grad of grad work.
struct JvpResult {
  std::vector<Array> primals, tangents;
};
using JvpRule = std::function<JvpResult(std::span<const Array> primals,
                                        std::span<const Array> tangents, const Params&)>;

// An operand of a linear equation in reverse mode: a known value, or, when `value` is empty, a
// linear input whose cotangent is wanted (JAX's UndefinedPrimal).
struct LinearOperand {
  Array value;
  ShapedArray aval;
  bool is_linear() const { return !value.valid(); }
};
// Reverse mode of a primitive linear in some operands: the output cotangents (an empty Array is
// zero; at least one is not) → one cotangent per operand, empty for known operands and zeros.
using TransposeRule = std::function<std::vector<Array>(
    std::span<const Array> cts, std::span<const LinearOperand> operands, const Params&)>;

// Batching (vmap). dims[k] is the axis of operand k along which the batch runs, or nullopt when
// operand k is the same for every batch element. Returns the outputs, each with its batch axis
// (nullopt: the same for every element). Rules are written with public ops, like jvp rules.
using BatchDim = std::optional<int>;
struct BatchResult {
  std::vector<Array> outs;
  std::vector<BatchDim> dims;
};
using BatchRule = std::function<BatchResult(std::span<const Array> args,
                                            std::span<const BatchDim> dims, const Params&)>;

// Partial evaluation of one equation whose inputs are partly unknown, for primitives holding
// sub-jaxprs (without a rule, the whole equation waits for its unknown inputs, primal part and
// all). The known equations compute the known outputs and any residuals; the unknown ones read
// those and the unknown inputs and compute the rest. Defined on Eqn in jaxpr/jaxpr.hpp.
struct Eqn;
struct PartialEvalSplit;
using PartialEvalRule =
    std::function<PartialEvalSplit(const Eqn& eqn, const std::vector<bool>& unknown_inputs)>;

// How the jaxpr text shows an equation's params where it is not all of them, `name` first and
// the rest in name order (JAX's pp rules): `shown` gives those printed; `read` rebuilds every
// param from those parsed and the equation's output types.
struct ParamsText {
  std::function<Params(const Params&)> shown;
  std::function<Params(Params parsed, std::span<const ShapedArray> outs)> read;
  // The `jaxpr` param is called on the operands: its binders print with the equation's names
  // where they can (JAX's jit rule).
  bool call_names = false;
};

struct Primitive {
  explicit Primitive(std::string name);  // registers the primitive by name
  Primitive(const Primitive&) = delete;
  Primitive& operator=(const Primitive&) = delete;

  std::string name;
  AbstractEvalRule abstract_eval;
  ImplRule impl;
  JvpRule jvp;  // absent: not differentiable ("Differentiation rule ... not implemented")
  TransposeRule transpose;  // set for primitives linear in some operands
  BatchRule batch;          // absent: vmap reports "Batching rule for ... not implemented"
  PartialEvalRule partial_eval;  // absent: an equation with an unknown input is all unknown
  LowerRule lower;
  // Applied under a trace to concrete 0-d inputs only, it runs at once and its result is a
  // literal, not an equation (JAX constant-folds convert_element_type of scalars so).
  bool folds_scalar_constants = false;
  // Its equations run for their effect (a host callback): dead-code elimination keeps them
  // though nothing reads their outputs.
  bool effectful = false;
  ParamsText text;  // absent: the text shows every param

  // abstract_eval, then a check that every output can exist: jx::ValueError "array is too big"
  // when its bytes overflow int64. Every bind, eager or staged, goes through this.
  std::vector<ShapedArray> output_avals(std::span<const ShapedArray> in,
                                        const Params& params) const;
};

// The registry: every primitive constructed so far, by name (the jaxpr parser uses it).
const Primitive* find_primitive(std::string_view name);
std::vector<const Primitive*> all_primitives();

}  // namespace jx
