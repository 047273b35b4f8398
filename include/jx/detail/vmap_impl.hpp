// What jx::vmap calls into: the flat function over leaves (src/api/vmap.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "jx/array.hpp"

namespace jx::detail {

// f mapped over the batch: leaf i carries its batch axis at in_axes[i] (negative counts from
// the end; nullopt: not batched), and output j gets it at out_axes()[j] (nullopt: an output
// that must not depend on the batch); out_axes is called once f has been traced.
// `arg_of_leaf` names each leaf's argument in messages.
std::vector<Array> vmap_flat(const std::function<std::vector<Array>(const std::vector<Array>&)>& f,
                             const std::vector<Array>& leaves,
                             const std::vector<std::optional<int>>& in_axes,
                             const std::vector<int>& arg_of_leaf,
                             const std::function<std::vector<std::optional<int>>()>& out_axes);

}  // namespace jx::detail
