// A pass rewrites an HLO module in place and says whether it changed anything (XLA's shape).
#pragma once

#include <string>

#include "hlo/ir.hpp"

namespace jx::passes {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string name() const = 0;
  // Precondition: the module verifies. Postcondition: it still does; true iff it changed.
  virtual bool run(hlo::Module& module) = 0;
};

}  // namespace jx::passes
