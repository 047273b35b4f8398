// Quickstart: jx is JAX for C++: NumPy-style arrays, make_jaxpr, jit and ahead-of-time compiles.
#include <iostream>

#include <jx/jx.hpp>

namespace np = jx::np;

int main() {
  // 1. Arrays, as with jax.numpy: typed, shaped, immutable values that print like NumPy's.
  jx::Array x = np::reshape(np::arange(6.0, jx::float32), {2, 3});
  jx::Array b = np::array({0.5f, -0.5f, 1.0f});
  std::cout << "x =\n" << x << "\nb = " << b << "\n";

  // 2. NumPy math: operators and functions broadcast ([2,3] + [3]), reductions take axes.
  jx::Array y = np::exp(-x) * 2.0f + b;
  std::cout << "exp(-x) * 2 + b =\n" << y << "\n";
  std::cout << "row sums = " << np::sum(x, {1}) << ", mean = " << np::mean(x) << "\n";

  // 3. make_jaxpr: the program a function traces to, printed in JAX's format.
  auto layer = [](const jx::Array& w, const jx::Array& bias, const jx::Array& in) {
    return np::tanh(np::matmul(in, w) + bias);
  };
  jx::Array w = np::ones({3, 3}) * 0.1f;
  std::cout << "\nmake_jaxpr(layer):\n" << jx::make_jaxpr(layer)(w, b, x) << "\n";

  // 4. jit: the first call traces and compiles to native code; later calls with the same
  // shapes and dtypes hit the cache and run the compiled code directly.
  auto fast_layer = jx::jit(layer, {.name = "layer"});
  std::cout << "\nfast_layer(w, b, x) =\n" << fast_layer(w, b, x) << "\n";
  jx::Array again = fast_layer(w, b, x + 1.0f);  // same signature: no retrace
  std::cout << "fast_layer(w, b, x + 1) =\n" << again << "\n";
  jx::CacheInfo info = fast_layer.cache_info();
  std::cout << "cache_info: misses=" << info.misses << " hits=" << info.hits << "\n";

  // 5. Ahead of time, as jax.jit(f).lower(...).compile(): the optimized HLO and its cost.
  auto compiled = fast_layer.lower(w, b, x).compile();
  std::cout << "\noptimized HLO:\n" << compiled.hlo_text();
  std::cout << "flops: " << compiled.cost_analysis().flops << "\n";
  // Set JX_FLAGS=--dump_to=/tmp/jx to see every stage on disk (jaxpr, HLO, LLVM IR, thunks).
}
