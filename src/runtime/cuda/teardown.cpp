#include "runtime/cuda/teardown.hpp"

#include <cstdio>

#include "jx/config.hpp"

namespace jx::runtime::cuda {

void log_teardown_error(const std::string& message) noexcept {
  try {
    detail::log_message("jx: " + message);
  } catch (...) {
    // No configuration (a bad JX_FLAGS) or a sink that throws: stderr still works.
    std::fprintf(stderr, "jx: %s\n", message.c_str());
  }
}

}  // namespace jx::runtime::cuda
