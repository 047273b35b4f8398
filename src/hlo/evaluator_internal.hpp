// What the two evaluator files share: element access, row-major index walking, and the
// evaluation functions of the non-elementwise opcodes (evaluator_ops.cpp).
#pragma once

#include <span>
#include <vector>

#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "hlo/evaluator.hpp"

namespace jx::hlo::eval {

using Index = std::vector<std::int64_t>;

inline Array fresh(const HloShape& shape) {
  return make_array(ShapedArray{shape.dims, shape.dtype, false});
}
template <class T>
const T* data(const Array& x) {
  return concrete_buffer(x, "the HLO evaluator").as<T>();
}
template <class T>
T* mutable_data(Array& x) {
  return x.impl()->buffer->as<T>();
}

// Row-major strides in elements: {2, 3, 4} → {12, 4, 1}.
inline Index strides(const Shape& shape) {
  Index s(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

// Calls f(index, flat) for every multi-index of `shape` in row-major order.
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  if (shape_size(shape) == 0) return;
  Index index(shape.size(), 0);
  for (std::int64_t flat = 0;; ++flat) {
    f(static_cast<const Index&>(index), flat);
    int d = static_cast<int>(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

using EvalFn = Array (*)(const Instruction&, std::span<const Array>);

Array iota(const Instruction& inst, std::span<const Array> in);
Array broadcast(const Instruction& inst, std::span<const Array> in);
Array reshape(const Instruction& inst, std::span<const Array> in);
Array transpose(const Instruction& inst, std::span<const Array> in);
Array slice(const Instruction& inst, std::span<const Array> in);
Array dynamic_slice(const Instruction& inst, std::span<const Array> in);
Array dynamic_update_slice(const Instruction& inst, std::span<const Array> in);
Array concatenate(const Instruction& inst, std::span<const Array> in);
Array gather_slices(const Instruction& inst, std::span<const Array> in);
Array scatter(const Instruction& inst, std::span<const Array> in);
Array pad(const Instruction& inst, std::span<const Array> in);
Array reduce(const Instruction& inst, std::span<const Array> in);
Array reverse(const Instruction& inst, std::span<const Array> in);
Array reduce_window(const Instruction& inst, std::span<const Array> in);
Array arg_max(const Instruction& inst, std::span<const Array> in);
Array arg_min(const Instruction& inst, std::span<const Array> in);
Array dot(const Instruction& inst, std::span<const Array> in);
Array convolution(const Instruction& inst, std::span<const Array> in);
Array fusion(const Instruction& inst, std::span<const Array> in);
// Tuple-shaped opcodes: one array per element.
std::vector<Array> sort(const Instruction& inst, std::span<const Array> in);
std::vector<Array> while_loop(const Instruction& inst, std::span<const Array> in);
std::vector<Array> conditional(const Instruction& inst, std::span<const Array> in);

}  // namespace jx::hlo::eval
