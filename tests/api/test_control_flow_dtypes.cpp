// The dtypes of loop carries and counters, as JAX's: a weak-typed initial carry (a C++ double,
// JAX's Python float) meets a body that returns a strong float32 of its shape; fori_loop's
// counter takes its bounds' dtype (a weak default int for static bounds, int64 under
// --enable_x64). Values against plain C++ loops, eagerly and under jit.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "jx/jx.hpp"
#include "support/config_guard.hpp"
#include "support/error_of.hpp"

namespace jx {
namespace {

using jx::testing::error_of;

// fori_loop's counter, as the body sees it, for these bounds; the loop sums the counter (as
// the counter's dtype) into an int64 carry.
template <class Lo, class Hi>
std::pair<ShapedArray, std::int64_t> counter_of(const Lo& lower, const Hi& upper) {
  ShapedArray seen;
  Array total = lax::fori_loop(
      lower, upper,
      [&](const Array& i, const Array& acc) {
        seen = i.aval();
        return acc + i.astype(int64);
      },
      np::zeros({}, int64));
  return {seen, total.item<std::int64_t>()};
}

Array i64(std::int64_t v) { return np::array(Array(v)).astype(int64); }
Array i32(std::int32_t v) { return np::array(Array(v)).astype(int32); }

}  // namespace

TEST_CASE("a weak initial carry with a body returning a strong float32 of its shape",
          "[control_flow][dtypes]") {
  std::vector<float> xs{0.5f, 1.25f, -2.0f, 4.0f};
  std::vector<float> partial;  // the oracle: the running sums, in float32
  float sum = 0.0f;
  for (float x : xs) partial.push_back(sum += x);
  Array xs_array = np::array(xs);
  auto cumulative = [](const Array& x) {
    return lax::scan(
        [](const Array& c, const Array& xi) {
          Array next = c + xi;  // a strong float32: xi is one
          return std::pair{next, next};
        },
        0.0, x);
  };
  for (bool jitted : {false, true}) {
    INFO("jit " << jitted);
    auto [carry, ys] = jitted ? jit(cumulative)(xs_array) : cumulative(xs_array);
    CHECK(carry.aval() == ShapedArray{{}, float32, false});
    CHECK(carry.item<float>() == partial.back());
    CHECK(ys.to_vector<float>() == partial);
  }
  // A pytree carry of C++ doubles, one of which only the body makes strong.
  auto pair = lax::scan(
                  [](const std::pair<Array, Array>& c, const Array& xi) {
                    return std::pair{std::pair{c.first + xi, c.second * 2.0}, xi};
                  },
                  std::pair{0.0, 1.0}, xs_array)
                  .first;
  CHECK(pair.first.item<float>() == partial.back());
  CHECK(pair.second.item<float>() == 16.0f);
  // fori_loop and while_loop carry a weak float32 the same way.
  Array step = np::array(1.5f);
  Array fori = lax::fori_loop(
      0, 4, [&](const Array&, const Array& c) { return c + step; }, 0.0);
  CHECK(fori.aval() == ShapedArray{{}, float32, false});
  CHECK(fori.item<float>() == 6.0f);
  Array counted = lax::while_loop([](const Array& c) { return c < 5.0; },
                                  [&](const Array& c) { return c + step; }, 0.0);
  CHECK(counted.aval() == ShapedArray{{}, float32, false});
  CHECK(counted.item<float>() == 6.0f);
  CHECK(jit([&](const Array& s) {
          return lax::fori_loop(
              0, 3, [&](const Array&, const Array& c) { return c * s; }, 1.0);
        })(np::array(2.0f))
            .item<float>() == 8.0f);
}

TEST_CASE("under --enable_x64 a weak float64 initial carry takes the body's float32",
          "[control_flow][dtypes]") {
  testing::ConfigGuard guard;
  config().enable_x64 = true;
  Array xs = np::array({0.5f, 0.25f});
  auto [carry, ys] = lax::scan(
      [](const Array& c, const Array& xi) {
        return std::pair{c + xi, c};
      },
      0.0, xs);
  CHECK(carry.aval() == ShapedArray{{}, float32, false});
  CHECK(carry.item<float>() == 0.75f);
  CHECK(ys.to_vector<float>() == std::vector<float>{0.0f, 0.5f});
  // vmap of a while_loop whose predicate is batched (each example stops on its own).
  Array stops = jx::vmap([](const Array& x) {
    return lax::while_loop([](const Array& c) { return c < 10.0; },
                           [&](const Array& c) { return c + x; }, 0.0);
  })(np::array({1.f, 2.f, 3.f}));
  CHECK(stops.to_vector<float>() == std::vector<float>{10.f, 10.f, 12.f});
}

TEST_CASE("a carry whose type the body changes is still JAX's TypeError",
          "[control_flow][dtypes]") {
  Array xs = np::array({1.f, 2.f});
  CHECK(error_of<TypeError>([&] {
          lax::scan(
              [](const Array& c, const Array& xi) {
                return std::pair{c + xi * np::ones({2}), c};
              },
              0.0, xs);
        }) ==
        "scan body function carry input and carry output must have equal types, got the input "
        "carry [f32[]] and the output carry [f32[2]].");
  CHECK(error_of<TypeError>([&] {
          lax::scan(
              [](const Array& c, const Array& xi) {
                return std::pair{c + xi, c};
              },
              np::zeros({}, float32), xs.astype(float64));
        }) ==
        "scan body function carry input and carry output must have equal types, got the input "
        "carry [f32[]] and the output carry [f64[]].");
}

TEST_CASE("fori_loop's counter takes its bounds' dtype, as JAX's fori_loop",
          "[control_flow][dtypes]") {
  // Static bounds are Python ints in JAX: a weak int32 counter.
  CHECK(counter_of(0, 4) == std::pair{ShapedArray{{}, int32, true}, std::int64_t{6}});
  CHECK(counter_of(i32(1), i32(4)) == std::pair{ShapedArray{{}, int32, false}, std::int64_t{6}});
  CHECK(counter_of(i64(1), i64(4)) == std::pair{ShapedArray{{}, int64, false}, std::int64_t{6}});
  // A weak bound (a C++ int) takes the other bound's dtype.
  CHECK(counter_of(Array(1), i64(4)) == std::pair{ShapedArray{{}, int64, false}, std::int64_t{6}});
  CHECK(counter_of(i64(1), Array(4)) == std::pair{ShapedArray{{}, int64, false}, std::int64_t{6}});
  CHECK(counter_of(Array(1), i32(4)).first == ShapedArray{{}, int32, true});
  // Two strong dtypes that differ are JAX's TypeError.
  CHECK(error_of<TypeError>([&] { counter_of(i32(0), i64(4)); }) ==
        "lower and upper arguments to fori_loop must have equal types, got int32 and int64");
  // Traced bounds under jit: the same dtypes.
  DType traced = int8;
  Array total = jit([&](const Array& lo, const Array& hi) {
    return lax::fori_loop(
        lo, hi,
        [&](const Array& i, const Array& acc) {
          traced = i.dtype();
          return acc + i;
        },
        i64(0));
  })(i64(2), Array(5));
  CHECK(traced == int64);
  CHECK(total.item<std::int64_t>() == 2 + 3 + 4);
}

TEST_CASE("under --enable_x64 static bounds give an int64 counter, exact past 2^31",
          "[control_flow][dtypes]") {
  testing::ConfigGuard guard;
  config().enable_x64 = true;
  const std::int64_t big = std::int64_t{1} << 33;
  CHECK(counter_of(big, big + 3) ==
        std::pair{ShapedArray{{}, int64, true}, std::int64_t{3 * big + 3}});
  CHECK(counter_of(Array(0), Array(3)).first == ShapedArray{{}, int64, true});
  CHECK(counter_of(i32(0), i32(3)).first == ShapedArray{{}, int32, false});
}

}  // namespace jx
