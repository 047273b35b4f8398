// Looking at values inside transformed and compiled functions, as jax.debug does:
// jx::debug::callback calls a C++ function with the concrete values of its arguments wherever
// the program runs, and jx::debug::print formats them.
//
// Both stage one effectful equation (debug_callback) instead of running at trace time, so they
// work inside jit, grad, vmap, scan and cond, and run when the program runs: at once eagerly, on
// every call of a jitted function, in the forward pass only under grad (the backward pass has
// none), and once per example under vmap. They keep their order with each other and
// with the computation they read. On a GPU the values are copied to the host first.
#pragma once

#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "jx/transforms.hpp"

namespace jx::debug {
namespace detail {

using HostFn = std::function<void(const std::vector<Array>&)>;
// Binds debug_callback on `leaves`: fn runs with their values (src/primitives/debug_callback.cpp).
void debug_callback(HostFn fn, const std::vector<Array>& leaves);
// `fmt` with each {} (in turn) or {k} (argument k) replaced by NumPy's str() of the value, and
// {{ and }} by braces: Python's str.format as jax.debug.print uses it. jx::IndexError for a
// missing argument, jx::ValueError for a malformed field.
std::string format(const std::string& fmt, const std::vector<Array>& values);
// format's errors for `count` values, without formatting any.
void check_format(const std::string& fmt, std::size_t count);
// Writes a line and a newline to stdout, flushed (print's output).
void print_line(const std::string& line);

}  // namespace detail

// Calls fn(args...) with the arguments' concrete values when the program runs (see above).
// Arguments are pytrees of Arrays, as jx::jit takes them; fn's result is ignored.
template <class F, class... Args>
void callback(F fn, const Args&... args) {
  std::vector<std::size_t> begins;
  std::vector<Array> leaves = jx::detail::flatten_args(begins, args...);
  // The arguments' structure only: the function must not keep the tracers it was staged with.
  std::vector<Array> blanks(leaves.size());
  std::size_t at = 0;
  std::tuple<tree::rebuilt_t<Args>...> structure{tree::rebuild(args, blanks, at)...};
  detail::debug_callback(
      [fn = std::move(fn), structure](const std::vector<Array>& xs) {
        std::apply([&](const auto&... s) { jx::detail::call_rebuilt(fn, xs, s...); }, structure);
      },
      leaves);
}

// Prints `fmt` formatted with the arguments' values (detail::format) and a newline to stdout
// when the program runs, as jax.debug.print: print("x = {}", x) prints "x = [2.  5.5]".
template <class... Args>
void print(const std::string& fmt, const Args&... args) {
  std::vector<Array> values{Array(args)...};
  detail::check_format(fmt, values.size());  // fails now, not when the program runs
  detail::debug_callback(
      [fmt](const std::vector<Array>& xs) { detail::print_line(detail::format(fmt, xs)); }, values);
}

}  // namespace jx::debug
