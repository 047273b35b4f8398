// Family helpers for differentiation rules: symbolic zeros, the jvp of linear and of
// non-differentiable primitives, elementwise derivatives, and cotangent reduction for operands
// that broadcast. Every rule built here uses public ops only, so it traces like user code.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "core/primitive.hpp"

namespace jx::ad {

// An empty Array is a symbolic zero tangent or cotangent.
inline bool is_zero(const Array& t) { return !t.valid(); }
// A zero array of the given type, built as an equation (broadcast of a 0-d constant).
Array zeros(const ShapedArray& aval);
// t itself, or zeros of `aval` when t is a symbolic zero.
Array instantiate(const Array& t, const ShapedArray& aval);
// a + b where either may be a symbolic zero; a 0-d value is broadcast against the other.
Array add(const Array& a, const Array& b);
// t broadcast to `aval`'s shape when t is 0-d and the shape is not; zeros stay zero.
Array broadcast_to(const Array& t, const ShapedArray& aval);
// Sums a cotangent down to an operand's type: a 0-d operand of an elementwise op was broadcast.
Array unbroadcast(const Array& ct, const ShapedArray& aval);
// Whether values of this dtype have tangents (floating point); others always get zeros.
bool has_tangent(DType d);

// The jvp of a primitive linear in the operands `linear` selects (all when empty): the primitive
// applied to those operands' tangents, zeros instantiated, and to the other operands' primals.
void def_linear(Primitive& p, std::function<bool(std::size_t operand)> linear = {});
// The jvp of a primitive of two operands linear in each (a product: dot_general, a convolution):
// p(t_x, y) + p(x, t_y), a term absent where its tangent is zero.
void def_bilinear(Primitive& p);
// The jvp of a primitive whose outputs do not change with its inputs (comparisons, floor, ...).
void def_zero_jvp(Primitive& p);
// Elementwise jvps: tangent_out = the sum over operands k with a nonzero tangent t_k of
// term_k(t_k, operands, ans), each linear in t_k (usually t_k times the partial derivative).
using TangentTerm =
    std::function<Array(const Array& t, std::span<const Array> x, const Array& ans)>;
void def_elementwise_jvp(Primitive& p, std::vector<TangentTerm> terms);

}  // namespace jx::ad
