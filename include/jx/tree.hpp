// Pytrees: nested C++ containers whose leaves are arrays. Leaves are Array and arithmetic
// scalars; nodes are std::vector, std::array, std::tuple, std::pair, std::map<std::string, T>
// and structs declared with JX_PYTREE(Struct, field...). jx::Static<T> marks a static value.
// Utilities as jax.tree has them: leaves, map, structure, unflatten.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.hpp"

// Declares a struct's fields as pytree children (at namespace scope, next to the struct).
#define JX_PYTREE(Struct, ...)                                                         \
  [[maybe_unused]] inline auto jx_pytree_fields(Struct& s) {                           \
    auto& [__VA_ARGS__] = s;                                                           \
    return std::tie(__VA_ARGS__);                                                      \
  }                                                                                    \
  [[maybe_unused]] inline auto jx_pytree_fields(const Struct& s) {                     \
    const auto& [__VA_ARGS__] = s;                                                     \
    return std::tie(__VA_ARGS__);                                                      \
  }                                                                                    \
  [[maybe_unused]] inline constexpr const char* jx_pytree_field_names(const Struct*) { \
    return #__VA_ARGS__;                                                               \
  }                                                                                    \
  [[maybe_unused]] inline constexpr const char* jx_pytree_type_name(const Struct*) {   \
    return #Struct;                                                                    \
  }

// JX_PYTREE for a class template whose parameters are all types, e.g. optimizer states:
// template <class T> struct TraceState { T trace; }; JX_PYTREE_TEMPLATE(TraceState, trace)
#define JX_PYTREE_TEMPLATE(Struct, ...)                                   \
  template <class... JxArgs>                                              \
  auto jx_pytree_fields(Struct<JxArgs...>& s) {                           \
    auto& [__VA_ARGS__] = s;                                              \
    return std::tie(__VA_ARGS__);                                         \
  }                                                                       \
  template <class... JxArgs>                                              \
  auto jx_pytree_fields(const Struct<JxArgs...>& s) {                     \
    const auto& [__VA_ARGS__] = s;                                        \
    return std::tie(__VA_ARGS__);                                         \
  }                                                                       \
  template <class... JxArgs>                                              \
  constexpr const char* jx_pytree_field_names(const Struct<JxArgs...>*) { \
    return #__VA_ARGS__;                                                  \
  }                                                                       \
  template <class... JxArgs>                                              \
  constexpr const char* jx_pytree_type_name(const Struct<JxArgs...>*) {   \
    return #Struct;                                                       \
  }

namespace jx {

// A static argument of a jitted function: not traced; its value joins the cache key, so T needs
// std::hash<T> and ==. The function receives the Static<T> itself and reads `.value`.
template <class T>
struct Static {
  T value;
  friend bool operator==(const Static&, const Static&) = default;
};
template <class T>
Static(T) -> Static<T>;

}  // namespace jx

namespace jx::tree {

template <class T>
concept Struct = requires(const T& x) {
  jx_pytree_fields(x);
};

template <class T>
struct is_std_array : std::false_type {};
template <class T, std::size_t N>
struct is_std_array<std::array<T, N>> : std::true_type {};
template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};
template <class T>
struct is_string_map : std::false_type {};
template <class T>
struct is_string_map<std::map<std::string, T>> : std::true_type {};
template <class T>
struct is_tuple_like : std::false_type {};
template <class... Ts>
struct is_tuple_like<std::tuple<Ts...>> : std::true_type {};
template <class A, class B>
struct is_tuple_like<std::pair<A, B>> : std::true_type {};
template <class T>
struct is_pair : std::false_type {};
template <class A, class B>
struct is_pair<std::pair<A, B>> : std::true_type {};
template <class T>
struct is_static : std::false_type {};
template <class T>
struct is_static<Static<T>> : std::true_type {};
template <class T>
inline constexpr bool is_static_v = is_static<T>::value;

template <class T>
inline constexpr bool is_leaf_v = std::is_same_v<T, Array> || std::is_arithmetic_v<T>;

// Whether flatten/rebuild accept T (a Static<T> counts: it is a pytree with no leaves).
template <class T>
struct is_pytree;
template <class T>
inline constexpr bool is_pytree_v = is_pytree<T>::value;
template <class T>
struct is_pytree : std::bool_constant<is_leaf_v<T> || is_static_v<T> || Struct<T>> {};
template <class T, class A>
struct is_pytree<std::vector<T, A>> : is_pytree<T> {};
template <class T, std::size_t N>
struct is_pytree<std::array<T, N>> : is_pytree<T> {};
template <class T>
struct is_pytree<std::map<std::string, T>> : is_pytree<T> {};
template <class... Ts>
struct is_pytree<std::tuple<Ts...>> : std::bool_constant<(is_pytree_v<Ts> && ...)> {};
template <class A, class B>
struct is_pytree<std::pair<A, B>> : std::bool_constant<is_pytree_v<A> && is_pytree_v<B>> {};

// Appends the leaves of `x`, depth first, in container order (maps by key), to `out`.
template <class T>
void flatten(const T& x, std::vector<Array>& out) {
  if constexpr (is_leaf_v<T>) {
    out.push_back(Array(x));
  } else if constexpr (is_static_v<T>) {
    // No leaves: a static value is part of the structure, not of the data.
  } else if constexpr (is_vector<T>::value || is_std_array<T>::value) {
    for (const auto& e : x) flatten(e, out);
  } else if constexpr (is_string_map<T>::value) {
    for (const auto& [k, v] : x) flatten(v, out);
  } else if constexpr (is_tuple_like<T>::value) {
    std::apply([&](const auto&... e) { (flatten(e, out), ...); }, x);
  } else if constexpr (Struct<T>) {
    std::apply([&](const auto&... e) { (flatten(e, out), ...); }, jx_pytree_fields(x));
  } else {
    static_assert(sizeof(T) == 0, "not a pytree: use Array, scalars, std containers or JX_PYTREE");
  }
}

template <class T>
std::vector<Array> leaves(const T& x) {
  std::vector<Array> out;
  flatten(x, out);
  return out;
}

// Whether x is a container node (not a leaf, not a Static).
template <class T>
inline constexpr bool is_container_v = is_pytree_v<T> && !is_leaf_v<T> && !is_static_v<T>;

// fn(child) for each child of the container node x, in flatten order (a struct's fields, a
// vector's or tuple's elements, a map's values by key).
template <class T, class Fn>
requires is_container_v<T>
void for_each_child(const T& x, Fn&& fn) {
  if constexpr (is_vector<T>::value || is_std_array<T>::value) {
    for (const auto& e : x) fn(e);
  } else if constexpr (is_string_map<T>::value) {
    for (const auto& [k, v] : x) fn(v);
  } else if constexpr (is_tuple_like<T>::value) {
    std::apply([&](const auto&... e) { (fn(e), ...); }, x);
  } else {
    std::apply([&](const auto&... e) { (fn(e), ...); }, jx_pytree_fields(x));
  }
}

// The part of a pytree's structure that its C++ type does not fix: the sizes of its vectors
// and maps and the maps' keys, depth first. With the type it identifies the structure without
// building a TreeDef; it is what the jit cache compares on every call.
struct CompactStructure {
  std::vector<std::uint64_t> sizes;
  std::vector<const std::string*> keys;  // point into the flattened value: valid while it lives
  void clear() {
    sizes.clear();
    keys.clear();
  }
};

// flatten(x, out), also recording x's compact structure. A Static inside a pytree is refused:
// only a whole argument can be static.
template <class T>
void flatten(const T& x, std::vector<Array>& out, CompactStructure& s) {
  if constexpr (is_leaf_v<T>) {
    out.push_back(Array(x));
  } else if constexpr (is_vector<T>::value) {
    s.sizes.push_back(x.size());
    for (const auto& e : x) flatten(e, out, s);
  } else if constexpr (is_std_array<T>::value) {
    for (const auto& e : x) flatten(e, out, s);
  } else if constexpr (is_string_map<T>::value) {
    s.sizes.push_back(x.size());
    for (const auto& [k, v] : x) {
      s.keys.push_back(&k);
      flatten(v, out, s);
    }
  } else if constexpr (is_tuple_like<T>::value) {
    std::apply([&](const auto&... e) { (flatten(e, out, s), ...); }, x);
  } else if constexpr (Struct<T>) {
    std::apply([&](const auto&... e) { (flatten(e, out, s), ...); }, jx_pytree_fields(x));
  } else {
    static_assert(!is_static_v<T>, "jx::Static marks a whole argument: it cannot be nested");
    static_assert(sizeof(T) == 0, "not a pytree: use Array, scalars, std containers or JX_PYTREE");
  }
}

// A value of the same structure as `like` whose leaves are leaf(i) for i = pos, pos + 1, ...,
// in flatten order; `leaf` returns one type for every leaf (an Array, or a whole tree: a
// Jacobian puts a tree in place of each leaf). Static values stay as they are. A struct keeps
// its type, so its leaves can only become Arrays.
template <class T, class LeafFn>
auto rebuild_with(const T& like, LeafFn& leaf, std::size_t& pos) {
  if constexpr (is_leaf_v<T>) {
    return leaf(pos++);
  } else if constexpr (is_static_v<T>) {
    return like;
  } else if constexpr (is_vector<T>::value) {
    std::vector<decltype(rebuild_with(like.front(), leaf, pos))> out;
    out.reserve(like.size());
    for (const auto& e : like) out.push_back(rebuild_with(e, leaf, pos));
    return out;
  } else if constexpr (is_std_array<T>::value) {
    using E = decltype(rebuild_with(like[0], leaf, pos));
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::array<E, sizeof...(I)>{rebuild_with(like[I], leaf, pos)...};  // braces: in order
    }
    (std::make_index_sequence<std::tuple_size_v<T>>());
  } else if constexpr (is_string_map<T>::value) {
    std::map<std::string, decltype(rebuild_with(like.begin()->second, leaf, pos))> out;
    for (const auto& [k, v] : like) out.emplace(k, rebuild_with(v, leaf, pos));
    return out;
  } else if constexpr (is_tuple_like<T>::value) {
    return std::apply(
        [&](const auto&... e) {
          if constexpr (is_pair<T>::value)
            return std::pair<decltype(rebuild_with(e, leaf, pos))...>{
                rebuild_with(e, leaf, pos)...};
          else
            return std::tuple<decltype(rebuild_with(e, leaf, pos))...>{
                rebuild_with(e, leaf, pos)...};
        },
        like);
  } else {
    static_assert(Struct<T>, "not a pytree: use Array, scalars, std containers or JX_PYTREE");
    static_assert(std::is_same_v<std::decay_t<decltype(leaf(pos))>, Array>,
                  "a JX_PYTREE struct's fields keep their types: a tree cannot take the place "
                  "of one of its leaves (return a std container instead)");
    T out = like;
    std::apply([&](auto&... f) { ((f = rebuild_with(f, leaf, pos)), ...); }, jx_pytree_fields(out));
    return out;
  }
}

// A value of the same structure as `like` whose leaves are leaves[pos...], in flatten order.
// Scalar leaves come back as Arrays (a traced scalar is an Array); Static values as they are.
// From a non-const vector the leaves are moved out.
template <class T, class Leaves>
requires std::is_same_v<std::remove_const_t<Leaves>, std::vector<Array>>
auto rebuild(const T& like, Leaves& leaves, std::size_t& pos) {
  auto leaf = [&leaves](std::size_t i) -> Array {
    if constexpr (std::is_const_v<Leaves>)
      return leaves.at(i);
    else
      return std::move(leaves.at(i));
  };
  return rebuild_with(like, leaf, pos);
}

// What rebuild makes of a T: scalars become Arrays.
template <class T>
using rebuilt_t =
    decltype(rebuild(std::declval<const T&>(), std::declval<const std::vector<Array>&>(),
                     std::declval<std::size_t&>()));

// A pytree's full structure, as data: what messages and the jit cache's explanations read.
struct TreeDef {
  enum class Kind : std::uint8_t { leaf, list, array, tuple, pair, dict, record, static_value };
  Kind kind = Kind::leaf;
  std::string name;               // record: the struct's name
  std::vector<std::string> keys;  // dict: its keys; record: its field names
  std::vector<TreeDef> children;

  std::size_t num_leaves() const;
  // A compact notation for messages: "(*, [*, *], {'b': *}, Dense(w=*, b=*))"; `static` for a
  // Static. PyTreeDef<T>::str() prints JAX's own.
  std::string str() const;
  // This node alone, for messages: "list of 2", "dict with keys ['a', 'b']", "Dense".
  std::string kind_str() const;
  friend bool operator==(const TreeDef&, const TreeDef&) = default;
};

// "w, b" (JX_PYTREE's field list, as the preprocessor spells it) → {"w", "b"}.
std::vector<std::string> split_field_names(const char* names);

// The path of each leaf, in flatten order: prefix[0][1].w, prefix["bias"], ...
std::vector<std::string> leaf_paths(const TreeDef& tree, const std::string& prefix);

}  // namespace jx::tree

namespace jx::detail {

// Defined in jx/detail/tree_impl.hpp, included at the end of this file.
template <class T>
tree::TreeDef tree_def(const T& x);  // x's structure as plain data
inline std::string pytreedef_str(const tree::TreeDef& t);
template <class F, class T, class... Rest>
tree::rebuilt_t<T> map_tree(F& f, const T& x, const Rest&... rest);
template <class T, class... Rest>
void require_same_structure(const char* who, const T& x, const Rest&... rest);

}  // namespace jx::detail

namespace jx::tree {

// A TreeDef that knows its C++ type, so unflatten can rebuild the tree: what structure(x) gives.
// str() prints JAX's notation, PyTreeDef([*, (*, *)]); ==, num_leaves() are TreeDef's.
template <class T>
class PyTreeDef : public TreeDef {
 public:
  PyTreeDef(TreeDef def, rebuilt_t<T> like)
      : TreeDef(std::move(def)), like_(std::make_shared<const rebuilt_t<T>>(std::move(like))) {}

  std::string str() const { return detail::pytreedef_str(*this); }

  // The tree with these leaves, in flatten order (jax.tree.unflatten); a wrong number of leaves
  // throws jx::Error.
  rebuilt_t<T> unflatten(std::vector<Array> leaves) const {
    std::size_t n = num_leaves();
    if (leaves.size() != n)
      throw Error(std::string("tree::unflatten: too ") + (leaves.size() < n ? "few" : "many") +
                  " leaves for " + str() + "; expected " + std::to_string(n) + ", got " +
                  std::to_string(leaves.size()));
    std::size_t pos = 0;
    return rebuild(*like_, leaves, pos);
  }

 private:
  // The tree with empty leaves: it holds the sizes, keys and Static values, and no buffers.
  std::shared_ptr<const rebuilt_t<T>> like_;
};

// x's structure (jax.tree.structure).
template <class T>
PyTreeDef<T> structure(const T& x) {
  TreeDef def = detail::tree_def(x);
  std::vector<Array> holes(def.num_leaves());
  std::size_t pos = 0;
  auto like = rebuild(x, holes, pos);
  return PyTreeDef<T>(std::move(def), std::move(like));
}

template <class T>
rebuilt_t<T> unflatten(const PyTreeDef<T>& def, std::vector<Array> leaves) {
  return def.unflatten(std::move(leaves));
}

// A tree shaped like `x` whose leaves are f(leaf of x, leaves of rest at the same place...),
// called in flatten order (jax.tree.map). Scalar leaves reach f as 0-d Arrays, and f returns
// an Array. The trees in `rest` must have x's structure: the C++ types must agree (scalar and
// Array leaves mix), and vector sizes and map keys that differ throw jx::TypeError.
template <class F, class T, class... Rest>
rebuilt_t<T> map(F&& f, const T& x, const Rest&... rest) {
  if constexpr (sizeof...(Rest) > 0) detail::require_same_structure("tree::map", x, rest...);
  return detail::map_tree(f, x, rest...);
}

}  // namespace jx::tree

#include "jx/detail/tree_impl.hpp"  // IWYU pragma: export
