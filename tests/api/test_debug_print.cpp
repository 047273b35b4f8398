// jx::debug::print and jx::debug::callback, as jax.debug's: printed text read back from stdout,
// at run time (never at trace time), in order, inside jit, grad, vmap, scan and cond, and on a
// (fake) GPU; Array::str as NumPy's str(); format errors in Python's words.
#include <catch2/catch.hpp>

#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <jx/jx.hpp>

#include "core/host_callbacks.hpp"
#include "support/error_of.hpp"
#include "support/fake_cuda.hpp"

namespace jx {
namespace {

using testing::error_of;

// What fn writes to std::cout.
std::string printed(const std::function<void()>& fn) {
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  try {
    fn();
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  return captured.str();
}

Array floats(std::vector<float> v) { return np::array(v); }

TEST_CASE("Array::str prints as NumPy's str()", "[debug]") {
  CHECK(floats({2, 5}).str() == "[2. 5.]");
  CHECK(floats({2, 5.5f}).str() == "[2.  5.5]");
  CHECK(np::reshape(floats({1, 2, 3, 4}), {2, 2}).str() == "[[1. 2.]\n [3. 4.]]");
  CHECK(np::array(std::vector<std::int32_t>{1, -20, 3}).str() == "[  1 -20   3]");
  CHECK(np::array(std::vector<bool>{true, false}).str() == "[ True False]");
  CHECK(np::array(2.0f).str() == "2.0");
  CHECK(np::array(0.1f).str() == "0.1");
  CHECK(np::array(10.0f).str() == "10.0");
  CHECK(np::array(-0.0f).str() == "-0.0");
  CHECK(np::array(1e-5f).str() == "1e-05");
  CHECK(np::array(1e16).str() == "1e+16");
  CHECK(np::array(123456.5).str() == "123456.5");
  // The shortest digits that read back as the dtype's value.
  CHECK(np::array(0.1f).astype(bfloat16).str() == "0.1");
  CHECK(floats({0.1f, 2}).astype(bfloat16).str() == "[0.1 2. ]");
  CHECK(np::array(std::int32_t{7}).str() == "7");
  CHECK(np::arange(0, 2000).str() == "[   0    1    2 ... 1997 1998 1999]");
}

TEST_CASE("debug::print: eager values, Python's format fields", "[debug]") {
  Array x = floats({2, 5.5f});
  CHECK(printed([&] { debug::print("x = {}", x); }) == "x = [2.  5.5]\n");
  CHECK(printed([&] { debug::print("{1} and {0}, {{braces}}", x, np::array(3.0f)); }) ==
        "3.0 and [2.  5.5], {braces}\n");
  CHECK(error_of<IndexError>([&] { debug::print("{} {}", x); }) ==
        "Replacement index 1 out of range for positional args tuple");
  const std::pair<const char*, const char*> bad_formats[] = {
      {"{x}", "jx::debug::print takes positional fields only ({} or {0}), got {x}"},
      {"{} {0}", "cannot switch from automatic field numbering to manual field specification"},
      {"{0} {}", "cannot switch from manual field specification to automatic field numbering"},
      {"x = {", "Single '{' encountered in format string"},
      {"x = }", "Single '}' encountered in format string"},
  };
  for (auto [format, message] : bad_formats) {
    INFO(format);
    CHECK(error_of<ValueError>([&] { debug::print(format, x); }) == message);
  }
  // Under jit too, when it traces: not when the program runs.
  auto traced = jit([](const Array& a) {
    debug::print("{} {}", a);
    return a;
  });
  CHECK(error_of<IndexError>([&] { traced.lower(x); }) ==
        "Replacement index 1 out of range for positional args tuple");
}

TEST_CASE("debug::print under jit prints each run's values, in order, and never at trace time",
          "[debug][jit]") {
  auto f = jit([](const Array& a) {
    debug::print("in {}", a);
    Array b = np::exp(a) - 1.0f;  // exp(0) - 1 = 0, exp(log 3) - 1 = 2
    debug::print("out {}", b);
    return np::sum(b);  // nothing reads the prints: they stay anyway
  });
  std::string traced = printed([&] { (void)f.lower(floats({0, 0})).compile(); });
  CHECK(traced.empty());
  CHECK(printed([&] { f(floats({0, 0})); }) == "in [0. 0.]\nout [0. 0.]\n");
  CHECK(printed([&] {
          f(floats({0, std::log(3.0f)}));
        }) == "in [0.        1.0986123]\nout [0. 2.]\n");
  CHECK(f.cache_info().misses == 1);
  auto compiled = f.lower(floats({0, 0})).compile();
  CHECK_THAT(compiled.hlo_text(), Catch::Contains("host-callback"));
  CHECK_THAT(compiled.thunk_sequence(), Catch::Contains("host-callback"));
  CHECK_THAT(make_jaxpr([](const Array& a) {
               debug::print("{}", a);
               return a;
             })(floats({1}))
                 .str(),
             Catch::Contains("debug_callback[") && Catch::Contains("effect=Debug"));
}

TEST_CASE("debug::print under grad prints the forward pass's values once", "[debug][grad]") {
  auto loss = [](const Array& a) {
    Array y = a * a;
    debug::print("y = {}", y);
    return np::sum(y);
  };
  Array x = floats({1, 3});
  Array g;
  CHECK(printed([&] { g = grad(loss)(x); }) == "y = [1. 9.]\n");
  CHECK(g.to_vector<float>() == std::vector<float>{2, 6});
  CHECK(printed([&] { g = jit(grad(loss))(x); }) == "y = [1. 9.]\n");
  CHECK(g.to_vector<float>() == std::vector<float>{2, 6});
  CHECK_THAT(make_jaxpr(grad(loss))(x).str(), Catch::Contains("debug_callback"));
}

TEST_CASE("debug::print under vmap prints each example's value, in order", "[debug][vmap]") {
  auto f = [](const Array& a, const Array& b) {
    debug::print("row {} with {}", a, b);
    return a + b;
  };
  Array m = np::reshape(floats({1, 2, 3, 4}), {2, 2});
  Array b = np::array(10.0f);
  CHECK(printed([&] {
          vmap(f, {0, none})(m, b);
        }) == "row [1. 2.] with 10.0\nrow [3. 4.] with 10.0\n");
  CHECK(printed([&] {
          jit(vmap(f, {1, none}))(m, b);
        }) == "row [1. 3.] with 10.0\nrow [2. 4.] with 10.0\n");
}

TEST_CASE("debug::print in scan and cond bodies prints every iteration and the branch taken",
          "[debug][control_flow]") {
  auto running = [](const Array& xs) {
    return lax::scan(
               [](const Array& c, const Array& x) {
                 Array next = c + x;
                 debug::print("carry {}", next);
                 return std::make_pair(next, next);
               },
               np::array(0.0f), xs)
        .first;
  };
  Array xs = floats({1, 2, 3});
  CHECK(printed([&] { running(xs); }) == "carry 1.0\ncarry 3.0\ncarry 6.0\n");
  CHECK(printed([&] { jit(running)(xs); }) == "carry 1.0\ncarry 3.0\ncarry 6.0\n");
  auto branch = jit([](const Array& p, const Array& a) {
    return lax::cond(
        p,
        [](const Array& v) {
          debug::print("true {}", v);
          return v;
        },
        [](const Array& v) {
          debug::print("false {}", v);
          return -v;
        },
        a);
  });
  CHECK(printed([&] { branch(np::array(true), floats({1})); }) == "true [1.]\n");
  CHECK(printed([&] { branch(np::array(false), floats({2})); }) == "false [2.]\n");
}

TEST_CASE("debug::callback calls a C++ function with concrete pytrees", "[debug]") {
  std::vector<std::string> seen;
  auto f = jit([&](const Array& a, const std::vector<Array>& bs) {
    debug::callback(
        [&](const Array& x, const std::vector<Array>& ys) {
          seen.push_back(x.str() + " " + std::to_string(ys.size()) + " " + ys[1].str());
        },
        a * 2.0f, bs);
    return a;
  });
  f(floats({1, 2}), std::vector<Array>{floats({5}), floats({6, 7})});
  f(floats({3, 4}), std::vector<Array>{floats({5}), floats({8, 9})});
  CHECK(seen == std::vector<std::string>{"[2. 4.] 2 [6. 7.]", "[6. 8.] 2 [8. 9.]"});
  // Eagerly it runs at once, and is not kept: a loop registers nothing.
  int calls = 0;
  std::int64_t registered = host_callback_count();
  for (int i = 0; i < 100; ++i)
    debug::callback([&](const Array& x) { calls += x.item<int>(); }, np::array(std::int32_t{5}));
  CHECK(printed([] { debug::print("{}", np::array(std::int32_t{5})); }) == "5\n");
  CHECK(calls == 500);
  CHECK(host_callback_count() == registered);
}

TEST_CASE("debug::print on a GPU copies the values it prints to the host", "[debug][cuda][fake]") {
  testing::FakeCudaGpus gpus;
  const Device gpu{Platform::gpu, 7};
  // The fake driver runs no kernels but moves bytes: print a parameter as it arrived.
  auto f = jit(
      [](const Array& a) {
        debug::print("on the device {}", a);
        return a;
      },
      {.device = gpu});
  CHECK(printed([&] { f(floats({1.5f, -2})); }) == "on the device [ 1.5 -2. ]\n");
  // Eagerly, on an array the device holds.
  Array held = device_put(floats({0.5f, 3}), gpu);
  CHECK(printed([&] { debug::print("eager {}", held); }) == "eager [0.5 3. ]\n");
}

}  // namespace
}  // namespace jx
