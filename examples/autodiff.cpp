// Autodiff: grad and value_and_grad are jaxpr-to-jaxpr transforms, so they compose with jit.
// Fits y = x·w_true by gradient descent and prints the loss as it falls.
#include <cmath>
#include <iostream>

#include <jx/jx.hpp>

namespace np = jx::np;

int main() {
  // 1. grad of a scalar function: d/dx sin(x) = cos(x).
  auto dsin = jx::grad([](const jx::Array& x) { return np::sin(x); });
  std::cout << "grad(sin)(0.5) = " << dsin(jx::Array(0.5f)) << " (cos 0.5 = " << std::cos(0.5f)
            << ")\n";

  // 2. The gradient program, in JAX's format: the forward equations it needs, then the backward.
  auto loss = [](const jx::Array& w, const jx::Array& x, const jx::Array& y) {
    jx::Array err = np::matmul(x, w) - y;
    return np::mean(err * err);
  };
  jx::Array t = np::linspace(-1, 1, 64);
  jx::Array x = np::stack({np::sin(3.0f * t), np::cos(2.0f * t), t}, 1);  // 64 samples, 3 features
  jx::Array w_true = np::array({0.5f, -2.0f, 1.0f});
  jx::Array y = np::matmul(x, w_true);
  jx::Array w = np::zeros({3});
  std::cout << "\nmake_jaxpr(grad(loss)):\n" << jx::make_jaxpr(jx::grad(loss))(w, x, y) << "\n";

  // 3. A training loop: one compiled program computes the loss and its gradient.
  auto step = jx::jit(jx::value_and_grad(loss), {.name = "step"});
  for (int i = 0; i <= 200; ++i) {
    auto [value, dw] = step(w, x, y);
    if (i % 50 == 0) std::cout << "step " << i << ": loss " << value.item<float>() << "\n";
    w = w - 0.5f * dw;
  }
  std::cout << "w = " << w << " (true " << w_true << ")\n";
  return np::max(np::abs(w - w_true)).item<float>() < 1e-2f ? 0 : 1;
}
