// Small text helpers shared by the printers and error messages.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace jx::detail {

// Python's repr of a float: shortest round-trip digits, "1.0", "1e-05", "inf", "nan".
std::string python_float_repr(double v, bool single_precision);

// "(1, 2)" / "(1,)" / "()" — Python tuple syntax.
template <class T>
std::string tuple_str(const std::vector<T>& xs) {
  std::ostringstream os;
  os << '(';
  for (std::size_t i = 0; i < xs.size(); ++i) os << (i ? ", " : "") << xs[i];
  if (xs.size() == 1) os << ',';
  os << ')';
  return os.str();
}

template <class T>
std::string join(const std::vector<T>& xs, const std::string& sep) {
  std::ostringstream os;
  for (std::size_t i = 0; i < xs.size(); ++i) os << (i ? sep : "") << xs[i];
  return os.str();
}

}  // namespace jx::detail
