// Pytree utilities: tree::map over one and several trees, structure() and its PyTreeDef text,
// unflatten, the mismatch errors, and JX_PYTREE_TEMPLATE.
#include <catch2/catch.hpp>

#include <array>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "jx/jit.hpp"
#include "jx/numpy.hpp"
#include "jx/transforms.hpp"
#include "jx/tree.hpp"
#include "support/error_of.hpp"

namespace jx_tree_utils_test {

struct Mlp {
  jx::Array w1, b1;
};
JX_PYTREE(Mlp, w1, b1)

struct Net {
  std::vector<Mlp> layers;
  std::map<std::string, jx::Array> extra;
};
JX_PYTREE(Net, layers, extra)

struct Single {
  jx::Array w;
};
JX_PYTREE(Single, w)

struct Nothing {};
[[maybe_unused]] inline std::tuple<> jx_pytree_fields(const Nothing&) { return {}; }
[[maybe_unused]] inline std::tuple<> jx_pytree_fields(Nothing&) { return {}; }
[[maybe_unused]] inline constexpr const char* jx_pytree_field_names(const Nothing*) { return ""; }
[[maybe_unused]] inline constexpr const char* jx_pytree_type_name(const Nothing*) {
  return "Nothing";
}

template <class T>
struct Moments {
  jx::Array count;
  T mu;
};
JX_PYTREE_TEMPLATE(Moments, count, mu)

}  // namespace jx_tree_utils_test

namespace jx {
namespace {

namespace np = jx::np;
using jx::testing::error_of;
using jx_tree_utils_test::Mlp;
using jx_tree_utils_test::Moments;
using jx_tree_utils_test::Net;
using jx_tree_utils_test::Nothing;
using jx_tree_utils_test::Single;

Array vec(std::vector<float> v) { return np::array(v); }
std::vector<float> values(const Array& x) { return x.to_vector<float>(); }

TEST_CASE("tree::map applies f to every leaf of every pytree kind", "[tree_utils]") {
  auto twice = [](const Array& x) { return x * 2; };

  CHECK(values(tree::map(twice, vec({1, 2}))) == std::vector<float>{2, 4});

  // A scalar leaf reaches f as a weak 0-d array and comes back an Array.
  Array s = tree::map(twice, 1.5f);
  CHECK(s.aval() == ShapedArray{{}, float32, true});
  CHECK(s.item<float>() == 3.f);

  std::vector<Array> v = tree::map(twice, std::vector<Array>{vec({1}), vec({2, 3})});
  REQUIRE(v.size() == 2);
  CHECK(values(v[1]) == std::vector<float>{4, 6});

  std::array<Array, 2> a = tree::map(twice, std::array<Array, 2>{vec({1}), vec({5})});
  CHECK(values(a[1]) == std::vector<float>{10});

  auto t = tree::map(
      twice, std::tuple<Array, int, std::pair<float, Array>>{vec({1}), 3, {0.5f, vec({7})}});
  static_assert(std::is_same_v<decltype(t), std::tuple<Array, Array, std::pair<Array, Array>>>);
  CHECK(std::get<1>(t).item<int>() == 6);
  CHECK(std::get<2>(t).first.item<float>() == 1.f);
  CHECK(values(std::get<2>(t).second) == std::vector<float>{14});

  std::map<std::string, Array> m =
      tree::map(twice, std::map<std::string, float>{{"b", 1}, {"a", 2}});
  CHECK(m.at("a").item<float>() == 4.f);
  CHECK(m.at("b").item<float>() == 2.f);

  Net net{{Mlp{vec({1}), vec({2})}, Mlp{vec({3}), vec({4})}}, {{"scale", vec({5})}}};
  Net out = tree::map(twice, net);
  CHECK(values(out.layers[1].b1) == std::vector<float>{8});
  CHECK(values(out.extra.at("scale")) == std::vector<float>{10});
  CHECK(values(net.layers[1].b1) == std::vector<float>{4});  // the input is untouched

  // A Static has no leaves: it passes through with its value.
  auto st = tree::map(twice, std::pair<Static<int>, Array>{Static<int>{7}, vec({1})});
  CHECK(st.first.value == 7);
  CHECK(values(st.second) == std::vector<float>{2});
}

TEST_CASE("tree::map visits leaves in flatten order", "[tree_utils]") {
  Net net{{Mlp{vec({0}), vec({0})}, Mlp{vec({0}), vec({0})}}, {{"z", vec({0})}, {"a", vec({0})}}};
  int calls = 0;
  Net numbered = tree::map([&](const Array& x) { return x + static_cast<float>(calls++); }, net);
  CHECK(calls == 6);
  std::vector<Array> leaves = tree::leaves(numbered);
  for (std::size_t i = 0; i < leaves.size(); ++i) CHECK(leaves[i].item<float>() == float(i));
  CHECK(numbered.extra.at("a").item<float>() == 4.f);  // keys in order: "a" before "z"
}

TEST_CASE("tree::map over several trees pairs leaves by position", "[tree_utils]") {
  Mlp p{vec({1, 2}), vec({3})}, g{vec({10, 20}), vec({30})}, h{vec({100, 200}), vec({300})};
  Mlp sum =
      tree::map([](const Array& a, const Array& b, const Array& c) { return a + b + c; }, p, g, h);
  CHECK(values(sum.w1) == std::vector<float>{111, 222});
  CHECK(values(sum.b1) == std::vector<float>{333});

  // Scalar leaves and Array leaves pair up: a tree of floats with its Array counterpart.
  std::vector<float> params{1, 2, 3};
  std::vector<Array> updates = {vec({0.5f}), vec({0.25f}), vec({1})};
  std::vector<Array> r =
      tree::map([](const Array& x, const Array& u) { return x - u; }, params, updates);
  REQUIRE(r.size() == 3);
  CHECK(r[0].item<float>() == 0.5f);  // f32[] - f32[1] broadcasts to f32[1]
  CHECK(r[1].shape() == Shape{1});
  CHECK(values(r[2]) == std::vector<float>{2});

  auto m1 = std::map<std::string, std::vector<Array>>{{"a", {vec({1})}}, {"b", {}}};
  auto m2 = std::map<std::string, std::vector<Array>>{{"a", {vec({2})}}, {"b", {}}};
  auto mm = tree::map([](const Array& x, const Array& y) { return x * y; }, m1, m2);
  CHECK(values(mm.at("a")[0]) == std::vector<float>{2});
  CHECK(mm.at("b").empty());
}

TEST_CASE("tree::map under jit and grad", "[tree_utils]") {
  auto f = jit([](const Mlp& p, const Mlp& g) {
    return tree::map([](const Array& a, const Array& b) { return a - 0.5f * b; }, p, g);
  });
  Mlp out = f(Mlp{vec({1, 2}), vec({3})}, Mlp{vec({2, 2}), vec({4})});
  CHECK(values(out.w1) == std::vector<float>{0, 1});
  CHECK(values(out.b1) == std::vector<float>{1});

  auto loss = [](const Mlp& p) {
    Mlp sq = tree::map([](const Array& x) { return x * x; }, p);
    return np::sum(sq.w1) + np::sum(sq.b1);
  };
  Mlp g = grad(loss)(Mlp{vec({1, -2}), vec({3})});
  CHECK(values(g.w1) == std::vector<float>{2, -4});
  CHECK(values(g.b1) == std::vector<float>{6});
}

TEST_CASE("tree::map: trees of different structures are a TypeError", "[tree_utils]") {
  auto add = [](const Array& a, const Array& b) { return a + b; };
  using V = std::vector<Array>;
  CHECK(error_of<TypeError>([&] {
          tree::map(add, V{vec({1}), vec({2})}, V{vec({1})});
        }) ==
        "tree::map: the trees have different structures: list arity mismatch at the root: "
        "tree 0 has 2 elements, tree 1 has 1 elements; PyTreeDef([*, *]) != PyTreeDef([*])");

  using Nested = std::tuple<Array, std::vector<V>>;
  Nested a{vec({1}), {V{vec({1})}, V{vec({1}), vec({2})}}};
  Nested b{vec({1}), {V{vec({1})}, V{vec({1}), vec({2}), vec({3})}}};
  auto add3 = [](const Array& x, const Array& y, const Array& z) { return x + y + z; };
  CHECK(error_of<TypeError>([&] { tree::map(add3, a, a, b); }) ==
        "tree::map: the trees have different structures: list arity mismatch at [1][1]: "
        "tree 0 has 2 elements, tree 2 has 3 elements; PyTreeDef((*, [[*], [*, *]])) != "
        "PyTreeDef((*, [[*], [*, *, *]]))");

  Net n1{{Mlp{vec({1}), vec({2})}}, {{"a", vec({0})}, {"b", vec({0})}}};
  Net n2{{Mlp{vec({1}), vec({2})}}, {{"a", vec({0})}, {"c", vec({0})}}};
  CHECK(error_of<TypeError>([&] { tree::map(add, n1, n2); }) ==
        "tree::map: the trees have different structures: dict key mismatch at .extra: "
        "tree 0 has keys ['a', 'b'], tree 1 has keys ['a', 'c']; "
        "PyTreeDef(CustomNode(Net[('layers', 'extra')], [[CustomNode(Mlp[('w1', 'b1')], [*, *])], "
        "{'a': *, 'b': *}])) != "
        "PyTreeDef(CustomNode(Net[('layers', 'extra')], [[CustomNode(Mlp[('w1', 'b1')], [*, *])], "
        "{'a': *, 'c': *}]))");

  using M = std::map<std::string, V>;
  CHECK(error_of<TypeError>([&] {
          tree::map(add, M{{"k", V{vec({1})}}}, M{{"k", V{}}});
        }) ==
        "tree::map: the trees have different structures: list arity mismatch at ['k']: "
        "tree 0 has 1 elements, tree 1 has 0 elements; PyTreeDef({'k': [*]}) != "
        "PyTreeDef({'k': []})");
}

TEST_CASE("tree::structure: JAX's PyTreeDef text, leaf counts and equality", "[tree_utils]") {
  CHECK(tree::structure(vec({1})).str() == "PyTreeDef(*)");
  CHECK(tree::structure(2.0).str() == "PyTreeDef(*)");
  CHECK(tree::structure(std::vector<std::tuple<Array, Array>>{}).str() == "PyTreeDef([])");
  CHECK(tree::structure(std::tuple<Array>{}).str() == "PyTreeDef((*,))");
  CHECK(tree::structure(std::tuple<>{}).str() == "PyTreeDef(())");
  CHECK(tree::structure(std::pair<float, std::vector<Array>>{1.f, {vec({1}), vec({2})}}).str() ==
        "PyTreeDef((*, [*, *]))");
  CHECK(tree::structure(std::array<Array, 3>{}).str() == "PyTreeDef((*, *, *))");
  CHECK(tree::structure(std::map<std::string, float>{{"b", 1}, {"a", 2}}).str() ==
        "PyTreeDef({'a': *, 'b': *})");
  CHECK(tree::structure(Mlp{}).str() == "PyTreeDef(CustomNode(Mlp[('w1', 'b1')], [*, *]))");
  CHECK(tree::structure(Single{}).str() == "PyTreeDef(CustomNode(Single[('w',)], [*]))");
  CHECK(tree::structure(Nothing{}).str() == "PyTreeDef(CustomNode(Nothing[()], []))");
  CHECK(tree::structure(std::tuple<Static<int>, Array>{}).str() == "PyTreeDef((None, *))");
  CHECK(tree::structure(Moments<std::vector<Array>>{vec({0}), {vec({1}), vec({2})}}).str() ==
        "PyTreeDef(CustomNode(Moments[('count', 'mu')], [*, [*, *]]))");

  Net net{{Mlp{vec({1}), vec({2})}, Mlp{vec({3}), vec({4})}}, {{"s", vec({5})}}};
  auto def = tree::structure(net);
  CHECK(def.num_leaves() == 5);
  CHECK(def.num_leaves() == tree::leaves(net).size());
  CHECK(def == tree::structure(tree::map([](const Array& x) { return x + 1; }, net)));
  Net shorter = net;
  shorter.layers.pop_back();
  CHECK_FALSE(def == tree::structure(shorter));
  Net renamed = net;
  renamed.extra = {{"t", vec({5})}};
  CHECK_FALSE(def == tree::structure(renamed));
  // The compact text of the base TreeDef, which jit's messages use, is unchanged.
  CHECK(static_cast<const tree::TreeDef&>(def).str() ==
        "Net(layers=[Mlp(w1=*, b1=*), Mlp(w1=*, b1=*)], extra={'s': *})");
}

TEST_CASE("tree::unflatten rebuilds every pytree kind from its leaves", "[tree_utils]") {
  Net net{{Mlp{vec({1}), vec({2})}, Mlp{vec({3}), vec({4})}}, {{"s", vec({5})}, {"a", vec({6})}}};
  auto def = tree::structure(net);
  std::vector<Array> leaves;
  for (int i = 0; i < 6; ++i) leaves.push_back(vec({float(10 * i)}));
  Net back = tree::unflatten(def, leaves);
  REQUIRE(back.layers.size() == 2);
  CHECK(values(back.layers[0].w1) == std::vector<float>{0});
  CHECK(values(back.layers[1].b1) == std::vector<float>{30});
  CHECK(values(back.extra.at("a")) == std::vector<float>{40});  // "a" flattens before "s"
  CHECK(values(back.extra.at("s")) == std::vector<float>{50});

  // Round trips: unflatten(structure(x), leaves(x)) has x's leaves, scalars as Arrays.
  auto x =
      std::make_tuple(1.5f, std::array<int, 2>{7, 8}, std::pair<Static<int>, Array>{{9}, vec({2})},
                      std::vector<Array>{vec({3})});
  auto rx = tree::unflatten(tree::structure(x), tree::leaves(x));
  static_assert(
      std::is_same_v<decltype(rx), std::tuple<Array, std::array<Array, 2>,
                                              std::pair<Static<int>, Array>, std::vector<Array>>>);
  CHECK(std::get<0>(rx).item<float>() == 1.5f);
  CHECK(std::get<1>(rx)[1].item<int>() == 8);
  CHECK(std::get<2>(rx).first.value == 9);  // a Static keeps its value
  CHECK(values(std::get<3>(rx)[0]) == std::vector<float>{3});

  auto leaf_def = tree::structure(vec({1}));
  CHECK(values(leaf_def.unflatten({vec({4, 5})})) == std::vector<float>{4, 5});
  auto nothing = tree::unflatten(tree::structure(Nothing{}), {});
  static_assert(std::is_same_v<decltype(nothing), Nothing>);
}

TEST_CASE("tree::unflatten: the wrong number of leaves is an error", "[tree_utils]") {
  auto def = tree::structure(std::vector<Array>{vec({1}), vec({2}), vec({3})});
  CHECK(testing::exact_error_of<Error>([&] {
          tree::unflatten(def, {vec({1}), vec({2})});
        }) == "tree::unflatten: too few leaves for PyTreeDef([*, *, *]); expected 3, got 2");
  CHECK(testing::exact_error_of<Error>([&] {
          tree::unflatten(tree::structure(Mlp{}), {vec({1}), vec({2}), vec({3})});
        }) ==
        "tree::unflatten: too many leaves for PyTreeDef(CustomNode(Mlp[('w1', 'b1')], "
        "[*, *])); expected 2, got 3");
}

TEST_CASE("JX_PYTREE_TEMPLATE makes a class template a pytree", "[tree_utils]") {
  using State = Moments<std::map<std::string, Array>>;
  static_assert(tree::is_pytree_v<State>);
  State s{np::zeros({}, int32), {{"w", vec({1, 2})}, {"b", vec({3})}}};
  CHECK(tree::leaves(s).size() == 3);
  auto step = jit([](const State& st) {
    return State{st.count + 1, tree::map([](const Array& m) { return m * 0.5f; }, st.mu)};
  });
  State s2 = step(step(s));
  CHECK(s2.count.item<int>() == 2);
  CHECK(values(s2.mu.at("w")) == std::vector<float>{0.25f, 0.5f});
  CHECK(values(s2.mu.at("b")) == std::vector<float>{0.75f});
}

}  // namespace
}  // namespace jx
