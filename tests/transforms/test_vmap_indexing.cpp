// vmap of dynamic_slice and dynamic_update_slice with a start index per example, against a loop
// of per-example calls: out-of-range starts clamp per example, and every value (NaN, -0.0, the
// extremes of an integer type) is moved exactly.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "jx/jx.hpp"

namespace jx {
namespace {

// Example i of a batch stacked along axis 0.
Array example(const Array& batch, std::int64_t i) {
  Shape limit = batch.shape();
  std::vector<std::int64_t> start(limit.size(), 0);
  start[0] = i;
  limit[0] = i + 1;
  Shape rest(batch.shape().begin() + 1, batch.shape().end());
  return lax::reshape(lax::slice(batch, start, limit), rest);
}

// The per-example results stacked along axis 0, as doubles (NaN compared as NaN).
void check_stacked(const Array& got, const std::vector<Array>& want) {
  REQUIRE(got.shape()[0] == static_cast<std::int64_t>(want.size()));
  std::vector<double> g = got.to_vector<double>();
  std::size_t k = 0;
  for (const Array& w : want)
    for (double v : w.to_vector<double>()) {
      INFO("element " << k);
      if (std::isnan(v))
        CHECK(std::isnan(g[k]));
      else
        CHECK((g[k] == v && std::signbit(g[k]) == std::signbit(v)));
      ++k;
    }
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST_CASE("vmap: dynamic_slice with a start index per example", "[vmap]") {
  // 4 examples of f32[3, 5]; the starts run past the ends, so they clamp per example.
  std::vector<float> v(4 * 3 * 5);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) - 30.0f;
  v[7] = kNaN;
  v[31] = -0.0f;
  v[44] = -std::numeric_limits<float>::infinity();
  Array xs = np::array(v, {4, 3, 5});
  Array rows = np::array({0, 2, 5, -1}), cols = np::array({1, 4, 2, 0});
  auto f = [](const Array& x, const Array& r, const Array& c) {
    return lax::dynamic_slice(x, {r, c}, {2, 3});
  };
  std::vector<Array> want;
  for (std::int64_t i = 0; i < 4; ++i)
    want.push_back(f(example(xs, i), example(rows, i), example(cols, i)));
  check_stacked(vmap(f)(xs, rows, cols), want);
  check_stacked(jit(vmap(f))(xs, rows, cols), want);
  // Only the indices batched: one operand shared by every example.
  Array x0 = example(xs, 0);
  std::vector<Array> want_shared;
  for (std::int64_t i = 0; i < 4; ++i)
    want_shared.push_back(f(x0, example(rows, i), example(cols, i)));
  check_stacked(vmap(f, {none, 0, 0})(x0, rows, cols), want_shared);
}

TEST_CASE("vmap: dynamic_update_slice with a start index per example", "[vmap]") {
  std::vector<std::int32_t> v(3 * 6);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int32_t>(i);
  v[4] = std::numeric_limits<std::int32_t>::min();
  Array xs = np::array(v, {3, 6});
  Array updates = np::array(
      std::vector<std::int32_t>{-1, -2, std::numeric_limits<std::int32_t>::min(), -4, -5, -6},
      {3, 2});
  Array starts = np::array({5, -3, 2});
  auto f = [](const Array& x, const Array& u, const Array& s) {
    return lax::dynamic_update_slice(x, u, {s});
  };
  std::vector<Array> want;
  for (std::int64_t i = 0; i < 3; ++i)
    want.push_back(f(example(xs, i), example(updates, i), example(starts, i)));
  check_stacked(vmap(f)(xs, updates, starts), want);
  check_stacked(jit(vmap(f))(xs, updates, starts), want);
  // An update shared by every example, and 0-d examples, where the update replaces x.
  Array u0 = example(updates, 0);
  std::vector<Array> want_shared;
  for (std::int64_t i = 0; i < 3; ++i)
    want_shared.push_back(f(example(xs, i), u0, example(starts, i)));
  check_stacked(vmap(f, {0, none, 0})(xs, u0, starts), want_shared);
}

}  // namespace
}  // namespace jx
