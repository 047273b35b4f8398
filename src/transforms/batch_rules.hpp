// Family helpers for batching rules (vmap): moving batch axes, giving an unbatched operand the
// batch axis, and the rule every elementwise primitive shares.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/primitive.hpp"

namespace jx::batching {

// The batch size: the length of the batch axis of any batched operand.
std::int64_t batch_size(std::span<const Array> args, std::span<const BatchDim> dims);
// x with axis `from` moved to position `to` (a transpose; none when from == to).
Array move_axis(const Array& x, int from, int to);
// x with its batch axis at `at`: moved there, or, for an unbatched x, broadcast along a new axis
// of `size` there.
Array batch_at(const Array& x, BatchDim dim, std::int64_t size, int at);
// A batch axis after `d` is removed from (or inserted before) an operand: where it lands.
inline std::int64_t shift(std::int64_t axis, int bdim) { return axis < bdim ? axis : axis + 1; }

// The rule of elementwise primitives: operands get their batch axes in front, an unbatched one
// is broadcast (a 0-d one stays 0-d when the result is shaped, as the primitive broadcasts it);
// a unary op keeps its operand's batch axis where it is.
void def_elementwise_batch(Primitive& p);

}  // namespace jx::batching
