// Lowering: a jaxpr becomes an HLO module by calling each equation's primitive lower rule.
#pragma once

#include <memory>
#include <string>

#include "hlo/ir.hpp"
#include "jaxpr/jaxpr.hpp"

namespace jx {

// The entry computation takes the constvars, then the invars, as parameters; it returns the
// single output, or a tuple of several. Literals become HLO constants.
std::unique_ptr<hlo::Module> lower_jaxpr(const Jaxpr& jaxpr, const std::string& module_name);

}  // namespace jx
