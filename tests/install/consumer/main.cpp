// Uses the installed jx: arrays, a lax op, and make_jaxpr (templates from the public headers).
#include <iostream>

#include <jx/jx.hpp>

namespace np = jx::np;

int main() {
  jx::Array x = np::array({1.f, 2.f, 3.f});
  jx::Array y = jx::lax::neg(x);
  std::cout << y << "\n";
  std::cout << jx::make_jaxpr([](const jx::Array& a) { return jx::lax::neg(a); })(x) << "\n";
  return y.to_vector<float>() == std::vector<float>{-1.f, -2.f, -3.f} ? 0 : 1;
}
