// Programs of a chosen size that the compile benchmarks share.
#pragma once

#include <string>

#include <jx/jx.hpp>

namespace bench {

// An elementwise chain of n lax equations on x (sin, mul, add, repeated): exactly n eqns,
// since lax ops take equal shapes and insert no broadcasts or converts.
inline jx::Array chain(const jx::Array& x, int n) {
  jx::Array y = x;
  for (int i = 0; i < n; ++i) {
    if (i % 3 == 0)
      y = jx::lax::sin(y);
    else if (i % 3 == 1)
      y = jx::lax::mul(y, x);
    else
      y = jx::lax::add(y, x);
  }
  return y;
}

// Equations in a jaxpr's text: each binds its outputs with " = " (params print as k=v).
inline int count_eqns(const std::string& jaxpr) {
  int n = 0;
  for (std::size_t p = jaxpr.find(" = "); p != std::string::npos; p = jaxpr.find(" = ", p + 3)) ++n;
  return n;
}

}  // namespace bench
