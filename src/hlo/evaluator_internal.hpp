// What the two evaluator files share: element access, row-major strides, and the evaluation
// functions of the non-elementwise opcodes (evaluator_ops.cpp).
#pragma once

#include <span>
#include <vector>

#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "hlo/evaluator.hpp"
#include "support/multi_index.hpp"

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
