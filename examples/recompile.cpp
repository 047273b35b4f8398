// Recompilation: finding and fixing a retrace. A training step is jitted; the loop feeds it a short
// last batch and a learning rate that is sometimes a C++ float (weakly typed) and sometimes an
// array. cache_misses() says why each call compiled; the fixed loop runs under jx::NoRetrace.
// Last, a persistent compilation cache lets a later process skip tracing and compiling.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <vector>

#include <jx/jx.hpp>

namespace np = jx::np;

namespace {

jx::Array loss(const jx::Array& w, const jx::Array& x, const jx::Array& y) {
  jx::Array err = np::matmul(x, w) - y;
  return np::mean(err * err);
}

jx::Array update(const jx::Array& w, const jx::Array& x, const jx::Array& y, const jx::Array& lr) {
  return w - lr * jx::grad(loss)(w, x, y);
}

// 100 samples of 3 features, cut into batches of 32: the last one has 4.
std::vector<std::pair<jx::Array, jx::Array>> batches(const jx::Array& x, const jx::Array& y) {
  std::vector<std::pair<jx::Array, jx::Array>> out;
  for (std::int64_t at = 0; at < x.shape()[0]; at += 32) {
    std::int64_t end = std::min<std::int64_t>(at + 32, x.shape()[0]);
    out.emplace_back(x[{jx::slice(at, end)}], y[{jx::slice(at, end)}]);
  }
  return out;
}

}  // namespace

int main() {
  jx::Array t = np::linspace(-1, 1, 100);
  jx::Array x = np::stack({t, t * t, np::sin(3.0f * t)}, 1);
  jx::Array y = np::matmul(x, np::array({1.0f, -2.0f, 0.5f}));
  jx::Array w = np::zeros({3});

  // 1. The first version: a short last batch, and a learning rate that changes kind once.
  auto step = jx::jit(update, {.name = "step"});
  for (int epoch = 0; epoch < 2; ++epoch) {
    jx::Array lr = epoch == 0 ? jx::Array(0.1f) : np::array(0.05f);  // weak, then strong
    for (const auto& [bx, by] : batches(x, y)) w = step(w, bx, by, lr);
  }
  std::cout << "first version: " << step.cache_misses().size() << " compiles\n";
  for (const jx::CacheMiss& m : step.cache_misses()) std::cout << "  " << m.str() << "\n";

  // 2. The fix: every batch the same shape (the short one dropped), the learning rate always an
  // f32 array. One compile, and the loop is guarded against any other.
  auto fixed = jx::jit(update, {.name = "fixed_step", .max_retraces = 0});
  std::vector<std::pair<jx::Array, jx::Array>> full = batches(x, y);
  full.pop_back();
  w = fixed(w, full[0].first, full[0].second, np::array(0.1f));
  {
    jx::NoRetrace guard;  // a retrace here would be a jx::RetraceError naming the argument
    for (int epoch = 0; epoch < 20; ++epoch)
      for (const auto& [bx, by] : full) w = fixed(w, bx, by, np::array(0.1f));
  }
  std::cout << "fixed version: " << fixed.cache_misses().size() << " compile, "
            << fixed.cache_info().hits << " hits; loss " << loss(w, x, y) << "\n";

  // 3. Across processes: with a compilation cache and a persistent_key, a later process runs the
  // step without tracing or compiling it. Here clear_cache() empties the memory cache, as a new
  // process starts with none.
  jx::config().compilation_cache_dir = (std::filesystem::temp_directory_path() /
                                        ("jx_recompile_example_" + std::to_string(::getpid())))
                                           .string();
  auto keyed = jx::jit(update, {.name = "keyed_step", .persistent_key = "update-v1"});
  keyed(w, full[0].first, full[0].second, np::array(0.1f));
  keyed.clear_cache();
  keyed(w, full[0].first, full[0].second, np::array(0.1f));
  std::cout << "keyed version: " << keyed.cache_info().traces << " trace for 2 misses, "
            << keyed.cache_info().disk_hits << " loaded from the compilation cache\n";
  std::filesystem::remove_all(jx::config().compilation_cache_dir);

  bool ok = step.cache_misses().size() == 4 && fixed.cache_misses().size() == 1 &&
            keyed.cache_info().traces == 1 && keyed.cache_info().disk_hits == 1;
  return ok ? 0 : 1;
}
