// --debug_nans and --debug_infs, as JAX's: an invalid value in a jitted output runs the function
// again op by op and throws jx::FloatingPointError naming the primitive that made it and its
// equation; eager operations check their own results.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "jaxpr/jaxpr.hpp"
#include "jx/jx.hpp"
#include "support/config_guard.hpp"
#include "support/error_of.hpp"

namespace jx {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using testing::exact_error_of;

// "this file:line", as the errors name a call.
std::string here(int line) { return std::string(__FILE__) + ":" + std::to_string(line); }

// 21 equations: six rounds of sin, mul and add keep y in [0.5, 1.5]; then y - 2 < 0, whose log
// is the first NaN (on kLogLine); then a multiply.
constexpr int kLogLine = __LINE__ + 4;
Array twenty_ops(const Array& x) {
  Array y = x;
  for (int i = 0; i < 6; ++i) y = np::sin(y) * 0.5f + 1.0f;
  return np::log(y - 2.0f) * 3.0f;
}

TEST_CASE("debug_nans: a NaN in a jitted output names the primitive and its equation",
          "[jit][debug_nans]") {
  testing::ConfigGuard guard;
  auto f = jit(twenty_ops, {.name = "twenty"});
  Array x = np::array({0.1f, 0.2f, 0.3f});
  REQUIRE(make_jaxpr(twenty_ops)(x).data()->jaxpr.eqns.size() == 21);
  CHECK(std::isnan(f(x).to_vector<float>()[0]));  // off: NaNs are values like any other

  config().debug_nans = true;
  std::string message = exact_error_of<FloatingPointError>([&] { f(x); });
  CHECK_THAT(message, StartsWith("invalid value (nan) encountered in log\n\nin equation:\n\n"));
  CHECK_THAT(message, Contains(" = log "));
  // The C++ call that staged it.
  CHECK_THAT(message, Contains("\n\nstaged at " + here(kLogLine)));
  CHECK(f.cache_info().compiles == 1);  // the op-by-op run compiles nothing
  CHECK_NOTHROW(jit([](const Array& a) { return np::log(a); })(np::array({1.0f})));
}

TEST_CASE("debug_nans: eager operations check their own results", "[jit][debug_nans]") {
  testing::ConfigGuard guard;
  config().debug_nans = true;
  const int log_line = __LINE__ + 1;
  auto log_of_negative = [] { np::log(np::array({1.0f, -1.0f})); };
  const int sqrt_line = __LINE__ + 1;
  auto sqrt_of_negative = [] { np::sqrt(np::array(-4.0)); };
  CHECK(exact_error_of<FloatingPointError>(log_of_negative) ==
        "invalid value (nan) encountered in log\n\ncalled at " + here(log_line));
  CHECK(exact_error_of<FloatingPointError>(sqrt_of_negative) ==
        "invalid value (nan) encountered in sqrt\n\ncalled at " + here(sqrt_line));
  // An operator has no place for a location: its error names the primitive alone.
  CHECK(exact_error_of<FloatingPointError>([] { (void)(np::array(0.0f) / np::array(0.0f)); }) ==
        "invalid value (nan) encountered in div");
  CHECK_NOTHROW(np::array({1, 2}) / np::array({0, 1}));  // integers have no NaN
  CHECK_NOTHROW(np::array(1.0f) / np::array(0.0f));      // an infinity is not a NaN
}

TEST_CASE("debug_infs: an infinity names the primitive that made it", "[jit][debug_nans]") {
  testing::ConfigGuard guard;
  config().debug_infs = true;
  auto inverse = jit([](const Array& x) { return 1.0f / x + 1.0f; }, {.name = "inverse"});
  std::string message = exact_error_of<FloatingPointError>([&] { inverse(np::array({0.0f})); });
  CHECK_THAT(message, StartsWith("invalid value (inf) encountered in div\n\nin equation:\n\n"));
  CHECK_NOTHROW(np::log(np::array(-1.0f)));  // NaNs are --debug_nans's
}

TEST_CASE("debug_nans: a NaN the op-by-op run does not make names the function",
          "[jit][debug_nans]") {
  testing::ConfigGuard guard;
  Array nan = np::array(std::nanf(""));
  auto f = jit([nan](const Array& x) { return std::make_pair(x * 2.0f, nan); }, {.name = "f"});
  config().debug_nans = true;
  CHECK(exact_error_of<FloatingPointError>([&] { f(np::ones({2})); }) ==
        "invalid value (nan) encountered in jit(f). Run again op by op (as if not jitted), the "
        "function made no invalid value: the compiled program's optimizations may have made it, "
        "or an output is such a constant");
}

}  // namespace
}  // namespace jx
