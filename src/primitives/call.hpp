// The call primitives: jit (a jitted function called under a trace, staged as one equation
// holding its jaxpr) and checkpoint (jax.checkpoint: a function whose reverse mode recomputes).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "jaxpr/jaxpr.hpp"

namespace jx {

// Binds jit[name jaxpr] on `args`. The jaxpr's consts become leading operands, so a value it
// closes over is an explicit input of the equation; a jaxpr without consts is held as it is, so
// calls of one cached jaxpr share it (and print it once).
std::vector<Array> bind_jit(std::shared_ptr<const ClosedJaxprData> j,
                            const std::vector<Array>& args, const std::string& name);
// Binds checkpoint[jaxpr policy prevent_cse differentiated=False] on `args`, as bind_jit binds
// jit; `policy` as the jaxpr prints it (detail::checkpoint_call).
std::vector<Array> bind_checkpoint(std::shared_ptr<const ClosedJaxprData> j,
                                   const std::vector<Array>& args, bool prevent_cse,
                                   const Param& policy);

}  // namespace jx
