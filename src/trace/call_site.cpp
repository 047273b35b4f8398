#include "jx/detail/call_site.hpp"

namespace jx::detail {
namespace {

thread_local bool t_noted = false;                        // an outermost CallSite is alive
thread_local const std::source_location* t_site = nullptr;  // its location, if it knew one

}  // namespace

// The location lives in the caller's full expression, which outlives this function's run. A
// default-constructed one (line 0) is no location, but still the outermost note.
CallSite::CallSite(const std::source_location& at) noexcept : outermost_(!t_noted) {
  if (!outermost_) return;
  t_noted = true;
  t_site = at.line() != 0 ? &at : nullptr;
}

CallSite::~CallSite() {
  if (!outermost_) return;
  t_noted = false;
  t_site = nullptr;
}

const std::source_location* current_call_site() noexcept { return t_site; }

std::string source_str(const std::source_location& at) {
  return std::string(at.file_name()) + ":" + std::to_string(at.line());
}

}  // namespace jx::detail
