// Batching (vmap) as a jaxpr-to-jaxpr transform: each equation is rewritten by its primitive's
// batch rule to act on a whole batch at once.
#pragma once

#include <cstdint>
#include <vector>

#include "jaxpr/jaxpr.hpp"

namespace jx {

// Runs `jaxpr` on arguments batched along `in_dims` (nullopt: unbatched), binding each
// equation's batch rule; equations with no batched input run as they are. Returns the outputs
// and their batch axes.
struct BatchedValues {
  std::vector<Array> outs;
  std::vector<BatchDim> dims;
};
BatchedValues vmap_eval(const Jaxpr& jaxpr, const std::vector<Array>& consts,
                        const std::vector<Array>& args, const std::vector<BatchDim>& in_dims);

// The batched jaxpr: its inputs carry a batch axis of `size` at `in_dims` (none where nullopt);
// output i has it at out_dims[i] (an output the same for every element is broadcast), or, where
// out_dims[i] is nullopt, must not depend on the batch.
ClosedJaxprData vmap_jaxpr(const ClosedJaxprData& j, const std::vector<BatchDim>& in_dims,
                           std::int64_t size, const std::vector<BatchDim>& out_dims);

}  // namespace jx
