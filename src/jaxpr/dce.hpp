// Dead-code elimination on jaxprs: equations none of whose outputs are read are removed, but for
// effectful ones (host callbacks).
#pragma once

#include <vector>

#include "jaxpr/jaxpr.hpp"

namespace jx {

// Keeps the outputs marked in `used_outputs` (all when empty) and the equations they need.
// Returns which invars the result still reads; with `prune_invars` the unread ones are dropped.
// Unread constvars are always dropped, with their consts.
struct DceResult {
  ClosedJaxprData jaxpr;
  std::vector<bool> used_inputs;
};
DceResult dce_jaxpr(const ClosedJaxprData& j, std::vector<bool> used_outputs = {},
                    bool prune_invars = false);

}  // namespace jx
