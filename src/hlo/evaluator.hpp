// A small HLO evaluator on concrete jx::Arrays: constant folding's engine, and a reference for
// tests that check a pass keeps a computation's values.
#pragma once

#include <span>
#include <vector>

#include "hlo/ir.hpp"

namespace jx::hlo {

// Whether evaluate() handles this instruction: its opcode is supported and its result an array.
bool can_evaluate(const Instruction& inst);

// The value of `inst` given its operands' values (concrete arrays of the operands' shapes).
// Semantics are XLA's (and jx's eager impls'): integers wrap, x / 0 = -1 and x % 0 = x for
// integers, max/min propagate NaN, float → int conversion saturates with NaN → 0, dynamic
// slice starts are clamped into range. Throws jx::CompileError when unsupported.
Array evaluate(const Instruction& inst, std::span<const Array> operands);

// Runs a computation on concrete arguments, instruction by instruction: the root's arrays (one
// per element of a tuple root). While loops run until their condition is false.
std::vector<Array> evaluate_outputs(const Computation& computation, std::span<const Array> args);
// The same for a computation with an array root.
Array evaluate(const Computation& computation, std::span<const Array> args);

}  // namespace jx::hlo
