// Restores jx::config() when a test ends, whatever the test changed in it.
#pragma once

#include <jx/config.hpp>

namespace jx::testing {

struct ConfigGuard {
  Config saved = config();
  ~ConfigGuard() { config() = saved; }
};

}  // namespace jx::testing
