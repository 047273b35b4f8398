// What jx/npz.hpp's templates need: a walk that names each pytree leaf by its path, and the
// non-template halves of saving and loading (src/api/npz.cpp).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.hpp"
#include "jx/tree.hpp"

namespace jx::detail::npz {

using Entries = std::map<std::string, Array>;

// Map keys become path segments, so they must be non-empty and free of '/'.
void check_key(const std::string& key);

inline std::string child(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "/" + key;
}
// A tree that is a single leaf is saved as "arr_0", as np.savez names a positional array.
inline std::string leaf_name(const std::string& prefix) {
  return prefix.empty() ? "arr_0" : prefix;
}

template <class T>
std::vector<std::string> field_names() {
  return tree::split_field_names(jx_pytree_field_names(static_cast<const T*>(nullptr)));
}

// fn(name, leaf) for each leaf of x, in flatten order.
template <class T, class Fn>
void for_each_leaf(const T& x, const std::string& prefix, Fn& fn) {
  if constexpr (tree::is_leaf_v<T>) {
    fn(leaf_name(prefix), x);
  } else if constexpr (tree::is_static_v<T>) {
    // A static value is structure, not data: nothing to save.
  } else if constexpr (tree::is_vector<T>::value || tree::is_std_array<T>::value) {
    std::size_t i = 0;
    for (const auto& e : x) for_each_leaf(e, child(prefix, std::to_string(i++)), fn);
  } else if constexpr (tree::is_string_map<T>::value) {
    for (const auto& [k, v] : x) {
      check_key(k);
      for_each_leaf(v, child(prefix, k), fn);
    }
  } else if constexpr (tree::is_tuple_like<T>::value) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (for_each_leaf(std::get<I>(x), child(prefix, std::to_string(I)), fn), ...);
    }
    (std::make_index_sequence<std::tuple_size_v<T>>());
  } else if constexpr (tree::Struct<T>) {
    auto names = field_names<T>();
    std::size_t i = 0;
    std::apply([&](const auto&... f) { (for_each_leaf(f, child(prefix, names[i++]), fn), ...); },
               jx_pytree_fields(x));
  } else {
    static_assert(sizeof(T) == 0, "not a pytree: use Array, scalars, std containers or JX_PYTREE");
  }
}

// Overwrites x's leaves, in flatten order, with leaves[pos...]; a scalar leaf takes the value.
template <class T>
void assign_leaves(T& x, std::vector<Array>& leaves, std::size_t& pos) {
  if constexpr (std::is_same_v<T, Array>) {
    x = std::move(leaves.at(pos++));
  } else if constexpr (std::is_arithmetic_v<T>) {
    x = leaves.at(pos++).template item<T>();
  } else if constexpr (tree::is_static_v<T>) {
  } else if constexpr (tree::is_vector<T>::value || tree::is_std_array<T>::value) {
    for (auto& e : x) assign_leaves(e, leaves, pos);
  } else if constexpr (tree::is_string_map<T>::value) {
    for (auto& [k, v] : x) assign_leaves(v, leaves, pos);
  } else if constexpr (tree::is_tuple_like<T>::value) {
    std::apply([&](auto&... e) { (assign_leaves(e, leaves, pos), ...); }, x);
  } else {
    std::apply([&](auto&... e) { (assign_leaves(e, leaves, pos), ...); }, jx_pytree_fields(x));
  }
}

// The non-template halves (src/api/npz.cpp).
void write_archive(const std::string& path, const std::vector<std::pair<std::string, Array>>& e);
// The named entries, each checked against its expected dtype and shape.
std::vector<Array> read_leaves(const std::string& path, const std::vector<std::string>& names,
                               const std::vector<ShapedArray>& expected);
// entries[name], checked against *expected when given.
Array take(const Entries& entries, const std::string& path, const std::string& name,
           const ShapedArray* expected);
// The distinct path segments right below prefix ("" for the top level), in order.
std::vector<std::string> children(const Entries& entries, const std::string& prefix);
// How many elements a std::vector at prefix has: its children must be numbered 0..n-1.
std::size_t vector_size(const Entries& entries, const std::string& path, const std::string& prefix);

// A T rebuilt from the entry names alone: vectors and maps take their sizes and keys from them.
template <class T>
T build(const Entries& entries, const std::string& path, const std::string& prefix) {
  if constexpr (std::is_same_v<T, Array>) {
    return take(entries, path, leaf_name(prefix), nullptr);
  } else if constexpr (std::is_arithmetic_v<T>) {
    ShapedArray want{{}, dtype_of<T>(), false};
    return take(entries, path, leaf_name(prefix), &want).template item<T>();
  } else if constexpr (tree::is_static_v<T>) {
    return T{};
  } else if constexpr (tree::is_vector<T>::value) {
    T out;
    std::size_t n = vector_size(entries, path, prefix);
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      out.push_back(build<typename T::value_type>(entries, path, child(prefix, std::to_string(i))));
    return out;
  } else if constexpr (tree::is_std_array<T>::value) {
    T out{};
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = build<typename T::value_type>(entries, path, child(prefix, std::to_string(i)));
    return out;
  } else if constexpr (tree::is_string_map<T>::value) {
    T out;
    for (const auto& key : children(entries, prefix))
      out.emplace(key, build<typename T::mapped_type>(entries, path, child(prefix, key)));
    return out;
  } else if constexpr (tree::is_tuple_like<T>::value) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return T{
          build<std::tuple_element_t<I, T>>(entries, path, child(prefix, std::to_string(I)))...};
    }
    (std::make_index_sequence<std::tuple_size_v<T>>());
  } else if constexpr (tree::Struct<T>) {
    T out{};
    auto names = field_names<T>();
    std::size_t i = 0;
    std::apply(
        [&](auto&... f) {
          ((f = build<std::remove_cvref_t<decltype(f)>>(entries, path, child(prefix, names[i++]))),
           ...);
        },
        jx_pytree_fields(out));
    return out;
  } else {
    static_assert(sizeof(T) == 0, "not a pytree: use Array, scalars, std containers or JX_PYTREE");
  }
}

}  // namespace jx::detail::npz
