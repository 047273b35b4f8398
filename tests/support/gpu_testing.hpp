// For tests that need a real GPU: without one they print a line that ctest reads as "skipped"
// (cmake/discover_catch_tests.cmake sets SKIP_REGULAR_EXPRESSION) and return.
#pragma once

#include <iostream>

#include "runtime/cuda/driver.hpp"

#define JX_REQUIRE_GPU()                                                             \
  do {                                                                               \
    if (::jx::runtime::cuda::device_count() == 0) {                                  \
      std::cout << "JX_SKIPPED: no GPU (the CUDA driver found no device)" << std::endl; \
      return;                                                                        \
    }                                                                                \
  } while (false)
