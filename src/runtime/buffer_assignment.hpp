// Buffer assignment: where every HLO value of the entry computation lives at run time.
// Temporaries share one arena, reusing space by liveness; outputs get fresh buffers; an
// elementwise kernel may write over an operand that dies there.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hlo/ir.hpp"

namespace jx::runtime {

struct Allocation {
  enum class Kind { kParameter, kConstant, kOutput, kTemp };
  Kind kind = Kind::kTemp;
  int index = 0;            // parameter, constant or output number
  std::int64_t offset = 0;  // into the arena, for temporaries
  std::int64_t size = 0;    // bytes
  std::string str() const;
  friend bool operator==(const Allocation&, const Allocation&) = default;
};

// An array value: an array-shaped instruction (element -1) or one output of a multi-output
// fusion, a sort, a while or a conditional.
struct ValueRef {
  const hlo::Instruction* inst;
  int element = -1;
  auto operator<=>(const ValueRef&) const = default;
};

// The value an instruction stands for: get-tuple-element of a tuple, a multi-output fusion, a
// sort, a while or a conditional aliases the element; a reshape aliases its operand, an element
// of an opt-barrier its operand.
ValueRef source_of(const hlo::Instruction* inst);

struct BufferAssignment {
  std::map<ValueRef, Allocation> of;
  std::vector<const hlo::Instruction*> constants;  // in constant-number order
  std::vector<ValueRef> outputs;                   // the root's elements, in output order
  // Per kernel instruction with an in-place output: for each output, the operand it
  // overwrites, or -1.
  std::map<const hlo::Instruction*, std::vector<int>> in_place;
  // Donated parameters living in an output's buffer: (parameter number, output number).
  std::vector<std::pair<int, int>> donations;
  // Per while: arena buffers for a second copy of the carry, one per element; the loop's body
  // writes each iteration's carry into the set it did not read from.
  std::map<const hlo::Instruction*, std::vector<Allocation>> spare_carry;
  std::int64_t arena_bytes = 0;

  const Allocation& at(const hlo::Instruction* inst) const { return of.at(source_of(inst)); }
};

// `order` is the execution order of the entry computation's instructions. A donated parameter
// (by parameter number), or a temporary, may live in the buffer of an output of its shape whose
// kernel is its last reader, reading it only where it writes: the kernel then works in place.
BufferAssignment assign_buffers(const hlo::Computation& entry,
                                const std::vector<hlo::Instruction*>& order,
                                const std::vector<bool>& donated = {});

// Reorders `order` so that a kernel that can compute an output over a donated parameter runs
// after the parameter's other readers (with whatever depends on it), where those do not depend on
// it: a parameter update scheduled before a late read of the old value would otherwise cost the
// donation.
void defer_overwrites_of_donated(const hlo::Computation& entry,
                                 std::vector<hlo::Instruction*>& order,
                                 const std::vector<bool>& donated);

}  // namespace jx::runtime
