// XLA's gather and scatter pair each element of a gather's result, or of a scatter's updates,
// with one operand element. That map is written once, here: the primitives' eager impls and the
// HLO evaluator move elements along it; codegen (the gather generator, the scatter kernels)
// emits the same arithmetic in IR.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "jx/shape.hpp"

namespace jx {

// Gather's and scatter's dimension numbers under common names. The "elements" are the gather's
// result or the scatter's updates; the indices hold one start vector along their last dim.
struct SliceMap {
  std::vector<std::int64_t> window_dims;      // offset_dims | update_window_dims (of elements)
  std::vector<std::int64_t> collapsed_dims;   // collapsed_slice_dims | inserted_window_dims
  std::vector<std::int64_t> start_index_map;  // start_index_map | scatter_dims_to_operand_dims
  std::vector<std::int64_t> operand_batching_dims, indices_batching_dims;
  friend bool operator==(const SliceMap&, const SliceMap&) = default;
};

inline bool contains(const std::vector<std::int64_t>& v, std::int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The operand dims the window walks, in the order window_dims lists them: the dims that are
// neither collapsed nor batching.
inline std::vector<std::int64_t> window_operand_dims(const SliceMap& m, std::size_t rank) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(rank); ++d)
    if (!contains(m.collapsed_dims, d) && !contains(m.operand_batching_dims, d)) out.push_back(d);
  return out;
}

// The elements' dims that are not window dims: their batch dims, one per indices dim but the last.
inline std::vector<std::int64_t> batch_dims_of(const SliceMap& m, std::size_t elements_rank) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(elements_rank); ++d)
    if (!contains(m.window_dims, d)) out.push_back(d);
  return out;
}

// A scatter's window: along each operand dim, 1 where collapsed or batching, else the updates'
// size along the window dim that walks it. (A gather's window is its slice_sizes.)
inline Shape scatter_window(const SliceMap& m, const Shape& operand, const Shape& updates) {
  Shape w(operand.size(), 1);
  std::vector<std::int64_t> dims = window_operand_dims(m, operand.size());
  for (std::size_t j = 0; j < dims.size() && j < m.window_dims.size(); ++j)
    w[static_cast<std::size_t>(dims[j])] = updates[static_cast<std::size_t>(m.window_dims[j])];
  return w;
}

// Calls f(element, operand_offset, in_bounds) for every element of `elements` in row-major
// order (element is its flat index). The slice starts where the element's start vector says
// (`indices`: flat, row-major, the start vector along the last of `indices_shape`), at the
// element's batch position along batching dims, and 0 elsewhere; in_bounds says whether that
// start lies in [0, operand - window] in every dim. operand_offset is the flat offset of the
// element's operand element counted from the start clamped into that range, as XLA clamps.
template <class F>
void for_each_slice_element(const SliceMap& m, const Shape& elements, const Shape& operand,
                            const Shape& window, const Shape& indices_shape,
                            std::span<const std::int64_t> indices, F f) {
  if (shape_size(elements) == 0) return;
  const std::size_t rank = operand.size();
  const std::vector<std::int64_t> batch = batch_dims_of(m, elements.size());
  const std::vector<std::int64_t> walk = window_operand_dims(m, rank);
  const std::int64_t vector = indices_shape.empty() ? 1 : indices_shape.back();
  std::vector<std::int64_t> ostride(rank, 1);
  for (std::size_t d = rank; d-- > 1;) ostride[d - 1] = ostride[d] * operand[d];
  std::vector<std::int64_t> index(elements.size(), 0), start(rank);
  for (std::int64_t flat = 0, n = shape_size(elements); flat < n; ++flat) {
    std::int64_t position = 0;  // of the start vector among the indices' batch positions
    for (std::size_t j = 0; j < batch.size(); ++j)
      position = position * indices_shape[j] + index[static_cast<std::size_t>(batch[j])];
    std::fill(start.begin(), start.end(), 0);
    for (std::size_t k = 0; k < m.start_index_map.size(); ++k)
      start[static_cast<std::size_t>(m.start_index_map[k])] =
          indices[static_cast<std::size_t>(position * vector) + k];
    for (std::size_t k = 0; k < m.operand_batching_dims.size(); ++k)
      start[static_cast<std::size_t>(m.operand_batching_dims[k])] = index[static_cast<std::size_t>(
          batch[static_cast<std::size_t>(m.indices_batching_dims[k])])];
    bool in_bounds = true;
    std::int64_t at = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      std::int64_t hi = operand[d] - window[d];
      if (start[d] < 0 || start[d] > hi) in_bounds = false;
      at += std::clamp(start[d], std::int64_t{0}, std::max(hi, std::int64_t{0})) * ostride[d];
    }
    for (std::size_t j = 0; j < walk.size(); ++j)
      at += index[static_cast<std::size_t>(m.window_dims[j])] *
            ostride[static_cast<std::size_t>(walk[j])];
    f(flat, at, in_bounds);
    for (std::size_t d = elements.size(); d-- > 0;) {  // the next row-major index
      if (++index[d] < elements[d]) break;
      index[d] = 0;
    }
  }
}

// An integer array's values as int64, row-major: the indices the maps read.
inline std::vector<std::int64_t> index_values(const Array& indices) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(indices.size()));
  const Buffer& b = concrete_buffer(indices, "index_values");
  dispatch(indices.dtype(), [&]<class T>() {
    if constexpr (std::is_integral_v<T>)
      for (std::size_t k = 0; k < out.size(); ++k) out[k] = static_cast<std::int64_t>(b.as<T>()[k]);
  });
  return out;
}

}  // namespace jx
