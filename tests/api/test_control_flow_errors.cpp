// The errors jx::lax control flow raises, type and message, eagerly and under jit: cond's pred and
// switch's index, branch outputs that differ in type or structure, while_loop's cond_fun result
// and body_fun carry, and scan's xs, length and carry.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "jx/jx.hpp"
#include "support/error_of.hpp"

namespace jx {
namespace {

using jx::testing::error_of;
using jx::testing::exact_error_of;

Array f32(const Shape& s) { return np::zeros(s); }
Array i32(std::int32_t v) { return np::array(Array(v)); }

Array identity(const Array& v) { return v; }

// ---- cond and switch_ ---------------------------------------------------------------------------

TEST_CASE("cond errors: a non-scalar pred", "[control_flow]") {
  Array x = f32({3});
  auto call = [&](const Array& pred) { lax::cond(pred, identity, identity, x); };
  CHECK(exact_error_of<TypeError>([&] { call(np::zeros({2}, bool_)); }) ==
        "Pred must be a scalar, got bool[2].");
  CHECK(exact_error_of<TypeError>([&] {
          call(f32({1, 1}));
        }) == "Pred must be a scalar, got f32[1,1].");
  // Under jit, the same message.
  auto jf = jit([](const Array& p, const Array& v) { return lax::cond(p, identity, identity, v); });
  CHECK(exact_error_of<TypeError>([&] { jf(np::zeros({4}, int32), x); }) ==
        "Pred must be a scalar, got i32[4].");
}

TEST_CASE("switch_ errors: float and non-scalar indices, an empty branch list", "[control_flow]") {
  Array x = f32({3});
  std::tuple branches{[](const Array& v) { return v; }, [](const Array& v) { return v * 2.0f; }};
  CHECK(exact_error_of<TypeError>([&] { lax::switch_(np::array(Array(1.5f)), branches, x); }) ==
        "Index type must be an integer, got f32[].");
  CHECK(exact_error_of<TypeError>([&] { lax::switch_(Array(true), branches, x); }) ==
        "Index type must be an integer, got bool[].");
  CHECK(exact_error_of<TypeError>([&] { lax::switch_(np::zeros({2}, int32), branches, x); }) ==
        "Branch index must be scalar, got i32[2].");
  std::vector<std::function<Array(const Array&)>> none;
  CHECK(exact_error_of<ValueError>([&] { lax::switch_(i32(0), none, x); }) ==
        "Empty branch sequence");
}

TEST_CASE("cond errors: branch outputs of different types", "[control_flow]") {
  Array x = f32({3});
  Array p(true);
  // Shapes: true_fn's types come first in the message.
  CHECK(exact_error_of<TypeError>([&] {
          lax::cond(
              p, [](const Array& v) { return v; }, [](const Array& v) { return np::sum(v); }, x);
        }) == "true_fun and false_fun output must have identical types, got [f32[3]] and [f32[]].");
  // Dtypes.
  CHECK(
      exact_error_of<TypeError>([&] {
        lax::cond(
            p, [](const Array& v) { return v.astype(int32); }, [](const Array& v) { return v; }, x);
      }) == "true_fun and false_fun output must have identical types, got [i32[3]] and [f32[3]].");
  // One leaf of a pair.
  CHECK(exact_error_of<TypeError>([&] {
          lax::cond(
              p,
              [](const Array& v) {
                return std::pair{v, v};
              },
              [](const Array& v) {
                return std::pair{v, v * np::ones({2, 3})};
              },
              x);
        }) ==
        "true_fun and false_fun output must have identical types, got [f32[3], f32[3]] and "
        "[f32[3], f32[2,3]].");
  // switch: branch 0's types first.
  CHECK(exact_error_of<TypeError>([&] {
          lax::switch_(
              i32(1),
              std::tuple{[](const Array& v) { return v; }, [](const Array& v) { return v; },
                         [](const Array& v) { return v.astype(int32); }},
              x);
        }) == "branch 0 and 2 outputs must have identical types, got [f32[3]] and [i32[3]].");
}

TEST_CASE("cond errors: branch outputs of different structures", "[control_flow]") {
  Array x = f32({3});
  CHECK(exact_error_of<TypeError>([&] {
          lax::cond(
              Array(true),
              [](const Array& v) {
                return std::vector<Array>{v, v};
              },
              [](const Array& v) { return std::vector<Array>{v}; }, x);
        }) ==
        "true_fun and false_fun output must have same type structure, got PyTreeDef([*, *]) and "
        "PyTreeDef([*]).");
  std::vector<std::function<std::vector<Array>(const Array&)>> branches{
      [](const Array& v) { return std::vector<Array>{v}; },
      [](const Array& v) { return std::vector<Array>{v}; },
      [](const Array& v) {
        return std::vector<Array>{v, v, v};
      }};
  CHECK(exact_error_of<TypeError>([&] { lax::switch_(i32(0), branches, x); }) ==
        "branch 0 and 2 outputs must have same type structure, got PyTreeDef([*]) and "
        "PyTreeDef([*, *, *]).");
  // Under jit, the same message.
  auto jf = jit([&](const Array& i, const Array& v) { return lax::switch_(i, branches, v); });
  CHECK(exact_error_of<TypeError>([&] { jf(i32(0), x); }) ==
        "branch 0 and 2 outputs must have same type structure, got PyTreeDef([*]) and "
        "PyTreeDef([*, *, *]).");
}

// ---- while_loop ---------------------------------------------------------------------------------

TEST_CASE("while_loop errors: cond_fun must return a boolean scalar", "[control_flow]") {
  Array x = f32({3});
  auto body = [](const Array& v) { return v + 1.0f; };
  CHECK(exact_error_of<TypeError>([&] {
          lax::while_loop([](const Array& v) { return np::sum(v); }, body, x);
        }) == "cond_fun must return a boolean scalar, but got output type(s) [f32[]].");
  CHECK(exact_error_of<TypeError>([&] {
          lax::while_loop([](const Array& v) { return v < 10.0f; }, body, x);
        }) == "cond_fun must return a boolean scalar, but got output type(s) [bool[3]].");
  CHECK(exact_error_of<TypeError>([&] {
          lax::while_loop([](const Array& v) { return np::sum(v).astype(int32); }, body, x);
        }) == "cond_fun must return a boolean scalar, but got output type(s) [i32[]].");
}

TEST_CASE("while_loop errors: body_fun must keep the carry's types and structure",
          "[control_flow]") {
  Array x = f32({3});
  auto cond = [](const auto&) { return Array(true); };
  CHECK(exact_error_of<TypeError>([&] {
          lax::while_loop(
              cond, [](const Array& v) { return np::sum(v); }, x);
        }) ==
        "body_fun output and input must have identical types, got the input [f32[3]] and the "
        "output [f32[]].");
  CHECK(exact_error_of<TypeError>([&] {
          lax::while_loop(
              cond, [](const Array& v) { return v.astype(int32); }, x);
        }) ==
        "body_fun output and input must have identical types, got the input [f32[3]] and the "
        "output [i32[3]].");
  CHECK(exact_error_of<TypeError>([&] {
          lax::while_loop(
              cond,
              [](const std::pair<Array, Array>& s) {
                return std::pair{s.first + 1, s.second.astype(float32)};
              },
              std::pair{i32(0), np::zeros({2}, int32)});
        }) ==
        "body_fun output and input must have identical types, got the input [i32[], i32[2]] "
        "and the output [i32[], f32[2]].");
  CHECK(exact_error_of<TypeError>([&] {
          lax::while_loop(
              cond,
              [](const std::vector<Array>& v) {
                return std::vector<Array>{v[0], v[0]};
              },
              std::vector<Array>{x});
        }) ==
        "body_fun output and input must have identical types, got the input "
        "PyTreeDef([*]) and the output PyTreeDef([*, *]).");
}

// ---- scan ---------------------------------------------------------------------------------------

TEST_CASE("scan errors: xs leading axes, length, and carry types", "[control_flow]") {
  auto step = [](const Array& c, const auto&) { return std::pair{c, c}; };
  Array c = f32({2});
  CHECK(exact_error_of<ValueError>([&] {
          lax::scan(step, c, std::tuple{f32({3, 2}), f32({4})});
        }) == "scan got values with different leading axis sizes: 3, 4.");
  CHECK(exact_error_of<ValueError>([&] { lax::scan(step, c, f32({3}), {.length = 5}); }) ==
        "scan got `length` argument of 5 which disagrees with leading axis sizes [3].");
  CHECK(exact_error_of<ValueError>([&] { lax::scan(step, c, std::tuple<>{}); }) ==
        "scan got no values to scan over and `length` not provided.");
  CHECK(exact_error_of<ValueError>([&] { lax::scan(step, c, std::tuple<>{}, {.length = -1}); }) ==
        "scan got `length` argument of -1, which must be non-negative.");
  CHECK(exact_error_of<ValueError>([&] { lax::scan(step, c, f32({})); }) ==
        "scan got value with no leading axis to scan over: f32[].");
  CHECK(exact_error_of<TypeError>([&] {
          lax::scan(
              [](const Array& cc, const Array& x) {
                return std::pair{np::sum(cc * x), x};
              },
              c, f32({4, 2}));
        }) ==
        "scan body function carry input and carry output must have equal types, got the "
        "input carry [f32[2]] and the output carry [f32[]].");
  CHECK(exact_error_of<TypeError>([&] {
          lax::scan(
              [](const Array& cc, const Array& x) {
                return std::pair{cc.astype(int32), x};
              },
              c, f32({4, 2}));
        }) ==
        "scan body function carry input and carry output must have equal types, got the "
        "input carry [f32[2]] and the output carry [i32[2]].");
  CHECK(exact_error_of<TypeError>([&] {
          lax::scan(
              [](const std::vector<Array>& cc, const Array& x) {
                return std::pair{std::vector<Array>{cc[0], cc[0]}, x};
              },
              std::vector<Array>{c}, f32({4, 2}));
        }) ==
        "scan body function carry input and carry output must have the same pytree "
        "structure, but they differ: the input carry is PyTreeDef([*]) and the output "
        "carry PyTreeDef([*, *]).");
  // Under jit, the same message.
  auto jf = jit([&](const Array& xs) { return lax::scan(step, c, xs, {.length = 5}).first; });
  CHECK(exact_error_of<ValueError>([&] { jf(f32({3})); }) ==
        "scan got `length` argument of 5 which disagrees with leading axis sizes [3].");
}

}  // namespace
}  // namespace jx
