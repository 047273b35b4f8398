// np::einsum against a loop over every assignment of its labels (written here, from the spec's
// letters), and np::tensordot against loops: batch dims, traces and diagonals, sums, outer
// products, 3 and 4 operands, broadcasting of size-1 dims, ellipses, implicit outputs, dtypes,
// 0-sized dims, jit, derivatives by finite differences, the greedy order, and every error.
#include <map>

#include "library/numpy_testing.hpp"
#include "support/check_grads.hpp"

namespace jx {
namespace {

using namespace np_testing;
using Arrays = std::vector<Array>;

Array values_of(const Shape& shape, double seed = 0.3) {
  std::vector<double> v(static_cast<std::size_t>(shape_size(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(seed + 1.9 * static_cast<double>(i));
  return np::array(v, shape);
}

// out[output labels] = sum over the other labels of the product of the operands, each read at
// its labels' values (a size-1 dim reads index 0: broadcasting). Letters only, explicit "->".
std::vector<double> einsum_loop(const std::string& spec, const Arrays& xs) {
  std::string in = spec.substr(0, spec.find("->")), out = spec.substr(spec.find("->") + 2);
  std::vector<std::string> terms(1);
  for (char c : in) {
    if (c == ',')
      terms.emplace_back();
    else
      terms.back().push_back(c);
  }
  std::map<char, std::int64_t> size;
  std::string labels;
  for (std::size_t t = 0; t < terms.size(); ++t)
    for (std::size_t i = 0; i < terms[t].size(); ++i) {
      char c = terms[t][i];
      if (!size.count(c)) labels += c;
      size[c] = std::max(size[c], xs[t].shape()[i]);
    }
  std::vector<std::vector<double>> vals;
  for (const Array& x : xs) vals.push_back(x.to_vector<double>());
  std::int64_t out_size = 1;
  for (char c : out) out_size *= size[c];
  std::vector<double> result(static_cast<std::size_t>(out_size), 0.0);
  std::int64_t total = 1;
  for (char c : labels) total *= size[c];
  std::map<char, std::int64_t> at;
  for (std::int64_t flat = 0; flat < total; ++flat) {
    std::int64_t r = flat;
    for (std::size_t k = labels.size(); k-- > 0;) {
      at[labels[k]] = r % size[labels[k]];
      r /= size[labels[k]];
    }
    double p = 1;
    for (std::size_t t = 0; t < terms.size(); ++t) {
      std::int64_t f = 0;
      for (std::size_t i = 0; i < terms[t].size(); ++i) {
        std::int64_t d = xs[t].shape()[i];
        f = f * d + (d == 1 ? 0 : at[terms[t][i]]);
      }
      p *= vals[t][static_cast<std::size_t>(f)];
    }
    std::int64_t o = 0;
    for (char c : out) o = o * size[c] + at[c];
    result[static_cast<std::size_t>(o)] += p;
  }
  return result;
}

void check_einsum(const std::string& spec, const Arrays& xs, const Shape& shape) {
  INFO(spec);
  Array got = np::einsum(spec, xs);
  CHECK(got.shape() == shape);
  check_values(got, einsum_loop(spec, xs), 1e-12);
  Array jitted = jit([&spec](const Arrays& a) { return np::einsum(spec, a); })(xs);
  check_values(jitted, einsum_loop(spec, xs), 1e-12);
}

}  // namespace

TEST_CASE("einsum of one and two operands matches the loop", "[numpy][einsum]") {
  Array a = values_of({3, 4}), b = values_of({4, 5}, 1.1), sq = values_of({4, 4}, 2.0);
  check_einsum("ij,jk->ik", {a, b}, {3, 5});
  check_einsum("ij,jk->ki", {a, b}, {5, 3});
  check_einsum("bij,bjk->bik", {values_of({2, 3, 4}), values_of({2, 4, 5})}, {2, 3, 5});
  check_einsum("bij,bjk->kbi", {values_of({2, 3, 4}), values_of({2, 4, 5})}, {5, 2, 3});
  check_einsum("ii->i", {sq}, {4});
  check_einsum("ii->", {sq}, {});
  check_einsum("ij->ji", {a}, {4, 3});
  check_einsum("ij->", {a}, {});
  check_einsum("ij->j", {a}, {4});
  check_einsum("i,j->ij", {values_of({3}), values_of({2})}, {3, 2});
  check_einsum("ij,ij->ij", {a, values_of({3, 4}, 0.9)}, {3, 4});
  check_einsum("ij,ij->", {a, values_of({3, 4}, 0.9)}, {});
  check_einsum("ijk,jl->il", {values_of({2, 3, 4}), values_of({3, 5})}, {2, 5});  // k: one operand
  check_einsum("iij,jk->ik", {values_of({3, 3, 2}), values_of({2, 4})}, {3, 4});
  check_einsum("iji->ij", {values_of({3, 2, 3})}, {3, 2});
  check_einsum("i,i->i", {values_of({5}), values_of({5}, 3.0)}, {5});
  check_einsum("ij,kl->ijkl", {values_of({2, 1}), values_of({3, 2})}, {2, 1, 3, 2});
}

TEST_CASE("einsum of three and four operands matches the loop", "[numpy][einsum]") {
  check_einsum("ij,jk,kl->il", {values_of({2, 3}), values_of({3, 4}), values_of({4, 5})}, {2, 5});
  check_einsum("ab,bc,cd,da->",
               {values_of({2, 3}), values_of({3, 4}), values_of({4, 2}), values_of({2, 2})}, {});
  check_einsum("bi,bj,bk->bijk", {values_of({2, 3}), values_of({2, 2}), values_of({2, 4})},
               {2, 3, 2, 4});
  check_einsum("i,j,k->", {values_of({3}), values_of({2}), values_of({4})}, {});
  check_einsum("ij,j,jk,k->i",
               {values_of({3, 4}), values_of({4}), values_of({4, 2}), values_of({2})}, {3});
}

TEST_CASE("einsum broadcasts size-1 dims against their label's size", "[numpy][einsum]") {
  check_einsum("ij,jk->ik", {values_of({3, 1}), values_of({4, 2})}, {3, 2});
  check_einsum("ij,ij->ij", {values_of({1, 4}), values_of({3, 1})}, {3, 4});
  check_einsum("bij,bjk->bik", {values_of({1, 2, 3}), values_of({4, 3, 2})}, {4, 2, 2});
}

TEST_CASE("einsum with ellipses and implicit outputs", "[numpy][einsum]") {
  Array a = values_of({2, 3, 4}), b = values_of({4, 5});
  // "...ij,...jk->...ik": the batch dims broadcast, right-aligned.
  Array c = np::einsum("...ij,...jk->...ik", {a, b});
  CHECK(c.shape() == Shape{2, 3, 5});
  check_values(c, einsum_loop("bij,jk->bik", {a, b}), 1e-12);
  Array p = values_of({2, 1, 3, 4}), q = values_of({5, 4, 2});
  Array pq = np::einsum("...ij,...jk->...ik", {p, q});
  CHECK(pq.shape() == Shape{2, 5, 3, 2});
  check_values(pq, np::matmul(p, q).to_vector<double>(), 1e-12);
  // Implicit: the ellipsis dims, then the letters used once in alphabetical order.
  check_values(np::einsum("...ij,...jk", {a, b}), c.to_vector<double>(), 1e-12);
  check_values(np::einsum("ij,jk", {values_of({3, 4}), b}),
               einsum_loop("ij,jk->ik", {values_of({3, 4}), b}), 1e-12);
  check_values(np::einsum("ba", {values_of({3, 4})}), einsum_loop("ba->ab", {values_of({3, 4})}),
               1e-12);
  CHECK(np::einsum("ba", {values_of({3, 4})}).shape() == Shape{4, 3});
  check_values(np::einsum("ii", {values_of({3, 3})}), einsum_loop("ii->", {values_of({3, 3})}),
               1e-12);
  // An ellipsis left out of the output is summed; one of no dims is nothing.
  check_values(np::einsum("i...->i", {a}), einsum_loop("ijk->i", {a}), 1e-12);
  check_values(np::einsum("...,...->...", {np::array(2.0), values_of({3})}),
               (values_of({3}) * 2.0).to_vector<double>(), 1e-12);
  CHECK(np::einsum("ij...->...", {values_of({2, 2})}).shape() == Shape{});
}

TEST_CASE("einsum promotes dtypes as JAX: ints exact, bools as any, weak scalars",
          "[numpy][einsum]") {
  Array m = iota_i32({2, 3}), n = iota_i32({3, 2});
  Array mn = np::einsum("ij,jk->ik", {m, n});
  CHECK(mn.dtype() == int32);
  CHECK(mn.to_vector<int>() == std::vector<int>{10, 13, 28, 40});
  CHECK(np::einsum("ij,jk->ik", {m, n.astype(float32)}).dtype() == float32);
  Array b1 = np::reshape(np::array({true, false, false, false}), {2, 2});
  Array b2 = np::reshape(np::array({false, true, true, true}), {2, 2});
  Array bb = np::einsum("ij,jk->ik", {b1, b2});
  CHECK(bb.dtype() == bool_);
  CHECK(bb.to_vector<bool>() == std::vector<bool>{false, true, false, false});
  Array w = np::einsum("i,i->", {lax::broadcast_in_dim(Array(2.0), {3}, {}),
                                 lax::broadcast_in_dim(Array(0.5), {3}, {})});
  CHECK(w.aval() == ShapedArray{{}, float32, true});
  CHECK(w.item<float>() == 3.f);
  CHECK(np::einsum("ij,jk->ik", {m.astype(bfloat16), n.astype(bfloat16)}).dtype() == bfloat16);
}

TEST_CASE("einsum of 0-sized dims", "[numpy][einsum]") {
  Array z = np::einsum("ij,jk->ik", {np::zeros({2, 0}), np::zeros({0, 3})});
  CHECK(z.shape() == Shape{2, 3});
  CHECK(z.to_vector<float>() == std::vector<float>(6, 0.f));
  CHECK(np::einsum("ij,jk->ik", {np::zeros({0, 4}), np::zeros({4, 3})}).shape() == Shape{0, 3});
  CHECK(np::einsum("ii->i", {np::zeros({0, 0})}).shape() == Shape{0});
}

TEST_CASE("einsum derivatives match finite differences", "[numpy][einsum][autodiff]") {
  testing::check_grads(
      [](const Arrays& a) {
        return np::einsum("ij,jk,kl->li", {a[0], a[1], a[2]});
      },
      {values_of({2, 3}), values_of({3, 4}, 0.7), values_of({4, 2}, 1.3)}, 2);
  testing::check_grads(
      [](const Arrays& a) {
        return np::einsum("iij,jk->ik", {a[0], a[1]});
      },
      {values_of({3, 3, 2}), values_of({2, 2}, 0.5)}, 2);
}

TEST_CASE("einsum contracts the pair that removes the most memory first", "[numpy][einsum]") {
  // (64, 2) (2, 64) (64, 2): the product of the last two is 2 x 2, the first two's 64 x 64, so
  // opt_einsum's greedy path contracts the last two first.
  Array a = np::zeros({64, 2}), b = np::zeros({2, 64}), c = np::zeros({64, 2});
  std::string text = make_jaxpr([](const Array& x, const Array& y, const Array& z) {
                       return np::einsum("ij,jk,kl->il", {x, y, z});
                     })(a, b, c)
                         .str();
  INFO(text);
  std::size_t first = text.find("f32[2,2] = dot_general");
  REQUIRE(first != std::string::npos);
  CHECK(text.find("f32[64,64]") == std::string::npos);
  CHECK(text.find("f32[64,2] = dot_general") > first);
}

// ---- einsum's malformed specs: ValueErrors in opt_einsum's words, which jnp.einsum raises ----

TEST_CASE("einsum without operands is a ValueError", "[numpy][einsum][errors]") {
  CHECK_THROWS_MATCHES(np::einsum("ij", {}), ValueError,
                       Catch::Message("Number of einsum subscripts, 1, must be equal to the "
                                      "number of operands, 0."));
}

TEST_CASE("einsum with a '-' or '>' apart from one '->' is a ValueError",
          "[numpy][einsum][errors]") {
  for (const char* spec : {"ij->j->", "ij-j", "ij>j"}) {
    INFO(spec);
    CHECK_THROWS_MATCHES(np::einsum(spec, {values_of({2, 3})}), ValueError,
                         Catch::Message("Subscripts can only contain one '->'."));
  }
}

TEST_CASE("einsum with dots other than one '...' per term is a ValueError",
          "[numpy][einsum][errors]") {
  CHECK_THROWS_MATCHES(np::einsum("..i,j", {values_of({2, 3}), values_of({3})}), ValueError,
                       Catch::Message("Invalid Ellipses."));
  CHECK_THROWS_MATCHES(np::einsum("....i", {values_of({2, 3})}), ValueError,
                       Catch::Message("Invalid Ellipses."));
}

TEST_CASE("einsum with more letters beside '...' than dims is a ValueError",
          "[numpy][einsum][errors]") {
  CHECK_THROWS_MATCHES(np::einsum("...ijk", {values_of({2, 3})}), ValueError,
                       Catch::Message("Ellipses lengths do not match."));
}

TEST_CASE("einsum with an output letter twice is a ValueError", "[numpy][einsum][errors]") {
  CHECK_THROWS_MATCHES(
      np::einsum("ij->ii", {values_of({2, 3})}), ValueError,
      Catch::Message("Output character 'i' appeared more than once in the output."));
}

TEST_CASE("einsum with an output letter no input has is a ValueError", "[numpy][einsum][errors]") {
  CHECK_THROWS_MATCHES(np::einsum("ij->k", {values_of({2, 3})}), ValueError,
                       Catch::Message("Output character 'k' did not appear in the input"));
}

TEST_CASE("einsum with another number of terms than operands is a ValueError",
          "[numpy][einsum][errors]") {
  CHECK_THROWS_MATCHES(np::einsum("ij,j->i", {values_of({2, 3})}), ValueError,
                       Catch::Message("Number of einsum subscripts, 2, must be equal to the "
                                      "number of operands, 1."));
  CHECK_THROWS_MATCHES(
      np::einsum("ij,j", {values_of({2, 3}), values_of({3}), values_of({3})}), ValueError,
      Catch::Message("Number of einsum subscripts, 2, must be equal to the number of "
                     "operands, 3."));
}

TEST_CASE("einsum with a term of another rank than its operand is a ValueError",
          "[numpy][einsum][errors]") {
  CHECK_THROWS_MATCHES(np::einsum("ijk->i", {values_of({2, 3})}), ValueError,
                       Catch::Message("Einstein sum subscript 'ijk' does not contain the correct "
                                      "number of indices for operand 0."));
}

TEST_CASE("einsum with a label of two sizes (neither 1) is a ValueError",
          "[numpy][einsum][errors]") {
  // opt_einsum's message names the earlier size first.
  CHECK_THROWS_MATCHES(
      np::einsum("ij,jk->ik", {values_of({2, 3}), values_of({4, 2})}), ValueError,
      Catch::Message("Size of label 'j' for operand 1 (3) does not match previous terms (4)."));
}

TEST_CASE("einsum with a subscript that is not a letter is a ValueError",
          "[numpy][einsum][errors]") {
  CHECK_THROWS_MATCHES(np::einsum("i1,1j->ij", {values_of({2, 3}), values_of({2, 3})}), ValueError,
                       Catch::Message("invalid subscript '1' in einstein sum subscripts string, "
                                      "subscripts must be letters"));
}

// ---- tensordot -------------------------------------------------------------------------------

TEST_CASE("tensordot contracts the last axes of a with the first of b", "[numpy][tensordot]") {
  Array a = values_of({2, 3, 4}), b = values_of({3, 4, 5}, 0.8);
  Array t = np::tensordot(a, b);
  CHECK(t.shape() == Shape{2, 5});
  check_values(t, einsum_loop("ijk,jkl->il", {a, b}), 1e-12);
  check_values(np::tensordot(a, values_of({4, 2}), 1),
               einsum_loop("ijk,kl->ijl", {a, values_of({4, 2})}), 1e-12);
  Array outer = np::tensordot(values_of({2}), values_of({3}), 0);
  CHECK(outer.shape() == Shape{2, 3});
  check_values(outer, einsum_loop("i,j->ij", {values_of({2}), values_of({3})}), 1e-12);
  // Axis lists, negative axes, in any order.
  Array c = values_of({4, 3, 6}, 1.7);
  Array u = np::tensordot(a, c, {1, -1}, {1, 0});
  CHECK(u.shape() == Shape{2, 6});
  check_values(u, einsum_loop("ijk,kjl->il", {a, c}), 1e-12);
  CHECK(jit([](const Array& x, const Array& y) {
          return np::tensordot(x, y, {1, 2}, {1, 0});
        })(a, c)
            .shape() == Shape{2, 6});
  CHECK(np::tensordot(iota_i32({2, 2}), iota_f32({2, 2}), 1).dtype() == float32);
  CHECK(np::tensordot(np::zeros({2, 0}), np::zeros({0, 3}), 1).shape() == Shape{2, 3});
  testing::check_grads(
      [](const Arrays& x) {
        return np::tensordot(x[0], x[1], {0, 2}, {1, 0});
      },
      {values_of({4, 2, 3}), values_of({3, 4, 2}, 0.4)}, 2);
}

TEST_CASE("tensordot with more axes than an operand has is a TypeError",
          "[numpy][tensordot][errors]") {
  CHECK_THROWS_MATCHES(
      np::tensordot(values_of({2, 3}), values_of({3, 4}), 3), TypeError,
      Catch::Message("Number of tensordot axes (axes 3) exceeds input ranks ((2, 3) and (3, 4))"));
}

TEST_CASE("tensordot with axes lists of two lengths is a TypeError", "[numpy][tensordot][errors]") {
  CHECK_THROWS_MATCHES(np::tensordot(values_of({2, 3}), values_of({3, 4}), {0, 1}, {0}), TypeError,
                       Catch::Message("tensordot requires axes lists to have equal length, got "
                                      "[0, 1] and [0]."));
}

TEST_CASE("tensordot of axes of different sizes is dot_general's ShapeError",
          "[numpy][tensordot][errors]") {
  CHECK_THROWS_MATCHES(np::tensordot(values_of({2, 3}), values_of({3, 4}), {0}, {0}), ShapeError,
                       Catch::Message("dot_general requires contracting dimensions to have the "
                                      "same shape, got (2,) and (3,)."));
}

TEST_CASE("tensordot of an axis out of range is a ShapeError", "[numpy][tensordot][errors]") {
  CHECK_THROWS_MATCHES(np::tensordot(values_of({2, 3}), values_of({3, 4}), {2}, {0}), ShapeError,
                       Catch::Message("axis 2 is out of bounds for array of dimension 2"));
}

}  // namespace jx
