// donate_argnums: an output takes over a donated argument's buffer, the argument is deleted,
// and the values equal an oracle whether the buffer was taken over or copied.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "core/array_impl.hpp"
#include "jx/jx.hpp"
#include "library/numpy_testing.hpp"
#include "support/error_of.hpp"

namespace jx {
namespace {

using Catch::Contains;
using testing::error_of;

Array ramp(int n) { return np::arange(static_cast<double>(n), float32); }

// 2x + 1 per element, computed by hand.
std::vector<float> oracle(int n) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(2.0f * static_cast<float>(i) + 1.0f);
  return v;
}

TEST_CASE("donation: the output takes over the argument's buffer; the argument is deleted",
          "[jit][donation]") {
  auto f = jit([](const Array& x) { return x * 2.0f + 1.0f; }, {.donate_argnums = {0}});
  Array x = ramp(1000);
  const void* before = concrete_buffer(x, "test").data();
  Array y = f(x);
  CHECK(y.to_vector<float>() == oracle(1000));
  CHECK(x.is_deleted());
  CHECK(concrete_buffer(y, "test").data() == before);
  CHECK_THROWS_AS(x.to_vector<float>(), Error);
  CHECK_THAT(error_of<Error>([&] { (void)x.to_vector<float>(); }),
             Contains("Array has been deleted with shape=float32[1000]"));
  CHECK_THROWS_AS(f(x), Error);  // a deleted array cannot be passed again
}

TEST_CASE("donation: a buffer another array shares is copied, and that array keeps its values",
          "[jit][donation]") {
  auto f = jit([](const Array& x) { return x * 2.0f + 1.0f; }, {.donate_argnums = {0}});
  Array x = ramp(12);
  Array view = np::reshape(x, {3, 4});  // shares x's buffer
  Array y = f(x);
  CHECK(y.to_vector<float>() == oracle(12));
  CHECK(x.is_deleted());
  CHECK(!view.is_deleted());
  CHECK(view.to_vector<float>() == ramp(12).to_vector<float>());
}

TEST_CASE("donation: an array the call reads again is not donated (passed twice, or closed over)",
          "[jit][donation]") {
  // Deleting it would free the buffer the other argument still reads (large enough that freed
  // memory is returned to the OS).
  auto f = jit([](const Array& a, const Array& b) { return a * 2.0f + b; },
               {.donate_argnums = {0}});
  Array y = np::ones({100000}, float32);
  std::vector<float> threes(100000, 3.0f);
  CHECK(f(y, y).to_vector<float>() == threes);
  CHECK(!y.is_deleted());
  auto both = jit([](const Array& a, const Array& b) { return std::pair{a * 2.0f, b * 3.0f}; },
                  {.donate_argnums = {0, 1}});
  Array z = np::array({1.0f, 2.0f});
  auto [twice, thrice] = both(z, z);
  CHECK(twice.to_vector<float>() == std::vector<float>{2, 4});
  CHECK(thrice.to_vector<float>() == std::vector<float>{3, 6});
  CHECK(!z.is_deleted());
  // A constant of the cached program stays whole for the calls after.
  Array c = np::ones({4}, float32);
  auto g = jit([&c](const Array& a) { return a * 2.0f + c; }, {.donate_argnums = {0}});
  CHECK(g(np::ones({4}, float32)).to_vector<float>() == std::vector<float>(4, 3.0f));
  CHECK(g(c).to_vector<float>() == std::vector<float>(4, 3.0f));
  CHECK(g(np::ones({4}, float32)).to_vector<float>() == std::vector<float>(4, 3.0f));
}

TEST_CASE("donation: without an output of its shape the argument stays; others are unaffected",
          "[jit][donation]") {
  auto f =
      jit([](const Array& x, const Array& s) { return np::sum(x) + s; }, {.donate_argnums = {0}});
  Array x = ramp(8), s = np::array({1.0f});
  Array y = f(x, s);
  CHECK(y.to_vector<float>() == std::vector<float>{29.0f});
  CHECK(!x.is_deleted());
  CHECK(!s.is_deleted());
}

TEST_CASE("donation: an argument read by several kernels lives in the output it becomes",
          "[jit][donation]") {
  // x is read by the matrix product first, then overwritten in place by the elementwise kernel
  // that reads it last; the product must have seen x's original values.
  const int n = 32;
  std::vector<float> xv, wv;
  for (int i = 0; i < n * n; ++i) xv.push_back(static_cast<float>(i % 7) - 3.0f);
  for (int i = 0; i < n * n; ++i) wv.push_back(static_cast<float>((i * 5) % 11) * 0.125f);
  auto f = jit([](const Array& x, const Array& w) { return x + np::matmul(x, w); },
               {.donate_argnums = {0}});
  Array x = np::array(xv, {n, n}), w = np::array(wv, {n, n});
  std::string thunks = jit([](const Array& x, const Array& w) { return x + np::matmul(x, w); },
                           {.donate_argnums = {0}})
                           .lower(x, w)
                           .compile()
                           .thunk_sequence();
  CHECK_THAT(thunks, Contains("_dot."));
  Array y = f(x, w);
  CHECK(x.is_deleted());
  CHECK(!w.is_deleted());
  std::vector<float> got = y.to_vector<float>();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double want = xv[static_cast<std::size_t>(i * n + j)];
      for (int k = 0; k < n; ++k)
        want += static_cast<double>(xv[static_cast<std::size_t>(i * n + k)]) *
                wv[static_cast<std::size_t>(k * n + j)];
      CHECK(got[static_cast<std::size_t>(i * n + j)] == Approx(want).margin(1e-4));
    }
}

TEST_CASE("donation: one kernel updates three donated arguments in place, each read by all three",
          "[jit][donation][fusion]") {
  // Adam's shape: the new p reads the new m and v. One loop kernel computes the three, each over
  // its own argument's buffer; p's comes last, so it must read m and v before they are stored.
  auto update = [](const Array& p, const Array& m, const Array& v, const Array& g) {
    Array m2 = m * 0.9f + g * 0.1f;
    Array v2 = v * 0.999f + g * g * 0.001f;
    return std::tuple{m2, v2, p - m2 / (np::sqrt(v2) + 1e-3f)};
  };
  const int n = 4096;
  std::vector<float> pv, mv, vv, gv;
  for (int i = 0; i < n; ++i) {
    pv.push_back(static_cast<float>(i % 13) - 6.0f);
    mv.push_back(static_cast<float>(i % 5) * 0.25f);
    vv.push_back(static_cast<float>(i % 7) * 0.5f);
    gv.push_back(static_cast<float>(i % 11) - 5.0f);
  }
  auto f = jit(update, {.donate_argnums = {0, 1, 2}});
  Array p = np::array(pv, {n}), m = np::array(mv, {n}), v = np::array(vv, {n});
  Array g = np::array(gv, {n});
  std::string thunks = f.lower(p, m, v, g).compile().thunk_sequence();
  INFO(thunks);
  CHECK(std::count(thunks.begin(), thunks.end(), '\n') == 1);  // one kernel
  std::vector<const void*> before;
  for (const Array* a : {&p, &m, &v}) before.push_back(concrete_buffer(*a, "test").data());
  auto [m2, v2, p2] = f(p, m, v, g);
  CHECK((p.is_deleted() && m.is_deleted() && v.is_deleted() && !g.is_deleted()));
  // Donated buffers go to outputs of their shape in order, as in JAX: all three are reused.
  std::vector<const void*> after;
  for (const Array* a : {&p2, &m2, &v2}) after.push_back(concrete_buffer(*a, "test").data());
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  CHECK(after == before);
  std::vector<float> got_p = p2.to_vector<float>(), got_m = m2.to_vector<float>(),
                     got_v = v2.to_vector<float>();
  for (std::size_t i = 0; i < pv.size(); ++i) {
    double m_new = 0.9 * mv[i] + 0.1 * gv[i];
    double v_new = 0.999 * vv[i] + 0.001 * gv[i] * gv[i];
    CHECK(got_m[i] == Approx(m_new).epsilon(1e-6));
    CHECK(got_v[i] == Approx(v_new).epsilon(1e-6).margin(1e-7));
    CHECK(got_p[i] == Approx(pv[i] - m_new / (std::sqrt(v_new) + 1e-3)).epsilon(1e-5).margin(1e-5));
  }
}

TEST_CASE("buffers: the zeros a scatter adds into live in the output computed from the scatter",
          "[jit][donation]") {
  // The output kernel reads the scatter last and can overwrite it; the scatter can overwrite its
  // zeros: all three share the output's buffer, with no copy between them.
  auto f = jit([](const Array& ids, const Array& u) {
    return np::zeros({6}, float32).at(ids).add(u) * 2.0f + 1.0f;
  });
  Array ids = np::array(std::vector<std::int32_t>{4, 1, 4}, {3});
  Array u = np::array(std::vector<float>{1.0f, 2.0f, 3.0f}, {3});
  std::string thunks = f.lower(ids, u).compile().thunk_sequence();
  INFO(thunks);
  CHECK_THAT(thunks, Contains("scatter"));
  CHECK_THAT(thunks, !Contains("copy"));
  CHECK(f(ids, u).to_vector<float>() == std::vector<float>{1, 5, 1, 1, 9, 1});
}

}  // namespace
}  // namespace jx
