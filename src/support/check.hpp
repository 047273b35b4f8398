// JX_CHECK: internal invariants. A failed check is a bug in jx, reported as jx::Error, not abort.
#pragma once

#include <sstream>
#include <string>

#include "jx/errors.hpp"

namespace jx::detail {

[[noreturn]] void check_failed(const char* cond, const char* file, int line, const std::string& msg);

}  // namespace jx::detail

#define JX_CHECK(cond, ...)                                                           \
  do {                                                                                \
    if (!(cond)) [[unlikely]] {                                                       \
      std::ostringstream jx_check_msg_;                                               \
      jx_check_msg_ << "" __VA_OPT__(<<) __VA_ARGS__;                                 \
      ::jx::detail::check_failed(#cond, __FILE__, __LINE__, jx_check_msg_.str());     \
    }                                                                                 \
  } while (0)
