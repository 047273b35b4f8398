// Static cost of an HLO module, as XLA's HloCostAnalysis counts it, and its memory footprint.
#pragma once

#include <cstdint>

#include "hlo/ir.hpp"

namespace jx::hlo {

struct HloCost {
  double flops = 0, transcendentals = 0, bytes_accessed = 0;
};

// Over the entry computation (a called computation is costed by its caller's rule):
// elementwise ops 1 flop per output element, or 1 transcendental (exp, log, sin, tanh, sqrt,
// power, ...); reduce and argmax/argmin 1 flop per input element; dot 2·batch·m·n·k. Bytes: the
// operands plus the output of every instruction but parameters, constants and tuple plumbing.
// A while's condition and body, and each branch of a conditional, count once.
HloCost cost_analysis(const Module& module);

struct HloMemory {
  std::int64_t argument_bytes = 0, output_bytes = 0;
};

// The entry's parameters and its root (a tuple counts its elements).
HloMemory memory_analysis(const Module& module);

}  // namespace jx::hlo
