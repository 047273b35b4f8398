// Pytrees: flatten order, rebuild, the compact structure the jit cache keys on, TreeDef text,
// leaf paths, JX_PYTREE field names, and jx::Static as a leafless node.
#include <catch2/catch.hpp>

#include <array>
#include <map>
#include <tuple>
#include <vector>

#include "jx/jx.hpp"

namespace jx_tree_test {

struct Dense {
  jx::Array w, b;
};
JX_PYTREE(Dense, w, b)

struct Model {
  std::vector<Dense> layers;
  jx::Array scale;
};
JX_PYTREE(Model, layers, scale)

}  // namespace jx_tree_test

namespace jx {
namespace {

using jx_tree_test::Dense;
using jx_tree_test::Model;

Array f32(const Shape& s) { return np::zeros(s); }

TEST_CASE("tree: flatten order and rebuild round trip", "[jit][tree]") {
  Model m{{Dense{f32({2, 3}), f32({3})}, Dense{f32({3, 1}), f32({1})}}, f32({})};
  std::vector<Array> leaves = tree::leaves(m);
  REQUIRE(leaves.size() == 5);
  CHECK(leaves[0].shape() == Shape{2, 3});
  CHECK(leaves[2].shape() == Shape{3, 1});
  CHECK(leaves[4].shape() == Shape{});
  std::vector<Array> fresh;
  for (int i = 0; i < 5; ++i) fresh.push_back(np::full({i + 1}, float(i)));
  std::size_t pos = 0;
  Model r = tree::rebuild(m, fresh, pos);
  CHECK(pos == 5);
  CHECK(r.layers[1].b.shape() == Shape{4});
  CHECK(r.scale.shape() == Shape{5});

  // Scalars are weak-typed leaves and come back as Arrays; maps flatten by key.
  auto t = std::make_tuple(2.0f, std::map<std::string, int>{{"z", 1}, {"a", 2}},
                           std::pair<int, double>{3, 4.0});
  std::vector<Array> tl = tree::leaves(t);
  REQUIRE(tl.size() == 5);
  CHECK(tl[0].aval() == ShapedArray{{}, float32, true});
  CHECK(tl[1].item<int>() == 2);  // "a" before "z"
  CHECK(tl[2].item<int>() == 1);
  CHECK(tl[4].aval() == ShapedArray{{}, float32, true});  // a double: JAX's default mode
  pos = 0;
  auto rt = tree::rebuild(t, tl, pos);
  static_assert(
      std::is_same_v<decltype(rt),
                     std::tuple<Array, std::map<std::string, Array>, std::pair<Array, Array>>>);
  CHECK(std::get<1>(rt).at("z").item<int>() == 1);
}

TEST_CASE("tree: structure text, kinds and leaf paths", "[jit][tree]") {
  auto args = std::make_tuple(
      std::vector<Dense>{Dense{f32({1}), f32({1})}}, std::array<Array, 2>{f32({}), f32({})},
      std::map<std::string, Array>{{"bias", f32({2})}}, std::pair<Array, float>{f32({}), 1.f},
      std::tuple<Array>{f32({})}, Static<int>{3});
  tree::TreeDef t = tree::structure(args);
  CHECK(t.str() == "([Dense(w=*, b=*)], array[*, *], {'bias': *}, (*, *), (*,), static)");
  CHECK(t.num_leaves() == 8);
  CHECK(tree::leaf_paths(t, "args") ==
        std::vector<std::string>{"args[0][0].w", "args[0][0].b", "args[1][0]", "args[1][1]",
                                 "args[2][\"bias\"]", "args[3][0]", "args[3][1]", "args[4][0]"});
  CHECK(t.children[0].kind_str() == "list of 1");
  CHECK(t.children[0].children[0].kind_str() == "Dense");
  CHECK(t.children[1].kind_str() == "array of 2");
  CHECK(t.children[2].kind_str() == "dict with keys ['bias']");
  CHECK(t.children[3].kind_str() == "pair");
  CHECK(t.children[4].kind_str() == "tuple of 1");
  CHECK(t.children[5].kind_str() == "static");
  CHECK(tree::structure(f32({3})).kind_str() == "leaf");
  CHECK(tree::structure(args) == t);
  CHECK_FALSE(tree::structure(std::vector<Array>{f32({})}) ==
              tree::structure(std::array<Array, 1>{f32({})}));
}

TEST_CASE("tree: JX_PYTREE field names and the struct's name", "[jit][tree]") {
  CHECK(tree::split_field_names("w, b") == std::vector<std::string>{"w", "b"});
  CHECK(tree::split_field_names("a") == std::vector<std::string>{"a"});
  CHECK(tree::split_field_names(jx_pytree_field_names(static_cast<const Model*>(nullptr))) ==
        std::vector<std::string>{"layers", "scale"});
  CHECK(std::string(jx_pytree_type_name(static_cast<const Model*>(nullptr))) == "Model");
}

TEST_CASE("tree: the compact structure records only what the type does not fix", "[jit][tree]") {
  std::map<std::string, std::vector<Array>> m{{"a", {f32({}), f32({})}}, {"b", {f32({})}}};
  auto x = std::make_tuple(m, std::array<Array, 2>{f32({}), f32({})});
  std::vector<Array> leaves;
  tree::CompactStructure s;
  tree::flatten(x, leaves, s);
  CHECK(leaves.size() == 5);
  CHECK(s.sizes == std::vector<std::uint64_t>{2, 2, 1});  // the map, then its two vectors
  REQUIRE(s.keys.size() == 2);
  CHECK(*s.keys[0] == "a");
  CHECK(*s.keys[1] == "b");
}

TEST_CASE("tree: Static is a leafless node that make_jaxpr passes through", "[jit][tree]") {
  CHECK(tree::leaves(Static<int>{3}).empty());
  static_assert(tree::is_pytree_v<std::vector<std::map<std::string, Dense>>>);
  static_assert(!tree::is_pytree_v<std::string>);
  static_assert(!tree::is_pytree_v<std::vector<std::string>>);
  auto f = [](const Array& x, Static<float> k) { return x * k.value; };
  CHECK(make_jaxpr(f)(f32({2}), Static<float>{2.f}).str() ==
        "{ lambda ; a:f32[2]. let b:f32[2] = mul a 2.0:f32[] in (b,) }");
}

}  // namespace
}  // namespace jx
