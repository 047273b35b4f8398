// Host functions that programs call (jx::debug::callback, jx::debug::print): a process-wide
// table, so that a jaxpr equation and an HLO instruction name one by a number.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "jx/array.hpp"

namespace jx {

using HostCallback = std::function<void(const std::vector<Array>&)>;

// Keeps fn for the process's life (programs compiled with it may run at any later time); its
// number.
std::int64_t register_host_callback(HostCallback fn);
// The function registered under `id`; jx::Error when there is none.
const HostCallback& host_callback(std::int64_t id);
// How many functions are registered: one per trace of a call site, none for eager calls.
std::int64_t host_callback_count();

}  // namespace jx
