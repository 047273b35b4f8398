// Helpers for HLO and pass tests: literals from C++ values, error messages of a call, and one
// pass run on HLO text (the module verifies before and after).
#pragma once

#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "core/array_impl.hpp"
#include "hlo/ir.hpp"
#include "support/error_of.hpp"

namespace jx::hlo::testing {

// A concrete array of `dims` holding `values` (row-major).
template <class T>
Array literal(const std::vector<T>& values, Shape dims = {}) {
  if (dims.empty() && values.size() != 1) dims = {static_cast<std::int64_t>(values.size())};
  Array a = make_array(ShapedArray{dims, dtype_of<T>(), false});
  if constexpr (std::is_same_v<T, bool>) {
    for (std::size_t k = 0; k < values.size(); ++k)
      a.impl()->buffer->template as<bool>()[k] = values[k];
  } else if (!values.empty()) {  // memcpy from an empty vector's null data() is UB
    std::memcpy(a.impl()->buffer->data(), values.data(), values.size() * sizeof(T));
  }
  return a;
}

using jx::testing::error_of;

inline HloShape f32(Shape dims) { return HloShape::array(float32, std::move(dims)); }

// Prints, parses, prints again: the same text; both modules verify.
inline void check_round_trip(const Module& m) {
  verify(m);
  std::string text = to_string(m);
  INFO(text);
  auto parsed = parse_module(text);
  verify(*parsed);
  CHECK(to_string(*parsed) == text);
}

// The messages of parsing and of verifying (a parsed module, unverified, or one built).
inline std::string parse_error(std::string_view text) {
  return error_of<CompileError>([&] { parse_module(text); });
}
inline std::string verify_error(const Module& m) {
  return error_of<CompileError>([&] { verify(m); });
}
inline std::string verify_error(std::string_view text) { return verify_error(*parse_module(text)); }

// Parses `text`, verifies, runs pass P, verifies again: {changed, printed result}.
template <class P, class... Args>
std::pair<bool, std::string> run_pass(std::string_view text, Args&&... args) {
  auto module = parse_module(text);
  verify(*module);
  P pass(std::forward<Args>(args)...);
  bool changed = pass.run(*module);
  verify(*module);
  return {changed, to_string(*module)};
}

}  // namespace jx::hlo::testing
