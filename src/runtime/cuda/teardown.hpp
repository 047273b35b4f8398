// Releasing CUDA resources never throws: a failure while tearing down is logged here, and the
// owner remembers it for its next call (GpuContext's sticky error).
#pragma once

#include <string>

namespace jx::runtime::cuda {

// Writes "jx: <message>" to config().log (stderr by default). Never throws.
void log_teardown_error(const std::string& message) noexcept;

}  // namespace jx::runtime::cuda
