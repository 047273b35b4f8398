// error_of<E>(f): the message of the E that f throws, for exact-message assertions.
#pragma once

#include <functional>
#include <string>
#include <typeinfo>

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

// The message of the exception f throws, provided its dynamic type is exactly E (not a
// subclass): for jx::Error itself, which error_of<Error> would also match in a TypeError.
template <class E>
std::string exact_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    if (typeid(e) != typeid(E))
      return std::string("<wrong type ") + typeid(e).name() + ">: " + e.what();
    return e.what();
  }
  return "<no exception>";
}

}  // namespace jx::testing
