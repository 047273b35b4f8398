// Graphviz text of an HLO module's entry computation, written by --dump_dot as <prefix>.dot.
#pragma once

#include <string>

namespace jx::hlo {

class Module;

// `digraph "jit_f" { ... }`: one node per entry instruction, labelled with its name, opcode (and
// the computations it calls) and shape; edges run operand → user, labelled with the operand's
// position when an instruction has several; the root is drawn bold and labelled ROOT.
std::string to_dot(const Module& module);

}  // namespace jx::hlo
