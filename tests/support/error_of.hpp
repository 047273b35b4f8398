// error_of<E>(f): the message of the E that f throws, for exact-message assertions.
#pragma once

#include <functional>
#include <string>

namespace jx::testing {

// "<no exception>" when f returns normally; exceptions of other types propagate.
template <class E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "<no exception>";
}

}  // namespace jx::testing
