// A pass rewrites an HLO module in place and says whether it changed anything (XLA's shape).
#pragma once

#include <functional>
#include <string>

#include "hlo/builder.hpp"
#include "hlo/ir.hpp"

namespace jx::passes {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string name() const = 0;
  // Precondition: the module verifies. Postcondition: it still does; true iff it changed.
  virtual bool run(hlo::Module& module) = 0;
};

// Replaces each instruction of `opcode`, in every computation, by what `rewrite` builds for it
// there (nullptr, or the instruction itself, keeps it), then drops what no root reads any more.
// True iff something was replaced.
bool replace_each(
    hlo::Module& module, hlo::Opcode opcode,
    const std::function<hlo::Instruction*(hlo::Builder&, hlo::Instruction&)>& rewrite);

}  // namespace jx::passes
