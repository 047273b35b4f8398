// Lowering: a jaxpr becomes an HLO module by calling each equation's primitive lower rule.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hlo/builder.hpp"
#include "hlo/ir.hpp"
#include "jaxpr/jaxpr.hpp"

namespace jx {

// The entry computation takes the constvars, then the invars, as parameters; it returns the
// single output, or a tuple of several. Literals become HLO constants. Given the constvars'
// values (`consts`), those whose elements are all equal (the zeros of `where(x > 0, x, 0)`)
// are a broadcast scalar constant instead of their parameter, which stays unread: kernels then
// compute with an immediate instead of reading an array.
std::unique_ptr<hlo::Module> lower_jaxpr(const Jaxpr& jaxpr, const std::string& module_name,
                                         std::span<const Array> consts = {});

// Lowers a jaxpr inline into the computation `b` builds: its constvars then invars are bound to
// `args`; returns its outputs. Primitives holding sub-jaxprs lower them with this.
std::vector<hlo::Instruction*> lower_jaxpr_inline(hlo::Builder& b, const Jaxpr& jaxpr,
                                                  std::span<hlo::Instruction* const> args);

// Lowers a closed jaxpr into a new computation of `module` (the body of a loop or a branch):
// its invars become parameters and its consts constants; the root is the tuple of its outputs,
// or, with `tuple_root` false, its single output.
hlo::Computation* lower_jaxpr_computation(hlo::Module& module, const ClosedJaxprData& jaxpr,
                                          const std::string& name, bool tuple_root = true);

}  // namespace jx
