// The workspaces of kernel calls (KernelThunk): a matrix kernel's packed panels and block of
// lhs, kept here rather than on the caller's stack. Released workspaces are kept for the next
// run, so a kernel called in a loop finds its workspace's pages mapped and cached, as a stack's
// would be.
#pragma once

#include <cstddef>
#include <memory>

#include "core/buffer.hpp"

namespace jx::runtime {

// A workspace of at least `bytes`: the smallest released one that large (the most recently
// released of those), or a new one.
std::unique_ptr<Buffer> take_workspace(std::size_t bytes);

// Keeps `workspace` for a later take_workspace, the least recently released ones freed to keep
// what is held under 64 MiB.
// Never throws.
void release_workspace(std::unique_ptr<Buffer> workspace) noexcept;

}  // namespace jx::runtime
