// Sorting same-shape arrays along one dimension by key arrays: the one definition of sort's
// semantics, shared by the eager impl, the HLO evaluator and the CPU runtime's sort thunk.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <type_traits>
#include <vector>

#include "core/dtype_dispatch.hpp"
#include "jx/shape.hpp"

namespace jx {

// Three-way comparison in sort's total order: integers and bools by value; floats as JAX's
// comparator orders them, -0.0 equal to +0.0 and every NaN equal to every other, after +inf.
template <class T>
int sort_compare(T a, T b) {
  if constexpr (is_float_element_v<T>) {  // bfloat16 and float16 too: they read as float
    bool na = std::isnan(static_cast<float>(a)), nb = std::isnan(static_cast<float>(b));
    if (na || nb) return static_cast<int>(na) - static_cast<int>(nb);
  }
  return static_cast<int>(b < a) - static_cast<int>(a < b);
}

// Sorts the arrays in[k] (row-major, all of `shape`, element types dtypes[k]) along `dimension`,
// ascending and stable in the lexicographic order of the first `num_keys`: out[k] is in[k]
// permuted as the keys were. Outputs must not overlap inputs.
inline void sort_rows(const Shape& shape, std::int64_t dimension, std::size_t num_keys,
                      std::span<const DType> dtypes, std::span<const void* const> in,
                      std::span<void* const> out) {
  if (shape_size(shape) == 0) return;
  const auto dim = static_cast<std::size_t>(dimension);
  std::int64_t outer = 1, n = shape[dim], inner = 1;
  for (std::size_t d = 0; d < dim; ++d) outer *= shape[d];
  for (std::size_t d = dim + 1; d < shape.size(); ++d) inner *= shape[d];

  // One comparison per key, by its element type: rows start at `row`, elements `inner` apart.
  using Compare = int (*)(const void* row, std::int64_t inner, std::int64_t i, std::int64_t j);
  std::vector<Compare> compare;
  for (std::size_t k = 0; k < num_keys; ++k)
    compare.push_back(dispatch(dtypes[k], []<class T>() -> Compare {
      return [](const void* row, std::int64_t inner, std::int64_t i, std::int64_t j) {
        const T* r = static_cast<const T*>(row);
        return sort_compare(r[i * inner], r[j * inner]);
      };
    }));

  std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
  std::vector<const void*> rows(num_keys);
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      const std::int64_t base = o * n * inner + i;
      std::iota(perm.begin(), perm.end(), std::int64_t{0});
      if (num_keys == 1) {  // the common case, without an indirect call per comparison
        dispatch(dtypes[0], [&]<class T>() {
          const T* r = static_cast<const T*>(in[0]) + base;
          std::stable_sort(perm.begin(), perm.end(), [&](std::int64_t a, std::int64_t b) {
            return sort_compare(r[a * inner], r[b * inner]) < 0;
          });
        });
      } else {
        for (std::size_t k = 0; k < num_keys; ++k)
          rows[k] = static_cast<const std::byte*>(in[k]) + base * itemsize(dtypes[k]);
        std::stable_sort(perm.begin(), perm.end(), [&](std::int64_t a, std::int64_t b) {
          for (std::size_t k = 0; k < num_keys; ++k)
            if (int c = compare[k](rows[k], inner, a, b)) return c < 0;
          return false;
        });
      }
      for (std::size_t k = 0; k < in.size(); ++k)
        dispatch(dtypes[k], [&]<class T>() {
          const T* src = static_cast<const T*>(in[k]) + base;
          T* dst = static_cast<T*>(out[k]) + base;
          for (std::int64_t j = 0; j < n; ++j) dst[j * inner] = src[perm[j] * inner];
        });
    }
  }
}

}  // namespace jx
