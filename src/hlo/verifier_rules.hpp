// What the HLO verifier's two files share: its error, and the check of one instruction
// (verifier_rules.cpp) that the walk over a module's structure (verifier.cpp) runs on each.
//
// Attribute conventions the rules enforce (the printer writes them as XLA does):
//   compare               direction=EQ|NE|LT|LE|GT|GE
//   iota                  iota_dimension=d
//   broadcast             dimensions={...}: operand dim i → result dim dimensions[i], whose size
//                         equals the operand's or the operand's is 1 (broadcast_in_dim's rule)
//   transpose             dimensions={...}: result dim i is operand dim dimensions[i]
//   slice                 slice={[start:limit:stride], ...}
//   dynamic-slice         operands: array, one scalar start per dim (dynamic_slice_sizes
//                         optional: the result's dims)
//   dynamic-update-slice  operands: array, update, then one scalar index per dim
//   concatenate           dimensions={d}
//   pad                   padding=lo_hi_interior per dim; operands: array, scalar pad value
//   reduce, argmax/argmin dimensions={...} (argmax: one); reduce calls to_apply=%comb(a, b)
//   gather                offset_dims, collapsed_slice_dims, start_index_map,
//                         operand_batching_dims, start_indices_batching_dims, slice_sizes,
//                         index_vector_dim (the indices' last dim); operands: array, indices
//   scatter               update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
//                         input_batching_dims, scatter_indices_batching_dims, index_vector_dim;
//                         operands: array, indices, updates; to_apply=%comb(a, b)
//   reverse               dimensions={...}: unique dimensions of the operand; the result is its
//                         shape
//   reduce-window         operands: array, scalar init; window (hlo/window.hpp): six integers
//                         per dimension, sizes, strides and dilations >= 1; the result's dims
//                         are window_output_dims; to_apply=%comb(a, b) as reduce's
//   dot                   lhs_batch_dims, lhs_contracting_dims, rhs_batch_dims,
//                         rhs_contracting_dims (absent: empty); result: batch, lhs free, rhs free
//   sort                  dimensions={d}, num_keys=k (1 <= k <= operands), is_stable=true|false;
//                         operands of one shape; result: the tuple of the operands' shapes
//   get-tuple-element     index=i
//   fusion                kind=kLoop|kInput|kOutput, calls=%f: f's parameters take the operands'
//                         shapes and its root has the fusion's shape (a tuple: multi-output)
//   while                 condition=%c, body=%b: both take the operands' (arrays) shapes; c
//                         returns pred[], b a tuple instruction of the result, the operands'
//                         shapes as a tuple
//   conditional           operands: s32[] index, then the branches' operands;
//                         branch_computations={%b0, ...}: each takes those operands' shapes and
//                         returns a tuple instruction of the result's (tuple) shape
#pragma once

#include <string>
#include <unordered_set>

#include "hlo/ir.hpp"

namespace jx::hlo::verifier {

// Throws jx::CompileError "HLO verifier: <who>: <what>".
[[noreturn]] void fail(const std::string& who, const std::string& what);
[[noreturn]] void fail(const Instruction& i, const std::string& what);

// Operand count, result kind and called computations (each one of `comps`), then the opcode's
// rule.
void check_instruction(const Instruction& i, const std::unordered_set<const Computation*>& comps);

}  // namespace jx::hlo::verifier
