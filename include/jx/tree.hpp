// Pytrees: nested C++ containers whose leaves are arrays. Leaves are Array and arithmetic
// scalars; nodes are std::vector, std::array, std::tuple, std::pair, std::map<std::string, T>
// and structs declared with JX_PYTREE(Struct, field...).
#pragma once

#include <array>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.hpp"

// Declares a struct's fields as pytree children (at namespace scope, next to the struct).
#define JX_PYTREE(Struct, ...)                                                           \
  [[maybe_unused]] inline auto jx_pytree_fields(Struct& s) {                             \
    auto& [__VA_ARGS__] = s;                                                             \
    return std::tie(__VA_ARGS__);                                                        \
  }                                                                                      \
  [[maybe_unused]] inline auto jx_pytree_fields(const Struct& s) {                       \
    const auto& [__VA_ARGS__] = s;                                                       \
    return std::tie(__VA_ARGS__);                                                        \
  }                                                                                      \
  [[maybe_unused]] inline constexpr const char* jx_pytree_field_names(const Struct*) {   \
    return #__VA_ARGS__;                                                                 \
  }

namespace jx::tree {

template <class T>
concept Struct = requires(const T& x) { jx_pytree_fields(x); };

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

// Appends the leaves of `x`, depth first, in container order (maps by key), to `out`.
template <class T>
void flatten(const T& x, std::vector<Array>& out) {
  if constexpr (std::is_same_v<T, Array> || std::is_arithmetic_v<T>) {
    out.push_back(Array(x));
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

// A value of the same structure as `like` whose leaves are leaves[pos...], in flatten order.
// Scalar leaves come back as Arrays (a traced scalar is an Array).
template <class T>
auto rebuild(const T& like, const std::vector<Array>& leaves, std::size_t& pos) {
  if constexpr (std::is_same_v<T, Array> || std::is_arithmetic_v<T>) {
    return leaves.at(pos++);
  } else if constexpr (is_vector<T>::value) {
    std::vector<decltype(rebuild(like.front(), leaves, pos))> out;
    for (const auto& e : like) out.push_back(rebuild(e, leaves, pos));
    return out;
  } else if constexpr (is_std_array<T>::value) {
    using E = decltype(rebuild(like[0], leaves, pos));
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::array<E, sizeof...(I)>{rebuild(like[I], leaves, pos)...};  // braces: in order
    }(std::make_index_sequence<std::tuple_size_v<T>>());
  } else if constexpr (is_string_map<T>::value) {
    std::map<std::string, decltype(rebuild(like.begin()->second, leaves, pos))> out;
    for (const auto& [k, v] : like) out.emplace(k, rebuild(v, leaves, pos));
    return out;
  } else if constexpr (is_tuple_like<T>::value) {
    return std::apply(
        [&](const auto&... e) {
          using R = std::conditional_t<
              std::tuple_size_v<T> == 2 && !std::is_same_v<T, std::tuple<std::tuple_element_t<0, T>,
                                                                       std::tuple_element_t<1, T>>>,
              std::pair<decltype(rebuild(e, leaves, pos))...>,
              std::tuple<decltype(rebuild(e, leaves, pos))...>>;
          return R{rebuild(e, leaves, pos)...};
        },
        like);
  } else {
    static_assert(Struct<T>, "not a pytree: use Array, scalars, std containers or JX_PYTREE");
    T out = like;
    std::apply([&](auto&... f) { ((f = rebuild(f, leaves, pos)), ...); }, jx_pytree_fields(out));
    return out;
  }
}

}  // namespace jx::tree
