// What tree::structure, tree::map and tree::PyTreeDef need: a tree's TreeDef, JAX's PyTreeDef
// notation, the search for the first place two trees differ, and the leaf-wise map.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/tree.hpp"  // on its own; tree.hpp includes this file at its end

namespace jx::detail {

// ---- structure -------------------------------------------------------------------------------

// x's structure as plain data (what structure() returns, less its C++ type).
template <class T>
tree::TreeDef tree_def(const T& x) {
  using Kind = tree::TreeDef::Kind;
  tree::TreeDef t;
  if constexpr (tree::is_leaf_v<T>) {
    t.kind = Kind::leaf;
  } else if constexpr (tree::is_static_v<T>) {
    t.kind = Kind::static_value;
  } else if constexpr (tree::is_vector<T>::value || tree::is_std_array<T>::value) {
    t.kind = tree::is_vector<T>::value ? Kind::list : Kind::array;
    for (const auto& e : x) t.children.push_back(tree_def(e));
  } else if constexpr (tree::is_string_map<T>::value) {
    t.kind = Kind::dict;
    for (const auto& [k, v] : x) {
      t.keys.push_back(k);
      t.children.push_back(tree_def(v));
    }
  } else if constexpr (tree::is_tuple_like<T>::value) {
    t.kind = tree::is_pair<T>::value ? Kind::pair : Kind::tuple;
    std::apply([&](const auto&... e) { (t.children.push_back(tree_def(e)), ...); }, x);
  } else if constexpr (tree::Struct<T>) {
    t.kind = Kind::record;
    t.name = jx_pytree_type_name(static_cast<const T*>(nullptr));
    const char* names = jx_pytree_field_names(static_cast<const T*>(nullptr));
    if (*names) t.keys = tree::split_field_names(names);  // a struct may have no fields
    std::apply([&](const auto&... e) { (t.children.push_back(tree_def(e)), ...); },
               jx_pytree_fields(x));
  } else {
    static_assert(sizeof(T) == 0, "not a pytree: use Array, scalars, std containers or JX_PYTREE");
  }
  return t;
}

// A T of structure `def` whose leaves are empty Arrays: a jitted function's output prototype
// rebuilt from a stored structure (JitOptions::persistent_key). nullopt when `def` is no
// structure of T, or T has parts that cannot be made without a value (a struct that is not
// default-constructible, a scalar, a Static).
template <class T>
std::optional<T> proto_from_def(const tree::TreeDef& def) {
  using Kind = tree::TreeDef::Kind;
  if constexpr (std::is_same_v<T, Array>) {
    if (def.kind != Kind::leaf) return std::nullopt;
    return Array();
  } else if constexpr (!std::is_default_constructible_v<T> || !tree::is_container_v<T>) {
    return std::nullopt;
  } else if constexpr (tree::is_vector<T>::value) {
    if (def.kind != Kind::list) return std::nullopt;
    T out;
    for (const tree::TreeDef& c : def.children) {
      auto e = proto_from_def<typename T::value_type>(c);
      if (!e) return std::nullopt;
      out.push_back(std::move(*e));
    }
    return out;
  } else if constexpr (tree::is_string_map<T>::value) {
    if (def.kind != Kind::dict || def.keys.size() != def.children.size()) return std::nullopt;
    T out;
    for (std::size_t i = 0; i < def.children.size(); ++i) {
      auto e = proto_from_def<typename T::mapped_type>(def.children[i]);
      if (!e) return std::nullopt;
      out.emplace(def.keys[i], std::move(*e));
    }
    return out;
  } else {
    // A std::array, a tuple, a pair or a struct: a fixed number of children, each filled in.
    Kind kind = tree::is_std_array<T>::value    ? Kind::array
                : tree::is_pair<T>::value       ? Kind::pair
                : tree::is_tuple_like<T>::value ? Kind::tuple
                                                : Kind::record;
    T out{};
    bool ok = def.kind == kind;
    std::size_t i = 0;
    auto fill = [&](auto& part) {
      using Part = std::remove_cvref_t<decltype(part)>;
      std::optional<Part> e;
      if (ok && i < def.children.size()) e = proto_from_def<Part>(def.children[i]);
      ++i;
      if (e) part = std::move(*e);
      ok = ok && e.has_value();
    };
    if constexpr (tree::is_std_array<T>::value)
      for (auto& e : out) fill(e);
    else if constexpr (tree::is_tuple_like<T>::value)
      std::apply([&](auto&... e) { (fill(e), ...); }, out);
    else
      std::apply([&](auto&... e) { (fill(e), ...); }, jx_pytree_fields(out));
    if (!ok || i != def.children.size()) return std::nullopt;
    return out;
  }
}

// ---- JAX's PyTreeDef notation ----------------------------------------------------------------

inline std::string join_strings(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out.append(i ? ", " : "").append(parts[i]);
  return out;
}

inline std::string quoted_list(const std::vector<std::string>& keys) {
  std::vector<std::string> q;
  for (const auto& k : keys) q.push_back("'" + k + "'");
  return "[" + join_strings(q) + "]";
}

// A node as JAX prints it: lists [..], tuples (..), dicts {'k': ..}, a struct as a custom node
// whose auxiliary data is its field names. std::array and std::pair print as tuples (their
// length is fixed); a Static, which has no leaves, as None.
inline std::string pytree_node_str(const tree::TreeDef& t) {
  using Kind = tree::TreeDef::Kind;
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < t.children.size(); ++i) {
    std::string c = pytree_node_str(t.children[i]);
    parts.push_back(t.kind == Kind::dict ? "'" + t.keys[i] + "': " + c : std::move(c));
  }
  std::string inner = join_strings(parts);
  switch (t.kind) {
    case Kind::leaf:
      return "*";
    case Kind::static_value:
      return "None";
    case Kind::list:
      return "[" + inner + "]";
    case Kind::array:
    case Kind::tuple:
    case Kind::pair:
      return "(" + inner + (parts.size() == 1 ? ",)" : ")");
    case Kind::dict:
      return "{" + inner + "}";
    case Kind::record: {
      std::string fields = quoted_list(t.keys);  // Python's tuple of field names
      fields = "(" + fields.substr(1, fields.size() - 2) + (t.keys.size() == 1 ? ",)" : ")");
      return "CustomNode(" + t.name + "[" + fields + "], [" + inner + "])";
    }
  }
  return inner;
}

inline std::string pytreedef_str(const tree::TreeDef& t) {
  return "PyTreeDef(" + pytree_node_str(t) + ")";
}

// ---- where two trees differ ------------------------------------------------------------------

// Whether T and U are the same kind of node. C++ types fix all of a structure but the sizes of
// vectors and the keys of maps; a scalar leaf and an Array leaf are both leaves.
template <class T, class U>
inline constexpr bool same_node_kind_v =
    (tree::is_leaf_v<T> && tree::is_leaf_v<U>) || std::is_same_v<T, U> ||
    (tree::is_vector<T>::value && tree::is_vector<U>::value) ||
    (tree::is_string_map<T>::value && tree::is_string_map<U>::value);
template <class T, std::size_t N, class U>
inline constexpr bool same_node_kind_v<std::array<T, N>, std::array<U, N>> = true;
template <class... Ts, class... Us>
inline constexpr bool same_node_kind_v<std::tuple<Ts...>, std::tuple<Us...>> = sizeof...(Ts) ==
                                                                               sizeof...(Us);
template <class A, class B, class C, class D>
inline constexpr bool same_node_kind_v<std::pair<A, B>, std::pair<C, D>> = true;

// The first place, in flatten order, where two trees differ, in JAX's words.
struct TreeDifference {
  std::string path;  // JAX's key path: [0]['a'].w; empty at the root
  std::string what;  // "list arity mismatch", "dict key mismatch"
  std::string a, b;  // what each tree has there
};

template <class T, class U>
bool first_difference(const T& a, const U& b, TreeDifference& d) {
  static_assert(same_node_kind_v<T, U>, "the trees' C++ types have different structures");
  // A child's difference, with the child's key put in front of its path.
  auto child = [&](const auto& ca, const auto& cb, auto&& key) {
    if (!first_difference(ca, cb, d)) return false;
    d.path = key() + d.path;
    return true;
  };
  auto index = [](std::size_t i) { return [i] { return "[" + std::to_string(i) + "]"; }; };
  if constexpr (tree::is_vector<T>::value || tree::is_std_array<T>::value) {
    if (a.size() != b.size()) {
      d.what = "list arity mismatch";
      d.a = std::to_string(a.size()) + " elements";
      d.b = std::to_string(b.size()) + " elements";
      return true;
    }
    for (std::size_t i = 0; i < a.size(); ++i)
      if (child(a[i], b[i], index(i))) return true;
  } else if constexpr (tree::is_string_map<T>::value) {
    auto same_key = [](const auto& p, const auto& q) { return p.first == q.first; };
    if (!std::equal(a.begin(), a.end(), b.begin(), b.end(), same_key)) {
      auto keys = [](const auto& m) {
        std::vector<std::string> k;
        for (const auto& [key, v] : m) k.push_back(key);
        return "keys " + quoted_list(k);
      };
      d.what = "dict key mismatch";
      d.a = keys(a), d.b = keys(b);
      return true;
    }
    for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib)
      if (child(ia->second, ib->second, [&] { return "['" + ia->first + "']"; })) return true;
  } else if constexpr (tree::is_tuple_like<T>::value) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return (child(std::get<I>(a), std::get<I>(b), index(I)) || ...);
    }
    (std::make_index_sequence<std::tuple_size_v<T>>());
  } else if constexpr (tree::is_container_v<T>) {  // a JX_PYTREE struct
    auto fa = jx_pytree_fields(a);
    auto fb = jx_pytree_fields(b);
    auto field = [](std::size_t i) {
      return [i] {
        return "." +
               tree::split_field_names(jx_pytree_field_names(static_cast<const T*>(nullptr))).at(i);
      };
    };
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return (child(std::get<I>(fa), std::get<I>(fb), field(I)) || ...);
    }
    (std::make_index_sequence<std::tuple_size_v<decltype(fa)>>());
  }
  return false;  // leaves, and Statics (their values are not part of the comparison)
}

// Throws jx::TypeError naming the first tree of `rest` whose structure differs from x's.
template <class T, class... Rest>
void require_same_structure(const char* who, const T& x, const Rest&... rest) {
  std::size_t i = 0;
  auto check = [&](const auto& other) {
    ++i;
    TreeDifference d;
    if (!first_difference(x, other, d)) return;
    throw TypeError(std::string(who) + ": the trees have different structures: " + d.what + " at " +
                    (d.path.empty() ? "the root" : d.path) + ": tree 0 has " + d.a + ", tree " +
                    std::to_string(i) + " has " + d.b + "; " + pytreedef_str(tree_def(x)) +
                    " != " + pytreedef_str(tree_def(other)));
  };
  (check(rest), ...);
}

// ---- the leaf-wise map -----------------------------------------------------------------------

// A leaf as an Array: an Array as it is, a scalar as a weak-typed 0-d array.
template <class T>
decltype(auto) leaf_array(const T& x) {
  if constexpr (std::is_same_v<T, Array>)
    return (x);
  else
    return Array(x);
}

// The structures are known to agree (require_same_structure ran): children pair up by position.
template <class F, class T, class... Rest>
tree::rebuilt_t<T> map_tree(F& f, const T& x, const Rest&... rest) {
  static_assert((same_node_kind_v<T, Rest> && ...),
                "tree::map: the trees' C++ types have different structures");
  using Out = tree::rebuilt_t<T>;
  if constexpr (tree::is_leaf_v<T>) {
    return Array(f(leaf_array(x), leaf_array(rest)...));
  } else if constexpr (tree::is_static_v<T>) {
    return x;
  } else if constexpr (tree::is_vector<T>::value) {
    Out out;
    out.reserve(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) out.push_back(map_tree(f, x[i], rest[i]...));
    return out;
  } else if constexpr (tree::is_std_array<T>::value) {
    auto at = [&](std::size_t i) { return map_tree(f, x[i], rest[i]...); };
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return Out{at(I)...};  // braces: in order
    }
    (std::make_index_sequence<std::tuple_size_v<T>>());
  } else if constexpr (tree::is_string_map<T>::value) {
    Out out;
    for (const auto& [k, v] : x) out.emplace_hint(out.end(), k, map_tree(f, v, rest.at(k)...));
    return out;
  } else if constexpr (tree::is_tuple_like<T>::value) {
    auto at = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) {
      return map_tree(f, std::get<I>(x), std::get<I>(rest)...);
    };
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return Out{at(std::integral_constant<std::size_t, I>{})...};
    }
    (std::make_index_sequence<std::tuple_size_v<T>>());
  } else {
    static_assert(tree::Struct<T>, "not a pytree: use Array, scalars, std containers or JX_PYTREE");
    Out out = x;
    auto at = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) {
      std::get<I>(jx_pytree_fields(out)) =
          map_tree(f, std::get<I>(jx_pytree_fields(x)), std::get<I>(jx_pytree_fields(rest))...);
    };
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (at(std::integral_constant<std::size_t, I>{}), ...);
    }
    (std::make_index_sequence<std::tuple_size_v<decltype(jx_pytree_fields(x))>>());
    return out;
  }
}

}  // namespace jx::detail
