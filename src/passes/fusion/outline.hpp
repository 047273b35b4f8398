// Outlining: replaces a group of entry instructions by one fusion instruction whose called
// computation holds copies of them. Every fusion pass decides a group and calls this.
#pragma once

#include <functional>
#include <unordered_set>
#include <vector>

#include "hlo/ir.hpp"

namespace jx::passes::fusion {

// Instructions a fusion of the group would compute.
struct Group {
  std::vector<hlo::Instruction*> members;
  // Members copied into the fusion while the original stays for users outside the group.
  std::unordered_set<const hlo::Instruction*> duplicated;
};

// Outlines `group` from `entry`. Members that are fusions are inlined; operands from outside
// become parameters (one per distinct value). The fusion's outputs are the values of
// non-duplicated members read outside the group (or by the entry root): one output gives an
// array-shaped fusion, several a tuple, read through get-tuple-element. Its kind is kInput when
// an output is a reduction, kOutput when it holds a dot, kLoop otherwise. Dead originals are
// removed. Returns the fusion.
hlo::Instruction* outline(hlo::Computation& entry, const Group& group);

// Offers each entry instruction, operands first, to `rewrite`, with the entry's users as the
// walk began; `rewrite` returns whether it changed the computation. After a change the walk
// starts over, until a whole walk changes nothing. Returns whether anything changed.
bool rewrite_to_fixed_point(
    hlo::Computation& entry,
    const std::function<bool(hlo::Instruction*, const hlo::UserIndex&)>& rewrite);

// Whether `to` is reachable from `from` along operand → user edges (`from` != `to`).
bool reaches(const hlo::UserIndex& users, const hlo::Instruction* from, const hlo::Instruction* to);

// Expensive ops cost many cycles per element: transcendentals, divisions, and the ops that run
// a loop per element (hlo::loops_per_element). Fusion never recomputes them.
bool is_expensive(hlo::Opcode op);
// Whether a fusion (or instruction) holds loop or expensive ops.
bool has_costly_ops(const hlo::Instruction& inst);

}  // namespace jx::passes::fusion
