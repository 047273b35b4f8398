// The first steps with jx: arrays, NumPy-style math, and the jaxpr a function traces to.
#include <iostream>

#include <jx/jx.hpp>

namespace lax = jx::lax;

int main() {
  jx::Array x = lax::iota(jx::float32, {3});
  std::cout << "x = " << x << "\n";
  std::cout << "sin(x) = " << lax::sin(x) << "\n";
  auto f = [](const jx::Array& a) { return lax::sin(lax::exp(a)); };
  std::cout << jx::make_jaxpr(f)(x) << "\n";
}
