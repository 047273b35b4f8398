// The jaxpr IR: typed variables, equations in A-normal form, closed jaxprs with their consts.
#pragma once

#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "core/params.hpp"
#include "core/primitive.hpp"
#include "jx/array.hpp"

namespace jx {

// A variable's identity is its node; names are given only when printing.
struct VarNode {
  ShapedArray aval;
  bool dropped = false;  // printed `_`: an output nobody reads
};
using Var = std::shared_ptr<VarNode>;
Var new_var(ShapedArray aval);

// An equation input: a variable or a literal (a concrete 0-d array).
struct Atom {
  Var var;
  Array literal;
  Atom() = default;
  Atom(Var v) : var(std::move(v)) {}            // NOLINT
  Atom(Array lit) : literal(std::move(lit)) {}  // NOLINT
  bool is_literal() const { return var == nullptr; }
  const ShapedArray& aval() const { return var ? var->aval : literal.aval(); }
};

struct Eqn {
  const Primitive* prim = nullptr;
  std::vector<Atom> inputs;
  Params params;
  std::vector<Var> outvars;
  // The user's call that staged it, where a jx function noted one (detail/call_site.hpp); line
  // 0 where none did.
  std::source_location source{};
};

struct PartialEvalSplit {
  std::vector<Eqn> known, unknown;
  std::vector<bool> out_unknowns;  // one per outvar of the equation split
};

struct Jaxpr {
  std::vector<Var> constvars;
  std::vector<Var> invars;
  std::vector<Eqn> eqns;
  std::vector<Atom> outvars;

  std::vector<ShapedArray> in_avals() const;
  std::vector<ShapedArray> out_avals() const;
};

// A jaxpr with values for its constvars (concrete arrays, or tracers of an enclosing trace).
struct ClosedJaxprData {
  Jaxpr jaxpr;
  std::vector<Array> consts;
};

// Closure conversion: the constvars become the leading invars and their values move to `consts`,
// so a primitive holding the jaxpr in its params takes them as operands (they may be tracers).
ClosedJaxprData convert_constvars(ClosedJaxprData j, std::vector<Array>& consts);

// JAX's text format; one line when it fits in 80 columns.
std::string to_string(const Jaxpr& jaxpr);
// Reads the text format back; throws jx::CompileError with the line and column on bad input.
Jaxpr read_jaxpr(std::string_view text);
// Checks every equation against its primitive's abstract_eval; throws jx::TypeError.
void typecheck(const Jaxpr& jaxpr);
// typecheck in debug builds: every transform checks the jaxpr it returns.
inline const ClosedJaxprData& debug_typecheck(const ClosedJaxprData& j) {
#ifndef NDEBUG
  typecheck(j.jaxpr);
#endif
  return j;
}
// Runs the jaxpr by binding each equation: eager on concrete inputs, staged under a trace.
std::vector<Array> eval_jaxpr(const Jaxpr& jaxpr, const std::vector<Array>& consts,
                              const std::vector<Array>& args);
// eval_jaxpr for --debug_nans: a FloatingPointError of an equation's primitive gains that
// equation, as the jaxpr prints it, and the call that staged it where one was noted.
std::vector<Array> eval_jaxpr_naming_equations(const Jaxpr& jaxpr, const std::vector<Array>& consts,
                                               const std::vector<Array>& args);

}  // namespace jx
