// Where user code called a jx function, for --debug_nans's errors. The functions that make NaNs
// or infinities from finite inputs (np::log, np::sqrt, np::divide, ...) take a defaulted
// std::source_location and note it while they run; the outermost note wins, so a jx function
// calling another keeps its caller's location, and one given an empty location (an operator,
// which has no room for one) notes that none is known.
#pragma once

#include <source_location>
#include <string>

namespace jx::detail {

class CallSite {
 public:
  explicit CallSite(const std::source_location& at) noexcept;
  ~CallSite();
  CallSite(const CallSite&) = delete;
  CallSite& operator=(const CallSite&) = delete;

 private:
  bool outermost_;
};

// The location the outermost live CallSite on this thread noted, or null.
const std::source_location* current_call_site() noexcept;
// "file:line", as errors name a location.
std::string source_str(const std::source_location& at);

}  // namespace jx::detail
